//! Live output (`sql/output/`, migrations/V35; docs/api.md, "Live output"): a running task's
//! answer as the model writes it, in coalesced chunks beside the task, and a reader's look at
//! it from an offset. Text is counted in characters (code points), as Postgres' `char_length`
//! and Rust's `chars()` count it.

use uuid::Uuid;

use crate::error::{StoreError, StoreResult};
use crate::model::{Lease, TaskStatus};
use crate::params::{limit, millis};
use crate::pool::GenericClient;
use crate::queries::{APPEND_CHUNK, OPEN_SEGMENT, PRUNE_OUTPUTS, READ_OUTPUT};

/// One flush of a segment's text.
#[derive(Debug, Clone, Copy)]
pub struct Chunk<'a> {
    /// Characters of the segment before this chunk.
    pub start_at: i32,
    pub text: &'a str,
    /// The segment's stream ended with it.
    pub is_final: bool,
}

/// Open a segment of the task's live output with its first chunk: the segment's number, or
/// `None` when the task no longer runs this attempt (nothing was written).
pub async fn open_segment(
    client: &impl GenericClient,
    lease: Lease,
    chunk: Chunk<'_>,
) -> StoreResult<Option<i32>> {
    let statement = client.prepare_cached(OPEN_SEGMENT.text()).await?;
    let params = OPEN_SEGMENT.bind(&[
        ("task_id", &lease.task_id),
        ("attempt", &lease.attempt),
        ("text", &chunk.text),
        ("final", &chunk.is_final),
    ])?;
    let row = client.query_opt(&statement, &params).await?;
    Ok(row.map(|row| row.try_get("segment")).transpose()?)
}

/// Append a chunk to an open segment: `false` when the task no longer runs this attempt.
pub async fn append_chunk(
    client: &impl GenericClient,
    lease: Lease,
    segment: i32,
    chunk: Chunk<'_>,
) -> StoreResult<bool> {
    let statement = client.prepare_cached(APPEND_CHUNK.text()).await?;
    let params = APPEND_CHUNK.bind(&[
        ("task_id", &lease.task_id),
        ("attempt", &lease.attempt),
        ("segment", &segment),
        ("start_at", &chunk.start_at),
        ("text", &chunk.text),
        ("final", &chunk.is_final),
    ])?;
    Ok(client.execute(&statement, &params).await? > 0)
}

/// What a reader's look found.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputLook {
    pub status: TaskStatus,
    /// The current segment, when the task has streamed (and it was not dropped).
    pub stream: Option<StreamLook>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct StreamLook {
    pub segment: i32,
    pub attempt: i32,
    /// Where the walk started: the reader's offset on its segment, else 0.
    pub after: i32,
    /// The segment's characters so far, and whether its stream has ended.
    pub length: i32,
    pub is_final: bool,
    /// The chunks past `after`, in order (the first may start before it).
    pub chunks: Vec<(i32, String)>,
}

/// The tenant's task's live output past `after` of `segment` (`None`: the current segment),
/// at most `max_chunks` chunks; `None` when the tenant has no such task.
pub async fn read_output(
    client: &impl GenericClient,
    app_id: &str,
    task_id: Uuid,
    segment: Option<i32>,
    after: i32,
    max_chunks: usize,
) -> StoreResult<Option<OutputLook>> {
    let statement = client.prepare_cached(READ_OUTPUT.text()).await?;
    let max_chunks = limit(max_chunks);
    let params = READ_OUTPUT.bind(&[
        ("task_id", &task_id),
        ("app_id", &app_id),
        ("segment", &segment),
        ("after", &after),
        ("limit", &max_chunks),
    ])?;
    let rows = client.query(&statement, &params).await?;
    let Some(first) = rows.first() else { return Ok(None) };
    let status: &str = first.try_get("status")?;
    let status =
        TaskStatus::parse(status).ok_or_else(|| StoreError::Corrupt(format!("task status {status:?}")))?;
    let stream = match first.try_get::<_, Option<i32>>("segment")? {
        None => None,
        Some(segment) => {
            let mut chunks = Vec::new();
            for row in &rows {
                if let Some(start_at) = row.try_get::<_, Option<i32>>("start_at")? {
                    chunks.push((start_at, row.try_get::<_, String>("text")?));
                }
            }
            Some(StreamLook {
                segment,
                attempt: first.try_get("attempt")?,
                after: first.try_get("after")?,
                length: first.try_get::<_, Option<i32>>("length")?.unwrap_or(0),
                is_final: first.try_get::<_, Option<bool>>("ended")?.unwrap_or(false),
                chunks,
            })
        }
    };
    Ok(Some(OutputLook { status, stream }))
}

/// The sweeper's prune: the live output of at most `max_tasks` tasks that ended over `keep`
/// ago (or are gone). How many tasks' it deleted.
pub async fn prune_outputs(
    client: &impl GenericClient,
    keep: std::time::Duration,
    max_tasks: usize,
) -> StoreResult<u64> {
    let statement = client.prepare_cached(PRUNE_OUTPUTS.text()).await?;
    let keep_ms = millis(keep);
    let max_tasks = limit(max_tasks);
    let params = PRUNE_OUTPUTS.bind(&[("keep_ms", &keep_ms), ("limit", &max_tasks)])?;
    Ok(client.execute(&statement, &params).await?)
}
