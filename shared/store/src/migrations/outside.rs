//! Migrations outside a transaction: a migration whose text has a line [`NO_TRANSACTION`] runs
//! its statements one at a time, each on its own, then records itself in the schema history.
//! Such a migration may hold only statements that are safe to run again after a failure part
//! way (the history row is written last, so the next deploy runs the whole migration again):
//! `CREATE [UNIQUE] INDEX CONCURRENTLY IF NOT EXISTS name ON …` and
//! `DROP INDEX CONCURRENTLY IF EXISTS name`. Anything else refuses the migration before any
//! statement runs.
//!
//! A concurrent build that failed (a deploy that timed out, a duplicate for a unique index, the
//! connection lost) leaves its index behind INVALID: never used by the planner, yet still
//! written by every insert and update, and `IF NOT EXISTS` would then skip it for good. So
//! before each create the runner looks the index up, and drops an invalid one (concurrently)
//! to build it again; an invalid one that another session is still building refuses the
//! migration instead, naming it.
//!
//! Every other migration goes to refinery's own connection code, each in one transaction.

use refinery::Migration;
use refinery_core::traits::r#async::{AsyncMigrate, AsyncQuery, AsyncTransaction};

/// The line that marks a migration to run outside a transaction.
pub const NO_TRANSACTION: &str = "-- aitasks: no transaction";

/// Whether the migration's text carries the [`NO_TRANSACTION`] line.
pub fn is_outside_a_transaction(sql: &str) -> bool {
    sql.lines().any(|line| line.trim() == NO_TRANSACTION)
}

/// One statement a migration outside a transaction may hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConcurrentStatement {
    /// `CREATE [UNIQUE] INDEX CONCURRENTLY IF NOT EXISTS index ON table …`
    Create { index: String, table: String, sql: String },
    /// `DROP INDEX CONCURRENTLY IF EXISTS index`
    Drop { index: String, sql: String },
}

impl ConcurrentStatement {
    pub fn sql(&self) -> &str {
        match self {
            ConcurrentStatement::Create { sql, .. } | ConcurrentStatement::Drop { sql, .. } => sql,
        }
    }
}

/// The statements of a migration outside a transaction, or why it may not run that way.
/// Comments are `--` to the end of the line; statements end with `;`.
pub fn concurrent_statements(sql: &str) -> Result<Vec<ConcurrentStatement>, String> {
    let text: String =
        sql.lines().map(|line| line.split("--").next().unwrap_or_default()).collect::<Vec<_>>().join("\n");
    let mut statements = Vec::new();
    for statement in text.split(';').map(str::trim).filter(|s| !s.is_empty()) {
        let words: Vec<&str> = statement.split_whitespace().collect();
        let keyword =
            |i: usize, expected: &str| words.get(i).is_some_and(|w| w.eq_ignore_ascii_case(expected));
        let refused = || {
            let shown: String = words.join(" ").chars().take(120).collect();
            format!(
                "a migration outside a transaction may hold only CREATE [UNIQUE] INDEX CONCURRENTLY IF NOT \
                 EXISTS and DROP INDEX CONCURRENTLY IF EXISTS statements, each safe to run again: {shown}"
            )
        };
        if keyword(0, "CREATE") {
            let at = if keyword(1, "UNIQUE") { 2 } else { 1 };
            let form = ["INDEX", "CONCURRENTLY", "IF", "NOT", "EXISTS"];
            if !form.iter().enumerate().all(|(i, w)| keyword(at + i, w)) || !keyword(at + 6, "ON") {
                return Err(refused());
            }
            let at_table = if keyword(at + 7, "ONLY") { at + 8 } else { at + 7 };
            let table = words.get(at_table).and_then(|t| t.split('(').next()).filter(|t| !t.is_empty());
            let (Some(index), Some(table)) = (words.get(at + 5), table) else { return Err(refused()) };
            statements.push(ConcurrentStatement::Create {
                index: (*index).to_owned(),
                table: table.to_owned(),
                sql: statement.to_owned(),
            });
        } else if keyword(0, "DROP")
            && ["INDEX", "CONCURRENTLY", "IF", "EXISTS"].iter().enumerate().all(|(i, w)| keyword(1 + i, w))
        {
            match words.get(5) {
                Some(index) if words.len() == 6 && !index.contains(',') => {
                    statements.push(ConcurrentStatement::Drop {
                        index: (*index).to_owned(),
                        sql: statement.to_owned(),
                    })
                }
                _ => return Err(refused()),
            }
        } else {
            return Err(refused());
        }
    }
    if statements.is_empty() {
        return Err("a migration outside a transaction holds no statement".to_owned());
    }
    Ok(statements)
}

/// Why a migration could not be applied.
#[derive(Debug, thiserror::Error)]
pub(super) enum RunnerError {
    #[error(transparent)]
    Postgres(#[from] tokio_postgres::Error),
    #[error("{0}")]
    Refused(String),
}

/// The migrator's connection: refinery's own code for a migration in a transaction, the
/// statements one by one for a migration outside one.
pub(super) struct Connection {
    client: tokio_postgres::Client,
}

impl Connection {
    pub(super) fn new(client: tokio_postgres::Client) -> Connection {
        Connection { client }
    }

