//! `GET /v1/tasks/{taskId}/output` (docs/api.md, "Live output"): a task's answer as the model
//! writes it, from the reader's offset, as a long poll. The worker writes it
//! (`worker::live_output`); this only reads.

use std::time::Duration;

use aitasks_contracts::{
    AppId, OutputCursor, ReadCost, TaskId, TaskOutput, OUTPUT_OFFSET_MAX, OUTPUT_READ_MAX_BYTES,
};
use aitasks_store::{self as store, OutputLook};
use tokio::time::Instant;

use crate::api::parse_wait;
use crate::api_error::ApiError;
use crate::app::App;

/// How often a waiting read looks again: a primary-key read, with no connection held between.
const LOOK_EVERY: Duration = Duration::from_millis(100);

/// The chunks one look reads: with the worker's flushes (4 KiB by default) more than a read's
/// text bound, and few enough that a stream of tiny chunks costs one small look.
const CHUNKS_PER_LOOK: usize = 256;

/// The query of a read, as the request gave it.
#[derive(Debug, Default, Clone, Copy)]
pub struct OutputQuery<'a> {
    pub segment: Option<&'a str>,
    pub after: Option<&'a str>,
    pub wait: Option<&'a str>,
}

impl OutputQuery<'_> {
    fn cursor(&self) -> Result<OutputCursor, ApiError> {
        let number =
            |name: &str, text: &str, max: i64| -> Result<i64, ApiError> {
                text.trim().parse::<i64>().ok().filter(|n| (0..=max).contains(n)).ok_or_else(|| {
                    ApiError::invalid(name, &format!("must be a whole number from 0 to {max}"))
                })
            };
        let segment = match self.segment {
            None => None,
            Some(text) => Some(number("segment", text, i64::from(i32::MAX))?),
        };
        let after = match self.after {
            None => 0,
            Some(text) => number("after", text, OUTPUT_OFFSET_MAX)?,
        };
        Ok(OutputCursor { segment: segment.map(|n| n as i32), after })
    }
}

/// The task's live output past the reader's cursor; with `wait`, held until there is text past
/// it, another segment, or the task's end (or the wait is over).
pub async fn read_output<P>(
    app: &App<P>,
    tenant: &AppId,
    task_id: &str,
    query: OutputQuery<'_>,
) -> Result<TaskOutput, ApiError> {
    let task_id = TaskId::parse(task_id).ok_or(ApiError::NotFound)?;
    let cursor = query.cursor()?;
    let wait = parse_wait(query.wait)?;
    // One charge for the whole wait, as `GET /v1/tasks/{taskId}?wait=` is charged.
    app.reads.charge(&app.pool, tenant, ReadCost::ByKey).await?;
    let until = Instant::now() + wait;
    let after = i32::try_from(cursor.after).unwrap_or(i32::MAX);
    loop {
        // A connection per look, given back before the pause: a waiting reader holds none.
        let look = {
            let client = store::client(&app.pool).await?;
            store::read_output(
                &client,
                tenant.as_str(),
                task_id.uuid(),
                cursor.segment,
                after,
                CHUNKS_PER_LOOK,
            )
            .await?
            .ok_or(ApiError::NotFound)?
        };
        let answer = answer(task_id, look);
        let news = !answer.text.is_empty() || answer.ended || answer.segment != cursor.segment;
        let now = Instant::now();
        if news || now >= until {
            return Ok(answer);
        }
        tokio::time::sleep_until((now + LOOK_EVERY).min(until)).await;
    }
}

/// The answer a look gives: at most [`OUTPUT_READ_MAX_BYTES`] of text
/// from its offset (or from 0 on another segment), cut at a character.
fn answer(task_id: TaskId, look: OutputLook) -> TaskOutput {
    let ended = look.status.is_terminal();
    let Some(stream) = look.stream else {
        return TaskOutput {
            task_id: task_id.uuid(),
            status: look.status,
            ended,
            segment: None,
            attempt: None,
            from: 0,
            text: String::new(),
            next: 0,
            is_final: false,
        };
    };
    let from = stream.after.min(stream.length);
    let mut text = String::new();
    let mut at = from;
    'chunks: for (start_at, chunk) in &stream.chunks {
        let skip = usize::try_from(at - start_at).unwrap_or(0);
        for c in chunk.chars().skip(skip) {
            if text.len() + c.len_utf8() > OUTPUT_READ_MAX_BYTES {
                break 'chunks;
            }
            text.push(c);
            at += 1;
        }
    }
    TaskOutput {
        task_id: task_id.uuid(),
        status: look.status,
        ended,
        segment: Some(stream.segment),
        attempt: Some(stream.attempt),
        from: i64::from(from),
        text,
        next: i64::from(at),
        is_final: stream.is_final && at == stream.length,
    }
}
