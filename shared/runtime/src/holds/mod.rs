//! Holds (docs/api.md, "Holds"; migrations/V34): a tenant holds a model profile or a scope, and
//! the system holds a profile whose provider keeps failing. A held task is parked by the worker
//! that claims it (`crate::worker`): `queued`, its attempt uncounted, no message, no queue
//! timeout; a release sends the parked tasks again in creation order.
//!
//! - `api`: the HTTP operations (`POST/GET /v1/holds`, `GET /v1/holds/{holdId}`,
//!   `POST /v1/holds/{holdId}/release`);
//! - `resend`: a released hold's parked tasks sent again, in bounded pages (the release request
//!   the first within `AITASK_REQUEST_WORK_MS`, the sweeper the rest);
//! - `automatic`: the automatic hold: failures counted, the hold placed, a probe the provider
//!   answered releasing it, and the sweeper's backstop for a probe that never ran.
//!
//! Why the worker learns the holds from its claim: the claim statement already touches each row,
//! and the active holds are a small table behind partial indexes, so reading them there costs no
//! round trip and is exact at the moment the task is taken. A per-instance snapshot would cost a
//! statement a second per instance (thousands of instances polling a table nobody changes) and
//! would let a task start up to a second after its hold was placed.

mod api;
mod automatic;
mod resend;

pub use api::{get_hold, list_holds, place_hold, release_hold};
pub(crate) use automatic::{answered, failed_at, probe_lapsed_holds, release_by_probe};
pub(crate) use resend::resend;
