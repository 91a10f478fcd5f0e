//! Settling finds its rows by id, whatever the backlog: the work of completing two tasks does not
//! grow with the queued and running tasks beside them. Checked on the generic plan (what a
//! long-lived connection runs after a few executions), counting the rows the statement reads and
//! drops, not the time it takes.

use aitasks_testkit::TestDb;
use serde_json::Value;

use crate::plans::rows_looked_at_and_dropped;

/// Tasks in flight beside the two that are settled.
const BACKLOG: i64 = 3_000;

/// Rows the statement may read and drop (a filter, a join condition, a recheck) while settling two
/// tasks. A scan over the backlog drops thousands.
const MOST_ROWS_DROPPED: u64 = 10;

#[tokio::test]
async fn completing_many_touches_only_the_given_tasks_whatever_the_backlog() {
    let db = TestDb::new().await;
    // The statistics are taken while the table is small, then the backlog arrives before the
    // next ANALYZE: what a table growing fast between autovacuum's visits looks like to the
    // planner (and what the lifecycle benchmark's table looks like after its reset).
    db.sql(
        "INSERT INTO tasks (id, app_id, scope_id, step_key, effect_key, kind, request, input_hash, \
             model_id, max_attempts, status, attempts, started_at, heartbeat_at) \
         VALUES ('00000000-0000-7000-8000-000000000001', 'a', 's', 'step', 'one', 'classify', '{}', \
                 repeat('0', 64), 'default', 3, 'running', 1, now(), now()), \
                ('00000000-0000-7000-8000-000000000002', 'a', 's', 'step', 'two', 'classify', '{}', \
                 repeat('0', 64), 'default', 3, 'running', 1, now(), now()); \
         ANALYZE tasks;",
    )
    .await;
    db.sql(&format!(
        "INSERT INTO tasks (id, app_id, scope_id, step_key, effect_key, kind, request, input_hash, \
             model_id, max_attempts, status, attempts, started_at, heartbeat_at) \
         SELECT gen_random_uuid(), 'backlog', 's', 'step', 'k' || n, 'classify', '{{}}', repeat('0', 64), \
             'default', 3, CASE WHEN n % 2 = 0 THEN 'queued' ELSE 'running' END, n % 2, \
             CASE WHEN n % 2 = 1 THEN now() END, CASE WHEN n % 2 = 1 THEN now() END \
         FROM generate_series(1, {BACKLOG}) n"
    ))
    .await;
    let (_, text, names) = aitasks_store::queries::statements()
        .find(|(name, _, _)| *name == "settle/complete_many")
        .expect("the statement");
    let value = |name: &str| match name {
        "task_ids" => "'{00000000-0000-7000-8000-000000000001,00000000-0000-7000-8000-000000000002}'::uuid[]",
        "attempts" => "'{1,1}'::int[]",
        "outputs" => r#"'{"\"a\"","\"b\""}'::jsonb[]"#,
        "usages" => "ARRAY[NULL, NULL]::jsonb[]",
        "batch_ids" => "ARRAY[NULL, NULL]::uuid[]",
        "hand_over" => "'on'",
        other => panic!("a parameter this test does not know: {other}"),
    };
    let arguments: Vec<&str> = names.iter().map(|name| value(name)).collect();
    let client = db.client().await;
    client
        .batch_execute(&format!("SET plan_cache_mode = force_generic_plan; PREPARE settle AS {text}"))
        .await
        .unwrap();
    let row = client
        .query_one(
            &format!("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE settle({})", arguments.join(", ")),
            &[],
        )
        .await
        .unwrap();
    let plan: Value = row.get(0);
    let top = &plan[0]["Plan"];
    assert_eq!(top["Actual Rows"], 2, "both tasks completed, each with its event: {plan:#}");
    let examined = rows_looked_at_and_dropped(top);
    assert!(
        examined <= MOST_ROWS_DROPPED,
        "completing 2 tasks looked at {examined} rows it did not want, beside a backlog of {BACKLOG}: {plan:#}"
    );
    assert_eq!(db.count("SELECT count(*) FROM tasks WHERE status = 'succeeded'").await, 2);
}

