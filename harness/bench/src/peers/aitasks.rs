//! This system as an adapter of the method, through the statements its functions ship, the task
//! id travelling as in production: a producer (`aitasks-produce`) creates tasks ten at a time as
//! `POST /v1/tasks/batch` does (`create_tasks`), sends each id's SQS message (`{"taskId"}`, ten to
//! a `SendMessageBatch`; the tasks were inserted marked sent, and a failed send marks them unsent,
//! as create-task does); each of `WORKERS` workers
//! (`aitasks-work`, process-task's steps) receives up to ten messages (long poll of 1 s), claims
//! their tasks in one `claim_by` (its start), settles the claimed ones in one `complete_many`
//! with their completion events handed over to the publish (which then writes nothing: none owes
//! a callback, `lifecycle::after_publish`) and deletes the messages (a `Busy` task's sent again for a second later, as process-task does); a sweeper (`aitasks-sweep`,
//! the sweeper function's two duties that matter here, every second instead of every minute)
//! requeues a dead worker's tasks once their heartbeat is 5 s old (`expire_running`) and sends
//! the messages owed (`take_unsent`). A job's insert time and sequence number ride in its
//! `effect_key` (`<seq>:<epoch ms>`); a run is printed once its `complete_many` wrote it, with
//! the queue's `SentTimestamp` of its message and the time its receive returned, so that the
//! section can split its pickup into the create and send, the queue, and the claim.

use std::time::Duration;

use aitasks_runtime::queue::message_group;
use aitasks_runtime::Queues;
use aitasks_store::{self as store, Claim, Fenced, OwedMessage, PoolSettings};
use aitasks_testkit::claim_mark;
use aws_sdk_sqs::types::MessageSystemAttributeName;

use super::process::Record;
use serde_json::json;

use super::pace::{env_f64, epoch_ms, pace};
use crate::{lifecycle, Failure};

const APP: &str = "bench-app";

/// How soon process-task sends again the message of a task whose row was busy.
const BUSY_RETRY: Duration = Duration::from_secs(1);
/// A worker loop's pause after an error (a restarting Postgres), and the sweeper's period.
const AFTER_ERROR: Duration = Duration::from_millis(100);
const SWEEP_EVERY: Duration = Duration::from_secs(1);

fn var(name: &str) -> Result<String, Failure> {
    Ok(std::env::var(name).map_err(|_| format!("{name} is not set"))?)
}

pub(crate) async fn queues() -> Result<Queues, Failure> {
    let sqs = aitasks_testkit::sqs_at(&var("SQS_ENDPOINT")?).await;
    Ok(Queues::new(sqs, var("QUEUE_URL")?, None))
}

fn pool(size: usize) -> Result<store::StorePool, Failure> {
    let mut settings = PoolSettings::new(var("DATABASE_URL")?);
    settings.max_size = size;
    Ok(store::connect(&settings)?)
}

pub(crate) async fn produce() -> Result<(), Failure> {
    let (pool, queues) = (pool(8)?, queues().await?);
    let produced = pace(10, |jobs| {
        let (pool, queues) = (pool.clone(), queues.clone());
        async move {
            let client = pool.get().await?;
            let tasks: Vec<_> =
                jobs.iter().map(|(seq, at)| lifecycle::new_task(APP, format!("{seq}:{at}"))).collect();
            let mut owed = Vec::with_capacity(tasks.len());
            // A retried chunk finds its tasks by their effect keys: the same tasks, not new ones.
            for created in store::create_tasks(&client, APP, &tasks).await? {
                owed.push(OwedMessage { task_id: created?.task().id, app_id: APP.into() });
            }
            // Inserted marked sent: only a failed send writes again, as create-task does.
            let failed = queues.send_tasks(&owed).await;
            if !failed.is_empty() {
                store::mark_unsent(&client, &failed).await?;
            }
            Ok(())
        }
    })
    .await?;
    println!("{}", json!({"produced": produced}));
    Ok(())
}

/// The sequence number and insert time a task's effect key carries.
fn job_of(effect_key: &str) -> Option<(i64, i64)> {
    let (seq, at) = effect_key.split_once(':')?;
    Some((seq.parse().ok()?, at.parse().ok()?))
}

/// A received message's `SentTimestamp` (epoch ms) and `ApproximateReceiveCount`, which the
/// receive asks for: the pickup's parts (`super::parts`).
pub(crate) fn stamps_of(message: &aws_sdk_sqs::types::Message) -> (Option<i64>, Option<i64>) {
    let attribute = |name: MessageSystemAttributeName| {
        message.attributes().and_then(|a| a.get(&name)).and_then(|v| v.parse::<i64>().ok())
    };
    (
        attribute(MessageSystemAttributeName::SentTimestamp),
        attribute(MessageSystemAttributeName::ApproximateReceiveCount),
    )
}

