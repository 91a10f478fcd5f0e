//! The client library itself (`aitasks-client`) against the dev server, for what the command
//! line does not call: release, the unreleased sources, deleting a scope's data; and a batch's
//! per-item report.

use std::time::Duration;

use aitasks_client::{tasks_of, Client, ItemResult, Outcome, SourceRef, TaskBody, TaskFilter, TaskStatus};
use aitasks_testkit::{dev_token, Stack};
use serde_json::json;

const APP: &str = "app-cli-library";

fn scoped(effect_key: &str, source: &str) -> TaskBody {
    TaskBody::checked(json!({
        "owner": {"scopeId": "docs"}, "stepKey": "label", "effectKey": effect_key, "modelId": "default",
        "request": {"kind": "classify", "prompt": "Topic?", "input": {"doc": effect_key}, "choices": ["a", "b"]},
        "scope": {"sourceId": source, "sourceRevision": "r1",
                  "budget": {"burst": 100, "tasksPerMinute": 1000, "maxStepsPerSource": 100,
                             "sourcesPer24Hours": 100, "scopeConcurrent": 100, "globalConcurrent": 100}}
    }))
    .unwrap()
}

fn source(id: &str) -> SourceRef {
    SourceRef { scope_id: "docs".into(), source_id: id.into() }
}

#[tokio::test]
async fn release_unreleased_sources_and_deleting_a_scopes_data() {
    let stack = Stack::start().await;
    let client = Client::new(format!("http://{}", stack.server.address), dev_token(APP)).unwrap();
    for (key, doc) in [("k1", "d1"), ("k2", "d2"), ("k3", "d2")] {
        let created = client.create(&scoped(key, doc)).await.unwrap();
        assert_eq!(created.outcome, Outcome::Created);
        let ended = client.wait(created.task.id, Duration::from_secs(60)).await.unwrap();
        assert_eq!(ended.status, TaskStatus::Succeeded);
    }
    assert_eq!(client.create(&scoped("k1", "d1")).await.unwrap().outcome, Outcome::Existing);

    let unreleased = client.unreleased_sources("label", None).await.unwrap();
    assert_eq!((unreleased.sources, unreleased.next), (vec![source("d1"), source("d2")], None));
    assert!(client.release("docs", "k1").await.unwrap().released);
    assert!(!client.release("docs", "no-such-key").await.unwrap().released);
    let unreleased = client.unreleased_sources("label", None).await.unwrap();
    assert_eq!(unreleased.sources, [source("d2")], "d1's only task is released");
    let after = client.unreleased_sources("label", Some(&source("d1"))).await.unwrap();
    assert_eq!(after.sources, [source("d2")]);

    assert_eq!(client.delete_scope_tasks_all("docs", Some("d2")).await.unwrap(), 2);
    let left = client.list_all(tasks_of(TaskFilter::Scope("docs".into()))).await.unwrap();
    assert_eq!(left.iter().map(|t| t.effect_key.as_str()).collect::<Vec<_>>(), ["k1"]);
    let gone = client.get_by_effect_key("k2").await.unwrap_err();
    assert_eq!((gone.status(), gone.code()), (Some(404), Some("NOT_FOUND")));
    let round = client.delete_scope_tasks("docs", None).await.unwrap();
    assert_eq!((round.deleted, round.more), (1, false));
    assert!(client.list_all(tasks_of(TaskFilter::Scope("docs".into()))).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_batch_report_holds_every_item_in_order() {
    let stack = Stack::start().await;
    let client = Client::new(format!("http://{}", stack.server.address), dev_token(APP)).unwrap();
    let mut bodies: Vec<TaskBody> = (0..1_205)
        .map(|i| {
            TaskBody::checked(json!({
                "owner": {"scopeId": "many"}, "stepKey": "label", "effectKey": format!("b-{i}"), "modelId": "default",
                "request": {"kind": "classify", "prompt": "Spam?", "input": i, "choices": ["spam", "ham"]}
            }))
            .unwrap()
        })
        .collect();
    let mut unknown = bodies[3].as_value().clone();
    unknown["modelId"] = json!("no-such-model");
    unknown["effectKey"] = json!("b-unknown");
    bodies[3] = TaskBody::unchecked(unknown);
    bodies[1_100] = bodies[5].clone();

    let report = client.create_many(&bodies).await.unwrap();
    let counts = report.counts;
    assert_eq!((counts.created, counts.existing, counts.refused), (1_203, 1, 1));
    assert!(matches!(&report.results[3], ItemResult::Refused(e) if e.code == "AI_MODEL_UNKNOWN"));
    let (first, repeat) = (report.results[5].task().unwrap(), report.results[1_100].task().unwrap());
    assert!(matches!(report.results[1_100], ItemResult::Existing(_)), "the key's task from the first chunk");
    assert_eq!(first.id, repeat.id);
    for (i, result) in report.results.iter().enumerate().filter(|(i, _)| ![3, 1_100].contains(i)) {
        assert_eq!(result.task().unwrap().effect_key.as_deref(), Some(format!("b-{i}").as_str()));
    }
    let listed = client.list_all(tasks_of(TaskFilter::Scope("many".into()))).await.unwrap();
    assert_eq!(listed.len(), 1_203, "every task made, once");
}