/// A run's task counts in a page of runs stop at `RUN_TASKS_COUNTED_MAX` and say `more`: a page of
/// very large runs reads a bounded number of rows.
#[tokio::test]
async fn a_page_of_runs_counts_at_most_the_bound_a_run() {
    use aitasks_contracts::limits::RUN_TASKS_COUNTED_MAX;
    let db = TestDb::new().await;
    let big = aitasks_testkit::run(&db, "app-1").await;
    let small = aitasks_testkit::run(&db, "app-1").await;
    for (run, tasks) in [(big.id, RUN_TASKS_COUNTED_MAX + 1), (small.id, 3)] {
        db.sql(&format!(
            "INSERT INTO tasks (id, app_id, run_id, scope_id, step_key, effect_key, kind, request, \
                 input_hash, model_id, max_attempts) \
             SELECT gen_random_uuid(), 'app-1', '{run}', 'scope-1', 'step', '{run}-' || n, 'classify', \
                 '{{}}', repeat('0', 64), 'default', 3 FROM generate_series(1, {tasks}) n"
        ))
        .await;
    }
    let listing = aitasks_contracts::ListRuns {
        status: None,
        scope_id: None,
        created_after: None,
        created_before: None,
        after: None,
        limit: 100,
    };
    let runs = aitasks_store::list_runs(&db.client().await, "app-1", &listing).await.unwrap().runs;
    let counts = |id| runs.iter().find(|run| run.id == id).expect("listed").tasks;
    let (big_counts, small_counts) = (counts(big.id), counts(small.id));
    assert_eq!(big_counts.queued, RUN_TASKS_COUNTED_MAX as u64, "{big_counts:?}");
    assert!(big_counts.more);
    assert_eq!(small_counts.queued, 3);
    assert!(!small_counts.more);
}

/// A filter that keeps few runs answers in short pages: one answer looks at most at
/// `RUN_SCAN_MAX` runs, and `next` points past the last one it looked at, so following `next`
/// finds every match and no answer walks the tenant's whole history.
#[tokio::test]
async fn a_filtered_page_of_runs_looks_at_a_bounded_number_of_runs() {
    use aitasks_contracts::limits::RUN_SCAN_MAX;
    let db = TestDb::new().await;
    let runs = RUN_SCAN_MAX + 500;
    // Run ids in creation order (as UUIDv7 are); only the last one is canceled.
    db.sql(&format!(
        "INSERT INTO runs (id, app_id, scope_id) \
         SELECT ('00000000-0000-7000-8000-' || lpad(to_hex(n), 12, '0'))::uuid, 'app-1', 'scope-1' \
         FROM generate_series(1, {runs}) n; \
         UPDATE runs SET state = 'canceled', cancel_requested_at = now() \
         WHERE id = ('00000000-0000-7000-8000-' || lpad(to_hex({runs}), 12, '0'))::uuid"
    ))
    .await;
    let mut listing = aitasks_contracts::ListRuns {
        status: Some(aitasks_contracts::RunState::Canceled),
        scope_id: None,
        created_after: None,
        created_before: None,
        after: None,
        limit: 100,
    };
    let client = db.client().await;
    let first = aitasks_store::list_runs(&client, "app-1", &listing).await.unwrap();
    assert!(first.runs.is_empty(), "the first {RUN_SCAN_MAX} runs hold no canceled one");
    let next = first.next.expect("a short page that stopped looking says where to go on");
    listing.after = Some(next);
    let second = aitasks_store::list_runs(&client, "app-1", &listing).await.unwrap();
    assert_eq!(second.runs.len(), 1, "the canceled run is found on the next page");
    assert_eq!(second.next, None, "nothing is left after it");
}

