//! Batches of any size: chunks the API takes, results in order, refused items answered alone, a
//! throttled item sent again.

use std::time::Duration;

use aitasks_client::{ItemResult, TaskBody};
use serde_json::{json, Value};

use crate::stub::{Answer, Stub};

fn body(i: usize) -> TaskBody {
    TaskBody::unchecked(json!({"owner": {"scopeId": "s"}, "stepKey": "label", "effectKey": format!("k{i}")}))
}

fn summary(item: &Value, status: &str) -> Value {
    let key = item["effectKey"].as_str().unwrap();
    let n: u64 = key[1..].parse().unwrap();
    json!({"id": format!("01936f3e-4b2a-7c3d-8e4f-{n:012}"), "runId": null, "stepKey": "label",
           "effectKey": key, "status": status, "createdAt": "2026-12-03T10:00:00Z"})
}

#[tokio::test]
async fn a_batch_of_any_size_goes_in_chunks_of_a_thousand_and_answers_in_order() {
    // Every 7th item is refused; item 12's first answer is a 429 with retryAfter, then it is made.
    let stub = Stub::start(|n, hit| {
        let results: Vec<Value> = hit.body["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|item| {
                let key = item["effectKey"].as_str().unwrap();
                let i: usize = key[1..].parse().unwrap();
                if i == 12 && n == 0 {
                    json!({"status": 429, "error": {"code": "WORKFLOW_AI_RATE_LIMIT", "message": "slow down", "retryAfter": 1}})
                } else if i % 7 == 3 {
                    json!({"status": 400, "error": {"code": "AI_MODEL_UNKNOWN", "message": "no such model"}})
                } else if i.is_multiple_of(2) {
                    json!({"status": 201, "task": summary(item, "queued")})
                } else {
                    json!({"status": 200, "task": summary(item, "succeeded")})
                }
            })
            .collect();
        Answer::json(200, json!({"results": results}))
    })
    .await;
    let bodies: Vec<TaskBody> = (0..2_345).map(body).collect();
    let mut progress = Vec::new();
    let report =
        stub.client(3).create_many_with(&bodies, |counts| progress.push(counts.answered())).await.unwrap();

    let sizes: Vec<usize> = stub.hits().iter().map(|h| h.body["tasks"].as_array().unwrap().len()).collect();
    assert_eq!(sizes, [1_000, 1, 1_000, 345], "the throttled item alone, after its chunk");
    assert!(stub.hits()[1].at - stub.hits()[0].at >= Duration::from_secs(1), "retryAfter honoured");
    assert_eq!(stub.hits()[1].body["tasks"][0]["effectKey"], "k12");
    assert_eq!(progress, [1_000, 2_000, 2_345]);

    assert_eq!(report.results.len(), 2_345);
    for (i, result) in report.results.iter().enumerate() {
        match result {
            ItemResult::Refused(error) => {
                assert_eq!((i % 7, error.code.as_str(), error.status), (3, "AI_MODEL_UNKNOWN", 400));
            }
            ItemResult::Created(task) | ItemResult::Existing(task) => {
                assert_eq!(task.effect_key.as_deref(), Some(format!("k{i}").as_str()), "in order");
            }
        }
    }
    let refused = (0..2_345).filter(|i| i % 7 == 3).count();
    let created = (0..2_345).filter(|i| i % 7 != 3 && i % 2 == 0).count();
    let counts = report.counts;
    assert_eq!(
        (counts.refused, counts.created, counts.existing),
        (refused, created, 2_345 - refused - created)
    );
    assert!(matches!(report.results[12], ItemResult::Created(_)), "sent again, then made");
    assert_eq!(report.refused().count(), refused);
}

#[tokio::test]
async fn a_chunk_refused_whole_ends_the_batch_with_its_error() {
    let stub = Stub::script(vec![Answer::error(401, "UNAUTHORIZED")]).await;
    let bodies: Vec<TaskBody> = (0..1_500).map(body).collect();
    let error = stub.client(3).create_many(&bodies).await.unwrap_err();
    assert_eq!((error.status(), error.code()), (Some(401), Some("UNAUTHORIZED")));
    assert_eq!(stub.hits().len(), 1, "no second chunk after a refused first");
}
