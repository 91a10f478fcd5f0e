//! Review: every request does bounded work, in create-task's memory too (MemorySize 256 MB in
//! template.yaml). A request's stored size is bounded (100 kB of jsonb text), but not what it
//! becomes in memory: an `input` of one-key objects (`[{"a": 0}, ...]`) is a serde_json map
//! (a B-tree node of ~630 bytes) per 10 bytes of text, about 68 times its size. A listing page
//! reads up to 100 such tasks at once before its byte budget cuts the page.

use aitasks_contracts::{AppId, ListQuery};
use aitasks_runtime::{answers::TaskListAnswer, api};
use aitasks_testkit::*;
use serde_json::json;

/// The function's memory (template.yaml, Globals: MemorySize 256).
const FUNCTION_MEMORY: i64 = 256 * 1024 * 1024;

fn resident_bytes() -> i64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kb: i64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    kb * 1024
}

#[tokio::test]
async fn a_page_of_tasks_fits_the_function_s_memory() {
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    let app = test_app(&db, &queues, &stub, &[]);
    let client = db.client().await;
    // 9,000 one-key objects: about 90 kB as Postgres stores the request, under its 100 kB limit.
    let input: Vec<serde_json::Value> = (0..9_000).map(|_| json!({"a": 0})).collect();
    let request =
        json!({"kind": "classify", "prompt": "Sentiment?", "input": input, "choices": ["pos", "neg"]});
    for i in 0..100 {
        let mut new = new_task(APP, app_owner("mem"), &format!("k{i}"));
        new.input_hash = hash_of(&request);
        new.request = request.clone();
        aitasks_store::create_task(&client, &new).await.unwrap();
    }
    drop((input, request));
    let tenant = AppId::parse(APP).unwrap();
    let before = resident_bytes();
    let query = ListQuery { scope_id: Some("mem"), limit: Some("100"), ..ListQuery::default() };
    let page = api::list_tasks(&app, &tenant, query).await.unwrap();
    // As the handler answers it (functions/create-task/src/handler.rs).
    let text = serde_json::to_string(&TaskListAnswer::of(&page.tasks, page.next)).unwrap();
    let used = resident_bytes() - before;
    println!(
        "a page of {} tasks, an answer of {} bytes: {} MB more resident",
        page.tasks.len(),
        text.len(),
        used / (1024 * 1024)
    );
    assert!(used < FUNCTION_MEMORY, "one listing request took {} MB", used / (1024 * 1024));
}

/// A batch body within MAX_BULK_BODY_BYTES (6,000,000) is parsed whole before any item is
/// looked at: 6 MB of `{"a":0},` is a document of about 500 MB, for an answer that is a 400.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_body_within_its_byte_limit_fits_the_function_s_memory() {
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    let app = test_app(&db, &queues, &stub, &[]);
    let objects = vec![r#"{"a":0}"#; 740_000].join(",");
    let body = format!(
        r#"{{"tasks":[{{"stepKey":"s","effectKey":"k","request":{{"kind":"classify","prompt":"p","choices":["a","b"],"input":[{objects}]}}}}]}}"#
    );
    assert!(body.len() <= aitasks_contracts::MAX_BULK_BODY_BYTES, "{} bytes", body.len());
    let tenant = AppId::parse(APP).unwrap();
    let before = resident_bytes();
    let peak = std::sync::Arc::new(std::sync::atomic::AtomicI64::new(0));
    let sampler = tokio::spawn({
        let peak = peak.clone();
        async move {
            loop {
                peak.fetch_max(resident_bytes(), std::sync::atomic::Ordering::SeqCst);
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
        }
    });
    // The sampler runs on the other worker thread while this one parses.
    let answer = api::create_many(&app, &tenant, body.as_bytes()).await;
    sampler.abort();
    let used = peak.load(std::sync::atomic::Ordering::SeqCst).max(resident_bytes()) - before;
    println!("answered {}: {} MB more resident at the peak", answer.is_ok(), used / (1024 * 1024));
    assert!(used < FUNCTION_MEMORY, "one batch request took {} MB", used / (1024 * 1024));
}
