//! An adapter's processes (the method's protocol, see `mod.rs`): workers started and read line
//! by line on a thread of their own (one JSON record per job run, `{"ready":true}` once
//! working), a producer run to its end (`{"produced":n}`), and SIGKILL for the chaos cell.
//! Their stderr goes to the section's log file.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

/// How often a process's end is looked for.
const POLL: Duration = Duration::from_millis(100);

use serde_json::Value;

use crate::Failure;

/// One job run as a worker reported it: its sequence number, the epoch milliseconds of its
/// insert, of its worker's start, and of its completion. This system's worker also reports when
/// the queue took its message (SQS's `SentTimestamp`) and when its receive returned, so that
/// its pickup can be split into its parts ([`super::parts`]); a peer's records have neither.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Record {
    pub(crate) id: i64,
    pub(crate) at: i64,
    pub(crate) start: i64,
    pub(crate) done: i64,
    pub(crate) sent: Option<i64>,
    pub(crate) received: Option<i64>,
    /// How many times the queue had delivered the message (SQS's `ApproximateReceiveCount`):
    /// more than one when an earlier delivery never became a run.
    pub(crate) receives: Option<i64>,
}

/// Every record every worker process of one system printed.
pub(crate) type Records = Arc<Mutex<Vec<Record>>>;

fn parse(line: &str) -> Option<Record> {
    let value: Value = serde_json::from_str(line).ok()?;
    Some(Record {
        id: value["id"].as_i64()?,
        at: value["at"].as_i64()?,
        start: value["start"].as_i64()?,
        done: value["done"].as_i64()?,
        sent: value["sent"].as_i64(),
        received: value["received"].as_i64(),
        receives: value["receives"].as_i64(),
    })
}

fn logged(command: &mut Command, log: &std::path::Path) -> Result<(), Failure> {
    let file = std::fs::OpenOptions::new().create(true).append(true).open(log)?;
    command.stderr(file).stdin(Stdio::null()).stdout(Stdio::piped());
    Ok(())
}

/// A running worker process.
pub(crate) struct Workers {
    child: Child,
    /// Ended (stopped or killed): nothing left for `Drop` to do.
    ended: bool,
}

/// A phase that fails midway (a `?`) drops its workers: they are killed, never left running.
impl Drop for Workers {
    fn drop(&mut self) {
        if !self.ended {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

impl Workers {
    /// Start `command`, collect its records into `records`, and wait (up to a minute) until it
    /// says it is working.
    pub(crate) fn start(
        mut command: Command,
        log: &std::path::Path,
        records: Records,
    ) -> Result<Workers, Failure> {
        logged(&mut command, log)?;
        let mut child = command.spawn()?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let (ready_tx, ready_rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(record) = parse(&line) {
                    records.lock().unwrap().push(record);
                } else if line.contains("\"ready\"") {
                    let _ = ready_tx.send(());
                }
            }
        });
        match ready_rx.recv_timeout(Duration::from_secs(60)) {
            Ok(()) => Ok(Workers { child, ended: false }),
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                Err(format!("workers not ready within a minute (log: {})", log.display()).into())
            }
        }
    }

    /// Whether it ended on its own (a crash: workers run until stopped).
    pub(crate) fn exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// SIGKILL, as the method's kill-worker phase.
    pub(crate) fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.ended = true;
    }

    /// SIGTERM, then SIGKILL if still there after two seconds: the end of a phase.
    pub(crate) fn stop(mut self) {
        if self.exited() {
            self.ended = true;
            return;
        }
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        for _ in 0..20 {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                self.ended = true;
                return;
            }
            std::thread::sleep(POLL);
        }
        self.kill();
    }
}

/// Run a producer to its end, killed past `limit` (a producer that cannot insert must not hang
/// the run); how many jobs it inserted.
pub(crate) async fn produce(
    mut command: Command,
    log: &std::path::Path,
    limit: Duration,
) -> Result<u64, Failure> {
    logged(&mut command, log)?;
    let mut child = command.spawn()?;
    let deadline = std::time::Instant::now() + limit;
    let output = tokio::task::spawn_blocking(move || {
        while matches!(child.try_wait(), Ok(None)) && std::time::Instant::now() < deadline {
            std::thread::sleep(POLL);
        }
        let _ = child.kill();
        child.wait_with_output()
    })
    .await??;
    let stdout = String::from_utf8_lossy(&output.stdout);
    stdout
        .lines()
        .rev()
        .find_map(|line| serde_json::from_str::<Value>(line).ok().and_then(|v| v["produced"].as_u64()))
        .ok_or_else(|| format!("the producer printed no count (log: {})", log.display()).into())
}