/// A listing narrowed by kind, model or time answers in short pages: one answer looks at most at
/// `TASK_SCAN_MAX` tasks, and `walk_end` points past the last one it looked at, so following it
/// finds every match and no answer walks the whole scope.
#[tokio::test]
async fn a_narrowed_page_of_tasks_looks_at_a_bounded_number_of_tasks() {
    use aitasks_contracts::{Kind, ListTasks, TaskFilter, TASK_SCAN_MAX};
    let db = TestDb::new().await;
    let tasks = TASK_SCAN_MAX + 500;
    // Task ids in creation order (as UUIDv7 are); only the last one extracts data.
    db.sql(&format!(
        "INSERT INTO tasks (id, app_id, scope_id, step_key, effect_key, kind, request, input_hash, model_id, \
             max_attempts) \
         SELECT ('00000000-0000-7000-8000-' || lpad(to_hex(n), 12, '0'))::uuid, 'app-1', 'scope-1', 'step', \
             'k' || n, CASE WHEN n = {tasks} THEN 'extract_data' ELSE 'classify' END, '{{}}', repeat('0', 64), \
             'default', 3 \
         FROM generate_series(1, {tasks}) n"
    ))
    .await;
    let mut listing = ListTasks {
        kind: Some(Kind::ExtractData),
        ..ListTasks::first_page(TaskFilter::Scope("scope-1".into()))
    };
    let client = db.client().await;
    let first = aitasks_store::list_tasks(&client, "app-1", &listing).await.unwrap();
    assert!(first.tasks.is_empty(), "the first {TASK_SCAN_MAX} tasks hold none");
    listing.after = Some(first.walk_end.expect("a short page that stopped looking says where to go on"));
    let second = aitasks_store::list_tasks(&client, "app-1", &listing).await.unwrap();
    assert_eq!(second.tasks.len(), 1, "found on the next page");
    assert_eq!(second.tasks[0].task.kind, "extract_data");
    assert_eq!(second.walk_end, None, "nothing is left after it");
    // Another application sees nothing, and learns no id.
    listing.after = None;
    let other = aitasks_store::list_tasks(&client, "app-2", &listing).await.unwrap();
    assert!(other.tasks.is_empty() && other.walk_end.is_none());
}

/// The summary reads at most `SUMMARY_SCAN_MAX` of the application's tasks in its window, through
/// its part of tasks_app_created_idx (never another application's rows), and says when the window
/// held more.
#[tokio::test]
async fn the_summary_reads_a_bounded_number_of_the_applications_tasks() {
    use aitasks_contracts::{SummaryWindow, SUMMARY_SCAN_MAX};
    let db = TestDb::new().await;
    let mine = SUMMARY_SCAN_MAX + 1;
    db.sql(&format!(
        "INSERT INTO tasks (id, app_id, scope_id, step_key, effect_key, kind, request, input_hash, model_id, \
             max_attempts, created_at) \
         SELECT gen_random_uuid(), 'app-1', 's', 'step', 'k' || n, 'classify', '{{}}', repeat('0', 64), \
             CASE WHEN n % 2 = 0 THEN 'even' ELSE 'odd' END, 3, now() - n * interval '1 second' \
         FROM generate_series(1, {mine}) n; \
         INSERT INTO tasks (id, app_id, scope_id, step_key, effect_key, kind, request, input_hash, model_id, \
             max_attempts) \
         SELECT gen_random_uuid(), 'app-2', 's', 'step', 'k' || n, 'classify', '{{}}', repeat('0', 64), 'x', 3 \
         FROM generate_series(1, 20000) n; \
         ANALYZE tasks;"
    ))
    .await;
    let now = chrono::Utc::now();
    let window = SummaryWindow { created_after: now - chrono::Duration::days(7), created_before: now };
    let client = db.client().await;
    let summary = aitasks_store::summary(&client, "app-1", &window).await.unwrap();
    assert_eq!((summary.examined, summary.complete), (SUMMARY_SCAN_MAX as u64, false));
    assert_eq!(summary.tasks.queued, SUMMARY_SCAN_MAX as u64);
    let models: Vec<&str> = summary.costs.iter().map(|c| c.model_id.as_str()).collect();
    assert!(models.iter().all(|m| *m == "even" || *m == "odd"), "only app-1's: {models:?}");
    assert_eq!(summary.costs.iter().map(|c| c.tasks).sum::<u64>(), SUMMARY_SCAN_MAX as u64);
    // The oldest task is the one left out; a narrower window is complete.
    let narrow = SummaryWindow { created_after: now - chrono::Duration::hours(1), created_before: now };
    let small = aitasks_store::summary(&client, "app-1", &narrow).await.unwrap();
    assert!(small.complete && small.examined > 3_000 && small.examined < 3_700, "{}", small.examined);

    // The plan reads the application's part of the index, never the table.
    let (_, text, names) = aitasks_store::queries::statements()
        .find(|(name, _, _)| *name == "summary/summary")
        .expect("the statement");
    let value = |name: &str| match name {
        "app_id" => "'app-2'".to_owned(),
        "created_after" => "now() - interval '7 days'".to_owned(),
        "created_before" => "now()".to_owned(),
        "examine_max" => SUMMARY_SCAN_MAX.to_string(),
        other => panic!("a parameter this test does not know: {other}"),
    };
    let arguments: Vec<String> = names.iter().map(|name| value(name)).collect();
    client
        .batch_execute(&format!("SET plan_cache_mode = force_generic_plan; PREPARE summary AS {text}"))
        .await
        .unwrap();
    let row = client
        .query_one(&format!("EXPLAIN (FORMAT JSON) EXECUTE summary({})", arguments.join(", ")), &[])
        .await
        .unwrap();
    let plan: Value = row.get(0);
    let plan = plan.to_string();
    assert!(plan.contains("tasks_app_created_idx"), "{plan}");
    assert!(!plan.contains("Seq Scan"), "{plan}");
}

