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

/// Drop and create `name`, migrate it, and return its URL.
pub(crate) async fn fresh_database(base: &str, name: &str) -> Result<String, Failure> {
    let admin = connect(&with_database(base, "postgres")).await?;
    // Two calls: DROP DATABASE may not share an (implicit) transaction with anything.
    admin.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).await?;
    admin.batch_execute(&format!("CREATE DATABASE {name}")).await?;
    let url = with_database(base, name);
    store::migrate(&url).await?;
    connect(&url).await?.batch_execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements").await?;
    // An experiment, not a setting: BENCH_SCOPE_SHARDS (a power of two up to 32768) replaces
    // the 32 application counter shards of migration V3 in this benchmark database only.
    if let Some(shards) = std::env::var("BENCH_SCOPE_SHARDS").ok().and_then(|v| v.parse::<u16>().ok()) {
        if !shards.is_power_of_two() || shards > 32768 {
            return Err("BENCH_SCOPE_SHARDS must be a power of two up to 32768".into());
        }
        connect(&url)
            .await?
            .batch_execute(&format!(
                "CREATE OR REPLACE FUNCTION scope_shard(scope_id text) RETURNS smallint \
                 LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN (hashtext(scope_id) & {})::smallint",
                shards - 1
            ))
            .await?;
    }
    Ok(url)
}

/// Empty the task tables between measurements, and settle the table files on disk.
pub(crate) async fn reset_tasks(url: &str) -> Result<(), Failure> {
    let client = connect(url).await?;
    client
        .batch_execute("TRUNCATE tasks, task_events, scope_admissions, scope_budgets, app_concurrency")
        .await?;
    client.batch_execute("CHECKPOINT").await?;
    Ok(())
}

/// Statements the database received since `reset_statements`, from `pg_stat_statements`.
pub(crate) async fn statements_seen(url: &str, database: &str) -> Result<i64, Failure> {
    let client = connect(url).await?;
    let row = client
        .query_one(
            "SELECT COALESCE(sum(calls), 0)::bigint FROM pg_stat_statements s \
             JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = $1",
            &[&database],
        )
        .await?;
    Ok(row.get(0))
}

pub(crate) async fn reset_statements(url: &str, database: &str) -> Result<(), Failure> {
    let client = connect(url).await?;
    client
        .execute(
            "SELECT pg_stat_statements_reset(0::oid, (SELECT oid FROM pg_database WHERE datname = $1), 0::bigint)",
            &[&database],
        )
        .await?;
    Ok(())
}

/// What the active sessions of this database wait on, sampled every 20 ms until `until`: each
/// wait event (or `CPU` for a session that is running) with its share of the samples, largest
/// first.
pub(crate) async fn sample_waits(
    url: String,
    until: std::time::Instant,
) -> Result<Vec<(String, f64)>, Failure> {
    let client = connect(&url).await?;
    let mut counts = std::collections::BTreeMap::<String, u64>::new();
    while std::time::Instant::now() < until {
        let rows = client
            .query(
                "SELECT COALESCE(wait_event_type || ':' || wait_event, 'CPU') FROM pg_stat_activity \
                 WHERE backend_type = 'client backend' AND state = 'active' \
                 AND pid <> pg_backend_pid() AND datname = current_database()",
                &[],
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
        let client = connect(url).await?;
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
