//! process-task's one path, a module per step:
//!
//! - [`process_records`] (`process`): an SQS delivery's tasks claimed in one statement, their
//!   attempts run side by side, answering record by record;
//! - `attempt`: one claimed attempt, its provider calls watched by the cancel polls, the
//!   heartbeats (the row and the message) and the deadline;
//! - `settle`: carrying out what the attempt writes, and its log line, metrics and event;
//! - `settler`: the delivery's group commit of the successes that finish together.
//!
//! Below them: `calls` (the profile chain, each behind its provider limits in `permit`),
//! `decision` (what an ended attempt writes, a pure function), `delivery` (the SQS side of a
//! record), `jitter` and `deadline` (random waits and time limits), `parts` (the worker's own
//! time on an attempt, by part, for the settlement's metrics).

mod attempt;
mod calls;
mod deadline;
pub(crate) mod decision;
mod delivery;
pub(crate) mod jitter;
mod parts;
mod permit;
mod process;
mod settle;
pub(crate) mod settler;

pub use delivery::{Delivery, Outcome};
pub use process::process_records;
