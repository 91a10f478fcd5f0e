//! Plans: the ones auto_explain logged for the probe, read back from the server log, and the
//! point statements' generic plans when the partial indexes are believed empty.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use crate::Failure;

/// Every statement that addresses one task (or a given few) by id, by its name in the store's
/// own list (`aitasks_store::queries::statements`), for the check that it stays a descent by id
/// when the partial indexes are believed empty (see [`believed_empty`]). The text explained is
/// the store's, as the store sends it: no copy here can drift from it.
const POINT_STATEMENTS: [(&str, &str); 7] = [
    ("claim", "lease/claim_by"),
    ("heartbeat", "lease/heartbeat"),
    ("cancel check", "lease/check"),
    ("complete", "settle/complete_attempt"),
    ("cancel request", "cancel/request_cancel"),
    ("settle a cancel", "settle/end_canceled"),
    ("mark unsent", "sweep/mark_unsent"),
];

/// The store's text of the statement `name`, and how many parameters it takes.
fn store_statement(name: &str) -> Result<(&'static str, usize), Failure> {
    aitasks_store::queries::statements()
        .find(|(statement, _, _)| *statement == name)
        .map(|(_, text, params)| (text, params.len()))
        .ok_or_else(|| format!("the store has no statement {name}").into())
}

/// The point statements' generic plans while every partial index of `tasks` is recorded as
/// empty, which is what ANALYZE's sample usually reports on a big table. Each must still find
/// its task by a descent on an index that leads with `id`.
pub(crate) struct BelievedEmpty {
    pub(crate) markdown: String,
    pub(crate) summary: String,
    pub(crate) failures: Vec<String>,
}

pub(crate) async fn believed_empty(admin: &tokio_postgres::Client) -> Result<BelievedEmpty, Failure> {
    let mut markdown = String::from(
        "\n## Point statements when the partial indexes are believed empty\n\n\
         ANALYZE samples 30,000 rows; on a big table it rarely meets one of the few thousand \
         queued or running tasks, so it records the partial indexes over them as empty. Below, \
         with every partial index of `tasks` set to zero rows (in a transaction that is rolled \
         back), the generic plan of each statement that addresses one task by id, its text as \
         the store sends it (named by its file in `shared/store/sql`). Each must descend an \
         index that leads with `id` and scan no table in full.\n\n",
    );
    let (mut summary, mut failures) = (String::new(), Vec::new());
    admin.batch_execute("BEGIN").await?;
    admin
        .batch_execute(
            "UPDATE pg_class SET reltuples = 0 WHERE oid IN (SELECT indexrelid FROM pg_index \
             WHERE indrelid = 'tasks'::regclass AND indpred IS NOT NULL); \
             SET LOCAL plan_cache_mode = force_generic_plan",
        )
        .await?;
    for (i, (name, file)) in POINT_STATEMENTS.iter().enumerate() {
        let (statement, parameters) = store_statement(file)?;
        // Postgres infers each parameter's type, as it does for the store's own prepare. A
        // generic plan does not depend on the values, so each is NULL.
        admin.batch_execute(&format!("PREPARE point_{i} AS {statement}")).await?;
        let arguments = vec!["NULL"; parameters].join(", ");
        let plan: Vec<String> = admin
            .query(&format!("EXPLAIN (COSTS OFF) EXECUTE point_{i}({arguments})"), &[])
            .await?
            .iter()
            .map(|row| row.get(0))
            .collect();
        let plan = plan.join("\n");
        // A descent of an index that leads with id, and no scan of the whole table.
        let by_id = (plan.contains("using tasks_pkey on tasks")
            || plan.contains("using tasks_in_flight_idx on tasks")
            || plan.contains("Bitmap Index Scan on tasks_pkey"))
            && !plan.contains("Seq Scan on tasks");
        if !by_id {
            failures.push(format!("{name} does not descend by id when partial indexes look empty"));
        }
        let _ = writeln!(
            markdown,
            "{name} (`{file}`): {}\n\n```\n{statement}\n{plan}\n```\n",
            if by_id { "by id" } else { "NOT by id" }
        );
        let _ = writeln!(
            summary,
            "  believed empty: {name:<20} {}",
            if by_id { "descends by id" } else { "SCANS" }
        );
    }
    admin.batch_execute("ROLLBACK; DEALLOCATE ALL").await?;
    Ok(BelievedEmpty { markdown, summary, failures })
}

/// Whether a logged line is a node of a text-format plan (`Limit  (cost=…` or, with ANALYZE,
/// `(actual time=…`), not a line of the statement before it.
fn is_plan_node(line: &str) -> bool {
    line.contains("  (cost=") || line.contains("(actual time=")
}

/// One statement's plan as auto_explain logged it.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub(crate) operation: String,
    pub(crate) query: String,
    pub(crate) millis: f64,
    pub(crate) plan: String,
}