/// A listing by status (`?scopeId=S&status=failed`, `?runId=R&status=failed`, the console's status
/// filter, which repeats it while a task is live) reads a bounded number of rows whatever the run
/// or scope holds: one walk of at most `TASK_SCAN_MAX` tasks and their rows, never the owner's
/// every task nor another tenant's, and a page the walk left short says where the next starts.
/// Every listing statement is checked on its generic plan (what a long-lived connection runs),
/// counting the rows each scan of `tasks` read, kept or dropped.
#[tokio::test]
async fn a_listing_by_status_reads_a_bounded_number_of_rows_whatever_the_owner_holds() {
    use aitasks_contracts::{ListTasks, TaskFilter, TaskStatus, TASK_SCAN_MAX};
    let db = TestDb::new().await;
    let run = aitasks_testkit::run(&db, "app-1").await;
    // Five walks' worth of succeeded tasks in one scope (and one run), beside another tenant's.
    let owned = 5 * TASK_SCAN_MAX;
    db.sql(&format!(
        "INSERT INTO tasks (id, app_id, run_id, scope_id, step_key, effect_key, kind, request, input_hash, \
             model_id, max_attempts, status, attempts, output, completed_at) \
         SELECT gen_random_uuid(), 'app-1', '{run}', 'scope-1', 'step', 'k' || n, 'classify', '{{}}', \
             repeat('0', 64), 'default', 3, 'succeeded', 1, '\"a\"', now() \
         FROM generate_series(1, {owned}) n; \
         INSERT INTO tasks (id, app_id, scope_id, step_key, effect_key, kind, request, input_hash, model_id, \
             max_attempts) \
         SELECT gen_random_uuid(), 'app-2', 'scope-2', 'step', 'k' || n, 'classify', '{{}}', repeat('0', 64), \
             'default', 3 \
         FROM generate_series(1, 20000) n; \
         ANALYZE tasks;",
        run = run.id,
    ))
    .await;
    let client = db.client().await;

    // As the API asks: an empty first page that says where to go on, of the run and of the scope.
    for filter in [TaskFilter::Run(run.id), TaskFilter::Scope("scope-1".into())] {
        let listing = ListTasks { status: Some(TaskStatus::Failed), ..ListTasks::first_page(filter.clone()) };
        let page = aitasks_store::list_tasks(&client, "app-1", &listing).await.unwrap();
        assert!(page.tasks.is_empty(), "{filter:?}: no task failed");
        assert!(page.walk_end.is_some(), "{filter:?}: the walk stopped at its bound and says so");
        // Another tenant naming app-1's run sees nothing and learns no id.
        let other = aitasks_store::list_tasks(&client, "app-2", &listing).await.unwrap();
        assert!(other.tasks.is_empty() && other.walk_end.is_none(), "{filter:?}");
    }

    // Every listing statement, with the status no task has where it takes one.
    let bound = 2 * TASK_SCAN_MAX as u64 + 200;
    client.batch_execute("SET plan_cache_mode = force_generic_plan").await.unwrap();
    let listings: Vec<_> =
        aitasks_store::queries::statements().filter(|(name, _, _)| name.starts_with("listing/")).collect();
    assert!(listings.len() >= 4, "the listings of a run and of a scope, plain and walked");
    let mut over = Vec::new();
    for (i, (name, text, names)) in listings.into_iter().enumerate() {
        let value = |param: &str| match param {
            "app_id" => "'app-1'".to_owned(),
            "scope_id" => "'scope-1'".to_owned(),
            "run_id" => format!("'{}'::uuid", run.id),
            "after" => "'00000000-0000-0000-0000-000000000000'::uuid".to_owned(),
            "status" => "'failed'".to_owned(),
            "kind" | "model_id" | "created_after" | "created_before" => "NULL".to_owned(),
            "limit" => "100".to_owned(),
            "examine_max" => TASK_SCAN_MAX.to_string(),
            other => panic!("{name}: a parameter this test does not know: {other}"),
        };
        let arguments: Vec<String> = names.iter().map(|param| value(param)).collect();
        client.batch_execute(&format!("PREPARE listing_{i} AS {text}")).await.unwrap();
        let row = client
            .query_one(
                &format!("EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE listing_{i}({})", arguments.join(", ")),
                &[],
            )
            .await
            .unwrap();
        let plan: Value = row.get(0);
        let read = table_rows_read(&plan[0]["Plan"]);
        if read > bound {
            over.push(format!("{name} read {read} rows of tasks"));
        }
    }
    assert!(over.is_empty(), "an owner of {owned} tasks, none failed (at most {bound} rows): {over:#?}");
}

