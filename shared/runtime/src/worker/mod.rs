//! process-task's one path, a module per step:
//!
//! - [`process_records`] (`process`): an invocation's tasks claimed in one statement, their
//!   attempts run side by side, answering record by record;
//! - `attempt`: one claimed attempt, its provider calls watched by the cancel polls, the
//!   heartbeats (the row and the message) and the deadline;
//! - `settle_attempt`: the attempt settled through the runtime's one settlement
//!   (`crate::settle`: its decision, its write, its log line, metrics and event), and what
//!   becomes of its message;
//! - `settler`: the invocation's group commit of the successes that finish together.
//!
//! Below them: `held` (whether the claimed task is held, and which profiles its chain passes
//! over: docs/api.md, "Holds"), `calls` (the profile chain, each behind its provider limits in
//! `permit`),
//! `queue_message` (the SQS side of a message), `deadline` (time limits), `parts` (the worker's own
//! time on an attempt, by part, for the settlement's metrics).

mod attempt;
mod calls;
mod deadline;
mod held;
mod output_writer;
mod parts;
mod permit;
mod process;
mod queue_message;
mod settle_attempt;
mod settler;

pub use process::process_records;
pub use queue_message::{Outcome, QueueMessage};
