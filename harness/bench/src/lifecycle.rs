//! A task's life in the store through the shipped calls, in the order the functions make them
//! for a task whose provider answers promptly (no deferral, no callbacks attached):
//!
//! 1. create-task: `create_task` (`create/insert_app_task`), the task inserted already marked sent
//!    (its SQS message follows the commit; only a failed send writes again: `sweep/mark_unsent`);
//! 2. process-task, `worker::process`: `claim_by` with a claim mark, as the wave's claim
//!    (`lease/claim_by`; a wave of one here);
//! 3. no heartbeat and no cancel poll: the attempt's first poll is `AITASK_CANCEL_POLL_MS`
//!    (500 ms) after the claim and its first heartbeat `AITASK_HEARTBEAT_MS` (10 s) after it,
//!    so a prompt answer has neither. Each 500 ms more a call takes adds a `check`
//!    (`lease/check`), each 10 s a `heartbeat` (`lease/heartbeat`); `BENCH_HEARTBEAT=1` adds one
//!    heartbeat a task, as the lifecycle measured before issue 37 had;
//! 4. the settler (`worker/settler.rs`, through the runtime's `settle::complete_together`):
//!    `complete_many` (`settle/complete_many`, the group commit with the completion events,
//!    handed over to the worker's publish: migrations/V41; a group of one here, which it writes
//!    with `settle/complete_attempt`, the single statement: no id-order lock for one row);
//! 5. `App::publish`, once the event is on the events queue: no statement, since the event was
//!    written delivered and its task owes no callback (one that does takes
//!    `callbacks/mark_delivered_and_take_owed` here, [`after_publish`]).
//!    `BENCH_WITH_PUBLISH_MARK=1` runs the single-task lifecycle as shipped before V41 instead (the
//!    event the outbox's, marked by that statement after the publish): a what-if the section's
//!    heading names, never the shipped figure.
//!
//! Batches of ten ([`batch_of_ten`]) take the same steps with the batch calls: `create_tasks` (one
//! `POST /v1/tasks/batch`), one claim for the invocation's ten messages, one
//! `complete_many` for the ten successes, and after their publish nothing more.
//!
//! Scoped tasks (with a cache key) are admitted and settled by other statements
//! (`create_scoped`, `complete_attempt`): the admission section measures those.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use aitasks_store::{self as store, Claim, Fenced, NewTask, PoolSettings, TaskOwner};
use aitasks_testkit::claim_mark;
use serde_json::json;

use crate::Failure;

/// Tasks in a batch of the batched lifecycle: an invocation's ten records.
pub(crate) const BATCH: usize = 10;

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
        scope_terms: None,
        replay_of: None,
        replay_operation: None,
    }
}

/// A what-if, not the shipped path (`BENCH_WITH_PUBLISH_MARK=1`): the single-task lifecycle as
/// shipped before migrations/V41, its event the outbox's and marked by a fourth statement after
/// the publish (BENCHMARKS.md, "The publish mark folded away").
pub(crate) fn with_publish_mark() -> bool {
    std::env::var("BENCH_WITH_PUBLISH_MARK").is_ok_and(|v| v == "1")
}

/// What `App::publish` writes once the events went out (`shared/runtime/src/publish.rs`): the
/// outbox's events marked and their tasks' owed callbacks taken, a handed-over event only when
/// its task owes callbacks; nothing at all for handed-over events that owe none.
pub(crate) async fn after_publish(
    client: &store::Client,
    events: &[store::PendingEvent],
) -> Result<(), Failure> {
    let mut to_mark = Vec::new();
    let mut callback_tasks = Vec::new();
    for event in events {
        match event.custody {
            store::Custody::Outbox => {
                to_mark.push(event.id);
                callback_tasks.push(event.task_id);
            }
            store::Custody::HandedOver { owes_callbacks: true } => callback_tasks.push(event.task_id),
            store::Custody::HandedOver { owes_callbacks: false } => {}
        }
    }
    if !to_mark.is_empty() || !callback_tasks.is_empty() {
        store::mark_delivered_and_take_owed(
            client,
            &to_mark,
            &callback_tasks,
            aitasks_runtime::callbacks::LEASE,
        )
        .await?;
    }
    Ok(())
}

/// Whether each task also has one heartbeat (`BENCH_HEARTBEAT=1`).
fn with_heartbeat() -> bool {
    std::env::var("BENCH_HEARTBEAT").is_ok_and(|v| v == "1")
}

