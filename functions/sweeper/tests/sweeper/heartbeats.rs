//! Heartbeat capacity at volume (issue 36, docs/lifecycle.md "Callbacks"): a sweep heartbeats
//! every due callback however many wait (no fixed number of pages), shares its pages between
//! tenants when its capacity is short, and keeps each state's `HeartbeatSeconds` promise while
//! the batch duties hold the sweeps (the short form of `make bench`'s heartbeat section).

use std::collections::HashSet;
use std::time::{Duration, Instant};

use aitasks_runtime::sweeper;
use aitasks_store::{self as store, NewCallback};
use aitasks_testkit::*;

/// `count` queued tasks of `tenant`, each with a Step Functions callback; their tokens.
async fn waiting(db: &TestDb, tenant: &str, count: usize) -> Vec<String> {
    let client = db.client().await;
    let mut tokens = Vec::with_capacity(count);
    for chunk in 0..count.div_ceil(500) {
        let n = (count - chunk * 500).min(500);
        let tasks: Vec<_> =
            (0..n).map(|i| new_task(tenant, app_owner("waits"), &format!("{tenant}-{chunk}-{i}"))).collect();
        let created = store::create_tasks(&client, tenant, &tasks).await.unwrap();
        let ids: Vec<_> = created.into_iter().map(|c| c.unwrap().task().id).collect();
        let names: Vec<String> = (0..n).map(|i| format!("tok-{tenant}-{chunk}-{i}")).collect();
        let callbacks: Vec<NewCallback<'_>> = ids
            .iter()
            .zip(&names)
            .map(|(task_id, token)| NewCallback { task_id: *task_id, kind: "step_functions", token })
            .collect();
        store::attach_callbacks(&client, &callbacks).await.unwrap();
        tokens.extend(names);
    }
    tokens
}

async fn app_on(db: &TestDb, sfn: &SfnStub, overrides: &[(&str, &str)]) -> aitasks_runtime::App {
    let queues = TestQueues::create(5, 30).await;
    let provider = StubProvider::start().await;
    test_app(db, &queues, &provider, overrides).with_aws(&sfn.sdk_config().await)
}

fn beaten(sfn: &SfnStub, tokens: &[String]) -> usize {
    let beats = sfn.heartbeats();
    tokens.iter().filter(|t| beats.contains_key(*t)).count()
}

#[tokio::test]
async fn one_sweep_heartbeats_every_due_callback_past_a_thousand() {
    let db = TestDb::new().await;
    let sfn = SfnStub::start().await;
    // The window the sweep spreads its calls over: 5 s (45 at the defaults).
    let app = app_on(
        &db,
        &sfn,
        &[("AITASK_CALLBACK_CALLS_PER_SECOND", "5000"), ("AITASK_CALLBACK_HEARTBEAT_BUDGET_MS", "5000")],
    )
    .await;
    let tokens = waiting(&db, "app-many", 3_000).await;
    // Last heartbeated a minute ago: every one is due (45 s).
    db.sql("UPDATE task_callbacks SET heartbeat_at = now() - interval '1 minute'").await;

    sweeper::sweep(&app).await;
    let reached = beaten(&sfn, &tokens);
    println!("one sweep: {reached} of {} waiting callbacks heartbeated", tokens.len());
    assert_eq!(reached, tokens.len(), "every due callback gets its heartbeat in the sweep");
    assert!(
        sfn.peak_calls_per_second() <= 5_001,
        "never over the configured rate: {} in one second",
        sfn.peak_calls_per_second()
    );
}

