//! Waiting for a condition instead of sleeping for a fixed time. A test that sleeps assumes the
//! machine is quick enough, and fails on a loaded one (the whole suite beside a benchmark); a
//! test that waits for what it needs is as quick as the machine allows and as patient as a
//! loaded one needs.

use std::future::Future;
use std::time::{Duration, Instant};

/// How long a wait may last before it fails the test. Generous: a wait returns as soon as its
/// condition holds, so only a test that is failing anyway waits this long.
pub const PATIENCE: Duration = Duration::from_secs(120);

/// How often a condition is asked again.
const POLL: Duration = Duration::from_millis(20);

/// Ask `check` until it holds; panic naming `what` after [`PATIENCE`].
pub async fn wait_until<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    wait_for(what, || {
        let asked = check();
        async move { asked.await.then_some(()) }
    })
    .await
}

/// Ask `check` until it gives something, and return it; panic naming `what` after [`PATIENCE`].
pub async fn wait_for<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let started = Instant::now();
    loop {
        if let Some(found) = check().await {
            return found;
        }
        assert!(started.elapsed() < PATIENCE, "waited {PATIENCE:?} for {what}, in vain");
        tokio::time::sleep(POLL).await;
    }
}
