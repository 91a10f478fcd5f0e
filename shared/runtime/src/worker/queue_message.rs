//! The SQS side of a task's delivery: the record's receipt, with which a worker keeps its
//! message hidden while it works, and what becomes of the message when the attempt is over.

use std::time::Duration;

use uuid::Uuid;

/// One record of an SQS delivery: the task it names and its receipt handle.
#[derive(Debug, Clone, Copy)]
pub struct Delivery<'a> {
    pub task_id: Uuid,
    /// Extends the message's visibility with each heartbeat.
    pub receipt: &'a str,
    /// The message's group (its application's on a fair queue), for a message sent again.
    pub group: Option<&'a str>,
}

/// What to do with the SQS message of the task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Acknowledge: the task is settled, or this delivery had nothing to do.
    Ack,
    /// Leave the message for another delivery after `delay` (the task was requeued).
    Retry { delay: Duration },
}