/// Issue 48: a callback heartbeated late in one sweep is not due yet when the next one starts;
/// that sweep heartbeats it when it comes due, within its window, instead of stopping at the
/// first empty page and leaving it to the sweep after (a gap of two periods). The first sweep is
/// slow (its pace spreads the 200 callbacks over most of its window), the later ones fast, as a
/// warm Lambda's are: the fast one catches up with what is due, and used to stop. Time runs 20
/// times faster than the stack's: the heartbeat interval 2.25 s, the window 2.25 s, the period 3
/// s; `HeartbeatSeconds` 120 is 6 s here, and the promise with its margin 4.5 s (90 s).
#[tokio::test]
async fn a_callback_heartbeated_late_in_a_sweep_is_heartbeated_in_the_next_one() {
    let db = TestDb::new().await;
    let sfn = SfnStub::start().await;
    let scaled = [
        ("AITASK_CALLBACK_HEARTBEAT_MS", "2250"),
        ("AITASK_CALLBACK_HEARTBEAT_BUDGET_MS", "2250"),
        ("AITASK_SWEEP_INTERVAL_MS", "3000"),
    ];
    let with_rate = |rate: &'static str| {
        let mut overrides = scaled.to_vec();
        overrides.push(("AITASK_CALLBACK_CALLS_PER_SECOND", rate));
        overrides
    };
    let slow = app_on(&db, &sfn, &with_rate("110")).await;
    let fast = app_on(&db, &sfn, &with_rate("2000")).await;
    let tokens = waiting(&db, "app-spread", 200).await;
    db.sql("UPDATE task_callbacks SET heartbeat_at = now() - interval '1 minute'").await;

    let period = Duration::from_millis(3_000);
    let started = Instant::now();
    let mut summaries = Vec::new();
    for sweep in 0..4u32 {
        tokio::time::sleep_until((started + period * sweep).into()).await;
        let app = if sweep == 0 { &slow } else { &fast };
        summaries.push(sweeper::sweep(app).await);
    }
    let ended = Instant::now();
    let beats = sfn.heartbeats();
    let first: Vec<Instant> =
        tokens.iter().filter_map(|t| beats.get(t).and_then(|b| b.first()).copied()).collect();
    assert_eq!(first.len(), tokens.len(), "the first sweep heartbeats every due callback");
    let spread = first.iter().max().unwrap().duration_since(*first.iter().min().unwrap());
    assert!(spread >= Duration::from_millis(1_200), "the slow sweep spread them over its window: {spread:?}");
    let gaps = longest_gaps(&tokens, &beats, started, ended);
    let longest = gaps.iter().max().unwrap();
    let past = gaps.iter().filter(|gap| **gap > period * 3 / 2).count();
    println!("longest gap {longest:?}; {past} of {} tokens past 1.5 periods", tokens.len());
    assert_eq!(past, 0, "no callback waits two periods for its heartbeat (longest {longest:?})");
    for summary in &summaries {
        assert_eq!(summary.callbacks_waiting, 200, "{summary:?}");
        // Caught up: the interval plus the period, 5.25 s here (105 s in the stack's time).
        assert_eq!(summary.heartbeat_seconds_kept, Some(6), "{summary:?}");
        assert!(!summary.heartbeats_cut_short, "{summary:?}");
    }
}

