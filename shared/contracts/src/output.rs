//! `GET /v1/tasks/{taskId}/output`: a task's answer as the model writes it, read from an offset
//! (docs/api.md, "Live output"; openapi.yaml `TaskOutput`).

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::TaskStatus;

/// The answer of `GET /v1/tasks/{taskId}/output`: the text of one segment after the reader's
/// offset, and where the stream and the task stand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskOutput {
    pub task_id: Uuid,
    /// The task's status at the read.
    pub status: TaskStatus,
    /// The task is terminal: its output (`GET /v1/tasks/{taskId}`) is the record.
    pub ended: bool,
    /// The stream read (1, 2, … in the order streams began: each attempt, repair turn and
    /// fallback call); `None` while there is no text.
    pub segment: Option<i32>,
    /// The attempt that wrote the segment; `None` with `segment`.
    pub attempt: Option<i32>,
    /// Where `text` starts: the reader's `after` on the same segment, else 0 (drop what you have).
    pub from: i64,
    /// At most 262,144 bytes of the segment from `from`, cut at a character.
    pub text: String,
    /// `from` plus the characters (Unicode code points) of `text`: the next read's `after`.
    pub next: i64,
    /// The segment's stream has ended and `next` is its end.
    pub r#final: bool,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_answer_has_the_contract_field_names() {
        let answer = json!({
            "taskId": "6f1c2d4e-0000-4000-8000-000000000001", "status": "running", "ended": false,
            "segment": 2, "attempt": 1, "from": 3, "text": "héllo", "next": 8, "final": true
        });
        let output: TaskOutput = serde_json::from_value(answer.clone()).unwrap();
        assert_eq!((output.segment, output.attempt, output.from, output.next), (Some(2), Some(1), 3, 8));
        assert!(output.r#final);
        assert_eq!(serde_json::to_value(&output).unwrap(), answer);
        let none = json!({
            "taskId": "6f1c2d4e-0000-4000-8000-000000000001", "status": "queued", "ended": false,
            "segment": null, "attempt": null, "from": 0, "text": "", "next": 0, "final": false
        });
        let output: TaskOutput = serde_json::from_value(none.clone()).unwrap();
        assert_eq!((output.segment, output.attempt), (None, None));
        assert_eq!(serde_json::to_value(&output).unwrap(), none);
    }
}