/// The rows the scans of `tasks` in an `EXPLAIN ANALYZE` plan read, kept or dropped, over all
/// their loops.
fn table_rows_read(node: &Value) -> u64 {
    let scans_tasks = node["Relation Name"] == "tasks";
    let own = if scans_tasks {
        let per_loop: f64 = ["Actual Rows", "Rows Removed by Filter", "Rows Removed by Index Recheck"]
            .iter()
            .filter_map(|key| node[key].as_f64())
            .sum();
        (per_loop * node["Actual Loops"].as_f64().unwrap_or(1.0)).round() as u64
    } else {
        0
    };
    let below: u64 = node["Plans"].as_array().map_or(0, |plans| plans.iter().map(table_rows_read).sum());
    own + below
}

/// Tasks of app-1's run and scope in an operation walk's tests, each created a millisecond apart.
const WALKED: u64 = 2_000;
/// The page of the operation walks' tests.
const WALK_PAGE: u64 = 50;

/// app-1's run holding [`WALKED`] succeeded tasks of scope-1, with fresh statistics, and a client on
/// generic plans (what a long-lived connection runs after a few executions: the sweeper's and the
/// request's pages are `prepare_cached`).
async fn walked_tasks(db: &TestDb) -> (uuid::Uuid, aitasks_store::Client) {
    let run = aitasks_testkit::run(db, "app-1").await;
    db.sql(&format!(
        "INSERT INTO tasks (id, app_id, run_id, scope_id, step_key, effect_key, kind, request, input_hash, \
             model_id, max_attempts, status, attempts, output, completed_at, created_at) \
         SELECT gen_random_uuid(), 'app-1', '{run}', 'scope-1', 'step', 'k' || n, 'classify', '{{}}', \
             repeat('0', 64), 'default', 3, 'succeeded', 1, '\"a\"', now(), \
             now() - n * interval '1 millisecond' \
         FROM generate_series(1, {WALKED}) n; \
         ANALYZE tasks;",
        run = run.id,
    ))
    .await;
    let client = db.client().await;
    client.batch_execute("SET plan_cache_mode = force_generic_plan").await.unwrap();
    (run.id, client)
}

