//! The SQS hop alone, its own row: how long a task id takes from `SendMessageBatch` to a
//! worker's `ReceiveMessage` on the SQS-compatible server, with no database. The same producer
//! (ten ids a batch) and workers (long poll of 1 s, ten at most, then `DeleteMessageBatch`) as
//! [`super::aitasks`]; the body carries the sequence number and the send time, and each record the
//! queue's `SentTimestamp` and `ApproximateReceiveCount`, as this system's do (its pickup in parts).

use std::time::Duration;

/// A receive loop's pause after an error.
const AFTER_ERROR: Duration = Duration::from_millis(100);

use aws_sdk_sqs::types::{
    DeleteMessageBatchRequestEntry, MessageSystemAttributeName, SendMessageBatchRequestEntry,
};
use serde_json::{json, Value};

use super::aitasks::{queues, stamps_of};
use super::pace::{env_f64, epoch_ms, pace};
use crate::Failure;

pub(crate) async fn produce() -> Result<(), Failure> {
    let queues = queues().await?;
    let produced = pace(10, |jobs| {
        let queues = queues.clone();
        async move {
            let entries: Vec<_> = jobs
                .iter()
                .enumerate()
                .filter_map(|(i, (seq, at))| {
                    SendMessageBatchRequestEntry::builder()
                        .id(i.to_string())
                        .message_body(json!({"seq": seq, "at": at}).to_string())
                        .build()
                        .ok()
                })
                .collect();
            let sent = queues
                .sqs()
                .send_message_batch()
                .queue_url(queues.task_queue_url())
                .set_entries(Some(entries))
                .send()
                .await?;
            if sent.failed().is_empty() {
                Ok(())
            } else {
                Err("SendMessageBatch failed".into())
            }
        }
    })
    .await?;
    println!("{}", json!({"produced": produced}));
    Ok(())
}

async fn one_receive(queues: &aitasks_runtime::Queues) -> Result<(), Failure> {
    let url = queues.task_queue_url();
    let received = queues
        .sqs()
        .receive_message()
        .queue_url(url)
        .max_number_of_messages(10)
        .wait_time_seconds(1)
        .message_system_attribute_names(MessageSystemAttributeName::SentTimestamp)
        .message_system_attribute_names(MessageSystemAttributeName::ApproximateReceiveCount)
        .send()
        .await?;
    let start = epoch_ms();
    let mut acks = Vec::new();
    for (i, message) in received.messages().iter().enumerate() {
        let body: Value = serde_json::from_str(message.body().unwrap_or("{}"))?;
        let (sent, receives) = stamps_of(message);
        println!(
            "{}",
            json!({"id": body["seq"], "at": body["at"], "sent": sent, "received": start, "receives": receives,
                   "start": start, "done": epoch_ms()})
        );
        if let Ok(entry) = DeleteMessageBatchRequestEntry::builder()
            .id(i.to_string())
            .receipt_handle(message.receipt_handle().unwrap_or_default())
            .build()
        {
            acks.push(entry);
        }
    }
    if !acks.is_empty() {
        queues.sqs().delete_message_batch().queue_url(url).set_entries(Some(acks)).send().await?;
    }
    Ok(())
}

pub(crate) async fn work() -> Result<(), Failure> {
    let workers = env_f64("WORKERS")? as usize;
    let queues = queues().await?;
    println!("{}", json!({"ready": true}));
    let loops = (0..workers).map(|_| {
        let queues = queues.clone();
        tokio::spawn(async move {
            loop {
                if let Err(e) = one_receive(&queues).await {
                    eprintln!("sqs hop worker: {e}");
                    tokio::time::sleep(AFTER_ERROR).await;
                }
            }
        })
    });
    futures::future::join_all(loops).await;
    Ok(())
}
