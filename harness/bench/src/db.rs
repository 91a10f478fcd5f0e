//! Databases for the benchmarks: each measurement gets a fresh, migrated database on the
//! benchmark cluster, so no figure depends on what ran before it.

use aitasks_store as store;
use tokio_postgres::NoTls;

use crate::Failure;

/// The same server, another database.
pub(crate) fn with_database(url: &str, database: &str) -> String {
    let (server, _) = url.rsplit_once('/').unwrap_or((url, ""));
    format!("{server}/{database}")
}

pub(crate) async fn connect(url: &str) -> Result<tokio_postgres::Client, Failure> {
    let (client, connection) = tokio_postgres::connect(url, NoTls).await?;
    tokio::spawn(connection);
    Ok(client)
}

/// The database a URL names.
pub(crate) fn database_of(url: &str) -> String {
    let name = url.rsplit_once('/').map_or("", |(_, name)| name);
    name.split('?').next().unwrap_or(name).to_owned()
}

/// The migrated, empty database every reset of `name` is copied from.
fn template_of(name: &str) -> String {
    format!("{name}_template")
}

/// Drop and create `name`, migrate it, and return its URL. It is made as a copy of a migrated
/// template (`<name>_template`), which [`reset`] copies again.
pub(crate) async fn fresh_database(base: &str, name: &str) -> Result<String, Failure> {
    let admin = connect(&with_database(base, "postgres")).await?;
    let template = template_of(name);
    // One call each: DROP DATABASE may not share an (implicit) transaction with anything.
    admin.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).await?;
    admin.batch_execute(&format!("DROP DATABASE IF EXISTS {template} WITH (FORCE)")).await?;
    admin.batch_execute(&format!("CREATE DATABASE {template}")).await?;
    let template_url = with_database(base, &template);
    store::migrate(&template_url).await?;
    connect(&template_url).await?.batch_execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements").await?;
    // An experiment, not a setting: BENCH_SCOPE_SHARDS (a power of two up to 32768) replaces
    // the 32 application counter shards of migration V3 in this benchmark database only.
    if let Some(shards) = std::env::var("BENCH_SCOPE_SHARDS").ok().and_then(|v| v.parse::<u16>().ok()) {
        if !shards.is_power_of_two() || shards > 32768 {
            return Err("BENCH_SCOPE_SHARDS must be a power of two up to 32768".into());
        }
        connect(&template_url)
            .await?
            .batch_execute(&format!(
                "CREATE OR REPLACE FUNCTION scope_shard(scope_id text) RETURNS smallint \
                 LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN (hashtext(scope_id) & {})::smallint",
                shards - 1
            ))
            .await?;
    }
    // An experiment: BENCH_ACTIVITY=off runs without the activity counters of migration V40, to
    // measure what counting each task's creation and end costs the per-task path.
    if std::env::var("BENCH_ACTIVITY").as_deref() == Ok("off") {
        connect(&template_url)
            .await?
            .batch_execute(
                "ALTER TABLE tasks DISABLE TRIGGER tasks_activity_inserted, DISABLE TRIGGER tasks_activity_ended",
            )
            .await?;
    }
    copy_template(&admin, name).await?;
    Ok(with_database(base, name))
}

/// `name` again as its template has it: every table as the migrations leave it, whatever tables
/// they add (the counters they seed included), then a checkpoint to settle the files on disk.
/// Nothing here lists a table, so a new one cannot break it.
pub(crate) async fn reset(url: &str) -> Result<(), Failure> {
    let name = database_of(url);
    let admin = connect(&with_database(url, "postgres")).await?;
    admin.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).await?;
    copy_template(&admin, &name).await?;
    admin.batch_execute("CHECKPOINT").await?;
    Ok(())
}

/// Create `name` from its template (no session may be on the template meanwhile: the ones a
/// migration left closing are ended first).
async fn copy_template(admin: &tokio_postgres::Client, name: &str) -> Result<(), Failure> {
    let template = template_of(name);
    admin
        .execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
            &[&template],
        )
        .await?;
    let mut tries = 0;
    loop {
        match admin.batch_execute(&format!("CREATE DATABASE {name} TEMPLATE {template}")).await {
            Ok(()) => return Ok(()),
            // "being accessed by other users": a terminated session not gone yet.
            Err(error)
                if tries < 50 && error.code() == Some(&tokio_postgres::error::SqlState::OBJECT_IN_USE) =>
            {
                tries += 1;
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            Err(error) => return Err(error.into()),
        }
    }
}

/// Drop every benchmark database (`aitasks_bench_*`) and its template: the smoke run's tidying
/// on the test cluster.
pub(crate) async fn drop_all(base: &str) -> Result<(), Failure> {
    let admin = connect(&with_database(base, "postgres")).await?;
    let names: Vec<String> = admin
        .query("SELECT datname FROM pg_database WHERE datname LIKE 'aitasks\\_bench\\_%'", &[])
        .await?
        .iter()
        .map(|row| row.get(0))
        .collect();
    for name in names {
        admin.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).await?;
    }
    Ok(())
}

