//! A statement given a list of ids finds each row through an index that leads with `id`, whatever
//! the planner believes of the table's size. A connection keeps the generic plan it makes at a
//! statement's sixth run; one made while a table is young (never analyzed, so the planner takes it
//! for 10 pages: a new deployment, each benchmark point's fresh database) and that reads the table
//! whole stays until autovacuum first analyzes the table, and costs more with every row the table
//! gains meanwhile (the lifecycle benchmark's claims read 223 blocks each, BENCHMARKS.md
//! "2026-12-06 (evening)"). Checked as a connection meets it:
//! each statement, as the store sends it, prepared and run six times while the tables are empty,
//! then run once more when they hold thousands of rows, counting the rows it read and dropped.

use aitasks_testkit::TestDb;
use serde_json::Value;

use crate::plans::rows_looked_at_and_dropped;

/// Tasks, and events, the tables hold when the statement runs again.
const GROWN: i64 = 3_000;

/// Rows the statement may read and drop (a filter, a join condition, a recheck). A scan of the
/// grown table drops thousands.
const MOST_ROWS_DROPPED: u64 = 10;

/// Blocks one pass of a scan of a table or an index may read: a lookup by key is a root, a leaf
/// and a heap page, and a lock or a recheck a few more. An index read whole without dropping a
/// row (`id` matched as its second column, say) reads dozens.
const MOST_BLOCKS_A_LOOKUP: u64 = 8;

const QUEUED: &str = "00000000-0000-7000-8000-00000000000a";
const RUNNING: [&str; 2] = ["00000000-0000-7000-8000-00000000000b", "00000000-0000-7000-8000-00000000000c"];
const ABSENT: &str = "00000000-0000-7000-8000-0000000000ff";

/// The grown tables: `GROWN` tasks, half queued and half running, beside the named ones, and an
/// undelivered event for each (numbered from 1,000,001, past the events a completion writes).
async fn grow(db: &TestDb) {
    let task = |id: &str, status: &str| {
        format!(
            "('{id}'::uuid, 'a', 's', 'step', '{id}', 'classify', '{{}}', repeat('0', 64), 'default', 3, \
             '{status}', {attempts}, {at}, {at})",
            attempts = i32::from(status == "running"),
            at = if status == "running" { "now()" } else { "NULL" },
        )
    };
    db.sql(&format!(
        "INSERT INTO tasks (id, app_id, scope_id, step_key, effect_key, kind, request, input_hash, \
             model_id, max_attempts, status, attempts, started_at, heartbeat_at) \
         VALUES {}, {}, {}; \
         INSERT INTO tasks (id, app_id, scope_id, step_key, effect_key, kind, request, input_hash, \
             model_id, max_attempts, status, attempts, started_at, heartbeat_at) \
         SELECT gen_random_uuid(), 'backlog', 's', 'step', 'k' || n, 'classify', '{{}}', repeat('0', 64), \
             'default', 3, CASE WHEN n % 2 = 0 THEN 'queued' ELSE 'running' END, n % 2, \
             CASE WHEN n % 2 = 1 THEN now() END, CASE WHEN n % 2 = 1 THEN now() END \
         FROM generate_series(1, {GROWN}) n; \
         INSERT INTO task_events (id, task_id, app_id, payload) OVERRIDING SYSTEM VALUE \
         SELECT 1000000 + row_number() OVER (ORDER BY id, copy), id, app_id, '{{}}' \
         FROM tasks, generate_series(1, 3) copy;",
        task(QUEUED, "queued"),
        task(RUNNING[0], "running"),
        task(RUNNING[1], "running"),
    ))
    .await;
}

/// `name`'s statement prepared on one connection, run six times on the young tables with
/// `young(parameter)`, then (the tables grown) once more under `EXPLAIN ANALYZE` with
/// `grown(parameter)`: the plan it ran, which must be the generic one the connection kept.
async fn plan_after_growth(
    db: &TestDb,
    name: &str,
    young: impl Fn(&str) -> String,
    grown: impl Fn(&str) -> String,
) -> Value {
    let (_, text, names) =
        aitasks_store::queries::statements().find(|(n, _, _)| *n == name).expect("the statement");
    let arguments =
        |value: &dyn Fn(&str) -> String| names.iter().map(|n| value(n)).collect::<Vec<_>>().join(", ");
    let client = db.client().await;
    client.batch_execute(&format!("PREPARE young AS {text}")).await.unwrap();
    for _ in 0..6 {
        client.batch_execute(&format!("EXECUTE young({})", arguments(&young))).await.unwrap();
    }
    grow(db).await;
    let row = client
        .query_one(
            &format!("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE young({})", arguments(&grown)),
            &[],
        )
        .await
        .unwrap();
    let generic: i64 = client
        .query_one("SELECT generic_plans FROM pg_prepared_statements WHERE name = 'young'", &[])
        .await
        .unwrap()
        .get(0);
    assert!(generic >= 1, "{name}: the connection kept a custom plan, not the generic one");
    row.get(0)
}

/// Fails if the plan read a grown table or index whole, or dropped more than a handful of rows.
fn assert_by_key(name: &str, plan: &Value) {
    let top = &plan[0]["Plan"];
    let whole = tables_read_whole(top);
    assert!(whole.is_empty(), "{name} read {whole:?} whole on a table of {GROWN} rows: {plan:#}");
    let wide = wide_scans(top);
    assert!(wide.is_empty(), "{name} read more than a lookup's blocks in {wide:?}: {plan:#}");
    let dropped = rows_looked_at_and_dropped(top);
    assert!(dropped <= MOST_ROWS_DROPPED, "{name} read and dropped {dropped} rows: {plan:#}");
}

