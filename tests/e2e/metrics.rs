//! The functions' metrics, read from their logs as CloudWatch reads them: every Embedded Metric
//! Format document is checked against the specification's structure (the `_aws` block, one
//! metric directive with a namespace, dimension sets naming members of the document, metrics
//! with units and numeric values), and the figures against what the run did: requests by
//! route and outcome (an admission refusal by its code), settlements by outcome and error code
//! (a success and two provider failures), tokens of the success.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use aitasks_testkit::*;
use serde_json::{json, Value};

const APP: &str = "app-metrics";
/// Prices that make the estimate easy to check: a dollar per input token, two per output token.
const MODELS: &str = r#"{"default": {"model": "stub-model", "prices": {"inputPerMillion": 1000000, "outputPerMillion": 2000000}}}"#;

fn create(key: &str, burst: Option<u64>) -> Value {
    scoped_create(key, key, "s", burst)
}

/// A create of `text`'s classification; scoped (source `key`) when `burst` is given.
fn scoped_create(key: &str, text: &str, scope: &str, burst: Option<u64>) -> Value {
    let mut body = json!({
        "owner": {"scopeId": scope}, "stepKey": "classify", "effectKey": key, "modelId": "default",
        "request": {"kind": "classify", "prompt": "Sentiment?", "input": {"text": text}, "choices": ["pos", "neg"]},
    });
    if let Some(burst) = burst {
        body["scope"] = json!({"sourceId": text, "sourceRevision": "r1",
            "budget": {"burst": burst, "tasksPerMinute": 1, "maxStepsPerSource": 10, "sourcesPer24Hours": 10,
                       "scopeConcurrent": 10, "globalConcurrent": 10}});
    }
    body
}

/// Check one document against the EMF specification; panics with the reason.
fn check_emf(document: &Value) {
    let aws = &document["_aws"];
    assert!(aws["Timestamp"].as_u64().is_some_and(|t| t > 1_600_000_000_000), "Timestamp in ms: {document}");
    let directives = aws["CloudWatchMetrics"].as_array().expect("CloudWatchMetrics is an array");
    assert_eq!(directives.len(), 1, "{document}");
    let directive = &directives[0];
    assert!(directive["Namespace"].as_str().is_some_and(|n| !n.is_empty() && n.len() <= 255), "{document}");
    for set in directive["Dimensions"].as_array().expect("Dimensions is an array") {
        let set = set.as_array().expect("a dimension set is an array");
        assert!(set.len() <= 30, "at most 30 dimensions per set");
        for name in set {
            let name = name.as_str().expect("a dimension is named");
            assert!(document[name].is_string(), "dimension {name} is a string member: {document}");
        }
    }
    let metrics = directive["Metrics"].as_array().expect("Metrics is an array");
    assert!(!metrics.is_empty() && metrics.len() <= 100, "{document}");
    for metric in metrics {
        let name = metric["Name"].as_str().expect("a metric is named");
        assert!(
            ["Count", "Milliseconds", "Seconds", "None"].contains(&metric["Unit"].as_str().unwrap_or("")),
            "{metric}"
        );
        assert!(document[name].is_number(), "metric {name} has a numeric value: {document}");
    }
}