/// Issue 48, past the quota: Step Functions throttles the heartbeats (a bucket of 5 refilled at 6
/// a second, while the sweep's pace for its 40 callbacks is 10 a second). A throttled callback
/// is due again at once, in its place, so the sweep still heartbeats every one within its
/// window; its pace slows to what the bucket gives instead of spending calls on refusals; and
/// it counts them.
#[tokio::test]
async fn throttled_heartbeats_are_sent_again_within_the_sweep_at_the_pace_aws_allows() {
    let db = TestDb::new().await;
    let sfn = SfnStub::start().await;
    sfn.set_quota(Quota { size: 5.0, refill: 6.0, others: 0.0 });
    let app = app_on(&db, &sfn, &[("AITASK_CALLBACK_HEARTBEAT_BUDGET_MS", "20000")]).await;
    let tokens = waiting(&db, "app-throttled", 40).await;
    db.sql("UPDATE task_callbacks SET heartbeat_at = now() - interval '1 minute'").await;

    let summary = sweeper::sweep(&app).await;
    let throttled =
        sfn.calls().iter().filter(|c| c.refused.as_deref() == Some("ThrottlingException")).count();
    println!(
        "{} heartbeats, {throttled} throttled calls, {} ms",
        summary.callback_heartbeats, summary.elapsed_ms
    );
    assert_eq!(
        beaten(&sfn, &tokens),
        tokens.len(),
        "every callback heartbeated in the sweep, throttled or not"
    );
    assert_eq!(summary.callback_heartbeats, 40, "{summary:?}");
    assert!(throttled > 0, "the bucket ran dry");
    assert_eq!(summary.heartbeats_throttled as usize, throttled, "the sweep counts them");
    assert_eq!(summary.callback_failures, 0, "a throttled call is not a failed callback: {summary:?}");
    assert!(!summary.heartbeats_cut_short, "{summary:?}");
    assert!(
        throttled <= 10,
        "the pace slowed to the bucket's instead of asking at 10/s: {throttled} refusals for 40 heartbeats"
    );
}

#[tokio::test]
async fn a_heartbeat_that_fails_for_a_moment_is_sent_again_within_the_sweep() {
    let db = TestDb::new().await;
    let sfn = SfnStub::start().await;
    let app = app_on(&db, &sfn, &[("AITASK_CALLBACK_HEARTBEAT_BUDGET_MS", "5000")]).await;
    let tokens = waiting(&db, "app-flaky", 10).await;
    db.sql("UPDATE task_callbacks SET heartbeat_at = now() - interval '1 minute'").await;
    // AWS answers the first four 503: without a try again in the sweep, four callbacks wait for
    // the next one (about 120 s since their last heartbeat at the one-minute schedule).
    sfn.fail_heartbeats(4);

    let summary = sweeper::sweep(&app).await;
    let failed = sfn.calls().iter().filter(|c| c.refused.as_deref() == Some("ServiceUnavailable")).count();
    assert_eq!(failed, 4, "the stand-in failed four calls");
    assert_eq!(beaten(&sfn, &tokens), tokens.len(), "every callback heartbeated in this sweep: {summary:?}");
    assert_eq!(summary.callback_heartbeats, 10, "{summary:?}");

    // A callback whose calls keep failing is tried three times in a sweep, then left to the next.
    db.sql("UPDATE task_callbacks SET heartbeat_at = now() - interval '1 minute'").await;
    let before = sfn.calls().len();
    sfn.fail_heartbeats(1_000);
    let summary = sweeper::sweep(&app).await;
    let tried = sfn.calls().len() - before;
    assert_eq!(tried, 30, "ten callbacks, three tries each: {summary:?}");
    assert_eq!(summary.callback_heartbeats, 0, "{summary:?}");
}

#[tokio::test]
async fn a_tenant_with_a_few_callbacks_is_not_starved_by_one_with_thousands() {
    let db = TestDb::new().await;
    let sfn = SfnStub::start().await;
    // A capacity far short of the 2,050 due: 200 calls a second, for a tenth of a second once the
    // other duties are done (they have nothing to do: the duty stops after its first page).
    let app = app_on(
        &db,
        &sfn,
        &[("AITASK_CALLBACK_CALLS_PER_SECOND", "200"), ("AITASK_CALLBACK_HEARTBEAT_BUDGET_MS", "100")],
    )
    .await;
    let big = waiting(&db, "app-big", 2_000).await;
    let small = waiting(&db, "app-small", 50).await;
    // The big tenant's have waited longest: oldest first alone would give the small one nothing.
    db.sql("UPDATE task_callbacks SET heartbeat_at = now() - interval '10 minutes' WHERE token LIKE 'tok-app-big-%'")
        .await;
    db.sql("UPDATE task_callbacks SET heartbeat_at = now() - interval '1 minute' WHERE token LIKE 'tok-app-small-%'")
        .await;

    sweeper::sweep(&app).await;
    let (big_reached, small_reached) = (beaten(&sfn, &big), beaten(&sfn, &small));
    println!("capacity short: the big tenant got {big_reached} of 2000 heartbeats, the small one {small_reached} of 50");
    assert!(big_reached < big.len(), "the capacity was short: {big_reached}");
    assert_eq!(small_reached, small.len(), "the small tenant's turn comes in the first page");
    assert!(big_reached >= small_reached, "the big tenant gets its turns too: {big_reached}");
}

