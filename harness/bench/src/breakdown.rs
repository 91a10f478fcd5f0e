//! Find the cost of one measured point, with evidence (issue 37): what the server spent on each
//! statement (`pg_stat_statements`: calls a task, mean time, share of the statements' time),
//! what the sessions waited on (`pg_stat_activity`, sampled every 20 ms), what a task cost the
//! WAL (`pg_stat_wal`: records, full-page images, bytes, fsyncs), and this process's CPU a task
//! (user + system, as `getrusage(RUSAGE_SELF)` counts it, read from `/proc/self/stat`).
//!
//! Each statement is shown by the name of its file in the store (`settle/complete_many` is
//! `shared/store/sql/settle/complete_many.sql`), matched on the text the store sends
//! (`aitasks_store::queries::statements`); a statement the store does not own (pgbench's) is
//! shown by its first words. Every reading is taken from another database than the measured
//! one, so none counts itself.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};

use crate::{db, row, Failure};

/// One statement's part of a point.
#[derive(Debug, Clone)]
pub(crate) struct StatementCost {
    pub name: String,
    pub calls_per_task: f64,
    pub mean_ms: f64,
    /// Of the time the server spent executing this point's statements.
    pub share: f64,
}

/// What one point cost.
#[derive(Debug, Clone)]
pub(crate) struct Breakdown {
    pub clients: usize,
    pub tasks_per_second: f64,
    pub tasks: f64,
    pub statements: Vec<StatementCost>,
    pub waits: Vec<(String, f64)>,
    pub wal: db::WalCounters,
    /// This process's CPU-milliseconds a task (`None` when the work ran in another process).
    pub client_cpu_ms: Option<f64>,
}

impl Breakdown {
    /// Statements the server received a task: round trips, with one statement a round trip.
    pub(crate) fn statements_per_task(&self) -> f64 {
        self.statements.iter().map(|s| s.calls_per_task).sum()
    }

    pub(crate) fn print(&self, label: &str) {
        let cpu =
            self.client_cpu_ms.map_or_else(|| "n/a (another process)".to_owned(), |ms| format!("{ms:.3} ms"));
        let clients = match self.clients {
            1 => "1 client".to_owned(),
            n => format!("{n} clients"),
        };
        println!(
            "  {label} at {clients}: {:.0} tasks/s over {:.0} tasks; {:.2} statements a task; client CPU a task {cpu}",
            self.tasks_per_second,
            self.tasks,
            self.statements_per_task()
        );
        println!(
            "    WAL a task: {:.1} records, {:.2} full pages, {:.0} bytes, {:.3} fsyncs",
            self.wal.records, self.wal.full_pages, self.wal.bytes, self.wal.syncs
        );
        println!("    sessions were: {}", db::top_waits(&self.waits));
        row("    statement", &["calls/task".into(), "mean ms".into(), "time share".into()]);
        for statement in &self.statements {
            row(
                &format!("    {}", statement.name),
                &[
                    format!("{:.2}", statement.calls_per_task),
                    format!("{:.3}", statement.mean_ms),
                    format!("{:.0}%", statement.share * 100.0),
                ],
            );
        }
    }

    pub(crate) fn json(&self) -> Value {
        json!({
            "clients": self.clients, "tasksPerSecond": self.tasks_per_second, "tasks": self.tasks,
            "statementsPerTask": self.statements_per_task(),
            "statements": self.statements.iter().map(|s| json!({"name": s.name, "callsPerTask": s.calls_per_task,
                "meanMs": s.mean_ms, "timeShare": s.share})).collect::<Vec<_>>(),
            "waits": self.waits.iter().map(|(event, share)| json!({"event": event, "share": share})).collect::<Vec<_>>(),
            "walPerTask": {"records": self.wal.records, "fullPageImages": self.wal.full_pages, "bytes": self.wal.bytes,
                           "fsyncs": self.wal.syncs},
            "clientCpuMsPerTask": self.client_cpu_ms,
        })
    }
}

/// Where the work of a point runs: this process (its CPU is measured) or another (pgbench).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Runs {
    Here,
    Elsewhere,
}

