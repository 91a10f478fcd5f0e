//! Every index on `tasks` says what it is for (migrations/V37): its comment names the statements
//! that need it, each a file of shared/store/sql. An index without a reader named, or a name that
//! is no longer a statement, fails here, so the index list is looked at again whenever it changes.

use std::path::Path;

use aitasks_testkit::*;

/// The statement names (`module/name`) in an index's comment.
fn named_statements(comment: &str) -> Vec<&str> {
    comment
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '/' || c == '*'))
        .filter(|word| word.contains('/'))
        .collect()
}

/// `module/name` is a statement file; `module/*` a module; `module/prefix*` its statements
/// whose names start so.
fn is_statement(sql: &Path, statement: &str) -> bool {
    let Some((module, name)) = statement.split_once('/') else { return false };
    let Some(prefix) = name.strip_suffix('*') else { return sql.join(format!("{statement}.sql")).is_file() };
    let Ok(entries) = std::fs::read_dir(sql.join(module)) else { return false };
    entries.flatten().any(|entry| {
        let file = entry.file_name().to_string_lossy().into_owned();
        file.ends_with(".sql") && file.starts_with(prefix)
    })
}

#[tokio::test]
async fn every_index_on_tasks_names_the_statements_that_need_it() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let rows = client
        .query(
            "SELECT i.relname::text, obj_description(i.oid, 'pg_class') \
             FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid \
             WHERE x.indrelid = 'tasks'::regclass ORDER BY 1",
            &[],
        )
        .await
        .unwrap();
    let sql = Path::new(env!("CARGO_MANIFEST_DIR")).join("sql");
    assert!(rows.len() <= 17, "{} indexes on tasks: each is written by every task", rows.len());
    for row in &rows {
        let (index, comment): (String, Option<String>) = (row.get(0), row.get(1));
        let comment = comment.unwrap_or_else(|| panic!("{index} has no comment naming its statements"));
        let statements = named_statements(&comment);
        assert!(!statements.is_empty(), "{index} names no statement: {comment}");
        for statement in statements {
            let exists = is_statement(&sql, statement);
            assert!(exists, "{index} names {statement}, which is not a statement of shared/store/sql");
        }
    }
}
