//! The tenant's activity over time (migrations/V40, `GET /v1/activity`): what the triggers count
//! as tasks are created and end, what the sweeper's fold keeps (a minute's rows into one, a day
//! old minute into its hour) and prunes, and the read's bound: it walks only its tenant's rows,
//! as many as the window's minutes and hours, however many tasks they count.

use aitasks_contracts::{ActivityQuery, ActivityWindow, ErrorCode, ACTIVITY_ROWS_MAX, HISTOGRAM_BINS};
use aitasks_store::{self as store, Claim, Fenced};
use aitasks_testkit::*;
use chrono::{DateTime, Utc};
use serde_json::{json, Value};

const OTHER: &str = "app-other";

fn window(bucket: &str, from: DateTime<Utc>) -> ActivityWindow {
    let from = from.to_rfc3339();
    ActivityWindow::parse(ActivityQuery { bucket: Some(bucket), from: Some(&from), to: None }, Utc::now())
        .unwrap()
}

/// The window's buckets summed: (created, succeeded, failed, canceled).
fn totals(activity: &aitasks_contracts::Activity) -> (u64, u64, u64, u64) {
    activity
        .buckets
        .iter()
        .fold((0, 0, 0, 0), |t, b| (t.0 + b.created, t.1 + b.succeeded, t.2 + b.failed, t.3 + b.canceled))
}

async fn claimed(db: &TestDb, task_id: uuid::Uuid) -> store::Task {
    match claim_one(&db.client().await, task_id).await {
        Claim::Claimed(task) => task,
        other => panic!("expected a claim, got {other:?}"),
    }
}

#[tokio::test]
async fn the_triggers_count_what_tasks_did_and_the_fold_keeps_every_figure() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let mut ids = Vec::new();
    for key in ["ok", "bad", "dropped", "waiting"] {
        let created = store::create_task(&client, &new_task(APP, app_owner("s"), key)).await.unwrap();
        ids.push(created.task().id);
    }
    store::create_task(&client, &new_task(OTHER, app_owner("s"), "theirs")).await.unwrap();
    // One succeeds with a priced usage, one fails for good, one is canceled while queued.
    let running = claimed(&db, ids[0]).await;
    let usage = json!({"inputTokens": 10, "outputTokens": 2, "estimatedCostUsd": 0.5});
    let written =
        store::complete_attempt(&client, running.lease(), &json!("pos"), Some(&usage)).await.unwrap();
    assert!(matches!(written, Fenced::Written(_)));
    let running = claimed(&db, ids[1]).await;
    store::fail_attempt(&client, running.lease(), ErrorCode::ModelRefused, "no").await.unwrap();
    db.sql(&format!(
        "UPDATE tasks SET status = 'canceled', error_code = 'WORKFLOW_AI_CANCELED', completed_at = now() WHERE id = '{}'",
        ids[2]
    ))
    .await;

    let read = |bucket: &'static str, from: DateTime<Utc>| {
        let client = &client;
        async move { store::activity(client, APP, &window(bucket, from)).await.unwrap() }
    };
    let hour_ago = Utc::now() - chrono::Duration::hours(1);
    let check = |activity: &aitasks_contracts::Activity| {
        assert_eq!(totals(activity), (4, 1, 1, 1), "the other tenant's task is not counted: {activity:#?}");
        let busy: Vec<_> = activity.buckets.iter().filter(|b| b.created > 0 || b.succeeded > 0).collect();
        assert_eq!(busy.len(), 1, "everything happened in one bucket: {activity:#?}");
        let bucket = busy[0];
        assert_eq!(bucket.failures.len(), 1, "{bucket:#?}");
        assert_eq!(
            (bucket.failures[0].error_code.as_str(), bucket.failures[0].tasks),
            ("AI_MODEL_REFUSED", 1)
        );
        assert_eq!(bucket.queue_wait_ms.samples, 2, "the two that started: {bucket:#?}");
        assert_eq!(bucket.run_ms.samples, 2, "the two that ended running: {bucket:#?}");
        assert!(bucket.run_ms.p50.is_some() && bucket.run_ms.p95 >= bucket.run_ms.p50);
        assert_eq!(
            (bucket.input_tokens, bucket.output_tokens, bucket.estimated_cost_usd),
            (10, 2, Some(0.5))
        );
        assert_eq!(bucket.models.len(), 1);
        assert_eq!((bucket.models[0].model_id.as_str(), bucket.models[0].tasks), ("default", 3));
    };
    check(&read("60", hour_ago).await);

    // A minute two closed is folded into one row; nothing changes in the answer.
    db.sql(&format!(
        "UPDATE activity SET starts_at = starts_at - interval '3 minutes' WHERE app_id = '{APP}'"
    ))
    .await;
    let folded = store::fold_activity(&client, 100).await.unwrap();
    assert!(folded >= 1, "{folded}");
    assert_eq!(
        db.count(&format!("SELECT count(*) FROM activity WHERE app_id = '{APP}' AND writer <> 0")).await,
        0
    );
    check(&read("60", hour_ago).await);
    // A minute over a day old is folded into its hour, read by the hour.
    db.sql(&format!(
        "UPDATE activity SET starts_at = starts_at - interval '27 hours' WHERE app_id = '{APP}'"
    ))
    .await;
    store::fold_activity(&client, 100).await.unwrap();
    assert_eq!(
        db.count(&format!("SELECT count(*) FROM activity WHERE app_id = '{APP}' AND minutes = 60")).await,
        1
    );
    check(&read("3600", Utc::now() - chrono::Duration::hours(30)).await);
    // An hour over 93 days old is deleted.
    db.sql(&format!("UPDATE activity SET starts_at = starts_at - interval '94 days' WHERE app_id = '{APP}'"))
        .await;
    assert_eq!(store::prune_activity(&client, 100).await.unwrap(), 1);
    assert_eq!(db.count(&format!("SELECT count(*) FROM activity WHERE app_id = '{APP}'")).await, 0);
    assert_eq!(
        db.count(&format!("SELECT count(*) FROM activity WHERE app_id = '{OTHER}'")).await,
        1,
        "theirs is kept"
    );
}

