//! Load: 64 concurrent HTTP clients create tasks and poll them against the dev server (with
//! Postgres, the SQS-compatible server and a stub provider that answers at once). No answer
//! may be a 5xx and no task may be lost; create latency (p50/p99) and throughput are printed,
//! never asserted.
//!
//! `make test` runs it for 5 s; `make load` for 60 s (`LOAD_SECONDS`).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aitasks_testkit::*;
use serde_json::json;

const APP: &str = "app-load";
const CLIENTS: usize = 64;

fn load_seconds() -> u64 {
    std::env::var("LOAD_SECONDS").ok().and_then(|v| v.parse().ok()).unwrap_or(5)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixty_four_clients_get_no_5xx_and_lose_no_task() {
    let stack = Stack::start_with(&[("AITASK_DB_POOL_SIZE", "24"), ("AITASK_LOCAL_POLLERS", "4")]).await;
    let api = stack.api(APP);
    let seconds = load_seconds();
    let until = Instant::now() + Duration::from_secs(seconds);
    let created: Arc<Mutex<Vec<String>>> = Arc::default();
    let latencies: Arc<Mutex<Vec<Duration>>> = Arc::default();
    let server_errors: Arc<Mutex<Vec<String>>> = Arc::default();

    let clients = (0..CLIENTS).map(|client| {
        let (api, created, latencies, server_errors) =
            (api.clone(), created.clone(), latencies.clone(), server_errors.clone());
        tokio::spawn(async move {
            let mut n = 0usize;
            while Instant::now() < until {
                let body = json!({
                    "owner": {"scopeId": format!("scope-{}", client % 8)},
                    "stepKey": "load", "effectKey": format!("load-{client}-{n}"), "modelId": "default",
                    "request": {"kind": "classify", "prompt": "Sentiment?", "input": format!("text {n}"),
                                "choices": ["pos", "neg"]},
                });
                let started = Instant::now();
                let (status, task) = api.post("/v1/tasks", &body).await;
                let took = started.elapsed();
                if status >= 500 {
                    server_errors.lock().expect("errors").push(format!("create {status}: {task}"));
                    continue;
                }
                assert_eq!(status, 201, "create: {task}");
                latencies.lock().expect("latencies").push(took);
                let id = task["id"].as_str().expect("task id").to_owned();
                let (status, polled) = api.get(&format!("/v1/tasks/{id}")).await;
                if status >= 500 {
                    server_errors.lock().expect("errors").push(format!("poll {status}: {polled}"));
                }
                assert_eq!(polled["id"], task["id"]);
                created.lock().expect("created").push(id);
                n += 1;
            }
        })
    });
    for client in futures::future::join_all(clients).await {
        client.expect("client");
    }

    let created = created.lock().expect("created").clone();
    let mut latencies = latencies.lock().expect("latencies").clone();
    latencies.sort();
    println!(
        "load: {CLIENTS} clients for {seconds}s: {} tasks created ({:.0}/s), create latency p50 {:.1} ms, p99 {:.1} ms",
        created.len(),
        created.len() as f64 / seconds as f64,
        percentile(&latencies, 0.50).as_secs_f64() * 1000.0,
        percentile(&latencies, 0.99).as_secs_f64() * 1000.0,
    );
    let server_errors = server_errors.lock().expect("errors").clone();
    assert!(server_errors.is_empty(), "5xx answers: {server_errors:?}");
    assert!(!created.is_empty(), "tasks were created");

    // Nothing lost: every created task is stored and ends succeeded.
    let drained = Instant::now();
    let until = drained + Duration::from_secs(120);
    loop {
        let open = stack.db.count("SELECT count(*) FROM tasks WHERE status IN ('queued', 'running')").await;
        if open == 0 {
            break;
        }
        assert!(Instant::now() < until, "{open} tasks still open");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    println!("load: all settled {:.1}s after the last create", drained.elapsed().as_secs_f64());
    assert_eq!(stack.db.count("SELECT count(*) FROM tasks").await, created.len() as i64, "no task lost");
    assert_eq!(
        stack.db.count("SELECT count(*) FROM tasks WHERE status = 'succeeded'").await,
        created.len() as i64,
        "every task succeeded"
    );
}
