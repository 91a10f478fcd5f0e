//! Migrations on a large table: an index is built so that the writes of creates and
//! settlements go on meanwhile (`CREATE INDEX CONCURRENTLY`, in a migration the runner applies
//! outside a transaction), a build that failed part way is built again, and a check over
//! migrations/ refuses any later migration that would block them (docs/deploying.md,
//! "Migrations on a large table").

use aitasks_store as store;
use aitasks_testkit::*;

/// The tables that grow with use (SCALING.md; docs/growth calls `tasks`, `runs`, `task_events`
/// and `scope_admissions` big past 100,000 rows, and `task_callbacks` holds up to 10,000
/// waiting callbacks a tenant plus the delivered ones). Building an index on one of them in a
/// transaction takes a SHARE lock for the whole build: every create and settlement waits.
const LARGE_TABLES: [&str; 5] = ["tasks", "task_events", "task_callbacks", "runs", "scope_admissions"];

/// V28 built `tasks_app_created_idx` in its transaction. It is applied in deployments, so it stays
/// as it is (refinery refuses an applied migration whose text changed); docs/deploying.md,
/// "Migrations on a large table", says how to apply it to a large table. Every later one is held to
/// the rule.
const LAST_BLOCKING_MIGRATION: u32 = 28;

/// What in a migration would block a large table's writes while an index builds.
fn blocking_index_builds(file: &str, sql: &str) -> Vec<String> {
    let version: u32 = file
        .strip_prefix('V')
        .and_then(|rest| rest.split("__").next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{file}: not a migration's name (V<n>__<name>.sql)"));
    if version <= LAST_BLOCKING_MIGRATION {
        return Vec::new();
    }
    let outside = store::is_outside_a_transaction(sql);
    let mut problems = Vec::new();
    if outside {
        if let Err(refused) = store::concurrent_statements(sql) {
            problems.push(format!("{file}: {refused}"));
        }
    }
    let text: String =
        sql.lines().map(|l| l.split("--").next().unwrap_or_default()).collect::<Vec<_>>().join("\n");
    for statement in text.split(';').map(str::trim).filter(|s| !s.is_empty()) {
        let words: Vec<String> = statement.split_whitespace().map(str::to_uppercase).collect();
        let shown: String = statement.split_whitespace().collect::<Vec<_>>().join(" ");
        let table_after = |at: usize| -> Option<String> {
            let skip = ["ONLY", "IF", "EXISTS"];
            let name = words[at..].iter().find(|w| !skip.contains(&w.as_str()))?;
            let name = name.split('(').next()?.trim_matches('"').to_lowercase();
            Some(name.rsplit('.').next().unwrap_or_default().trim_matches('"').to_owned())
        };
        let large = |table: &Option<String>| table.as_deref().is_some_and(|t| LARGE_TABLES.contains(&t));
        let creates_index = words.first().is_some_and(|w| w == "CREATE")
            && (words.get(1).is_some_and(|w| w == "INDEX")
                || (words.get(1).is_some_and(|w| w == "UNIQUE")
                    && words.get(2).is_some_and(|w| w == "INDEX")));
        if creates_index {
            let Some(on) = words.iter().position(|w| w == "ON") else { continue };
            let table = table_after(on + 1);
            if !large(&table) {
                continue;
            }
            let table = table.unwrap_or_default();
            if !words.iter().any(|w| w == "CONCURRENTLY") {
                problems.push(format!(
                    "{file}: `{shown}` builds an index on {table}, a large table, while blocking its writes: \
                     use CREATE INDEX CONCURRENTLY IF NOT EXISTS in a migration marked `{}`",
                    store::NO_TRANSACTION
                ));
            } else if !outside {
                problems.push(format!(
                    "{file}: `{shown}` would run in a transaction, where CONCURRENTLY fails: mark the \
                     migration `{}`",
                    store::NO_TRANSACTION
                ));
            }
        }
        let alters =
            words.first().is_some_and(|w| w == "ALTER") && words.get(1).is_some_and(|w| w == "TABLE");
        let adds_key = words.windows(2).any(|w| w[0] == "PRIMARY" && w[1] == "KEY")
            || words.iter().any(|w| w == "UNIQUE");
        let using_index = words.windows(2).any(|w| w[0] == "USING" && w[1] == "INDEX");
        if alters && adds_key && !using_index && large(&table_after(2)) {
            problems.push(format!(
                "{file}: `{shown}` builds a unique index under an ACCESS EXCLUSIVE lock: build the index \
                 concurrently first, then ADD CONSTRAINT … USING INDEX"
            ));
        }
    }
    problems
}

#[test]
fn no_migration_after_v28_builds_an_index_on_a_large_table_while_blocking_writes() {
    let mut checked = Vec::new();
    let mut problems = Vec::new();
    for entry in std::fs::read_dir(workspace_root().join("migrations")).expect("migrations/") {
        let path = entry.expect("an entry").path();
        let file = path.file_name().expect("a name").to_string_lossy().into_owned();
        let sql = std::fs::read_to_string(&path).expect("a migration");
        problems.extend(blocking_index_builds(&file, &sql));
        checked.push(file);
    }
    let last = format!("V{LAST_BLOCKING_MIGRATION}__");
    assert!(checked.iter().any(|file| file.starts_with(&last)), "read every migration: {checked:?}");
    assert!(problems.is_empty(), "{problems:#?}");
}

/// The check fails on what it is there to refuse, and passes what the runner builds without a
/// block.
#[test]
fn the_check_refuses_an_index_that_blocks_a_large_table() {
    let marked = |sql: &str| format!("{}\n{sql}", store::NO_TRANSACTION);
    for (file, sql, refused) in [
        (
            "V29__plain.sql",
            "CREATE INDEX tasks_x_idx ON tasks (x);".to_owned(),
            Some("while blocking its writes"),
        ),
        (
            "V29__unique.sql",
            "-- a comment\ncreate unique index if not exists runs_x_idx\n  on public.runs(app_id, x);"
                .to_owned(),
            Some("builds an index on runs"),
        ),
        (
            "V30__unmarked.sql",
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS tasks_x_idx ON tasks (x);".to_owned(),
            Some("where CONCURRENTLY fails"),
        ),
        (
            "V31__not_again.sql",
            marked("CREATE INDEX CONCURRENTLY tasks_x_idx ON ONLY task_events (x);"),
            Some("each safe to run again"),
        ),
        (
            "V32__key.sql",
            "ALTER TABLE task_callbacks ADD CONSTRAINT one UNIQUE (task_id, kind);".to_owned(),
            Some("ACCESS EXCLUSIVE"),
        ),
        ("V33__fine.sql", marked("CREATE INDEX CONCURRENTLY IF NOT EXISTS tasks_x_idx ON tasks (x);"), None),
        ("V34__small.sql", "CREATE INDEX provider_line_x_idx ON provider_line (x);".to_owned(), None),
        (
            "V35__keyed.sql",
            "ALTER TABLE scope_admissions ADD CONSTRAINT one UNIQUE USING INDEX one_idx;".to_owned(),
            None,
        ),
        (
            "V28__applied.sql",
            "CREATE INDEX IF NOT EXISTS tasks_app_created_idx ON tasks (app_id, created_at);".to_owned(),
            None,
        ),
    ] {
        let problems = blocking_index_builds(file, &sql);
        match refused {
            Some(text) => {
                assert_eq!(problems.len(), 1, "{file}: {problems:#?}");
                assert!(problems[0].contains(text), "{file}: {problems:#?}");
            }
            None => assert!(problems.is_empty(), "{file}: {problems:#?}"),
        }
    }
}

#[tokio::test]
async fn the_large_tables_are_tables_of_the_schema() {
    let db = TestDb::new().await;
    for table in LARGE_TABLES {
        let found = db.count(&format!("SELECT count(*) FROM pg_tables WHERE tablename = '{table}'")).await;
        assert_eq!(found, 1, "{table}");
    }
}

/// An open transaction that wrote to `tasks` (a create in flight): an index build must wait
/// for it, whichever way it builds.
async fn create_in_flight(db: &TestDb) -> tokio_postgres::Client {
    let client = admin(&db.url).await;
    client.batch_execute("BEGIN; LOCK TABLE tasks IN ROW EXCLUSIVE MODE").await.unwrap();
    client
}

async fn index_state(db: &TestDb, index: &str) -> Option<(bool, String)> {
    admin(&db.url)
        .await
        .query_opt(
            "SELECT i.indisvalid, pg_get_indexdef(i.indexrelid) FROM pg_index i WHERE i.indexrelid = to_regclass($1)",
            &[&index],
        )
        .await
        .unwrap()
        .map(|row| (row.get(0), row.get(1)))
}

type Migration = tokio::task::JoinHandle<store::StoreResult<Vec<u32>>>;

/// Wait until the migration's build of `index` waits for the create in flight; a migration
/// that ends first fails the test with its outcome.
async fn wait_for_the_build(db: &TestDb, index: &str, migration: &mut Migration) {
    tokio::select! {
        ended = migration => panic!("the migration ended before its build of {index} waited: {ended:?}"),
        () = db.wait_for_lock_waits(index, 1) => {}
    }
}

fn migrate(db: &TestDb, more: Vec<(&'static str, String)>) -> Migration {
    let url = db.url.clone();
    tokio::spawn(async move {
        let more: Vec<(&str, &str)> = more.iter().map(|(name, sql)| (*name, sql.as_str())).collect();
        store::migrate_with_more(&url, ca_file().as_deref(), &more).await
    })
}

const PLAIN: &str = "CREATE INDEX IF NOT EXISTS tasks_test_plain_idx ON tasks (updated_at);";

fn concurrent(index: &str) -> String {
    format!(
        "{}\nCREATE INDEX CONCURRENTLY IF NOT EXISTS {index} ON tasks (updated_at);",
        store::NO_TRANSACTION
    )
}

/// V28's way (a plain build in the migration's transaction) queues every create behind it for
/// as long as the build waits and runs; built concurrently, creates go on meanwhile.
#[tokio::test]
async fn a_concurrent_index_build_leaves_creates_going_where_a_plain_one_blocks_them() {
    let db = TestDb::new().await;
    let create = |key: &'static str| {
        let pool = db.pool.clone();
        tokio::spawn(async move {
            let client = pool.get().await.unwrap();
            store::create_task(&client, &new_task(APP, app_owner("s"), key)).await.unwrap()
        })
    };

    let in_flight = create_in_flight(&db).await;
    let mut migration = migrate(&db, vec![("V1000__plain", PLAIN.to_owned())]);
    wait_for_the_build(&db, "tasks_test_plain_idx", &mut migration).await;
    let blocked = create("during-the-plain-build");
    db.wait_for_lock_waits("INSERT INTO tasks", 1).await;
    in_flight.batch_execute("COMMIT").await.unwrap();
    assert_eq!(migration.await.unwrap().unwrap(), vec![1000]);
    blocked.await.unwrap();

    let in_flight = create_in_flight(&db).await;
    let migration = migrate(
        &db,
        vec![
            ("V1000__plain", PLAIN.to_owned()),
            ("V1001__concurrent", concurrent("tasks_test_concurrent_idx")),
        ],
    );
    db.wait_for_lock_waits("tasks_test_concurrent_idx", 1).await;
    create("during-the-concurrent-build").await.unwrap();
    assert_eq!(
        db.lock_waits("tasks_test_concurrent_idx").await,
        1,
        "the build still waits, the create is done"
    );
    in_flight.batch_execute("COMMIT").await.unwrap();
    assert_eq!(migration.await.unwrap().unwrap(), vec![1001]);
    let (valid, definition) = index_state(&db, "tasks_test_concurrent_idx").await.expect("the index");
    assert!(valid, "{definition}");
    assert_eq!(db.count("SELECT count(*) FROM tasks").await, 2);
}

/// A unique build that met a duplicate left its index invalid (never used, yet written by every
/// insert): the migration that builds that index drops it and builds it again, rather than
/// finding it and skipping it for good.
#[tokio::test]
async fn an_index_a_failed_concurrent_build_left_invalid_is_built_again() {
    let db = TestDb::new().await;
    let client = db.client().await;
    for key in ["one", "two"] {
        store::create_task(&client, &new_task(APP, app_owner("s"), key)).await.unwrap();
    }
    let failed = admin(&db.url)
        .await
        .batch_execute("CREATE UNIQUE INDEX CONCURRENTLY tasks_test_idx ON tasks ((true))")
        .await;
    assert!(failed.is_err(), "two tasks break the unique build");
    assert_eq!(index_state(&db, "tasks_test_idx").await.map(|(valid, _)| valid), Some(false), "left invalid");

    let applied =
        migrate(&db, vec![("V1000__an_index", concurrent("tasks_test_idx"))]).await.unwrap().unwrap();
    assert_eq!(applied, vec![1000]);
    let (valid, definition) = index_state(&db, "tasks_test_idx").await.expect("the index");
    assert!(valid, "built again: {definition}");
    assert!(definition.contains("(updated_at)"), "the migration's index: {definition}");
}

/// A second migrator arrives while the first builds an index concurrently: it waits for the
/// lock without holding a snapshot the build would wait for, so both end well (a migrator
/// waiting inside `pg_advisory_lock` deadlocks with the build, and Postgres fails one).
#[tokio::test]
async fn a_second_migrator_waits_for_a_concurrent_build_without_a_deadlock() {
    let db = TestDb::new().await;
    let in_flight = create_in_flight(&db).await;
    let more = || vec![("V1000__an_index", concurrent("tasks_test_idx"))];
    let mut first = migrate(&db, more());
    wait_for_the_build(&db, "tasks_test_idx", &mut first).await;
    let second = migrate(&db, more());
    let watcher = admin(&db.url).await;
    wait_until("the second migrator to ask for the lock", || async {
        let asking: i64 = watcher
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
                   AND strpos(query, 'advisory_lock') > 0",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        asking > 0
    })
    .await;
    in_flight.batch_execute("COMMIT").await.unwrap();
    let (first, second) = (first.await.unwrap(), second.await.unwrap());
    let mut applied = [first.expect("the first migrator"), second.expect("the second migrator")];
    applied.sort();
    assert_eq!(applied, [vec![], vec![1000]], "one applies, the other finds it done");
    assert_eq!(index_state(&db, "tasks_test_idx").await.map(|(valid, _)| valid), Some(true));
}