/// A million tasks in 23 hours, laid out as the triggers and the fold leave them: one row a
/// minute and model for the day (and one an hour before it), and one per backend for the minutes
/// not folded yet. Nine other tenants hold the same beside it. The read answers every task, and
/// its plan walks the tenant's part of the primary key only: rows read are the window's rows of
/// this tenant, none dropped, far under the bound.
#[tokio::test]
async fn the_read_walks_only_its_tenants_rows_and_stays_bounded_with_a_million_tasks() {
    let db = TestDb::new().await;
    let models = 2;
    let minutes = 23 * 60;
    let live_writers = 16;
    let tenants: Vec<String> =
        std::iter::once(APP.to_owned()).chain((0..9).map(|i| format!("app-{i}-beside"))).collect();
    for tenant in &tenants {
        // Folded minutes: 1,000,000 tasks over minutes × models rows.
        let rows = minutes * models;
        db.sql(&format!(
            "INSERT INTO activity (app_id, starts_at, minutes, writer, model_id, created, succeeded, wait_ms, run_ms) \
             SELECT '{tenant}', date_trunc('minute', now()) - (3 + n / {models}) * interval '1 minute', 1, 0, \
                 'model-' || (n % {models}), 1000000 / {rows} + CASE WHEN n < 1000000 % {rows} THEN 1 ELSE 0 END, \
                 1000000 / {rows}, histogram_plus(array_fill(0, ARRAY[{HISTOGRAM_BINS}]), 14), \
                 histogram_plus(array_fill(0, ARRAY[{HISTOGRAM_BINS}]), 20) \
             FROM generate_series(0, {rows} - 1) n"
        ))
        .await;
        // The last minutes, one row per backend still: counted as well, beside the million.
        db.sql(&format!(
            "INSERT INTO activity (app_id, starts_at, minutes, writer, model_id, created) \
             SELECT '{tenant}', date_trunc('minute', now()) - m * interval '1 minute', 1, 100 + w, 'model-0', 1 \
             FROM generate_series(0, 2) m, generate_series(1, {live_writers}) w"
        ))
        .await;
        // The day before, folded into hours.
        db.sql(&format!(
            "INSERT INTO activity (app_id, starts_at, minutes, writer, model_id, created) \
             SELECT '{tenant}', date_trunc('hour', now()) - (26 + h) * interval '1 hour', 60, 0, 'model-0', 1000 \
             FROM generate_series(0, 23) h"
        ))
        .await;
    }
    db.sql("ANALYZE activity").await;
    let client = db.client().await;
    let day = window("60", Utc::now() - chrono::Duration::hours(23) - chrono::Duration::minutes(10));
    let activity = store::activity(&client, APP, &day).await.unwrap();
    assert!(activity.complete);
    let created: u64 = activity.buckets.iter().map(|b| b.created).sum();
    assert_eq!(
        created,
        1_000_000 + 3 * live_writers as u64,
        "every task of the window, none of another tenant's"
    );
    let week = window("3600", Utc::now() - chrono::Duration::days(3));
    let created: u64 =
        store::activity(&client, APP, &week).await.unwrap().buckets.iter().map(|b| b.created).sum();
    assert_eq!(created, 1_000_000 + 3 * live_writers as u64 + 24 * 1000, "the hours before the day too");

    // The plan, generic as a long-lived connection runs it: the tenant's part of the key only.
    let (_, text, names) = aitasks_store::queries::statements()
        .find(|(name, _, _)| *name == "activity/activity")
        .expect("the statement");
    let value = |name: &str| match name {
        "app_id" => format!("'{APP}'"),
        "from" => "now() - interval '3 days'".to_owned(),
        "to" => "now() + interval '1 hour'".to_owned(),
        "rows_max" => ACTIVITY_ROWS_MAX.to_string(),
        other => panic!("a parameter this test does not know: {other}"),
    };
    let arguments: Vec<String> = names.iter().map(|name| value(name)).collect();
    client
        .batch_execute(&format!("SET plan_cache_mode = force_generic_plan; PREPARE activity_read AS {text}"))
        .await
        .unwrap();
    let row = client
        .query_one(
            &format!("EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE activity_read({})", arguments.join(", ")),
            &[],
        )
        .await
        .unwrap();
    let plan: Value = row.get(0);
    let text = plan.to_string();
    assert!(text.contains("activity_pkey"), "{plan:#}");
    assert!(!text.contains("Seq Scan"), "{plan:#}");
    let own_rows = (minutes * models + 3 * live_writers + 24) as u64;
    let (read, dropped) = scanned(&plan[0]["Plan"]);
    assert_eq!(read, own_rows, "the tenant's rows of the window, no other: {plan:#}");
    assert_eq!(dropped, 0, "no row read and dropped: {plan:#}");
    assert!(read < ACTIVITY_ROWS_MAX as u64);
}

/// The rows the scans of `activity` in a plan returned, and the rows they read and dropped.
fn scanned(node: &Value) -> (u64, u64) {
    let mut totals = (0, 0);
    if node["Relation Name"] == "activity" {
        totals.0 += node["Actual Rows"].as_u64().unwrap_or(0);
        totals.1 += ["Rows Removed by Filter", "Rows Removed by Index Recheck"]
            .iter()
            .filter_map(|key| node[key].as_u64())
            .sum::<u64>();
    }
    for below in node["Plans"].as_array().into_iter().flatten() {
        let (read, dropped) = scanned(below);
        totals = (totals.0 + read, totals.1 + dropped);
    }
    totals
}
