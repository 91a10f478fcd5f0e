//! The batch client against a local server speaking Anthropic's Message Batches API.

use std::time::Duration;

use aitasks_providers::{
    BatchClient, BatchPhase, CancellationToken, HttpProvider, LineOutcome, Provider, ProviderError,
};
use aitasks_testkit::{BatchOutcome, LineScript, StubBatches};
use serde_json::{json, Value};
use uuid::Uuid;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::batch_support::{answered, by_task, lines, profile, tasks, until_done};

fn client() -> BatchClient {
    BatchClient::new(Duration::from_secs(10)).unwrap()
}

fn anthropic(base_url: &str) -> aitasks_providers::ModelProfile {
    profile(json!({"provider": "anthropic", "model": "claude-test", "baseUrl": base_url, "batch": {}}))
}

#[tokio::test]
async fn a_message_batch_round_trips_through_the_forced_tool() {
    let stub = StubBatches::start().await;
    let profile = anthropic(&stub.base_url);
    let (ids, requests) = tasks(4);
    stub.script(ids[3], LineScript::Duplicate);
    let client = client();
    let batch = client.submit(&profile, Uuid::new_v4(), &lines(&ids, &requests)).await.unwrap();
    let (_, params) = &stub.submitted_lines()[0];
    assert_eq!(params["tool_choice"], json!({"type": "tool", "name": "classification"}));
    assert_eq!(params["model"], "claude-test");
    assert_eq!(params["messages"].as_array().unwrap().len(), 1);
    let (results, stopped) = until_done(&client, &profile, &batch).await;
    assert_eq!(stopped, None);
    assert!(results[0].starts_with(&stub.base_url), "{results:?}");
    let outcomes = by_task(client.results(&profile, &results, &requests).all().await.unwrap());
    for id in &ids {
        let done = answered(&outcomes[id][0]);
        assert_eq!((done.output.clone(), done.usage.calls, done.usage.input_tokens), (json!("pos"), 1, 11));
        assert_eq!(done.usage.estimated_cost_usd, None, "no prices");
    }
    assert_eq!(outcomes[&ids[3]].len(), 2);
    assert_eq!(stub.creates(), 1);
}

