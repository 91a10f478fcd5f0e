//! A released hold's parked tasks sent again: pages of `held_tasks` in creation order, each page's
//! messages sent ten to a batch, a failed send left to the sweeper's owed messages.

use std::time::Instant;

use aitasks_store::{self as store, StoreError};
use uuid::Uuid;

use crate::app::App;

/// What [`resend`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Resent {
    pub(crate) sent: u64,
    pub(crate) failed: u64,
    /// The hold's list is done (every parked task sent again).
    pub(crate) done: bool,
}

/// Send the released hold's parked tasks again, `page` at a time, until the list is done or
/// `until` has passed (at least one page). A task whose send fails is made owed for the sweeper.
pub(crate) async fn resend<P>(
    app: &App<P>,
    client: &store::Client,
    hold_id: Uuid,
    page: usize,
    until: Instant,
) -> Result<Resent, StoreError> {
    let mut done = Resent::default();
    loop {
        let resent = store::resend_held(client, hold_id, page).await?;
        let failed = app.queues.send_tasks(&resent.tasks).await;
        if !failed.is_empty() {
            store::mark_unsent(client, &failed).await?;
        }
        done.sent += (resent.tasks.len() - failed.len()) as u64;
        done.failed += failed.len() as u64;
        if resent.taken < page {
            done.done = true;
            return Ok(done);
        }
        if Instant::now() >= until {
            return Ok(done);
        }
    }
}
