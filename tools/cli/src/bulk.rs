//! `batch FILE`: a JSONL file of create bodies, every line checked before the first request
//! (a malformed or invalid line stops it with nothing sent), then sent in chunks of up to 1,000
//! with a progress bar on a terminal (`progress`), and a summary of created, existing and refused items.

use aitasks_client::{Client, TaskBody};
use serde::Serialize;
use serde_json::{json, Value};

use crate::args::BulkArgs;
use crate::failure::Failure;
use crate::output;
use crate::progress;
use crate::tasks::read_input;

/// Refused items (or bad lines) listed on standard error; the rest are counted.
const LISTED: usize = 20;

/// What is wrong with one line of the file.
#[derive(Debug, Serialize)]
pub(crate) struct LineProblem {
    pub(crate) line: usize,
    /// `INVALID_JSON` (not a JSON value) or `INVALID_REQUEST` (the API's parser refuses it).
    pub(crate) code: &'static str,
    pub(crate) message: String,
}

/// The create bodies of a JSONL text and their line numbers (from 1), or every bad line.
pub(crate) fn parse_lines(text: &str) -> Result<(Vec<TaskBody>, Vec<usize>), Vec<LineProblem>> {
    let mut bodies = Vec::new();
    let mut lines = Vec::new();
    let mut problems = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        if line.trim().is_empty() {
            continue;
        }
        let value: Value = match serde_json::from_str(line) {
            Ok(value) => value,
            Err(e) => {
                problems.push(LineProblem {
                    line: number,
                    code: "INVALID_JSON",
                    message: format!("not valid JSON: {e}"),
                });
                continue;
            }
        };
        match TaskBody::checked(value) {
            Ok(body) => {
                bodies.push(body);
                lines.push(number);
            }
            Err(found) => problems.push(LineProblem {
                line: number,
                code: "INVALID_REQUEST",
                message: found.to_string(),
            }),
        }
    }
    if problems.is_empty() {
        Ok((bodies, lines))
    } else {
        Err(problems)
    }
}

pub(crate) async fn load(client: &Client, args: &BulkArgs, json: bool) -> Result<(), Failure> {
    let text = read_input(&args.file)?;
    let (bodies, lines) = match parse_lines(&text) {
        Ok(parsed) => parsed,
        Err(problems) => return Err(bad_lines(&args.file, &problems, json)),
    };
    if bodies.is_empty() {
        return Err(Failure::Input(format!("{}: no create bodies", args.file.display())));
    }
    let total = bodies.len() as u64;
    // On a terminal (standard error), a live bar: items sent and answered, refused, the rate.
    let bar = progress::live(json, "{bar:30} {msg} · {elapsed}");
    bar.set_length(total);
    bar.set_message(format!("sent 0/{total}"));
    let started = std::time::Instant::now();
    let report = client
        .create_many_with(&bodies, |counts| {
            let sent = counts.answered() as u64;
            bar.set_position(sent);
            let rate = sent as f64 / started.elapsed().as_secs_f64().max(0.001);
            bar.set_message(format!(
                "sent {sent}/{total} · created {} · existing {} · refused {} · {rate:.0} items/s",
                counts.created, counts.existing, counts.refused
            ));
        })
        .await;
    let report = match report {
        Ok(report) => report,
        Err(error) => {
            progress::leave(&bar);
            eprintln!(
                "{} of {total} items were answered before this failure; sending the same file again is \
                 safe (each line is idempotent on its effect key)",
                bar.position()
            );
            return Err(error.into());
        }
    };
    // The bar stays with its final figures; the summary below is the same with or without it.
    progress::leave(&bar);
    let refused: Vec<Value> = report
        .refused()
        .map(|(index, error)| json!({"line": lines[index], "status": error.status, "error": error}))
        .collect();
    let counts = report.counts;
    if json {
        output::json(&json!({
            "total": total,
            "created": counts.created,
            "existing": counts.existing,
            "refused": counts.refused,
            "refusedItems": refused,
        }));
    } else {
        println!(
            "{total} items: created {}, existing {}, refused {}",
            counts.created, counts.existing, counts.refused
        );
        for (index, error) in report.refused().take(LISTED) {
            eprintln!("line {}: {error}", lines[index]);
        }
        if counts.refused > LISTED {
            eprintln!("and {} more refused items", counts.refused - LISTED);
        }
    }
    match counts.refused {
        0 => Ok(()),
        n => Err(Failure::Refused(n)),
    }
}

/// Report the file's bad lines (nothing was sent) and fail.
fn bad_lines(file: &std::path::Path, problems: &[LineProblem], json: bool) -> Failure {
    let code =
        if problems.iter().any(|p| p.code == "INVALID_JSON") { "INVALID_JSON" } else { "INVALID_REQUEST" };
    let message = format!("{}: {} bad lines; nothing was sent", file.display(), problems.len());
    if json {
        output::json(&json!({"error": {"code": code, "message": message, "lines": problems}}));
    }
    for problem in problems.iter().take(LISTED) {
        eprintln!("{}:{}: {}: {}", file.display(), problem.line, problem.code, problem.message);
    }
    if problems.len() > LISTED {
        eprintln!("and {} more bad lines", problems.len() - LISTED);
    }
    eprintln!("error: {message}");
    Failure::Lines(message)
}
