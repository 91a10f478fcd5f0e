//! The batch client against a local server speaking OpenAI's Files and Batches API.

use std::time::Duration;

use aitasks_providers::{
    BatchClient, BatchPhase, CancellationToken, HttpProvider, LineOutcome, Provider, ProviderError, Resume,
    MAX_RESULT_LINE_BYTES, PAGE_BYTES, PAGE_LINES,
};
use aitasks_testkit::{BatchOutcome, LineScript, Reply, StubBatches, StubProvider};
use serde_json::json;
use uuid::Uuid;

use crate::batch_support::{answered, by_task, lines, profile, tasks, until_done};

fn client() -> BatchClient {
    BatchClient::new(Duration::from_secs(10)).unwrap()
}

fn openai(stub: &StubBatches) -> aitasks_providers::ModelProfile {
    profile(json!({"model": "gpt-test", "baseUrl": stub.base_url,
        "prices": {"inputPerMillion": 2.0, "outputPerMillion": 8.0},
        "batch": {"prices": {"inputPerMillion": 1.0, "outputPerMillion": 4.0}}}))
}

#[tokio::test]
async fn a_batch_round_trips_with_each_line_the_on_demand_request_and_checked_answers() {
    let stub = StubBatches::start().await;
    let profile = openai(&stub);
    let (ids, requests) = tasks(5);
    let client = client();
    let batch = client.submit(&profile, Uuid::new_v4(), &lines(&ids, &requests)).await.unwrap();
    assert_eq!(client.status(&profile, &batch).await.unwrap(), BatchPhase::Working, "validating");
    let (results, stopped) = until_done(&client, &profile, &batch).await;
    assert_eq!((results.len(), stopped), (1, None), "one output file, no error file");

    let submitted = stub.submitted_lines();
    assert_eq!(
        submitted.iter().map(|(id, _)| id.clone()).collect::<Vec<_>>(),
        ids.iter().map(Uuid::to_string).collect::<Vec<_>>()
    );
    // The line is the body the on-demand call sends, byte for byte.
    let on_demand = StubProvider::start().await;
    let live = aitasks_providers::ModelProfile { base_url: on_demand.base_url.clone(), ..profile.clone() };
    HttpProvider::new(Duration::from_secs(5))
        .unwrap()
        .run(&live, &requests[&ids[0]], &CancellationToken::new())
        .await
        .unwrap();
    // A streamed call adds only its `stream` fields.
    let mut sent = on_demand.requests()[0].clone();
    let streamed = sent.as_object_mut().map(|body| (body.remove("stream"), body.remove("stream_options")));
    assert_eq!(streamed, Some((Some(json!(true)), Some(json!({"include_usage": true})))));
    assert_eq!(submitted[0].1, sent);

    let outcomes = by_task(client.results(&profile, &results, &requests).all().await.unwrap());
    assert_eq!(outcomes.len(), 5);
    for id in &ids {
        let done = answered(&outcomes[id][0]);
        assert_eq!(done.output, json!("pos"));
        assert_eq!((done.usage.calls, done.usage.input_tokens, done.usage.output_tokens), (1, 11, 7));
        let cost = done.usage.estimated_cost_usd.unwrap();
        assert!((cost - (11.0 * 1.0 + 7.0 * 4.0) / 1e6).abs() < 1e-12, "the batch prices: {cost}");
    }
}

