//! The dev server's schedule, as `make serve` runs it: a sweep starts every period from the first
//! sweep's start, as EventBridge starts one every minute whatever the last one's length. A
//! schedule that counted its period from the end of the first sweep left the callbacks created
//! as the server started without a heartbeat for a whole sweep's length more (measured: 143 s
//! for tokens created in the first seconds of `make serve`, past the 120 s docs/events.md
//! promises).

use std::time::Duration;

use aitasks_testkit::run_served_heartbeats;

#[tokio::test]
async fn a_sweep_starts_every_period_from_the_first_sweeps_start() {
    // A sweep every 6 s whose heartbeat window (nine tenths of it, 5.4 s) the waiting callbacks
    // fill; the first sweep 2 s after the start (the stale-running wait and a second).
    let figures = run_served_heartbeats(
        20,
        Duration::from_secs(20),
        &[
            ("AITASK_SWEEP_INTERVAL_MS", "6000"),
            ("AITASK_STALE_RUNNING_MS", "1000"),
            ("AITASK_CALLBACK_HEARTBEAT_MS", "1000"),
        ],
    )
    .await;
    assert_eq!(figures.tokens, 20);
    // Sweeps start at about 2, 8 and 14 s, each ending 5.4 s later: three ended within 20 s (a
    // period counted from the first sweep's end starts the second at 13.4 s: two).
    assert!(figures.sweeps >= 3, "sweeps ended within 20 s: {figures:?}");
    // Heartbeats come every second inside a window and pause 0.6 s between windows; a second
    // sweep 6 s after the first one's end left every token 6 s without one.
    assert!(
        figures.between_max < Duration::from_secs(4),
        "the longest wait between a token's heartbeats: {figures:?}"
    );
}
