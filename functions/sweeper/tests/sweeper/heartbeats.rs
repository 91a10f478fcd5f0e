//! Heartbeat capacity at volume (issue 36, docs/lifecycle.md "Callbacks"): a sweep heartbeats
//! every due callback however many wait (no fixed number of pages), shares its pages between
//! tenants when its capacity is short, and keeps each state's `HeartbeatSeconds` promise while
//! the batch duties hold the sweeps (the short form of `make bench`'s heartbeat section).

use std::collections::HashSet;

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
        store::mark_sent_many(&client, &ids).await.unwrap();
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
    let app = app_on(&db, &sfn, &[("AITASK_CALLBACK_CALLS_PER_SECOND", "5000")]).await;
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
        run_for: std::time::Duration::from_secs(20),
        batch_hold: std::time::Duration::from_secs(110),
        call_latency: std::time::Duration::from_millis(20),
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
