//! What a test database's sessions are doing (`pg_stat_activity`, read as the schema owner, who
//! sees every session's query): for tests that must act once a statement waits on a lock, or
//! once a statement left running has ended, instead of sleeping for a guess.

use crate::{admin, wait_until, TestDb};

impl TestDb {
    /// Sessions of this database whose statement contains `fragment` and that wait on a lock
    /// (a row, a table, another transaction).
    pub async fn lock_waits(&self, fragment: &str) -> i64 {
        admin(&self.url)
            .await
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
                   AND pid <> pg_backend_pid() AND wait_event_type = 'Lock' AND strpos(query, $1) > 0",
                &[&fragment],
            )
            .await
            .expect("pg_stat_activity")
            .get(0)
    }

    /// Sessions of this database running a statement that contains `fragment` now.
    pub async fn running(&self, fragment: &str) -> i64 {
        admin(&self.url)
            .await
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
                   AND pid <> pg_backend_pid() AND state = 'active' AND strpos(query, $1) > 0",
                &[&fragment],
            )
            .await
            .expect("pg_stat_activity")
            .get(0)
    }

    /// Wait until `count` sessions running a statement that contains `fragment` wait on a lock.
    pub async fn wait_for_lock_waits(&self, fragment: &str, count: i64) {
        let what = format!("{count} statement(s) containing {fragment:?} to wait on a lock");
        wait_until(&what, || async { self.lock_waits(fragment).await >= count }).await;
    }

    /// Wait until no session runs a statement that contains `fragment` (one left running by a
    /// caller that stopped waiting for it has ended).
    pub async fn wait_until_not_running(&self, fragment: &str) {
        let what = format!("the statements containing {fragment:?} to end");
        wait_until(&what, || async { self.running(fragment).await == 0 }).await;
    }
}