/// Run `work` (tasks per second) on `url`'s freshly reset database, measuring what it costs.
pub(crate) async fn measure<W>(url: &str, clients: usize, runs: Runs, work: W) -> Result<Breakdown, Failure>
where
    W: Future<Output = Result<f64, Failure>>,
{
    let database = db::database_of(url);
    let wal_before = db::WalCounters::read(url).await?;
    db::reset_statements(url, &database).await?;
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = tokio::spawn(db::sample_waits(url.to_owned(), stop.clone()));
    let cpu_before = process_cpu_ms()?;
    let worked = work.await;
    let cpu = process_cpu_ms()? - cpu_before;
    stop.store(true, Ordering::Relaxed);
    let tasks_per_second = worked?;
    let seen = statements(url, &database).await?;
    let waits = sampler.await??;
    let tasks = db::count_tasks(url).await?;
    let wal = db::WalCounters::read(url).await?.per_task_since(&wal_before, tasks);
    let total_ms: f64 = seen.iter().map(|s| s.total_ms).sum::<f64>().max(f64::EPSILON);
    let per_task = tasks.max(1.0);
    let statements = seen
        .into_iter()
        .map(|s| StatementCost {
            name: s.name,
            calls_per_task: s.calls / per_task,
            mean_ms: s.total_ms / s.calls.max(1.0),
            share: s.total_ms / total_ms,
        })
        .collect();
    Ok(Breakdown {
        clients,
        tasks_per_second,
        tasks,
        statements,
        waits,
        wal,
        client_cpu_ms: (runs == Runs::Here).then_some(cpu / per_task),
    })
}

pub(crate) struct Seen {
    pub name: String,
    pub calls: f64,
    pub total_ms: f64,
}

/// The statements `database` received since its statistics were reset, by name, most time
/// first (utility statements, such as a `CHECKPOINT`, left out).
pub(crate) async fn statements(url: &str, database: &str) -> Result<Vec<Seen>, Failure> {
    let names = StatementNames::of_the_store();
    let client = db::statistics(url).await?;
    let rows = client
        .query(
            "SELECT query, calls::float8, total_exec_time FROM pg_stat_statements s \
             JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = $1 \
             AND query !~* '^\\s*(checkpoint|truncate|create|drop|set|begin|commit|rollback)'",
            &[&database],
        )
        .await?;
    let mut by_name: Vec<Seen> = Vec::new();
    for row in rows {
        let text: String = row.get(0);
        let name = names.name_of(&text);
        let (calls, total_ms): (f64, f64) = (row.get(1), row.get(2));
        match by_name.iter_mut().find(|s| s.name == name) {
            Some(seen) => {
                seen.calls += calls;
                seen.total_ms += total_ms;
            }
            None => by_name.push(Seen { name, calls, total_ms }),
        }
    }
    by_name.sort_by(|a, b| b.total_ms.total_cmp(&a.total_ms));
    Ok(by_name)
}

/// Every statement of the store, to name what the server received. `pg_stat_statements` keeps
/// a statement's text with its constants replaced by `$n` (`status = 'queued'` becomes
/// `status = $4`), so both sides are compared with every constant and parameter made `?`: the
/// same text is the statement; failing that (a typed constant such as `interval '1 s'` is
/// replaced whole), the statement sharing nearly all its words.
struct StatementNames {
    statements: Vec<(&'static str, String, std::collections::HashSet<String>)>,
}

/// Of the words of two texts, the share both have, at least this for a match by words.
const SAME_WORDS: f64 = 0.9;

impl StatementNames {
    fn of_the_store() -> StatementNames {
        StatementNames {
            statements: aitasks_store::queries::statements()
                .map(|(name, text, _)| {
                    let normalized = normalize(text);
                    let words = words(&normalized);
                    (name, normalized, words)
                })
                .collect(),
        }
    }

