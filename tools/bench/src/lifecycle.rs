//! The store lifecycle of one task, through the statements the functions run: create → claim
//! (`claim`, the statement process-task claims an SQS batch with, here a batch of one) →
//! heartbeat → complete (`complete_many`, the settler's group commit, here a group of one, with
//! its completion event), one statement each.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use aitasks_store::{self as store, Claim, NewTask, PoolSettings, TaskOwner};
use serde_json::json;

use crate::Failure;

pub(crate) fn new_task(app: &str, effect_key: String) -> NewTask {
    NewTask {
        app_id: app.to_owned(),
        owner: TaskOwner::Application { scope_id: "bench".into(), usage_subject: None },
        step_key: "bench".into(),
        effect_key,
        kind: "classify".into(),
        input_hash: "0".repeat(64),
        request: json!({"kind": "classify", "prompt": "Sentiment?", "input": "great", "choices": ["pos", "neg"]}),
        model_id: "default".into(),
        model_ref: None,
        model_config_hash: None,
        max_attempts: 3,
        trace_header: None,
        deferred_window_ms: None,
        awaiting_batch: false,
        has_poller: false,
    }
}

/// One task through its whole life on `client`.
pub(crate) async fn one_task(client: &store::Client, effect_key: String) -> Result<(), Failure> {
    let created = store::create_task(client, &new_task("bench-app", effect_key)).await?;
    let Some(Claim::Claimed(task)) = store::claim(client, &[created.task().id]).await?.pop() else {
        return Err("a fresh task could not be claimed".into());
    };
    store::heartbeat(client, task.lease()).await?;
    let output = json!("pos");
    let usage = json!({"inputTokens": 11, "outputTokens": 7});
    match store::complete_many(client, &[(task.lease(), &output, Some(&usage))]).await?.pop() {
        Some(store::Fenced::Written(_)) => Ok(()),
        _ => Err("a held lease was lost".into()),
    }
}

/// Tasks per second through the whole lifecycle with `clients` concurrent clients.
pub(crate) async fn run(url: &str, clients: usize, duration: Duration) -> Result<f64, Failure> {
    let mut settings = PoolSettings::new(url);
    settings.max_size = clients;
    let pool = store::connect(&settings)?;
    let done = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let until = started + duration;
    let workers = (0..clients).map(|c| {
        let (pool, done) = (pool.clone(), done.clone());
        tokio::spawn(async move {
            let client = pool.get().await?;
            let mut n = 0u64;
            while Instant::now() < until {
                one_task(&client, format!("{c}-{n}")).await?;
                done.fetch_add(1, Ordering::Relaxed);
                n += 1;
            }
            Ok::<(), Failure>(())
        })
    });
    for worker in futures::future::join_all(workers).await {
        worker??;
    }
    Ok(done.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64())
}