/// The plans logged since byte `from` of the server log, the last of each (operation,
/// statement), in the order the operations ran.
pub(crate) fn read_plans(server_log: &Path, from: u64) -> Result<Vec<Plan>, Failure> {
    let text = std::fs::read(server_log)?;
    let text = String::from_utf8_lossy(&text[from as usize..]);
    let mut plans: Vec<Plan> = Vec::new();
    let mut current: Option<Plan> = None;
    // A statement's text runs over several lines (the store keeps its lines; the server's log
    // starts each continuation with a tab, as it does the plan's): every line after `Query
    // Text:` is the statement's until the plan's first node.
    let mut in_query = false;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix('\t') {
            if let Some(plan) = current.as_mut() {
                match rest.strip_prefix("Query Text: ") {
                    Some(query) if plan.query.is_empty() => {
                        plan.query = query.trim().to_owned();
                        in_query = true;
                    }
                    _ if in_query && !is_plan_node(rest) => {
                        plan.query.push(' ');
                        plan.query.push_str(rest.trim());
                    }
                    _ => {
                        in_query = false;
                        plan.plan.push_str(rest);
                        plan.plan.push('\n');
                    }
                }
            }
            continue;
        }
        in_query = false;
        plans.extend(current.take());
        current = parse_header(line);
    }
    plans.extend(current);
    let mut order: Vec<(String, String)> = Vec::new();
    let mut last: BTreeMap<(String, String), Plan> = BTreeMap::new();
    for plan in plans.into_iter().filter(|p| p.operation != "growth-setup") {
        let key = (plan.operation.clone(), plan.query.clone());
        if !last.contains_key(&key) {
            order.push(key.clone());
        }
        last.insert(key, plan);
    }
    Ok(order.into_iter().filter_map(|key| last.remove(&key)).collect())
}

/// `2026-11-30 00:50:01.123 UTC [operation] LOG:  duration: 0.123 ms  plan:`
fn parse_header(line: &str) -> Option<Plan> {
    let (_, rest) = line.split_once(" [")?;
    let (operation, rest) = rest.split_once("] LOG:  duration: ")?;
    let millis = rest.strip_suffix(" ms  plan:")?.parse().ok()?;
    Some(Plan { operation: operation.to_owned(), query: String::new(), millis, plan: String::new() })
}

/// `Buffers: shared hit=.. read=..` of the plan's top node (it counts its children's too).
pub(crate) fn top_buffers(plan: &str) -> (i64, i64) {
    let Some(line) = plan.lines().find(|l| l.trim_start().starts_with("Buffers: shared")) else {
        return (0, 0);
    };
    let count = |name: &str| {
        line.split_whitespace()
            .find_map(|word| word.trim_end_matches(',').strip_prefix(name))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    (count("hit="), count("read="))
}

/// The tables of `big` this plan reads in full.
pub(crate) fn big_table_scans(plan: &str, big: &[String]) -> Vec<String> {
    big.iter()
        .filter(|table| {
            let needle = format!("Seq Scan on {table}");
            plan.match_indices(&needle).any(|(at, _)| {
                plan[at + needle.len()..].chars().next().is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
            })
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_statement_over_several_lines_is_read_whole_and_keyed_apart() {
        let log = "2026-12-05 00:00:01.000 UTC [expire] LOG:  duration: 0.500 ms  plan:\n\
                   \tQuery Text: SELECT\n\
                   \t    id\n\
                   \tFROM tasks\n\
                   \tLimit  (cost=0.1..1.0 rows=1 width=16) (actual time=0.01..0.02 rows=1 loops=1)\n\
                   \t  Buffers: shared hit=3\n\
                   2026-12-05 00:00:01.100 UTC [expire] LOG:  duration: 0.200 ms  plan:\n\
                   \tQuery Text: SELECT\n\
                   \t    status\n\
                   \tFROM tasks\n\
                   \tSeq Scan on tasks  (cost=0.0..1.0 rows=1 width=8) (actual time=0.01..0.02 rows=1 loops=1)\n";
        let dir = std::env::temp_dir().join(format!("plans-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("server.log");
        std::fs::write(&path, log).unwrap();
        let plans = read_plans(&path, 0).unwrap();
        let queries: Vec<&str> = plans.iter().map(|p| p.query.as_str()).collect();
        assert_eq!(
            queries,
            ["SELECT id FROM tasks", "SELECT status FROM tasks"],
            "two statements, each whole"
        );
        assert!(plans[0].plan.starts_with("Limit"), "{}", plans[0].plan);
        assert_eq!(top_buffers(&plans[0].plan), (3, 0));
        assert_eq!(big_table_scans(&plans[1].plan, &["tasks".to_owned()]), ["tasks"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
