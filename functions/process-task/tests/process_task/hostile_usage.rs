//! Review: what a provider reports about its usage is input like any other. A provider (or a
//! proxy in front of it) that reports an absurd token count must cost nobody else anything:
//! not the profile's other calls of the minute, and not the attempt that got the report.

use std::time::Duration;

use crate::common::*;
use aitasks_store::TaskStatus;
use aitasks_testkit::*;
use serde_json::json;

/// An OpenAI-compatible 200 with `content` as the answer and a usage of `prompt_tokens`.
fn answer_with_usage(content: &str, prompt_tokens: u64) -> Reply {
    Reply::Status {
        status: 200,
        body: json!({
            "id": "chatcmpl-hostile",
            "object": "chat.completion",
            "model": "stub-model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 7},
        })
        .to_string(),
        retry_after: None,
    }
}

/// One answer says it used 2^64 - 1 input tokens; the profile limits only requests (100 a
/// minute). The other four tasks of the minute should run: instead the minute's token count is
/// i64::MAX, every later start_call.sql fails with `bigint out of range`, the worker reads that
/// as "the limits cannot be checked" and gives every task back, for every tenant, until the
/// minute ends.
#[tokio::test]
async fn an_absurd_usage_report_leaves_the_rest_of_the_minute_to_the_other_tasks() {
    let second = chrono::Timelike::second(&chrono::Utc::now());
    if second > 45 {
        tokio::time::sleep(Duration::from_secs(u64::from(61 - second))).await;
    }
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    stub.script([answer_with_usage(r#"{"choice": "pos"}"#, u64::MAX)]);
    let models =
        json!({"default": {"model": "m", "baseUrl": stub.base_url, "limits": {"requestsPerMinute": 100}}})
            .to_string();
    let app = app(&db, &queues, &stub, &[("AITASK_MODELS", models.as_str())]).await;
    let first = task(&db, "hostile", "Sentiment?", 3).await;
    process_task::handle(&app, event(&[&first], Duration::from_secs(60))).await.unwrap();
    let mut others = Vec::new();
    for n in 0..4 {
        others.push(task(&db, &format!("after-{n}"), "Sentiment?", 3).await);
    }
    for other in &others {
        process_task::handle(&app, event(&[other], Duration::from_secs(60))).await.unwrap();
    }
    let succeeded = db.count("SELECT count(*) FROM tasks WHERE status = 'succeeded'").await;
    let given_back = db.count("SELECT count(*) FROM tasks WHERE status = 'queued' AND attempts = 0").await;
    println!("calls {}, succeeded {succeeded}, given back {given_back}", stub.calls());
    assert_eq!(
        (stub.calls(), succeeded),
        (5, 5),
        "5 calls of 100 in the minute; {given_back} tasks were given back instead"
    );
}

/// The first turn's answer fails the checker and reports 2^64 - 1 input tokens; the repair turn
/// answers well (11 tokens). The attempt should succeed: instead the client adds the turns'
/// counts without saturating (client.rs `usage.input_tokens += turn.input_tokens`), which
/// panics in a debug build (the attempt ends as a runtime error, the answer thrown away) and
/// wraps to a tiny count in a release build.
#[tokio::test]
async fn an_absurd_usage_report_in_a_repaired_attempt_does_not_cost_the_attempt() {
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    stub.script([answer_with_usage("{}", u64::MAX)]);
    let app = app(&db, &queues, &stub, &[]).await;
    let task = task(&db, "repaired", "Sentiment?", 3).await;
    process_task::handle(&app, event(&[&task], Duration::from_secs(60))).await.unwrap();
    let after = aitasks_store::get_task(&db.client().await, APP, task.id).await.unwrap().unwrap();
    assert_eq!(stub.calls(), 2, "the answer and its repair turn");
    assert_eq!(
        (after.status, after.attempts),
        (TaskStatus::Succeeded, 1),
        "the repaired answer is stored on the first attempt (error: {:?})",
        after.error_code
    );
    let input = after.usage.as_ref().and_then(|u| u["inputTokens"].as_u64()).unwrap_or_default();
    assert!(input >= 11, "the attempt's input tokens are at least the good turn's: {input}");
}

/// A 200 that says nothing of its usage (some OpenAI-compatible servers, a proxy that strips
/// it; Bedrock's usage is optional too) is read as 0 input and 0 output tokens, and the gate
/// puts that 0 in place of the call's reservation (permit.rs reconcile_now with `Some(0)`). The
/// minute then counts no tokens at all for calls that surely used some, and `tokensPerMinute`
/// admits every later call: the limit no longer limits anything.
#[tokio::test]
async fn a_call_that_reports_no_usage_still_counts_against_the_tokens_per_minute() {
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    let silent = json!({
        "id": "chatcmpl-silent",
        "object": "chat.completion",
        "model": "stub-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": r#"{"choice": "pos"}"#}, "finish_reason": "stop"}],
    });
    stub.set_default(Reply::Status { status: 200, body: silent.to_string(), retry_after: None });
    let models =
        json!({"default": {"model": "m", "baseUrl": stub.base_url, "limits": {"tokensPerMinute": 100000}}})
            .to_string();
    let app = app(&db, &queues, &stub, &[("AITASK_MODELS", models.as_str())]).await;
    let task = task(&db, "silent", "Sentiment?", 3).await;
    process_task::handle(&app, event(&[&task], Duration::from_secs(60))).await.unwrap();
    assert_eq!(stub.calls(), 1);
    let counted = db.count("SELECT COALESCE(sum(tokens), 0)::bigint FROM provider_usage").await;
    assert!(counted > 0, "a call that sent a prompt and got an answer counted {counted} tokens");
}