#[tokio::test]
async fn errored_expired_and_invalid_lines_are_told_apart() {
    let stub = StubBatches::start().await;
    let profile = anthropic(&stub.base_url);
    let (ids, requests) = tasks(4);
    stub.script(ids[0], LineScript::Error(400));
    stub.script(ids[1], LineScript::Error(529));
    stub.script(ids[2], LineScript::Invalid);
    let client = client();
    let batch = client.submit(&profile, Uuid::new_v4(), &lines(&ids, &requests)).await.unwrap();
    let (results, _) = until_done(&client, &profile, &batch).await;
    let outcomes = by_task(client.results(&profile, &results, &requests).all().await.unwrap());
    let failed = |i: usize| match &outcomes[&ids[i]][..] {
        [LineOutcome::Failed(error)] => error.clone(),
        other => panic!("{other:?}"),
    };
    assert!(matches!(failed(0), ProviderError::Rejected { status: 400, .. }));
    let overloaded = failed(1);
    assert!(matches!(overloaded, ProviderError::Server { status: 529, .. }) && overloaded.is_retryable());
    let LineOutcome::Invalid(resume) = &outcomes[&ids[2]][0] else { panic!() };
    answered(&outcomes[&ids[3]][0]);

    // The repair turn answers the tool call with its error result, on-demand.
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "msg_2", "type": "message", "role": "assistant", "model": "claude-test",
            "content": [{"type": "tool_use", "id": "toolu_2", "name": "classification", "input": {"choice": "neg"}}],
            "stop_reason": "tool_use", "usage": {"input_tokens": 40, "output_tokens": 9}})))
        .expect(1)
        .mount(&server)
        .await;
    let live =
        aitasks_providers::ModelProfile { base_url: format!("{}/v1", server.uri()), ..profile.clone() };
    let done = HttpProvider::new(Duration::from_secs(5))
        .unwrap()
        .repair_gated(
            &live,
            &requests[&ids[2]],
            resume,
            &aitasks_providers::NoLimits,
            &aitasks_providers::NoTap,
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!((done.output, done.usage.calls, done.usage.input_tokens), (json!("neg"), 2, 51));
    let sent: Value = server.received_requests().await.unwrap()[0].body_json().unwrap();
    let messages = sent["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "the question, the batch's bad tool call, its error result");
    assert_eq!(messages[2]["content"][0]["type"], "tool_result");
    assert_eq!(messages[2]["content"][0]["is_error"], true);

    stub.set_outcome(BatchOutcome::Expire);
    let batch = client.submit(&profile, Uuid::new_v4(), &lines(&ids, &requests)).await.unwrap();
    let (results, _) = until_done(&client, &profile, &batch).await;
    let outcomes = by_task(client.results(&profile, &results, &requests).all().await.unwrap());
    assert!(outcomes.values().all(|o| matches!(&o[..], [LineOutcome::Unanswered(_)])));
}

#[tokio::test]
async fn a_results_url_elsewhere_is_not_sent_the_key() {
    let stub = StubBatches::start().await;
    let profile = anthropic(&stub.base_url);
    let (_, requests) = tasks(1);
    let error = client()
        .results(&profile, &["http://attacker.example/v1/messages/batches/x/results".to_owned()], &requests)
        .all()
        .await
        .unwrap_err();
    assert!(matches!(error, ProviderError::Malformed(_)), "{error:?}");
    let error = client().status(&profile, "../../etc").await.unwrap_err();
    assert!(matches!(error, ProviderError::Malformed(_)), "an id that is not a token: {error:?}");
    assert_eq!(stub.unauthorized(), 0);
}

#[tokio::test]
async fn a_canceled_message_batch_ends_with_canceled_lines() {
    let stub = StubBatches::start().await;
    let profile = anthropic(&stub.base_url);
    let (ids, requests) = tasks(2);
    stub.hold();
    let client = client();
    let batch = client.submit(&profile, Uuid::new_v4(), &lines(&ids, &requests)).await.unwrap();
    assert_eq!(client.status(&profile, &batch).await.unwrap(), BatchPhase::Working);
    client.cancel(&profile, &batch).await.unwrap();
    stub.advance();
    let (results, stopped) = until_done(&client, &profile, &batch).await;
    assert_eq!(stopped.as_deref(), Some("canceled"));
    let outcomes = by_task(client.results(&profile, &results, &requests).all().await.unwrap());
    assert_eq!(outcomes.len(), 2);
    assert!(outcomes
        .values()
        .all(|o| matches!(&o[..], [LineOutcome::Unanswered(why)] if why.contains("canceled"))));
}

#[tokio::test]
async fn a_lookup_finds_the_batches_made_since_the_first_submit_with_as_many_requests() {
    let stub = StubBatches::start().await;
    let profile = anthropic(&stub.base_url);
    let (ids, requests) = tasks(3);
    let client = client();
    let older = client.submit(&profile, Uuid::new_v4(), &lines(&ids, &requests)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    // Made this long after `older`: what the lookup asks for starts after it (skew taken away).
    let since = chrono::Utc::now() + aitasks_providers::CLOCK_SKEW;
    let first = client.submit(&profile, Uuid::new_v4(), &lines(&ids, &requests)).await.unwrap();
    let other_size = stub.foreign_anthropic_batch(5);
    let second = client.submit(&profile, Uuid::new_v4(), &lines(&ids[..2], &requests)).await.unwrap();
    let sent = aitasks_providers::Sent {
        since: since - chrono::Duration::milliseconds(20),
        until: None,
        requests: 2..=3,
    };
    let found = client.find(&profile, Uuid::new_v4(), &sent).await.unwrap();
    assert_eq!(found, aitasks_providers::Found::Matching(vec![first.clone(), second]), "oldest first");
    assert!(![older, other_size]
        .iter()
        .any(|id| matches!(&found, aitasks_providers::Found::Matching(f) if f.contains(id))));
    let none = aitasks_providers::Sent { since, until: None, requests: 7..=9 };
    assert_eq!(
        client.find(&profile, Uuid::new_v4(), &none).await.unwrap(),
        aitasks_providers::Found::Nothing
    );
    assert_eq!(stub.creates(), 3);
}

#[tokio::test]
async fn a_message_batch_is_deleted_only_once_it_has_ended() {
    let stub = StubBatches::start().await;
    let profile = anthropic(&stub.base_url);
    let (ids, requests) = tasks(2);
    stub.hold();
    let client = client();
    let batch = client.submit(&profile, Uuid::new_v4(), &lines(&ids, &requests)).await.unwrap();
    use aitasks_providers::Cleanup;
    assert_eq!(client.clean_up(&profile, &batch).await.unwrap(), Cleanup::NotYet, "running: canceled first");
    assert_eq!((stub.cancels(), stub.batch_deletes()), (1, 0));
    assert_eq!(client.clean_up(&profile, &batch).await.unwrap(), Cleanup::NotYet, "still canceling");
    stub.advance();
    assert_eq!(client.clean_up(&profile, &batch).await.unwrap(), Cleanup::Done);
    assert_eq!((stub.batch_deletes(), stub.anthropic_batches_held()), (1, (0, 0)));
    assert_eq!(client.clean_up(&profile, &batch).await.unwrap(), Cleanup::Done, "gone already: done");
}
