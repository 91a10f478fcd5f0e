//! The SQS side of a task's attempt: its message's receipt, with which a worker keeps the
//! message hidden while it works, and what becomes of the message when the attempt is over.

use std::time::Duration;

use uuid::Uuid;

/// One message of the task queue (a record of process-task's SQS event): the task it names and
/// its receipt handle.
#[derive(Debug, Clone, Copy)]
pub struct QueueMessage<'a> {
    pub task_id: Uuid,
    /// Extends the message's visibility with each heartbeat.
    pub receipt: &'a str,
    /// The message's group (its application's on a fair queue), for a message sent again.
    pub group: Option<&'a str>,
    /// How many times SQS has handed this message out, this time included
    /// (`ApproximateReceiveCount`), when the delivery says.
    pub receives: Option<u32>,
}

impl QueueMessage<'_> {
    /// Whether a success on this delivery hands its event over to the worker's publish
    /// (`aitasks_store::Custody::HandedOver`): only on the message's first receive, so the
    /// message that must come back if the worker dies before its publish is at most its second,
    /// far below the queue's `maxReceiveCount` (10 in the stack), and never goes to the
    /// dead-letter queue instead. A message received before, or one whose count is unknown,
    /// keeps the outbox.
    pub fn hands_over_events(&self) -> bool {
        self.receives == Some(1)
    }
}

/// What to do with the SQS message of the task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Acknowledge: the task is settled, or this message had nothing to do.
    Ack,
    /// Leave the message for another delivery after `delay` (the task was requeued).
    Retry { delay: Duration },
}
