//! End to end: 1000 tasks created over HTTP through the dev server (release build), delivered
//! by the SQS-compatible server, worked on against a stub provider that answers at once, and
//! settled in Postgres; each measured from the start of its create call to the arrival of its
//! completion event on the events queue. Also the processing overhead per task: the time a
//! worker held the task minus the provider call.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aitasks_testkit::{percentile, Stack};
use serde_json::{json, Value};

use crate::{row, Failure};

const CREATORS: usize = 32;

pub async fn section(quick: bool) -> Result<Value, Failure> {
    let total: usize = if quick { 300 } else { 1000 };
    let stack = Stack::start_with(&[
        ("AITASK_LOCAL_POLLERS", "4"),
        ("AITASK_DB_POOL_SIZE", "32"),
        ("AITASK_SWEEP_INTERVAL_MS", "60000"),
        ("RUST_LOG", "warn"),
    ])
    .await;
    let api = stack.api("bench-app");
    let started_at: Arc<Mutex<HashMap<String, Instant>>> = Arc::default();
    let arrived: Arc<Mutex<HashMap<String, Instant>>> = Arc::default();

    // Completion events, as a consumer of the events queue sees them.
    let consumers: Vec<_> = (0..4)
        .map(|_| {
            let (sqs, queue, arrived) =
                (stack.queues.sqs.clone(), stack.queues.events.clone(), arrived.clone());
            tokio::spawn(async move {
                while arrived.lock().unwrap_or_else(|p| p.into_inner()).len() < total {
                    let Ok(out) = sqs
                        .receive_message()
                        .queue_url(&queue)
                        .max_number_of_messages(10)
                        .wait_time_seconds(1)
                        .send()
                        .await
                    else {
                        continue;
                    };
                    let now = Instant::now();
                    for message in out.messages() {
                        if let Ok(event) = serde_json::from_str::<Value>(message.body().unwrap_or_default()) {
                            if let Some(id) = event["taskId"].as_str() {
                                arrived
                                    .lock()
                                    .unwrap_or_else(|p| p.into_inner())
                                    .entry(id.to_owned())
                                    .or_insert(now);
                            }
                        }
                        if let Some(receipt) = message.receipt_handle() {
                            let _ =
                                sqs.delete_message().queue_url(&queue).receipt_handle(receipt).send().await;
                        }
                    }
                }
            })
        })
        .collect();

    let begun = Instant::now();
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let creators = (0..CREATORS).map(|_| {
        let (api, started_at, next) = (api.clone(), started_at.clone(), next.clone());
        tokio::spawn(async move {
            loop {
                let n = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if n >= total {
                    return Ok::<(), Failure>(());
                }
                let body = json!({"owner": {"scopeId": format!("s{}", n % 16)}, "stepKey": "bench",
                    "effectKey": format!("e2e-{n}"), "modelId": "default",
                    "request": {"kind": "classify", "prompt": "Sentiment?", "input": format!("text {n}"),
                                "choices": ["pos", "neg"]}});
                let at = Instant::now();
                let (status, task) = api.post("/v1/tasks", &body).await;
                if status != 201 {
                    return Err(format!("create answered {status}: {task}").into());
                }
                let id = task["id"].as_str().ok_or("no task id")?.to_owned();
                started_at.lock().unwrap_or_else(|p| p.into_inner()).insert(id, at);
            }
        })
    });
    for creator in futures::future::join_all(creators).await {
        creator??;
    }
    let until = Instant::now() + Duration::from_secs(120);
    while arrived.lock().unwrap_or_else(|p| p.into_inner()).len() < total && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let elapsed = begun.elapsed();
    for consumer in consumers {
        consumer.abort();
    }

    let started_at = started_at.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let arrived = arrived.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let mut latencies: Vec<f64> = started_at
        .iter()
        .filter_map(|(id, at)| arrived.get(id).map(|done| (*done - *at).as_secs_f64() * 1000.0))
        .collect();
    latencies.sort_by(f64::total_cmp);
    let last_event = arrived.values().max().copied().unwrap_or_else(Instant::now);
    let span = (last_event - begun).as_secs_f64().max(f64::EPSILON);
    let overhead: f64 = stack
        .db
        .client()
        .await
        .query_one(
            "SELECT COALESCE(avg(extract(epoch FROM completed_at - started_at) * 1000 \
             - (usage ->> 'latencyMs')::float8), 0)::float8 FROM tasks WHERE status = 'succeeded'",
            &[],
        )
        .await?
        .get(0);
    let provider_ms: f64 = stack
        .db
        .client()
        .await
        .query_one("SELECT COALESCE(avg((usage ->> 'latencyMs')::float8), 0)::float8 FROM tasks", &[])
        .await?
        .get(0);

    println!(
        "\nend to end: {total} tasks, {CREATORS} HTTP creators, dev server (release) + SQS-compatible server + Postgres + stub provider"
    );
    row("tasks/s (create to completion event)", &[format!("{:.0}", latencies.len() as f64 / span)]);
    row(
        "latency p50 / p99 ms",
        &[format!("{:.1}", percentile(&latencies, 0.5)), format!("{:.1}", percentile(&latencies, 0.99))],
    );
    row("worker overhead per task, provider call excluded ms", &[format!("{overhead:.2}")]);
    row("provider call (stub) ms", &[format!("{provider_ms:.2}")]);
    row("events received", &[format!("{} of {total}", latencies.len())]);
    if latencies.len() < total {
        return Err(format!(
            "only {} of {total} completion events arrived (elapsed {elapsed:?})",
            latencies.len()
        )
        .into());
    }
    Ok(json!({"tasks": total, "tasksPerSecond": latencies.len() as f64 / span,
              "p50Ms": percentile(&latencies, 0.5), "p99Ms": percentile(&latencies, 0.99),
              "workerOverheadMs": overhead, "providerMs": provider_ms}))
}
