//! Writing every decision but a success's (those are written together: `complete_together`),
//! fenced on the attempt's lease, with the log line and the metrics of a way back to the queue.

use std::time::Duration;

use aitasks_store::{self as store, Fenced, PendingEvent, StoreError};

use super::record::cause;
use super::{Attempt, Decision, Ending};
use crate::metrics;

/// What carrying out a decision wrote.
#[derive(Debug)]
pub(crate) enum Carried {
    /// The task ended (`failed`): its event, to record and publish.
    Ended(PendingEvent),
    /// Requeued for a counted retry after `delay`.
    Requeued { delay: Duration },
    /// Given back with its attempt uncounted, for another try after `delay`.
    GivenBack { delay: Duration },
    /// Parked under its holds, its attempt uncounted (its message is not sent again); `probe`:
    /// it holds an automatic hold's probe lease, and is sent again after `after`.
    Parked { probe: Option<Duration> },
    /// The fence failed: the lease is gone, or a cancel was requested (the holder may end that).
    /// Also what a requested cancel's decision writes here: nothing for the attempt itself.
    Lost,
    /// Nothing to write: another worker or the sweeper owns the task now.
    Abandoned,
}

/// Write `decision`, the decision for `attempt` ended as `ending` after `worked`: a requeue, a
/// failure, a give-back; a success is [`Carried::Lost`] here (written by `complete_together`).
pub(crate) async fn write_decision(
    client: &store::Client,
    attempt: &Attempt<'_>,
    ending: &Ending,
    decision: Decision<'_>,
    worked: Duration,
) -> Result<Carried, StoreError> {
    let lease = attempt.lease;
    Ok(match decision {
        Decision::Requeue { code, message, delay } => {
            if !store::requeue_attempt(client, lease, code, &message).await? {
                return Ok(Carried::Lost);
            }
            metrics::retried(code.as_str(), worked);
            tracing::info!(
                kind = %attempt.kind,
                model_id = %attempt.model_id,
                attempts = lease.attempt,
                error_code = code.as_str(),
                cause = cause(ending).as_deref(),
                retry_in_ms = delay.as_millis() as u64,
                worked_ms = worked.as_millis() as u64,
                "requeued"
            );
            Carried::Requeued { delay }
        }
        Decision::Fail { code, message } => match store::fail_attempt(client, lease, code, &message).await? {
            Fenced::Written(event) => Carried::Ended(event),
            Fenced::Lost => Carried::Lost,
        },
        Decision::GiveBack { delay } => {
            if !store::give_back(client, lease).await? {
                return Ok(Carried::Lost);
            }
            if matches!(ending, Ending::Throttled(_)) {
                metrics::gave_back(attempt.model_id);
                tracing::info!(
                    model_id = %attempt.model_id,
                    retry_in_ms = delay.as_millis() as u64,
                    "given back: every profile is at its provider limit; the attempt is not counted"
                );
            } else {
                tracing::info!(
                    "given back: claimed too late to work before the deadline; the attempt is not counted"
                );
            }
            Carried::GivenBack { delay }
        }
        Decision::Park { holds, probe } => match store::park(client, lease, holds, probe).await? {
            store::Parked::Parked { probe: probing } => {
                tracing::info!(
                    model_id = %attempt.model_id,
                    holds = holds.len(),
                    probe = probing,
                    "parked: the task is held; the attempt is not counted"
                );
                Carried::Parked { probe: probing.then_some(probe) }
            }
            // Released meanwhile: back in the queue at once.
            store::Parked::GivenBack => Carried::GivenBack { delay: Duration::ZERO },
            store::Parked::Lost => Carried::Lost,
        },
        // Nothing to write for the attempt itself: its requested cancel is ended by the holder.
        Decision::EndCanceled | Decision::Complete(_) => Carried::Lost,
        Decision::Abandon => {
            tracing::info!("lease lost (requeued, settled or deleted elsewhere); writing nothing");
            Carried::Abandoned
        }
    })
}