#[tokio::test]
async fn every_emf_document_is_well_formed_and_the_counts_match_the_run() {
    let (_, server) = via(&app_base_url(), "-");
    let proxy = TcpProxy::start(&server).await;
    let stack =
        Stack::start_through(&[("AITASK_MAX_ATTEMPTS", "1"), ("AITASK_MODELS", MODELS)], &proxy).await;
    let api = stack.api(APP);
    let (_, ok) = api.post("/v1/tasks", &create("fine", None)).await;
    let ok_id = ok["id"].as_str().unwrap().to_owned();
    let wait = |id: String| {
        let db = &stack.db;
        async move {
            let until = Instant::now() + aitasks_testkit::PATIENCE;
            while db
                .count(&format!("SELECT count(*) FROM tasks WHERE id = '{id}' AND completed_at IS NOT NULL"))
                .await
                == 0
            {
                assert!(Instant::now() < until, "task {id} did not settle");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    };
    wait(ok_id.clone()).await;
    // A scoped result, then the same request for the same source under another key: a cache hit.
    let (_, first) = api.post("/v1/tasks", &scoped_create("cached-1", "same text", "s-cache", Some(5))).await;
    wait(first["id"].as_str().unwrap().to_owned()).await;
    let (status, hit) =
        api.post("/v1/tasks", &scoped_create("cached-2", "same text", "s-cache", Some(5))).await;
    assert_eq!((status, hit["status"].as_str()), (201, Some("succeeded")), "a cache hit: {hit}");
    stack.stub.set_default(Reply::status(500));
    let (_, doomed) = api.post("/v1/tasks", &create("doomed", None)).await;
    wait(doomed["id"].as_str().unwrap().to_owned()).await;
    assert_eq!(api.post("/v1/tasks", &create("scoped", Some(1))).await.0, 201);
    assert_eq!(
        api.post("/v1/tasks", &create("scoped", Some(1))).await.0,
        200,
        "the same effect key: the existing task"
    );
    // The scope's bucket held one token.
    let refused = api
        .send(reqwest::Method::POST, "/v1/tasks", Some(create("scoped-2", Some(1)).to_string().into_bytes()))
        .await;
    assert_eq!(refused.body["error"]["code"], "WORKFLOW_AI_RATE_LIMIT");
    // Every task settled (the scoped one fails too: the provider still answers 500).
    let until = Instant::now() + aitasks_testkit::PATIENCE;
    while stack.db.count("SELECT count(*) FROM tasks WHERE completed_at IS NULL").await > 0 {
        assert!(Instant::now() < until, "tasks left unsettled");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // A database outage: the functions' connections are cut, the create is answered 503.
    proxy.cut();
    let outage = api
        .send(
            reqwest::Method::POST,
            "/v1/tasks",
            Some(create("during-outage", None).to_string().into_bytes()),
        )
        .await;
    assert_eq!(
        (outage.status, outage.body["error"]["code"].as_str()),
        (503, Some("UNAVAILABLE")),
        "{}",
        outage.body
    );
    proxy.restore();
    // A sweep after the outage samples the backlog.
    let swept_after = Instant::now() + Duration::from_secs(15);
    let backlog_documents =
        || stack.server.logs().lines().filter(|line| line.contains("\"OldestQueuedAgeMs\"")).count();
    let before = backlog_documents();
    while backlog_documents() == before {
        assert!(Instant::now() < swept_after, "no backlog sampled after the outage");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let documents: Vec<Value> =
        stack.server.json_lines().into_iter().filter(|line| line.get("_aws").is_some()).collect();
    for document in &documents {
        check_emf(document);
    }
    let named = |metric: &'static str| documents.iter().filter(move |d| d[metric].is_number());

    let mut requests: BTreeMap<(String, String), u64> = BTreeMap::new();
    for document in named("Requests") {
        let key = (
            document["Route"].as_str().unwrap().to_owned(),
            document["Outcome"].as_str().unwrap().to_owned(),
        );
        *requests.entry(key).or_default() += document["Requests"].as_f64().unwrap_or(0.0) as u64;
    }
    let post = |outcome: &str| requests.get(&("POST /v1/tasks".to_owned(), outcome.to_owned())).copied();
    assert_eq!(post("201"), Some(5), "{requests:?}");
    assert_eq!(post("UNAVAILABLE"), Some(1), "the outage by its code: {requests:?}");
    assert_eq!(post("200"), Some(1), "{requests:?}");
    assert_eq!(post("WORKFLOW_AI_RATE_LIMIT"), Some(1), "an admission refusal by its code: {requests:?}");

    let mut settlements: BTreeMap<(String, String), u64> = BTreeMap::new();
    for document in named("Settlements") {
        assert_eq!(document["ModelId"], "default");
        let key = (
            document["Outcome"].as_str().unwrap().to_owned(),
            document["ErrorCode"].as_str().unwrap().to_owned(),
        );
        *settlements.entry(key).or_default() += 1;
        // The worker's own time on the attempt, by part (properties, not metrics).
        for part in ["ClaimMs", "GateMs", "VisibilityMs", "SettleMs"] {
            assert!(document[part].as_f64().is_some_and(|ms| ms >= 0.0), "{part}: {document}");
        }
    }
    // Every settlement's event was published, with the time its sending and marking took.
    let published: f64 = named("EventsPublished").map(|d| d["EventsPublished"].as_f64().unwrap()).sum();
    assert!(published >= 4.0, "the settlements' events were published: {published}");
    for document in named("EventsPublished") {
        assert!(document["EventMs"].is_number() && document["CallbacksMs"].is_number(), "{document}");
    }
    assert_eq!(settlements.get(&("succeeded".into(), "none".into())), Some(&2), "{settlements:?}");
    assert_eq!(
        settlements.get(&("failed".into(), "WORKFLOW_AI_PROVIDER_ERROR".into())),
        Some(&2),
        "{settlements:?}"
    );
    for success in named("Settlements").filter(|d| d["Outcome"] == "succeeded") {
        for metric in ["ProviderLatencyMs", "InputTokens", "OutputTokens", "EstimatedCostUSD"] {
            assert!(success[metric].is_number(), "{metric} on the success: {success}");
        }
        let tokens = |name: &str| success[name].as_f64().unwrap();
        let expected = tokens("InputTokens") + 2.0 * tokens("OutputTokens");
        assert!(
            expected > 0.0 && (tokens("EstimatedCostUSD") - expected).abs() < 1e-6,
            "the profile's prices: {success}"
        );
    }

    let mut created: BTreeMap<String, u64> = BTreeMap::new();
    for document in named("Tasks") {
        *created.entry(document["Result"].as_str().unwrap().to_owned()).or_default() += 1;
    }
    let expected: BTreeMap<String, u64> =
        [("new".to_owned(), 4), ("cacheHit".to_owned(), 1), ("existing".to_owned(), 1)].into();
    assert_eq!(created, expected, "tasks created, cache hits, existing keys");

    let backlog = named("OldestQueuedAgeMs").next_back().expect("a backlog sample");
    for metric in ["QueuedTasks", "RunningTasks", "OldestRunningAgeMs", "TaskQueueMessages"] {
        assert!(backlog[metric].is_number(), "{metric} sampled: {backlog}");
    }
    assert_eq!(backlog["QueuedTasks"], 0.0, "nothing is left queued: {backlog}");
    assert!(
        documents.iter().all(|d| d.get("TaskId").is_none() && d.get("tenant").is_none()),
        "no ids as metrics"
    );
}