    pub(super) fn client(&self) -> &tokio_postgres::Client {
        &self.client
    }

    /// The migration's statements one at a time, then the rest refinery asked for (its
    /// history row), each on its own.
    async fn outside_a_transaction(&mut self, sql: &str, then: &[&str]) -> Result<(), RunnerError> {
        let statements = concurrent_statements(sql).map_err(RunnerError::Refused)?;
        for statement in &statements {
            if let ConcurrentStatement::Create { index, .. } = statement {
                self.drop_if_invalid(index).await?;
            }
            self.client.batch_execute(statement.sql()).await?;
        }
        for query in then {
            self.client.batch_execute(query).await?;
        }
        Ok(())
    }

    /// Drop `index` when a failed concurrent build left it invalid, so that it is built again.
    async fn drop_if_invalid(&self, index: &str) -> Result<(), RunnerError> {
        let found = self
            .client
            .query_opt(
                "SELECT i.indisvalid, EXISTS (SELECT 1 FROM pg_stat_progress_create_index p \
                                              WHERE p.index_relid = i.indexrelid) \
                 FROM pg_index i WHERE i.indexrelid = to_regclass($1)",
                &[&index],
            )
            .await?;
        let Some(row) = found else { return Ok(()) };
        let (valid, building): (bool, bool) = (row.get(0), row.get(1));
        if valid {
            return Ok(());
        }
        if building {
            return Err(RunnerError::Refused(format!(
                "the index {index} is still being built by another session (pg_stat_progress_create_index); \
                 deploy again once that build has ended"
            )));
        }
        tracing::warn!(
            index,
            "an earlier concurrent build left the index invalid: dropping it to build it again"
        );
        self.client.batch_execute(&format!("DROP INDEX CONCURRENTLY IF EXISTS {index}")).await?;
        Ok(())
    }
}

#[async_trait::async_trait]
impl AsyncTransaction for Connection {
    type Error = RunnerError;

    async fn execute(&mut self, queries: &[&str]) -> Result<usize, Self::Error> {
        match queries.split_first() {
            Some((sql, then)) if is_outside_a_transaction(sql) => {
                self.outside_a_transaction(sql, then).await?;
                Ok(queries.len())
            }
            _ => Ok(AsyncTransaction::execute(&mut self.client, queries).await?),
        }
    }
}

#[async_trait::async_trait]
impl AsyncQuery<Vec<Migration>> for Connection {
    async fn query(&mut self, query: &str) -> Result<Vec<Migration>, Self::Error> {
        Ok(AsyncQuery::query(&mut self.client, query).await?)
    }
}

impl AsyncMigrate for Connection {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_concurrent_index_statements_run_outside_a_transaction() {
        let sql = format!(
            "{NO_TRANSACTION}\n-- The tenant's tasks by update time; a comment may say CREATE TABLE; here.\n\
             CREATE INDEX CONCURRENTLY IF NOT EXISTS tasks_app_updated_idx ON tasks (app_id, updated_at);\n\
             create unique index concurrently if not exists runs_x_idx on only runs(app_id) where x;\n\
             DROP INDEX CONCURRENTLY IF EXISTS tasks_old_idx;\n"
        );
        assert!(is_outside_a_transaction(&sql));
        let statements = concurrent_statements(&sql).unwrap();
        assert_eq!(
            statements,
            vec![
                ConcurrentStatement::Create {
                    index: "tasks_app_updated_idx".into(),
                    table: "tasks".into(),
                    sql: "CREATE INDEX CONCURRENTLY IF NOT EXISTS tasks_app_updated_idx ON tasks (app_id, updated_at)"
                        .into()
                },
                ConcurrentStatement::Create {
                    index: "runs_x_idx".into(),
                    table: "runs".into(),
                    sql: "create unique index concurrently if not exists runs_x_idx on only runs(app_id) where x"
                        .into()
                },
                ConcurrentStatement::Drop {
                    index: "tasks_old_idx".into(),
                    sql: "DROP INDEX CONCURRENTLY IF EXISTS tasks_old_idx".into()
                },
            ]
        );
    }

    #[test]
    fn anything_else_refuses_the_whole_migration() {
        for statement in [
            "CREATE INDEX tasks_x_idx ON tasks (x)",
            "CREATE INDEX CONCURRENTLY tasks_x_idx ON tasks (x)",
            "CREATE INDEX IF NOT EXISTS tasks_x_idx ON tasks (x)",
            "DROP INDEX CONCURRENTLY tasks_x_idx",
            "DROP INDEX CONCURRENTLY IF EXISTS a_idx, b_idx",
            "ALTER TABLE tasks ADD COLUMN x int",
            "UPDATE tasks SET x = 1",
        ] {
            let sql = format!(
                "{NO_TRANSACTION}\nCREATE INDEX CONCURRENTLY IF NOT EXISTS fine_idx ON tasks (id);\n{statement};"
            );
            let refused = concurrent_statements(&sql).unwrap_err();
            assert!(refused.contains("each safe to run again"), "{statement}: {refused}");
        }
        assert!(concurrent_statements(NO_TRANSACTION).unwrap_err().contains("no statement"));
        assert!(!is_outside_a_transaction("CREATE INDEX x ON y (z); -- aitasks: no transaction"));
    }
}
