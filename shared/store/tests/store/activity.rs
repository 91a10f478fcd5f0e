//! The tenant's activity over time (migrations/V40, `GET /v1/activity`): what the triggers count
//! as tasks are created and end, what the sweeper's fold keeps (a minute's rows into one, a day
//! old minute into its hour) and prunes, and the read's bound: it walks only its tenant's rows,
//! as many as the window's minutes and hours, however many tasks they count.

use aitasks_contracts::{ActivityQuery, ActivityWindow, ErrorCode, ACTIVITY_ROWS_MAX};
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
        store::complete_attempt(&client, running.lease(), &json!("pos"), Some(&usage), false).await.unwrap();
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

    // Read by the hour before any fold: the rows backends count into now are read too.
    let two_hours_ago = Utc::now() - chrono::Duration::hours(2);
    check(&read("3600", two_hours_ago).await);
    // A minute two closed is folded into its minute's one row and its hour's; nothing changes
    // in either answer.
    db.sql(&format!(
        "UPDATE activity SET starts_at = starts_at - interval '3 minutes' WHERE app_id = '{APP}'"
    ))
    .await;
    let folded = store::fold_activity(&client, 100).await.unwrap();
    assert!(folded >= 1, "{folded}");
    let rows = |kind: &'static str| {
        let db = &db;
        async move { db.count(&format!("SELECT count(*) FROM activity WHERE app_id = '{APP}' AND {kind}")).await }
    };
    assert_eq!((rows("writer <> 0").await, rows("minutes = 1").await, rows("minutes = 60").await), (0, 1, 1));
    check(&read("60", hour_ago).await);
    check(&read("3600", two_hours_ago).await);
    // A minute over 26 hours old is deleted: its hour holds it, read by the hour.
    db.sql(&format!(
        "UPDATE activity SET starts_at = starts_at - interval '27 hours' WHERE app_id = '{APP}'"
    ))
    .await;
    assert_eq!(store::prune_activity(&client, 100).await.unwrap(), 1);
    assert_eq!((rows("minutes = 1").await, rows("minutes = 60").await), (0, 1));
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

/// A provider's usage is hostile: figures far past any real answer, negative or not numbers
/// end their tasks (and the task ended beside them in the same statement) as any other, and are
/// counted held to their bound.
#[tokio::test]
async fn a_hostile_usage_never_fails_the_ending_and_is_counted_within_bounds() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let mut leases = Vec::new();
    for key in ["huge", "plain"] {
        let created = store::create_task(&client, &new_task(APP, app_owner("s"), key)).await.unwrap();
        leases.push(claimed(&db, created.task().id).await.lease());
    }
    let hostile = json!({"inputTokens": 1e300, "outputTokens": -5, "estimatedCostUsd": "lots"});
    let plain = json!({"inputTokens": 10, "outputTokens": 2});
    let output = json!("pos");
    for _ in 0..3 {
        // Three times over, so that the sums would pass bigint's limit unheld.
        let attempts = vec![(leases[0], &output, Some(&hostile)), (leases[1], &output, Some(&plain))];
        store::complete_many(&client, &attempts, false).await.unwrap();
        db.sql(&format!(
            "UPDATE tasks SET status = 'running', completed_at = NULL, heartbeat_at = now() WHERE app_id = '{APP}'"
        ))
        .await;
    }
    let activity =
        store::activity(&client, APP, &window("60", Utc::now() - chrono::Duration::hours(1))).await.unwrap();
    assert_eq!(totals(&activity).1, 6, "every ending counted: {activity:#?}");
    let input: u64 = activity.buckets.iter().map(|b| b.input_tokens).sum();
    assert_eq!(input, 3 * 1_000_000_000_000 + 30, "each figure held to 1e12");
    let output_tokens: u64 = activity.buckets.iter().map(|b| b.output_tokens).sum();
    assert_eq!(output_tokens, 6, "a negative count counts none");
}

/// A million tasks in 23 hours, laid out as the triggers and the fold leave them: a row a
/// minute and model, the same sums a row an hour and model (and hours of the day before), and
/// one row per backend for the minutes not folded yet. Nine other tenants hold the same beside
/// it. Both reads (by the minute, by the hour) answer every task, and their plans walk the
/// tenant's part of the primary key (and of the unfolded rows' index) only: rows read are the
/// window's rows of this tenant, none dropped, far under the bound.
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
            "INSERT INTO activity (app_id, starts_at, minutes, writer, model_id, created, succeeded, times) \
             SELECT '{tenant}', date_trunc('minute', now()) - (3 + n / {models}) * interval '1 minute', 1, 0, \
                 'model-' || (n % {models}), 1000000 / {rows} + CASE WHEN n < 1000000 % {rows} THEN 1 ELSE 0 END, \
                 1000000 / {rows}, histogram_plus(histogram_plus(array_fill(0, ARRAY[114]), 27), 40) \
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
        // The same minutes by the hour, as the fold writes them, and the day before in hours.
        db.sql(&format!(
            "INSERT INTO activity (app_id, starts_at, minutes, writer, model_id, created, succeeded, times) \
             SELECT app_id, date_trunc('hour', starts_at, 'UTC'), 60, 0, model_id, sum(created), sum(succeeded), \
                 histogram_sum(times) \
             FROM activity WHERE app_id = '{tenant}' AND minutes = 1 AND writer = 0 GROUP BY 1, 2, 5; \
             INSERT INTO activity (app_id, starts_at, minutes, writer, model_id, created) \
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

    // The plans, generic as a long-lived connection runs them: the tenant's part of the key only.
    let (_, text, names) = aitasks_store::queries::statements()
        .find(|(name, _, _)| *name == "activity/activity")
        .expect("the statement");
    client
        .batch_execute(&format!("SET plan_cache_mode = force_generic_plan; PREPARE activity_read AS {text}"))
        .await
        .unwrap();
    let own = |kind: &str| format!("SELECT count(*) FROM activity WHERE app_id = '{APP}' AND ({kind})");
    for (hourly, from, own_rows) in [
        // By the minute: the window's minute rows, folded or not.
        (false, "now() - interval '23 hours 10 minutes'", db.count(&own("minutes = 1")).await),
        // By the hour: the hour rows and the minutes not folded yet.
        (
            true,
            "now() - interval '3 days'",
            db.count(&own("(minutes = 60 AND starts_at > now() - interval '3 days') OR writer <> 0")).await,
        ),
    ] {
        let value = |name: &str| match name {
            "app_id" => format!("'{APP}'"),
            "from" => from.to_owned(),
            "to" => "now() + interval '1 hour'".to_owned(),
            "rows_max" => ACTIVITY_ROWS_MAX.to_string(),
            "hourly" => hourly.to_string(),
            other => panic!("a parameter this test does not know: {other}"),
        };
        let arguments: Vec<String> = names.iter().map(|name| value(name)).collect();
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
        let (read, dropped) = scanned(&plan[0]["Plan"]);
        assert_eq!(
            read, own_rows as u64,
            "the tenant's rows of the window, no other (hourly {hourly}): {plan:#}"
        );
        assert_eq!(dropped, 0, "no row read and dropped (hourly {hourly}): {plan:#}");
        assert!(read < ACTIVITY_ROWS_MAX as u64);
    }
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