/// A session on the server's `postgres` database, where the statistics of the benchmark's
/// databases are read and reset (a reading there never counts itself), with
/// `pg_stat_statements`' functions installed.
pub(crate) async fn statistics(url: &str) -> Result<tokio_postgres::Client, Failure> {
    let client = connect(&with_database(url, "postgres")).await?;
    client.batch_execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements").await?;
    Ok(client)
}

/// Statements the database received since `reset_statements`, from `pg_stat_statements`.
pub(crate) async fn statements_seen(url: &str, database: &str) -> Result<i64, Failure> {
    let client = statistics(url).await?;
    let row = client
        .query_one(
            "SELECT COALESCE(sum(calls), 0)::bigint FROM pg_stat_statements s \
             JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = $1",
            &[&database],
        )
        .await?;
    Ok(row.get(0))
}

/// Forget the statements `database` received so far. Run from another database, as every reading
/// of the statistics here is, so that no reading counts itself.
pub(crate) async fn reset_statements(url: &str, database: &str) -> Result<(), Failure> {
    let client = statistics(url).await?;
    client
        .execute(
            "SELECT pg_stat_statements_reset(0::oid, (SELECT oid FROM pg_database WHERE datname = $1), 0::bigint)",
            &[&database],
        )
        .await?;
    Ok(())
}

/// What the active sessions of `url`'s database wait on, sampled every 20 ms until `stop` is
/// set: each wait event (or `CPU` for a session that is running) with its share of the samples,
/// largest first. The sampler itself is on another database.
pub(crate) async fn sample_waits(
    url: String,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> Result<Vec<(String, f64)>, Failure> {
    let database = database_of(&url);
    let client = connect(&with_database(&url, "postgres")).await?;
    let mut counts = std::collections::BTreeMap::<String, u64>::new();
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        let rows = client
            .query(
                "SELECT COALESCE(wait_event_type || ':' || wait_event, 'CPU') FROM pg_stat_activity \
                 WHERE backend_type = 'client backend' AND state = 'active' AND datname = $1",
                &[&database],
            )
            .await?;
        for row in rows {
            *counts.entry(row.get(0)).or_default() += 1;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let total = counts.values().sum::<u64>().max(1) as f64;
    let mut shares: Vec<(String, f64)> = counts.into_iter().map(|(k, n)| (k, n as f64 / total)).collect();
    shares.sort_by(|a, b| b.1.total_cmp(&a.1));
    Ok(shares)
}

/// [`sample_waits`] until `duration` has passed.
pub(crate) async fn sample_waits_for(
    url: String,
    duration: std::time::Duration,
) -> Result<Vec<(String, f64)>, Failure> {
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stopper = {
        let stop = stop.clone();
        tokio::spawn(async move {
            tokio::time::sleep(duration).await;
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        })
    };
    let waits = sample_waits(url, stop).await;
    stopper.abort();
    waits
}

/// The four largest shares of [`sample_waits`], for printing.
pub(crate) fn top_waits(waits: &[(String, f64)]) -> String {
    let shown: Vec<String> =
        waits.iter().take(4).map(|(event, share)| format!("{event} {:.0}%", share * 100.0)).collect();
    shown.join(", ")
}

/// The server's WAL counters (`pg_stat_wal`, cluster-wide): records, full-page images, bytes
/// and flushes. The difference of two snapshots divided by the tasks between them says what
/// one task costs the WAL.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct WalCounters {
    pub records: f64,
    pub full_pages: f64,
    pub bytes: f64,
    pub syncs: f64,
}

impl WalCounters {
    pub(crate) async fn read(url: &str) -> Result<Self, Failure> {
        let client = connect(&with_database(url, "postgres")).await?;
        let row = client
            .query_one(
                "SELECT wal_records::float8, wal_fpi::float8, wal_bytes::float8, wal_sync::float8 FROM pg_stat_wal",
                &[],
            )
            .await?;
        Ok(Self { records: row.get(0), full_pages: row.get(1), bytes: row.get(2), syncs: row.get(3) })
    }

    /// What happened since `before`, per task.
    pub(crate) fn per_task_since(&self, before: &Self, tasks: f64) -> Self {
        let tasks = tasks.max(1.0);
        Self {
            records: (self.records - before.records) / tasks,
            full_pages: (self.full_pages - before.full_pages) / tasks,
            bytes: (self.bytes - before.bytes) / tasks,
            syncs: (self.syncs - before.syncs) / tasks,
        }
    }
}

/// Tasks in the `tasks` table (each benchmark point starts from an empty one).
pub(crate) async fn count_tasks(url: &str) -> Result<f64, Failure> {
    let row = connect(url).await?.query_one("SELECT count(*)::float8 FROM tasks", &[]).await?;
    Ok(row.get(0))
}
