//! Test databases: each test gets a fresh database cloned from a migrated template, so tests run
//! in parallel and never see each other's rows. Needs a Postgres server: `make up` starts one
//! and writes `DATABASE_URL` to `.local/env`, which is read when the variable is not set.

use aitasks_store::{
    connect, migrate_with, AdmissionBudget, NewRun, NewTask, PoolSettings, Run, StorePool, TaskOwner,
};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use tokio_postgres::NoTls;
use uuid::Uuid;

pub struct TestDb {
    /// A pool as the functions' role (rows only, no schema changes).
    pub pool: StorePool,
    /// The schema owner's URL of this database.
    pub url: String,
    /// The functions' role's URL of this database (`DATABASE_URL`).
    pub app_url: String,
    pub name: String,
    admin_url: String,
}

use crate::{local_env, workspace_root};

/// A scoped-admission budget no test or probe reaches: admission runs all its checks and
/// admits.
pub const ROOMY_BUDGET: AdmissionBudget = AdmissionBudget {
    burst: 1_000_000,
    tasks_per_minute: 1_000_000,
    max_steps_per_source: 1_000_000,
    sources_per_24_hours: 1_000_000,
    scope_concurrent: 1_000_000,
    global_concurrent: 1_000_000,
};

/// The schema owner's URL (`AITASK_MIGRATE_DATABASE_URL`, else `DATABASE_URL`), from the
/// environment or the `.local/env` that `make up` wrote.
pub fn base_url() -> String {
    crate::try_local_env("AITASK_MIGRATE_DATABASE_URL").unwrap_or_else(|| local_env("DATABASE_URL"))
}

/// The functions' role's URL (`DATABASE_URL`).
pub fn app_base_url() -> String {
    local_env("DATABASE_URL")
}

/// The local cluster's CA (`make up` serves TLS with it), when there is one.
pub fn ca_file() -> Option<std::path::PathBuf> {
    crate::try_local_env("AITASK_DB_CA_FILE").map(std::path::PathBuf::from)
}

/// The same server, another database.
pub fn with_database(url: &str, database: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url, None),
    };
    let (server, _) = base.rsplit_once('/').expect("DATABASE_URL has a database path");
    match query {
        Some(query) => format!("{server}/{database}?{query}"),
        None => format!("{server}/{database}"),
    }
}

fn migrations_fingerprint() -> String {
    let mut files: Vec<_> = std::fs::read_dir(workspace_root().join("migrations"))
        .expect("migrations folder")
        .map(|entry| entry.expect("dir entry").path())
        .collect();
    files.sort();
    let mut hasher = Sha256::new();
    for file in files {
        hasher.update(file.file_name().expect("file name").as_encoded_bytes());
        hasher.update(std::fs::read(&file).expect("migration file"));
    }
    hex::encode(&hasher.finalize()[..8])
}

pub async fn admin(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, NoTls).await.expect("connect to Postgres");
    tokio::spawn(connection);
    client
}

impl TestDb {
    pub async fn new() -> TestDb {
        let base = base_url();
        let admin_url = with_database(&base, "postgres");
        let template = format!("aitasks_tpl_{}", migrations_fingerprint());
        let admin_client = admin(&admin_url).await;
        // One process builds the template; the others wait for it.
        admin_client.execute("SELECT pg_advisory_lock(7453)", &[]).await.expect("template lock");
        admin_client
            .batch_execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            .await
            .expect("pg_stat_statements (make up preloads it)");
        let exists = admin_client
            .query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&template])
            .await
            .expect("look up template")
            .is_some();
        if !exists {
            let building = format!("{template}_building");
            admin_client.batch_execute(&format!("DROP DATABASE IF EXISTS {building}")).await.expect("drop");
            admin_client
                .batch_execute(&format!("CREATE DATABASE {building}"))
                .await
                .expect("create template");
            let building_url = with_database(&base, &building);
            migrate_with(&building_url, ca_file().as_deref()).await.expect("migrate template");
            admin(&building_url)
                .await
                .batch_execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
                .await
                .expect("pg_stat_statements (make up preloads it)");
            admin_client
                .batch_execute(&format!("ALTER DATABASE {building} RENAME TO {template}"))
                .await
                .expect("publish template");
        }
        admin_client.execute("SELECT pg_advisory_unlock(7453)", &[]).await.expect("unlock");
        let name = format!("aitasks_test_{}", Uuid::new_v4().simple());
        admin_client
            .batch_execute(&format!("CREATE DATABASE {name} TEMPLATE {template}"))
            .await
            .expect("clone template");
        let url = with_database(&base, &name);
        let app_url = with_database(&app_base_url(), &name);
        let mut settings = PoolSettings::new(app_url.clone());
        settings.max_size = 40;
        settings.ca_file = ca_file();
        let pool = connect(&settings).expect("pool");
        TestDb { pool, url, app_url, name, admin_url }
    }

    pub async fn client(&self) -> aitasks_store::Client {
        self.pool.get().await.expect("pooled client")
    }

    /// Run SQL as the schema owner (what the functions' role may not: a trigger that makes the
    /// database refuse one row, standing in for a value the store cannot hold).
    pub async fn sql_as_owner(&self, statement: &str) {
        admin(&self.url).await.batch_execute(statement).await.expect("owner SQL");
    }

    /// Run SQL directly (to move time by rewriting timestamps, or to count rows).
    pub async fn sql(&self, statement: &str) {
        self.client().await.batch_execute(statement).await.expect("test SQL");
    }

    /// [`TestDb::count`] across a Postgres restart: the pool's broken connections are retried
    /// until Postgres answers (up to [`crate::PATIENCE`]).
    pub async fn count_surviving_restart(&self, query: &str) -> i64 {
        crate::wait_for(&format!("Postgres to come back for {query}"), || async {
            let client = self.pool.get().await.ok()?;
            client.query_one(query, &[]).await.ok().map(|row| row.get(0))
        })
        .await
    }

    pub async fn count(&self, query: &str) -> i64 {
        self.client().await.query_one(query, &[]).await.expect("count query").get(0)
    }

    /// Statements this database has received since the last reset (`pg_stat_statements`).
    pub async fn statements_seen(&self) -> i64 {
        let admin_client = admin(&self.admin_url).await;
        admin_client
            .query_one(
                "SELECT COALESCE(sum(calls), 0)::bigint FROM pg_stat_statements s \
                 JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = $1",
                &[&self.name],
            )
            .await
            .expect("pg_stat_statements (make up preloads it)")
            .get(0)
    }

    /// Calls and rows of each statement since the last reset whose text contains `fragment`.
    pub async fn statement_calls(&self, fragment: &str) -> (i64, i64) {
        let admin_client = admin(&self.admin_url).await;
        let row = admin_client
            .query_one(
                "SELECT COALESCE(sum(calls), 0)::bigint, COALESCE(sum(rows), 0)::bigint FROM pg_stat_statements s \
                 JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = $1 AND strpos(s.query, $2) > 0",
                &[&self.name, &fragment],
            )
            .await
            .expect("pg_stat_statements (make up preloads it)");
        (row.get(0), row.get(1))
    }

    /// Milliseconds the server spent executing the statements whose text contains `fragment`,
    /// since the last reset (`pg_stat_statements`' `total_exec_time`).
    pub async fn statement_time_ms(&self, fragment: &str) -> f64 {
        let admin_client = admin(&self.admin_url).await;
        admin_client
            .query_one(
                "SELECT COALESCE(sum(total_exec_time), 0)::float8 FROM pg_stat_statements s \
                 JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = $1 AND strpos(s.query, $2) > 0",
                &[&self.name, &fragment],
            )
            .await
            .expect("pg_stat_statements (make up preloads it)")
            .get(0)
    }

    pub async fn reset_statements(&self) {
        let admin_client = admin(&self.admin_url).await;
        admin_client
            .execute(
                "SELECT pg_stat_statements_reset(0::oid, (SELECT oid FROM pg_database WHERE datname = $1), 0::bigint)",
                &[&self.name],
            )
            .await
            .expect("reset pg_stat_statements");
    }
}

