//! The role the functions connect as (`DATABASE_URL`) reads and writes rows, and nothing more:
//! it cannot change the schema, whatever a bug or an injected statement tries.

use aitasks_testkit::*;
use tokio_postgres::error::SqlState;

#[tokio::test]
async fn the_functions_role_cannot_change_the_schema() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let role: String = client.query_one("SELECT current_user::text", &[]).await.unwrap().get(0);
    assert_ne!(role, "postgres", "the test pool connects as the functions' role, not the owner");

    for statement in [
        "ALTER TABLE tasks ADD COLUMN sneaky int",
        "DROP TABLE task_events",
        "CREATE TABLE sneaky (id int)",
        "TRUNCATE tasks",
        "CREATE INDEX sneaky_idx ON tasks (kind)",
        "ALTER TABLE tasks DISABLE TRIGGER ALL",
        "DROP FUNCTION scope_shard(text)",
        "CREATE ROLE sneaky LOGIN",
        "GRANT aitasks_app TO aitasks_fn WITH ADMIN OPTION",
        // The migration history is the schema's: a row removed here would make the next deploy
        // run a migration again, a row added would make it skip one.
        "DELETE FROM refinery_schema_history",
        "UPDATE refinery_schema_history SET checksum = '0'",
        "INSERT INTO refinery_schema_history (version, name, applied_on, checksum) VALUES (999, 'x', 'now', '0')",
        "SELECT count(*) FROM refinery_schema_history",
    ] {
        let error = client.batch_execute(statement).await.expect_err(statement);
        assert_eq!(error.code(), Some(&SqlState::INSUFFICIENT_PRIVILEGE), "{statement}: {error:?}");
        // As the store reports it: the SQLSTATE in the message, the server's words in the source.
        let reported = aitasks_store::StoreError::from(error);
        assert!(reported.to_string().contains("(SQLSTATE 42501)"), "{reported}");
        assert!(!reported.is_unavailable(), "a refusal is not an outage: nothing to retry");
        let cause = std::error::Error::source(&reported).map(|s| format!("{s:?}")).unwrap_or_default();
        assert!(cause.contains("permission denied") || cause.contains("must "), "{cause}");
    }

    // Rows are its business.
    let run = run(&db, APP).await;
    assert_eq!(db.count("SELECT count(*) FROM runs").await, 1);
    client.execute("DELETE FROM runs WHERE id = $1", &[&run.id]).await.unwrap();
    assert_eq!(db.count("SELECT count(*) FROM runs").await, 0);
}

/// A statement stuck on a lock, or a transaction its client abandoned, ends on its own: the
/// functions' login carries both timeouts (migrations/V9).
#[tokio::test]
async fn the_functions_role_has_statement_and_idle_timeouts() {
    let db = TestDb::new().await;
    let client = db.client().await;
    for (setting, expected) in [("statement_timeout", "30s"), ("idle_in_transaction_session_timeout", "1min")]
    {
        let value: String = client.query_one(&format!("SHOW {setting}"), &[]).await.unwrap().get(0);
        assert_eq!(value, expected, "{setting}");
    }
}

/// A wrong password or a database that does not exist is the configuration's fault, said as
/// such: not an outage to answer 503 to and retry.
#[tokio::test]
async fn a_refused_login_is_a_configuration_error_that_says_what_to_check() {
    let url = app_base_url();
    let (credentials, rest) = url.split_once('@').expect("DATABASE_URL has credentials");
    let (user, _) = credentials.rsplit_once(':').expect("DATABASE_URL has a password");
    let wrong_password = format!("{user}:not-the-password@{rest}");
    let no_database = with_database(&url, "no_such_database_here");
    for (url, sqlstate) in [(wrong_password, "28P01"), (no_database, "3D000")] {
        let mut settings = aitasks_store::PoolSettings::new(url);
        settings.ca_file = ca_file();
        let pool = aitasks_store::connect(&settings).unwrap();
        let Err(error) = aitasks_store::client(&pool).await else {
            panic!("{sqlstate}: the login is accepted")
        };
        assert!(matches!(error, aitasks_store::StoreError::Config(_)), "{sqlstate}: {error:?}");
        assert!(!error.is_unavailable(), "nothing to retry");
        let text = error.to_string();
        assert!(text.contains(sqlstate) && text.contains("DATABASE_URL"), "{text}");
        assert!(!text.contains("not-the-password"), "no password in the message: {text}");
    }
}