#[tokio::test]
async fn an_invalid_line_resumes_with_one_on_demand_repair_turn() {
    let stub = StubBatches::start().await;
    let profile = openai(&stub);
    let (ids, requests) = tasks(3);
    stub.script(ids[1], LineScript::Invalid);
    let client = client();
    let batch = client.submit(&profile, Uuid::new_v4(), &lines(&ids, &requests)).await.unwrap();
    let (results, _) = until_done(&client, &profile, &batch).await;
    let outcomes = by_task(client.results(&profile, &results, &requests).all().await.unwrap());
    let LineOutcome::Invalid(resume) = &outcomes[&ids[1]][0] else { panic!("{:?}", outcomes[&ids[1]]) };
    assert!(resume.problems.contains("choice"), "{}", resume.problems);
    assert_eq!(resume.conversation.len(), 4, "system, user, the bad answer, the correction");
    // The store keeps it as JSON.
    let stored: Resume = serde_json::from_value(serde_json::to_value(resume).unwrap()).unwrap();
    assert_eq!(&stored, resume);

    let on_demand = StubProvider::start().await;
    let live = aitasks_providers::ModelProfile { base_url: on_demand.base_url.clone(), ..profile.clone() };
    let provider = HttpProvider::new(Duration::from_secs(5)).unwrap();
    let gate = aitasks_providers::NoLimits;
    let done = provider
        .repair_gated(
            &live,
            &requests[&ids[1]],
            &stored,
            &gate,
            &aitasks_providers::NoTap,
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(done.output, json!("pos"));
    assert_eq!((done.usage.calls, done.usage.input_tokens, done.usage.output_tokens), (2, 22, 14));
    let cost = done.usage.estimated_cost_usd.unwrap();
    assert!(
        (cost - ((11.0 + 28.0) + (22.0 + 56.0)) / 1e6).abs() < 1e-12,
        "batch then on-demand prices: {cost}"
    );
    let sent = &on_demand.requests()[0];
    assert_eq!(sent["messages"].as_array().unwrap().len(), 4);
    assert!(sent["messages"][3]["content"].as_str().unwrap().contains("not valid"));

    // Invalid again: no further turn.
    on_demand.script([Reply::Answer(json!({"choice": "maybe"}))]);
    let error = provider
        .repair_gated(
            &live,
            &requests[&ids[1]],
            &stored,
            &gate,
            &aitasks_providers::NoTap,
            &CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert!(matches!(error, ProviderError::LoopFailed(_)), "{error:?}");
    assert_eq!(on_demand.calls(), 2, "one call per repair");
}

#[tokio::test]
async fn error_lines_map_to_codes_and_duplicates_omissions_and_strangers_are_handled() {
    let stub = StubBatches::start().await;
    let profile = openai(&stub);
    let (ids, mut requests) = tasks(7);
    stub.script(ids[0], LineScript::Error(500));
    stub.script(ids[1], LineScript::Error(400));
    stub.script(ids[2], LineScript::Error(429));
    stub.script(ids[3], LineScript::Duplicate);
    stub.script(ids[4], LineScript::Omit);
    let client = client();
    let batch = client.submit(&profile, Uuid::new_v4(), &lines(&ids, &requests)).await.unwrap();
    let (results, stopped) = until_done(&client, &profile, &batch).await;
    assert_eq!((results.len(), stopped), (2, None), "an output and an error file");
    // A line of a task this batcher does not know (ids[6]) is left out.
    requests.remove(&ids[6]);
    let outcomes = by_task(client.results(&profile, &results, &requests).all().await.unwrap());
    let failed = |id: &Uuid| match &outcomes[id][..] {
        [LineOutcome::Failed(error)] => error.clone(),
        other => panic!("{other:?}"),
    };
    let server = failed(&ids[0]);
    assert!(
        matches!(server, ProviderError::Server { status: 500, .. }) && server.is_retryable(),
        "{server:?}"
    );
    let rejected = failed(&ids[1]);
    assert!(matches!(rejected, ProviderError::Rejected { status: 400, .. }) && !rejected.is_retryable());
    assert_eq!(rejected.code().as_str(), "WORKFLOW_AI_PROVIDER_ERROR");
    assert!(matches!(failed(&ids[2]), ProviderError::RateLimited { .. }));
    assert_eq!(outcomes[&ids[3]].len(), 2, "both copies passed on: the store fences");
    assert!(!outcomes.contains_key(&ids[4]), "an omitted line is no result");
    answered(&outcomes[&ids[5]][0]);
    assert!(!outcomes.contains_key(&ids[6]));
    assert_eq!(outcomes.len(), 5);
}

#[tokio::test]
async fn a_resubmitted_batch_is_found_by_its_metadata_and_not_created_twice() {
    let stub = StubBatches::start().await;
    let profile = openai(&stub);
    let (ids, requests) = tasks(2);
    let client = client();
    let batch_id = Uuid::new_v4();
    let other = client.submit(&profile, Uuid::new_v4(), &lines(&ids, &requests)).await.unwrap();
    let first = client.submit(&profile, batch_id, &lines(&ids, &requests)).await.unwrap();
    let again = client.submit(&profile, batch_id, &lines(&ids, &requests)).await.unwrap();
    assert_eq!(first, again);
    assert_ne!(first, other);
    assert_eq!((stub.creates(), stub.uploads()), (2, 2), "no second batch, no second upload");
}

#[tokio::test]
async fn expired_failed_and_canceled_batches_end_with_retryable_lines() {
    let stub = StubBatches::start().await;
    let profile = openai(&stub);
    let (ids, requests) = tasks(2);
    let client = client();

    stub.set_outcome(BatchOutcome::Expire);
    let batch = client.submit(&profile, Uuid::new_v4(), &lines(&ids, &requests)).await.unwrap();
    let (results, stopped) = until_done(&client, &profile, &batch).await;
    assert_eq!(stopped.as_deref(), Some("expired"));
    let outcomes = by_task(client.results(&profile, &results, &requests).all().await.unwrap());
    for id in &ids {
        let [LineOutcome::Unanswered(why)] = &outcomes[id][..] else { panic!("{:?}", outcomes[id]) };
        assert!(why.contains("expired"), "{why}");
    }

    stub.set_outcome(BatchOutcome::Fail);
    let batch = client.submit(&profile, Uuid::new_v4(), &lines(&ids, &requests)).await.unwrap();
    let (results, stopped) = until_done(&client, &profile, &batch).await;
    assert_eq!((results, stopped.as_deref()), (vec![], Some("failed: invalid_file")));

    stub.set_outcome(BatchOutcome::Complete);
    stub.hold();
    let batch = client.submit(&profile, Uuid::new_v4(), &lines(&ids, &requests)).await.unwrap();
    client.cancel(&profile, &batch).await.unwrap();
    stub.release();
    let (results, stopped) = until_done(&client, &profile, &batch).await;
    assert_eq!(stopped.as_deref(), Some("cancelled"));
    let outcomes = by_task(client.results(&profile, &results, &requests).all().await.unwrap());
    assert!(outcomes.values().all(|o| matches!(&o[..], [LineOutcome::Unanswered(_)])));
}

#[tokio::test]
async fn an_oversized_line_is_its_task_s_malformed_answer_and_the_rest_are_read() {
    let stub = StubBatches::start().await;
    let profile = openai(&stub);
    let (ids, requests) = tasks(2);
    stub.script(ids[0], LineScript::Oversized(MAX_RESULT_LINE_BYTES));
    let client = client();
    let batch = client.submit(&profile, Uuid::new_v4(), &lines(&ids, &requests)).await.unwrap();
    let (results, _) = until_done(&client, &profile, &batch).await;
    let outcomes = by_task(client.results(&profile, &results, &requests).all().await.unwrap());
    let [LineOutcome::Failed(error)] = &outcomes[&ids[0]][..] else { panic!("{:?}", outcomes[&ids[0]]) };
    assert!(matches!(error, ProviderError::Malformed(m) if m.contains("over 1048576 bytes")), "{error:?}");
    answered(&outcomes[&ids[1]][0]);

    // A file has no bound of its own: it is read as a stream, a line at a time, so one line of
    // 64 MiB is its task's malformed answer and its neighbour's answer is read after it.
    let (ids, requests) = tasks(2);
    stub.script(ids[0], LineScript::Oversized(64 * 1024 * 1024));
    let batch = client.submit(&profile, Uuid::new_v4(), &lines(&ids, &requests)).await.unwrap();
    let (results, _) = until_done(&client, &profile, &batch).await;
    let outcomes = by_task(client.results(&profile, &results, &requests).all().await.unwrap());
    let [LineOutcome::Failed(error)] = &outcomes[&ids[0]][..] else { panic!("{:?}", outcomes[&ids[0]]) };
    assert!(matches!(error, ProviderError::Malformed(m) if m.contains("over 1048576 bytes")), "{error:?}");
    answered(&outcomes[&ids[1]][0]);
}

#[tokio::test]
async fn results_come_in_pages_of_bounded_size() {
    let stub = StubBatches::start().await;
    let profile = openai(&stub);
    // Answers of 100 kB a line: a page ends once it holds PAGE_BYTES.
    stub.answer_with_text("x".repeat(100_000));
    let text = json!({"kind": "generate_text", "prompt": "Write.", "maxOutputChars": 100_000});
    let ids: Vec<Uuid> = (0..100).map(|_| Uuid::new_v4()).collect();
    let requests: std::collections::HashMap<Uuid, aitasks_contracts::AiRequest> = ids
        .iter()
        .map(|id| {
            (*id, aitasks_contracts::AiRequest::parse(&text, &aitasks_contracts::Path::root()).unwrap())
        })
        .collect();
    let client = client();
    let batch = client.submit(&profile, Uuid::new_v4(), &lines(&ids, &requests)).await.unwrap();
    let (results, _) = until_done(&client, &profile, &batch).await;
    let mut reader = client.results(&profile, &results, &requests);
    let mut pages = Vec::new();
    while let Some(page) = reader.next_page().await.unwrap() {
        pages.push(page.len());
    }
    assert_eq!(pages.iter().sum::<usize>(), 100, "every line, once: {pages:?}");
    assert!(pages.len() > 1, "more than one page: {pages:?}");
    let most = PAGE_BYTES / 100_000 + 1;
    assert!(pages.iter().all(|&n| n <= most.min(PAGE_LINES)), "pages of at most {most} lines: {pages:?}");
}

#[tokio::test]
async fn a_wrong_key_is_refused_and_never_in_the_error() {
    let stub = StubBatches::start().await;
    let mut profile = openai(&stub);
    profile.api_key = Some(aitasks_providers::ApiKey::new("sk-wrong-secret"));
    let (ids, requests) = tasks(1);
    let error = client().submit(&profile, Uuid::new_v4(), &lines(&ids, &requests)).await.unwrap_err();
    assert!(matches!(error, ProviderError::Auth { status: 401 }), "{error:?}");
    assert!(!format!("{error:?}").contains("sk-wrong-secret"));
    assert_eq!(stub.unauthorized(), 1);
}

#[tokio::test]
async fn a_finished_batch_s_files_are_deleted_and_a_running_one_is_canceled_first() {
    let stub = StubBatches::start().await;
    let profile = openai(&stub);
    let (ids, requests) = tasks(3);
    stub.script(ids[0], LineScript::Error(400));
    let client = client();
    let batch = client.submit(&profile, Uuid::new_v4(), &lines(&ids, &requests)).await.unwrap();
    let (results, _) = until_done(&client, &profile, &batch).await;
    assert_eq!((results.len(), stub.files_held()), (2, 3), "input, output and error files");
    use aitasks_providers::Cleanup;
    assert_eq!(client.clean_up(&profile, &batch).await.unwrap(), Cleanup::Done);
    assert_eq!((stub.file_deletes(), stub.files_held()), (3, 0));
    assert_eq!(client.clean_up(&profile, &batch).await.unwrap(), Cleanup::Done, "again: nothing left, done");

    stub.hold();
    let running = client.submit(&profile, Uuid::new_v4(), &lines(&ids, &requests)).await.unwrap();
    assert_eq!(client.clean_up(&profile, &running).await.unwrap(), Cleanup::NotYet);
    assert_eq!(stub.cancels(), 1);
    stub.advance();
    assert_eq!(client.clean_up(&profile, &running).await.unwrap(), Cleanup::Done);
    assert_eq!(stub.files_held(), 0, "its input file, and the canceled lines' error file");
}