#[tokio::test]
async fn a_claim_finds_its_tasks_by_key_after_the_table_grew() {
    let db = TestDb::new().await;
    let value = |ids: &'static str| {
        move |name: &str| match name {
            "task_ids" => format!("'{{{ids}}}'::uuid[]"),
            "claim_token" => "gen_random_uuid()".to_owned(),
            "claim_by" => "now() + interval '1 hour'".to_owned(),
            other => panic!("a parameter this test does not know: {other}"),
        }
    };
    let plan = plan_after_growth(&db, "lease/claim_by", value(ABSENT), value(QUEUED)).await;
    assert_by_key("lease/claim_by", &plan);
    assert_eq!(plan[0]["Plan"]["Actual Rows"], 1, "the queued task claimed: {plan:#}");
    assert_eq!(
        db.count(&format!("SELECT count(*) FROM tasks WHERE id = '{QUEUED}' AND status = 'running'")).await,
        1
    );
}

#[tokio::test]
async fn completing_many_finds_its_tasks_by_key_after_the_table_grew() {
    let db = TestDb::new().await;
    let value = |ids: String| {
        move |name: &str| match name {
            "task_ids" => format!("'{{{ids}}}'::uuid[]"),
            "attempts" => "'{1,1}'::int[]".to_owned(),
            "outputs" => r#"'{"\"a\"","\"b\""}'::jsonb[]"#.to_owned(),
            "usages" => "ARRAY[NULL, NULL]::jsonb[]".to_owned(),
            "batch_ids" => "ARRAY[NULL, NULL]::uuid[]".to_owned(),
            "hand_over" => "'on'".to_owned(),
            other => panic!("a parameter this test does not know: {other}"),
        }
    };
    // Given out of id order, each task must still take its own item's output (checked below).
    let young = value(format!("{ABSENT},00000000-0000-7000-8000-0000000000fe"));
    let grown = value(format!("{},{}", RUNNING[1], RUNNING[0]));
    let plan = plan_after_growth(&db, "settle/complete_many", young, grown).await;
    assert_by_key("settle/complete_many", &plan);
    assert_eq!(plan[0]["Plan"]["Actual Rows"], 2, "both tasks completed: {plan:#}");
    // Each task got its own item's output.
    for (id, output) in [(RUNNING[1], "a"), (RUNNING[0], "b")] {
        let query = format!("SELECT count(*) FROM tasks WHERE id = '{id}' AND output = '\"{output}\"'");
        assert_eq!(db.count(&query).await, 1, "{id} completed with \"{output}\"");
    }
}

#[tokio::test]
async fn marking_events_delivered_finds_them_by_key_after_the_table_grew() {
    let db = TestDb::new().await;
    let value = |events: &'static str| {
        move |name: &str| match name {
            "event_ids" => events.to_owned(),
            "task_ids" => format!("'{{{ABSENT}}}'::uuid[]"),
            "lease_ms" => "60000".to_owned(),
            other => panic!("a parameter this test does not know: {other}"),
        }
    };
    let name = "callbacks/mark_delivered_and_take_owed";
    let plan =
        plan_after_growth(&db, name, value("'{999999}'::bigint[]"), value("'{1000001}'::bigint[]")).await;
    assert_by_key(name, &plan);
    assert_eq!(db.count("SELECT count(*) FROM task_events WHERE delivered_at IS NOT NULL").await, 1);
    assert_eq!(
        db.count("SELECT count(*) FROM task_events WHERE id = 1000001 AND delivered_at IS NOT NULL").await,
        1
    );
}

/// The tables of the plan's sequential scans.
fn tables_read_whole(node: &Value) -> Vec<String> {
    let mut tables: Vec<String> = match (node["Node Type"].as_str(), node["Relation Name"].as_str()) {
        (Some("Seq Scan"), Some(table)) => vec![table.to_owned()],
        _ => Vec::new(),
    };
    for plan in node["Plans"].as_array().into_iter().flatten() {
        tables.extend(tables_read_whole(plan));
    }
    tables
}

/// The indexes and tables of the plan's scans that read more than [`MOST_BLOCKS_A_LOOKUP`] blocks
/// a pass, with the blocks they read a pass.
fn wide_scans(node: &Value) -> Vec<(String, u64)> {
    let scan = node["Node Type"].as_str().is_some_and(|kind| kind.ends_with("Scan"));
    let relation = node["Index Name"].as_str().or(node["Relation Name"].as_str()).filter(|_| scan);
    let blocks =
        node["Shared Hit Blocks"].as_u64().unwrap_or(0) + node["Shared Read Blocks"].as_u64().unwrap_or(0);
    let loops = node["Actual Loops"].as_u64().unwrap_or(1).max(1);
    let mut wide = match relation {
        Some(relation) if blocks / loops > MOST_BLOCKS_A_LOOKUP => {
            vec![(relation.to_owned(), blocks / loops)]
        }
        _ => Vec::new(),
    };
    for plan in node["Plans"].as_array().into_iter().flatten() {
        wide.extend(wide_scans(plan));
    }
    wide
}
