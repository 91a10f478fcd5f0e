//! Traces as the X-Ray daemon receives them: the dev server, given a daemon address as Lambda
//! gives one to a function with active tracing, sends its segment documents over UDP to a
//! listener here. One task is one trace: the create's request subsegment (with the store and
//! the send under it), then the worker's segment downstream of it (claim, provider call and
//! settle under that), each document in the daemon's wire format and annotated with the task id.

use std::collections::HashMap;
use std::time::Duration;

use aitasks_testkit::*;
use serde_json::{json, Value};
use tokio::net::UdpSocket;

/// Every document received until `quiet` passes without one.
async fn receive(socket: &UdpSocket, quiet: Duration) -> Vec<Value> {
    let mut documents = Vec::new();
    let mut buffer = vec![0u8; 65_536];
    while let Ok(Ok(n)) = tokio::time::timeout(quiet, socket.recv(&mut buffer)).await {
        let datagram = std::str::from_utf8(&buffer[..n]).expect("UTF-8");
        let (header, body) = datagram.split_once('\n').expect("a header line, then the document");
        assert_eq!(serde_json::from_str::<Value>(header).unwrap(), json!({"format": "json", "version": 1}));
        documents.push(serde_json::from_str(body).expect("a JSON segment document"));
    }
    documents
}

/// Create a classification under `key` and wait for it to succeed; its id.
async fn classify_to_the_end(api: &Api, key: &str) -> String {
    let body = json!({
        "owner": {"scopeId": "s"}, "stepKey": "classify", "effectKey": key, "modelId": "default",
        "request": {"kind": "classify", "prompt": "Sentiment?", "input": {"text": "great"}, "choices": ["pos", "neg"]},
    });
    let (status, created) = api.post("/v1/tasks", &body).await;
    assert_eq!(status, 201, "{created}");
    let task_id = created["id"].as_str().unwrap().to_owned();
    let task = api.wait_terminal(&task_id).await;
    assert_eq!(task["status"], "succeeded", "{task}");
    task_id
}

#[tokio::test]
async fn a_task_is_one_trace_from_create_to_settlement() {
    let daemon = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let address = daemon.local_addr().unwrap().to_string();
    let stack = Stack::start_with(&[("AWS_XRAY_DAEMON_ADDRESS", &address)]).await;
    let api = stack.api("app-traces");
    let task_id = classify_to_the_end(&api, "traced").await;

    let documents = receive(&daemon, Duration::from_secs(2)).await;
    let named = |name: &str| -> Vec<&Value> {
        documents
            .iter()
            .filter(|d| d["name"] == name && d["annotations"]["task_id"] == task_id.as_str())
            .collect()
    };
    let one = |name: &str| -> &Value {
        let found = named(name);
        assert_eq!(found.len(), 1, "one {name:?} for the task: {documents:#?}");
        found[0]
    };
    let by_id: HashMap<&str, &Value> = documents.iter().map(|d| (d["id"].as_str().unwrap(), d)).collect();

    // The create: the request subsegment, in the invocation's trace, with its parts under it.
    let request = documents
        .iter()
        .find(|d| d["name"] == "POST /v1/tasks" && d["annotations"]["task_id"] == task_id.as_str())
        .expect("the create's request subsegment, annotated with the task id");
    assert_eq!(request["type"], "subsegment");
    let trace = request["trace_id"].as_str().unwrap();
    let under = |document: &Value, parent: &Value| {
        assert_eq!(document["parent_id"], parent["id"], "{} under {}", document["name"], parent["name"]);
        assert_eq!(document["trace_id"], trace, "{} in the task's trace", document["name"]);
        assert_eq!(document["type"], "subsegment");
        let (start, end) = (document["start_time"].as_f64().unwrap(), document["end_time"].as_f64().unwrap());
        assert!(start <= end && start >= parent["start_time"].as_f64().unwrap(), "{document}");
    };
    for part in ["store create", "send task message"] {
        let found: Vec<_> =
            documents.iter().filter(|d| d["name"] == part && d["parent_id"] == request["id"]).collect();
        assert_eq!(found.len(), 1, "{part} under the request: {documents:#?}");
        under(found[0], request);
    }

    // The worker: a segment downstream of the create, in the same trace, from another invocation.
    let worker = one("aitasks");
    assert_eq!(worker["trace_id"], trace, "the worker continues the create's trace");
    assert!(worker.get("type").is_none(), "a segment of its own: {worker}");
    let parent = by_id.get(worker["parent_id"].as_str().unwrap()).expect("the worker's parent was sent");
    assert_eq!(parent["trace_id"], trace);
    assert_eq!(worker["annotations"]["attempt"], 1);
    for part in ["claim", "provider call", "settle"] {
        let found: Vec<_> =
            documents.iter().filter(|d| d["name"] == part && d["parent_id"] == worker["id"]).collect();
        assert_eq!(found.len(), 1, "{part} under the worker: {documents:#?}");
        under(found[0], worker);
    }
    let provider = documents.iter().find(|d| d["name"] == "provider call").unwrap();
    assert_eq!(
        (provider["namespace"].as_str(), provider["annotations"]["model_id"].as_str()),
        (Some("remote"), Some("default"))
    );

    // What ties them: the header stored with the task names the create's trace.
    let stored: String = stack
        .db
        .client()
        .await
        .query_one("SELECT trace_header FROM tasks WHERE id = $1::text::uuid", &[&task_id])
        .await
        .unwrap()
        .get(0);
    assert!(
        stored.starts_with(&format!("Root={trace};Parent=")) && stored.ends_with(";Sampled=1"),
        "{stored}"
    );
}

#[tokio::test]
async fn without_a_daemon_nothing_is_traced_or_stored() {
    let stack = Stack::start().await;
    let api = stack.api("app-untraced");
    classify_to_the_end(&api, "plain").await;
    assert_eq!(stack.db.count("SELECT count(*) FROM tasks WHERE trace_header IS NOT NULL").await, 0);
}