    /// The store's name of a statement the server received, or its first words.
    fn name_of(&self, received: &str) -> String {
        let normalized = normalize(received);
        if let Some((name, _, _)) = self.statements.iter().find(|(_, text, _)| *text == normalized) {
            return (*name).to_owned();
        }
        let received_words = words(&normalized);
        let similarity = |theirs: &std::collections::HashSet<String>| {
            let both = received_words.intersection(theirs).count() as f64;
            both / received_words.union(theirs).count().max(1) as f64
        };
        self.statements
            .iter()
            .map(|(name, _, words)| (*name, similarity(words)))
            .filter(|(_, share)| *share >= SAME_WORDS)
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map_or_else(|| short(received), |(name, _)| name.to_owned())
    }
}

/// Lower case, whitespace folded, a trailing `;` dropped, and every string or number constant
/// and every `$n` parameter made `?`.
fn normalize(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let after_word = out.chars().last().is_some_and(|p| p.is_alphanumeric() || p == '_');
        if c == '\'' {
            // To the closing quote ('' inside is a quote).
            i += 1;
            while i < chars.len() {
                if chars[i] == '\'' && chars.get(i + 1) == Some(&'\'') {
                    i += 2;
                } else if chars[i] == '\'' {
                    break;
                } else {
                    i += 1;
                }
            }
            out.push('?');
        } else if c == '$' && chars.get(i + 1).is_some_and(char::is_ascii_digit) {
            i += 1;
            while chars.get(i + 1).is_some_and(char::is_ascii_digit) {
                i += 1;
            }
            out.push('?');
        } else if c.is_ascii_digit() && !after_word {
            while chars.get(i + 1).is_some_and(|n| n.is_ascii_digit() || *n == '.') {
                i += 1;
            }
            out.push('?');
        } else {
            out.extend(c.to_lowercase());
        }
        i += 1;
    }
    fold(out.trim_end().trim_end_matches(';'))
}

/// The words of a normalized text (its names and keywords).
fn words(normalized: &str) -> std::collections::HashSet<String> {
    normalized
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Whitespace folded, as the server keeps the text it was sent but a script may not.
fn fold(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A statement the store does not own, by its first words.
fn short(text: &str) -> String {
    let folded = fold(text);
    let mut shown: String = folded.chars().take(40).collect();
    if folded.chars().count() > 40 {
        shown.push('…');
    }
    shown
}

/// This process's user + system CPU time so far, in milliseconds (`/proc/self/stat`, what
/// `getrusage(RUSAGE_SELF)` reports, in clock ticks of 10 ms: USER_HZ is 100 on Linux).
pub(crate) fn process_cpu_ms() -> Result<f64, Failure> {
    let stat = std::fs::read_to_string("/proc/self/stat")?;
    // The fields after the command name (which may hold spaces) are split by whitespace.
    let after = stat.rsplit_once(')').map(|(_, rest)| rest).ok_or("unreadable /proc/self/stat")?;
    let fields: Vec<&str> = after.split_whitespace().collect();
    // utime and stime are the 14th and 15th fields, the 12th and 13th after the name.
    let tick =
        |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).ok_or("no CPU times in /proc/self/stat");
    Ok((tick(11)? + tick(12)?) * 10.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_store_statements_are_found_by_their_text_with_the_constants_the_server_replaced() {
        let names = StatementNames::of_the_store();
        let text = |wanted: &str| {
            aitasks_store::queries::statements().find(|(name, _, _)| *name == wanted).expect(wanted).1
        };
        assert_eq!(names.name_of(text("settle/complete_many")), "settle/complete_many");
        assert_eq!(names.name_of(&format!("  {}\n", text("lease/claim_by"))), "lease/claim_by");
        // As pg_stat_statements keeps them: each string constant a parameter of its own.
        let with_constants: Vec<_> =
            aitasks_store::queries::statements().filter(|(_, text, _)| text.contains('\'')).collect();
        assert!(!with_constants.is_empty());
        for (name, text, _) in with_constants {
            let mut kept = String::new();
            for (i, piece) in text.split('\'').enumerate() {
                // Even pieces are outside quotes; each quoted one becomes $100, $101, ...
                match i % 2 {
                    0 => kept.push_str(piece),
                    _ => kept.push_str(&format!("${}", 100 + i / 2)),
                }
            }
            assert_eq!(names.name_of(&kept), name, "{kept}");
        }
        assert_eq!(names.name_of(text("sweep/mark_unsent")), "sweep/mark_unsent");
        // Not the store's: its first words.
        assert_eq!(
            names.name_of("SELECT   1 FROM tasks WHERE id = $1 AND status = 'queued' AND more"),
            "SELECT 1 FROM tasks WHERE id = $1 AND st…"
        );
    }

    #[test]
    fn constants_and_parameters_are_made_alike() {
        assert_eq!(
            normalize("UPDATE t SET a = 'it''s', b = 42, c = $12 WHERE x1 = 3.5;"),
            "update t set a = ?, b = ?, c = ? where x1 = ?"
        );
    }

    #[test]
    fn this_process_has_spent_cpu() {
        let before = process_cpu_ms().expect("readable");
        let mut x = 0u64;
        for i in 0..50_000_000u64 {
            x = x.wrapping_add(i * i);
        }
        assert!(x > 0);
        assert!(process_cpu_ms().expect("readable") > before);
    }
}
