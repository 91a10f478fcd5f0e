//! The schema's migrations (`migrations/`, embedded at build time) and how they are applied:
//! refinery's runner, in version order, each migration in a transaction of its own with its
//! row in `refinery_schema_history`; an applied migration whose text changed stops the run
//! (refinery's checksum). A migration marked [`NO_TRANSACTION`] runs outside any transaction
//! instead, one statement at a time ([`outside`]): `CREATE INDEX CONCURRENTLY`, which builds an
//! index on a large table without blocking its writes, cannot run inside one.
//!
//! One migrator at a time: each takes a session advisory lock first. A migrator that finds the
//! lock taken asks again every [`LOCK_POLL`] rather than waiting inside a statement: a waiting
//! statement holds a snapshot, which a concurrent index build of the migrator holding the lock
//! would wait for in turn (a deadlock Postgres would end by failing one of them).

mod outside;

use std::time::Duration;

use refinery::{Migration, Runner};

use crate::error::{StoreError, StoreResult};
use crate::pool::tls_connector;

pub use outside::{concurrent_statements, is_outside_a_transaction, ConcurrentStatement, NO_TRANSACTION};

mod embedded {
    refinery::embed_migrations!("../../migrations");
}

/// Key of the session advisory lock that serializes migrators ("aitasks" in ASCII).
const MIGRATION_LOCK_KEY: i64 = 0x0061_6974_6173_6b73;

/// How often a migrator that found the lock taken asks again.
const LOCK_POLL: Duration = Duration::from_millis(200);

/// Apply every pending migration. Idempotent, and safe when several processes start at once:
/// the runner holds a session advisory lock on its own connection, so the second migrator
/// waits, then finds nothing left to apply. Returns the versions it applied.
pub async fn migrate(database_url: &str) -> StoreResult<Vec<u32>> {
    migrate_with(database_url, None).await
}

/// [`migrate`] trusting the certificates of `ca_file` too.
pub async fn migrate_with(database_url: &str, ca_file: Option<&std::path::Path>) -> StoreResult<Vec<u32>> {
    run(database_url, ca_file, embedded::migrations::runner()).await
}

/// [`migrate_with`], then these migrations (`(name, sql)`, the name as a file's without
/// `.sql`: `V1000__an_index`) after the embedded ones: for tests of the runner itself.
#[doc(hidden)]
pub async fn migrate_with_more(
    database_url: &str,
    ca_file: Option<&std::path::Path>,
    more: &[(&str, &str)],
) -> StoreResult<Vec<u32>> {
    let mut migrations: Vec<Migration> = embedded::migrations::runner().get_migrations().clone();
    for (name, sql) in more {
        migrations.push(Migration::unapplied(name, sql).map_err(StoreError::Migration)?);
    }
    run(database_url, ca_file, Runner::new(&migrations)).await
}

/// The embedded migrations up to version `last` only: for tests of a migration over the data an
/// earlier schema held.
#[doc(hidden)]
pub async fn migrate_until(
    database_url: &str,
    ca_file: Option<&std::path::Path>,
    last: u32,
) -> StoreResult<Vec<u32>> {
    let migrations: Vec<Migration> = embedded::migrations::runner()
        .get_migrations()
        .iter()
        .filter(|migration| migration.version() <= last)
        .cloned()
        .collect();
    run(database_url, ca_file, Runner::new(&migrations)).await
}

async fn run(database_url: &str, ca_file: Option<&std::path::Path>, runner: Runner) -> StoreResult<Vec<u32>> {
    let (client, connection) = tokio_postgres::connect(database_url, tls_connector(ca_file)?).await?;
    let driver = tokio::spawn(async move {
        if let Err(error) = connection.await {
            tracing::warn!(%error, "migration connection ended with an error");
        }
    });
    let mut connection = outside::Connection::new(client);
    let outcome = match lock(connection.client()).await {
        Ok(()) => {
            let outcome = runner.run_async(&mut connection).await;
            // Closing the connection would release the lock too; unlocking first keeps the
            // next migrator prompt.
            let _ =
                connection.client().execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK_KEY]).await;
            outcome.map_err(StoreError::Migration)
        }
        Err(error) => Err(error.into()),
    };
    drop(connection);
    let _ = driver.await;
    Ok(outcome?.applied_migrations().iter().map(Migration::version).collect())
}

/// Take the migrators' lock, asking again until it is free (the caller bounds the wait).
async fn lock(client: &tokio_postgres::Client) -> Result<(), tokio_postgres::Error> {
    loop {
        let taken: bool =
            client.query_one("SELECT pg_try_advisory_lock($1)", &[&MIGRATION_LOCK_KEY]).await?.get(0);
        if taken {
            return Ok(());
        }
        tokio::time::sleep(LOCK_POLL).await;
    }
}