pub const APP: &str = "app-1";

pub fn hash_of(value: &Value) -> String {
    hex::encode(Sha256::digest(value.to_string().as_bytes()))
}

pub fn classify_request() -> Value {
    json!({"kind": "classify", "prompt": "Sentiment?", "input": {"text": "great"}, "choices": ["pos", "neg"]})
}

pub fn new_task(app_id: &str, owner: TaskOwner, effect_key: &str) -> NewTask {
    let request = classify_request();
    NewTask {
        app_id: app_id.to_owned(),
        owner,
        step_key: "classify".to_owned(),
        effect_key: effect_key.to_owned(),
        kind: "classify".to_owned(),
        input_hash: hash_of(&request),
        request,
        model_id: "default".to_owned(),
        model_ref: Some(json!({"provider": "openai", "model": "test-model"})),
        model_config_hash: None,
        max_attempts: 3,
        trace_header: None,
        deferred_window_ms: None,
        awaiting_batch: false,
        has_poller: false,
        scope_terms: None,
        replay_of: None,
        replay_operation: None,
    }
}

pub fn app_owner(scope: &str) -> TaskOwner {
    TaskOwner::Application {
        scope_id: scope.to_owned(),
        usage_subject: Some(json!({"type": "user", "id": "u1"})),
    }
}

pub async fn run(db: &TestDb, app_id: &str) -> Run {
    let client = db.client().await;
    aitasks_store::create_run(
        &client,
        &NewRun {
            app_id: app_id.to_owned(),
            scope_id: "scope-1".to_owned(),
            actor: Some(json!({"userId": "user-9"})),
            idempotency_key: None,
        },
    )
    .await
    .expect("create run")
    .run()
    .clone()
}

/// Restart the local Postgres (`scripts/postgres.sh restart`, a fast shutdown): every open
/// connection breaks. Only for test binaries that run alone (cargo runs test binaries one at a
/// time).
pub fn restart_postgres() {
    let status = std::process::Command::new("bash")
        .arg(crate::workspace_root().join("scripts/postgres.sh"))
        .arg("restart")
        .status()
        .expect("run scripts/postgres.sh restart");
    assert!(status.success(), "Postgres restarted");
}

/// A claim's mark as a worker makes it for `aitasks_store::claim_by`: it takes nothing after a
/// Lambda invocation's time (15 minutes) is up.
pub fn claim_mark() -> aitasks_store::ClaimMark {
    aitasks_store::ClaimMark {
        token: Uuid::new_v4(),
        by: chrono::Utc::now() + chrono::TimeDelta::minutes(15),
    }
}

/// The page the API deletes an application's tasks by (`AITASK_REQUEST_PAGE`'s default), for
/// `aitasks_store::delete_owned_page`.
pub const DELETE_PAGE: usize = 500;

/// Claim one task, as process-task claims a batch of one (`aitasks_store::claim_by`).
pub async fn claim_one(
    client: &impl aitasks_store::GenericClient,
    task_id: uuid::Uuid,
) -> aitasks_store::Claim {
    let mut claims = aitasks_store::claim_by(client, &[task_id], &claim_mark()).await.expect("claim");
    assert_eq!(claims.len(), 1, "one answer for one record");
    claims.remove(0)
}