fn answer() -> (serde_json::Value, serde_json::Value) {
    (json!("pos"), json!({"inputTokens": 11, "outputTokens": 7, "latencyMs": 0}))
}

/// One task through its whole life on `client` (the module's steps).
pub(crate) async fn one_task(client: &store::Client, effect_key: String) -> Result<(), Failure> {
    let created = store::create_task(client, &new_task("bench-app", effect_key)).await?;
    let id = created.task().id;
    let Some(Claim::Claimed(task)) = store::claim_by(client, &[id], &claim_mark()).await?.pop() else {
        return Err("a fresh task could not be claimed".into());
    };
    if with_heartbeat() {
        store::heartbeat(client, task.lease()).await?;
    }
    let (output, usage) = answer();
    let hand_over = !with_publish_mark();
    let Some(Fenced::Written(event)) =
        store::complete_many(client, &[(task.lease(), &output, Some(&usage))], hand_over).await?.pop()
    else {
        return Err("a lease was lost".into());
    };
    after_publish(client, &[event]).await
}

/// [`BATCH`] tasks through their whole life together (the module's steps, batched).
pub(crate) async fn batch_of_ten(client: &store::Client, round: usize) -> Result<u64, Failure> {
    let tasks: Vec<_> = (0..BATCH).map(|i| new_task("bench-app", format!("l-{round}-{i}"))).collect();
    let mut ids = Vec::with_capacity(BATCH);
    for created in store::create_tasks(client, "bench-app", &tasks).await? {
        ids.push(created?.task().id);
    }
    let mut claimed = Vec::with_capacity(ids.len());
    for claim in store::claim_by(client, &ids, &claim_mark()).await? {
        let Claim::Claimed(task) = claim else { return Err("a fresh task could not be claimed".into()) };
        claimed.push(task);
    }
    if with_heartbeat() {
        for task in &claimed {
            store::heartbeat(client, task.lease()).await?;
        }
    }
    let (output, usage) = answer();
    let attempts: Vec<_> = claimed.iter().map(|t| (t.lease(), &output, Some(&usage))).collect();
    let mut events = Vec::with_capacity(attempts.len());
    for settled in store::complete_many(client, &attempts, true).await? {
        let Fenced::Written(event) = settled else { return Err("a lease was lost".into()) };
        events.push(event);
    }
    after_publish(client, &events).await?;
    Ok(claimed.len() as u64)
}

/// Tasks per second with `clients` clients each repeating `work` (given its client and a number
/// no other call gets; it answers how many tasks it did) until `duration` has passed; each
/// client does at least one.
pub(crate) async fn drive<F, Fut>(
    url: &str,
    clients: usize,
    duration: Duration,
    work: F,
) -> Result<f64, Failure>
where
    F: Fn(store::Client, usize) -> Fut + Send + Sync + Clone + 'static,
    Fut: std::future::Future<Output = Result<(store::Client, u64), Failure>> + Send,
{
    let mut settings = PoolSettings::new(url);
    settings.max_size = clients;
    let pool = store::connect(&settings)?;
    let done = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let until = started + duration;
    let workers = (0..clients).map(|c| {
        let (pool, done, work) = (pool.clone(), done.clone(), work.clone());
        tokio::spawn(async move {
            let mut client = pool.get().await?;
            let mut round = 0;
            loop {
                let (back, n) = work(client, c * 1_000_000 + round).await?;
                client = back;
                done.fetch_add(n, Ordering::Relaxed);
                round += 1;
                if Instant::now() >= until {
                    return Ok::<(), Failure>(());
                }
            }
        })
    });
    for worker in futures::future::join_all(workers).await {
        worker??;
    }
    Ok(done.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64())
}

/// Tasks per second through [`one_task`] with `clients` clients.
pub(crate) async fn run(url: &str, clients: usize, duration: Duration) -> Result<f64, Failure> {
    drive(url, clients, duration, |client, n| async move {
        one_task(&client, format!("t-{n}")).await?;
        Ok((client, 1))
    })
    .await
}

/// Tasks per second through [`batch_of_ten`] with `clients` clients.
pub(crate) async fn run_batches(url: &str, clients: usize, duration: Duration) -> Result<f64, Failure> {
    drive(url, clients, duration, |client, n| async move {
        let done = batch_of_ten(&client, n).await?;
        Ok((client, done))
    })
    .await
}