/// The rows of `tasks` one page of the walk statement `name` reads as `app_id` from the start,
/// matching none (no task failed), on its generic plan; and the plan.
async fn walk_rows_read(
    client: &aitasks_store::Client,
    name: &str,
    app_id: &str,
    run: uuid::Uuid,
) -> (u64, Value) {
    let (_, text, names) =
        aitasks_store::queries::statements().find(|(n, _, _)| *n == name).expect("the statement");
    let value = |param: &str| match param {
        "app_id" => format!("'{app_id}'"),
        "run_id" => format!("'{run}'::uuid"),
        "scope_id" => "'scope-1'".to_owned(),
        "statuses" => "'{failed}'::text[]".to_owned(),
        "kind" | "model_id" | "error_code" | "created_after" | "created_before" => "NULL".to_owned(),
        "operation_created_at" => "now() + interval '1 hour'".to_owned(),
        "operation_id" => "'ffffffff-ffff-7fff-bfff-ffffffffffff'::uuid".to_owned(),
        "cursor_id" => "'00000000-0000-0000-0000-000000000000'::uuid".to_owned(),
        "cursor_at" => "'1970-01-01T00:00:00Z'::timestamptz".to_owned(),
        "page" => WALK_PAGE.to_string(),
        other => panic!("{name}: a parameter this test does not know: {other}"),
    };
    let arguments: Vec<String> = names.iter().map(|param| value(param)).collect();
    let prepared = name.replace('/', "_");
    client.batch_execute(&format!("DEALLOCATE ALL; PREPARE {prepared} AS {text}")).await.unwrap();
    let row = client
        .query_one(
            &format!("EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE {prepared}({})", arguments.join(", ")),
            &[],
        )
        .await
        .unwrap();
    let plan: Value = row.get(0);
    (table_rows_read(&plan[0]["Plan"]), plan)
}

/// An operation's filter names any run id or scope id its tenant sends (`filter.runId` is not
/// checked to be the tenant's): a page of its walk reads none of another tenant's tasks, and at
/// most about a page of its own run's or scope's.
#[tokio::test]
async fn an_operation_page_over_another_tenants_run_reads_none_of_its_tasks() {
    let db = TestDb::new().await;
    let (run, client) = walked_tasks(&db).await;
    let mut over = Vec::new();
    for name in ["operations/walk_operation_of_run", "operations/walk_operation_of_scope"] {
        for (app_id, bound) in [("app-1", WALK_PAGE + 10), ("app-2", 10)] {
            let (read, plan) = walk_rows_read(&client, name, app_id, run).await;
            if read > bound {
                over.push(format!("{name} as {app_id} read {read} rows of tasks (at most {bound}): {plan}"));
            }
        }
    }
    assert!(over.is_empty(), "a page of {WALK_PAGE}, app-1's run of {WALKED} tasks: {over:#?}");
}

/// A page of an operation's walk of the whole tenant reads about a page of its tasks, also on the
/// generic plan a long-lived connection runs, whatever the tenant holds (docs/api.md,
/// "Operations": "at most `AITASK_REQUEST_PAGE` tasks looked at per page ... every statement
/// touches at most that page").
#[tokio::test]
async fn an_operation_page_over_the_whole_tenant_reads_about_a_page() {
    let db = TestDb::new().await;
    let (run, client) = walked_tasks(&db).await;
    let (read, plan) = walk_rows_read(&client, "operations/walk_operation_of_tenant", "app-1", run).await;
    // The page's edge (at most a page of index entries, in the index's order) and then the page's
    // own rows: two pages at most, never the rest of the tenant.
    assert!(
        read <= 2 * WALK_PAGE + 10,
        "a page of {WALK_PAGE} over a tenant of {WALKED} tasks read {read} rows of tasks: {plan}"
    );
}
