//! The automatic hold's probe, as the sweeper takes it (holds/take_probe.sql): bounded to the head
//! of the hold's list, which never stays filled with tasks that are no longer parked.

use std::time::Duration;

use aitasks_testkit::TestDb;

const HOLD: &str = "0190d1c3-0000-7000-8000-00000000a001";
/// Listed tasks that are no longer parked (canceled while held), more than the statement looks at.
const DEAD: i64 = 1_001;

/// A provider outage's parked tasks of one tenant canceled (an operation, a run cancel) leave
/// their rows at the head of the automatic hold's list: the next sweep drops them, and the one
/// after finds the task still parked behind them as the probe; a hold is never left unprobed.
#[tokio::test]
async fn a_probe_is_found_behind_a_thousand_canceled_parked_tasks() {
    let db = TestDb::new().await;
    db.sql(&format!(
        "INSERT INTO holds (id, app_id, profile, reason) VALUES ('{HOLD}', NULL, 'default', 'outage'); \
         INSERT INTO tasks (id, app_id, scope_id, step_key, effect_key, kind, request, input_hash, model_id, \
             max_attempts, status, attempts, error_code, completed_at, message_sent_at) \
         SELECT ('00000000-0000-7000-8000-' || lpad(to_hex(n), 12, '0'))::uuid, 'app-x', 's', 'step', \
             'x' || n, 'classify', '{{}}', repeat('0', 64), 'default', 3, 'canceled', 0, \
             'WORKFLOW_AI_CANCELED', now(), 'infinity' \
         FROM generate_series(1, {DEAD}) n; \
         INSERT INTO tasks (id, app_id, scope_id, step_key, effect_key, kind, request, input_hash, model_id, \
             max_attempts, status, attempts, message_sent_at) \
         VALUES ('00000000-0000-7000-8000-00000000ffff', 'app-y', 's', 'step', 'y', 'classify', '{{}}', \
             repeat('0', 64), 'default', 3, 'queued', 0, 'infinity'); \
         INSERT INTO held_tasks (hold_id, task_id) SELECT '{HOLD}', id FROM tasks;"
    ))
    .await;
    let client = db.client().await;
    let hold = HOLD.parse().unwrap();
    // A probe interval of nothing: the lease lapses at once, as two intervals do between sweeps.
    let lapsed = Duration::ZERO;
    let first = aitasks_store::take_probe(&client, hold, lapsed).await.unwrap();
    assert!(first.is_none(), "the head of the list holds no parked task: {first:?}");
    let listed = db.count(&format!("SELECT count(*) FROM held_tasks WHERE hold_id = '{HOLD}'")).await;
    assert_eq!(listed, DEAD + 1 - 1_000, "the 1,000 looked at and no longer parked are dropped");
    let second = aitasks_store::take_probe(&client, hold, lapsed).await.unwrap();
    let second = second.expect("the parked task behind them is the probe");
    assert_eq!(
        (second.task_id.to_string().as_str(), second.app_id.as_str()),
        ("00000000-0000-7000-8000-00000000ffff", "app-y")
    );
}