/// One receive and what follows it; `false` when the queue had nothing.
async fn one_delivery(pool: &store::StorePool, queues: &Queues) -> Result<bool, Failure> {
    let received = queues
        .sqs()
        .receive_message()
        .queue_url(queues.task_queue_url())
        .max_number_of_messages(10)
        .wait_time_seconds(1)
        .message_system_attribute_names(MessageSystemAttributeName::SentTimestamp)
        .message_system_attribute_names(MessageSystemAttributeName::ApproximateReceiveCount)
        .send()
        .await?;
    let received_at = epoch_ms();
    let messages = received.messages();
    if messages.is_empty() {
        return Ok(false);
    }
    let mut records = Vec::with_capacity(messages.len());
    // Each task's message: when the queue took it, and how many times it has delivered it.
    let mut stamps = std::collections::HashMap::with_capacity(messages.len());
    for message in messages {
        let task = message.body().and_then(aitasks_runtime::TaskMessage::parse).map(|m| m.task_id);
        if let Some(task) = task {
            stamps.insert(task, stamps_of(message));
        }
        records.push((task, message.receipt_handle().unwrap_or_default().to_owned()));
    }
    let ids: Vec<_> = records.iter().filter_map(|(id, _)| *id).collect();
    let client = pool.get().await?;
    let claims = store::claim_by(&client, &ids, &claim_mark()).await?;
    let start = epoch_ms();
    let mut claimed = Vec::new();
    for (id, claim) in ids.iter().zip(claims) {
        match claim {
            Claim::Claimed(task) => claimed.push(task),
            // As process-task does: the message again in a second, this one acknowledged.
            Claim::Busy => {
                eprintln!("aitasks worker: task {id} busy, its message again in {BUSY_RETRY:?}");
                queues.send_task_after(*id, Some(&message_group(APP)), BUSY_RETRY).await?;
            }
            _ => {}
        }
    }
    let (output, usage) = (json!("pos"), json!({"inputTokens": 11, "outputTokens": 7, "latencyMs": 0}));
    let attempts: Vec<_> = claimed.iter().map(|t| (t.lease(), &output, Some(&usage))).collect();
    let settled = store::complete_many(&client, &attempts, true).await?;
    let done = epoch_ms();
    let mut events = Vec::new();
    for (task, fenced) in claimed.iter().zip(settled) {
        if let Fenced::Written(event) = fenced {
            events.push(event);
            if let Some((seq, at)) = job_of(&task.effect_key) {
                let (sent, receives) = stamps.get(&task.id).copied().unwrap_or_default();
                println!(
                    "{}",
                    json!({"id": seq, "at": at, "sent": sent, "received": received_at, "receives": receives,
                           "start": start, "done": done})
                );
            }
        }
    }
    crate::lifecycle::after_publish(&client, &events).await?;
    drop(client);
    let acks: Vec<_> = records
        .iter()
        .enumerate()
        .filter_map(|(i, (_, handle))| {
            aws_sdk_sqs::types::DeleteMessageBatchRequestEntry::builder()
                .id(i.to_string())
                .receipt_handle(handle)
                .build()
                .ok()
        })
        .collect();
    if !acks.is_empty() {
        queues
            .sqs()
            .delete_message_batch()
            .queue_url(queues.task_queue_url())
            .set_entries(Some(acks))
            .send()
            .await?;
    }
    Ok(true)
}

pub(crate) async fn work() -> Result<(), Failure> {
    let workers = env_f64("WORKERS")? as usize;
    let (pool, queues) = (pool(workers)?, queues().await?);
    pool.get().await?.simple_query("SELECT 1").await?;
    println!("{}", json!({"ready": true}));
    let loops = (0..workers).map(|_| {
        let (pool, queues) = (pool.clone(), queues.clone());
        tokio::spawn(async move {
            loop {
                if let Err(e) = one_delivery(&pool, &queues).await {
                    eprintln!("aitasks worker: {e}");
                    tokio::time::sleep(AFTER_ERROR).await;
                }
            }
        })
    });
    futures::future::join_all(loops).await;
    Ok(())
}

async fn sweep_once(pool: &store::StorePool, queues: &Queues) -> Result<(), Failure> {
    let client = pool.get().await?;
    let runtime =
        aitasks_runtime::RuntimeConfig { stale_running: Duration::from_secs(5), ..Default::default() };
    aitasks_runtime::sweeper::expire_stale_running(&client, queues, &runtime, 500).await?;
    let owed = store::take_unsent(&client, Duration::from_secs(5), Duration::from_secs(30), 500).await?;
    let failed = queues.send_tasks(&owed).await;
    if !failed.is_empty() {
        store::mark_unsent(&client, &failed).await?;
    }
    Ok(())
}

pub(crate) async fn sweep() -> Result<(), Failure> {
    let (pool, queues) = (pool(1)?, queues().await?);
    println!("{}", json!({"ready": true}));
    loop {
        if let Err(e) = sweep_once(&pool, &queues).await {
            eprintln!("aitasks sweeper: {e}");
        }
        tokio::time::sleep(SWEEP_EVERY).await;
    }
}

/// The phase's jobs the store holds as succeeded, as records (claim and completion times from
/// the row): the store is the truth of what completed. A worker killed between its commit and
/// its printed record would otherwise show a completed job as lost.
pub(crate) async fn settled_records(url: &str, base: i64, produced: u64) -> Result<Vec<Record>, Failure> {
    let client = crate::db::connect(url).await?;
    let rows = client
        .query(
            "SELECT effect_key, (extract(epoch FROM started_at) * 1000)::bigint, \
                    (extract(epoch FROM completed_at) * 1000)::bigint \
             FROM tasks WHERE app_id = $1 AND status = 'succeeded' \
               AND split_part(effect_key, ':', 1)::bigint >= $2 AND split_part(effect_key, ':', 1)::bigint < $3",
            &[&APP, &base, &(base + produced as i64)],
        )
        .await?;
    Ok(rows
        .iter()
        .filter_map(|row| {
            let (id, at) = job_of(row.get::<_, &str>(0))?;
            Some(Record {
                id,
                at,
                start: row.get(1),
                done: row.get(2),
                sent: None,
                received: None,
                receives: None,
            })
        })
        .collect())
}
