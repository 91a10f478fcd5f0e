//! Live output (docs/api.md, "Live output"): the query of `GET /v1/tasks/{taskId}/output` and
//! its answer, a piece of the answer a model is writing, read from an offset.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::codes::TaskStatus;

/// The most bytes of text one read answers with; the reader reads again from `next`.
pub const OUTPUT_READ_MAX_BYTES: usize = 262_144;

/// The highest `after` a reader can give: a segment never holds more characters than the
/// output limit has bytes.
pub const OUTPUT_OFFSET_MAX: i64 = crate::OUTPUT_MAX_BYTES as i64;

/// `GET /v1/tasks/{taskId}/output`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskOutput {
    pub task_id: Uuid,
    pub status: TaskStatus,
    /// The task is terminal: its output is the record.
    pub ended: bool,
    /// The stream read (1, 2, … in the order streams began); `None` while there is no text.
    pub segment: Option<i32>,
    /// The attempt that wrote the segment.
    pub attempt: Option<i32>,
    /// Where `text` starts: the reader's `after` on the same segment, else 0.
    pub from: i64,
    pub text: String,
    /// `from` plus the characters of `text`.
    pub next: i64,
    /// The segment's stream has ended and `next` is its end.
    #[serde(rename = "final")]
    pub is_final: bool,
}

/// Where a reader stands: the segment its offset belongs to (`None`: the current one) and the
/// characters of it that it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OutputCursor {
    pub segment: Option<i32>,
    pub after: i64,
}