#[tokio::test]
async fn a_caller_gone_stops_its_heartbeats_and_its_queued_task_is_canceled() {
    let db = TestDb::new().await;
    let sfn = SfnStub::start().await;
    let app = app_on(&db, &sfn, &[]).await;
    let tokens = waiting(&db, "app-gone", 3).await;
    sfn.time_out(&tokens[0]);
    db.sql("UPDATE task_callbacks SET heartbeat_at = now() - interval '1 minute'").await;

    let summary = sweeper::sweep(&app).await;
    assert_eq!((summary.callback_heartbeats, summary.callbacks_gone), (2, 1), "{summary:?}");
    assert_eq!(summary.callback_tasks_canceled, 1, "its task had not started and nobody else waits");
    db.sql("UPDATE task_callbacks SET heartbeat_at = now() - interval '1 minute'").await;
    sweeper::sweep(&app).await;
    let calls = sfn.calls().iter().filter(|c| c.token == tokens[0]).count();
    assert_eq!(calls, 1, "one call found the caller gone; none after it");
    let beaten: HashSet<String> = sfn.heartbeats().into_keys().collect();
    assert!(beaten.contains(&tokens[1]) && beaten.contains(&tokens[2]), "the others are still heartbeated");
}

/// The short form of `make bench`'s heartbeat section: 1,000 waiting callbacks (900 one
/// tenant's), time 20 times faster, every sweep held by the batch duties for 110 s.
#[tokio::test]
async fn waiting_callbacks_keep_their_heartbeat_promise_while_batches_hold_the_sweeps() {
    let callbacks =
        std::env::var("HEARTBEAT_SCALE_CALLBACKS").ok().and_then(|v| v.parse().ok()).unwrap_or(1_000);
    let scale = HeartbeatScale {
        callbacks,
        big_tenant: callbacks * 9 / 10,
        small_tenants: 10,
        speedup: 20,
        run_for: Duration::from_secs(20),
        batch_hold: Some(Duration::from_secs(110)),
        call_latency: Duration::from_millis(20),
        calls_per_second: 250,
        quota: None,
    };
    let figures = run_heartbeat_scale(&scale).await;
    let (db_mean, db_most) = figures.db_ms();
    println!(
        "{} callbacks, {} sweeps (longest {:?}): longest gap per token max {:?} p99 {:?} (HeartbeatSeconds {:?}); \
         {} timed out ({} of the small tenants'); {:.0} heartbeats/s, peak {:.0}/s; database {db_mean:.1} ms a sweep (most {db_most:.1})",
        figures.tokens,
        figures.sweeps.len(),
        figures.longest_sweep(scale.speedup),
        figures.longest_gap_max,
        figures.longest_gap_p99,
        figures.heartbeat_seconds,
        figures.timed_out,
        figures.small_timed_out,
        figures.heartbeats_per_second,
        figures.peak_calls_per_second,
    );
    assert!(figures.sweeps.len() >= 2, "the sweeps ran: {}", figures.sweeps.len());
    assert_eq!(figures.timed_out, 0, "no state with HeartbeatSeconds 120 times out while its task lives");
    assert!(
        figures.peak_calls_per_second <= f64::from(figures.calls_per_second_limit) * 1.05,
        "under the configured rate: {:.0}/s",
        figures.peak_calls_per_second
    );
}
