//! One phase of the method for one system: its workers started (and, for this system, its
//! sweeper, on a queue of its own), a producer at a fixed rate for a fixed time, at most one
//! fault a third of the way in, then a drain until every produced job completed or the drain
//! time passed: the phase is measured up to there. Then, unmeasured, the workers work off what
//! the drain left (a catch-up, so the next phase does not start behind) and stop.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::measure::{self, Pickup, Tally};
use super::pace::epoch_ms;
use super::parts::{self, Parts};
use super::process::{self, Records, Workers};
use super::systems::{Launch, System};
use crate::{db, Failure};

/// A producer's time past its phase before it is killed.
const PRODUCER_SLACK: Duration = Duration::from_secs(60);
/// How often the drain looks whether every job completed.
const DRAIN_POLL: Duration = Duration::from_millis(200);
/// The longest the workers are given, after a phase, to work off what its drain left; and how
/// long without a completion ends that early.
const CATCH_UP: Duration = Duration::from_secs(90);
/// Longer than any lease a job waits out before it runs again: the queue's visibility (5 s) with
/// this system's expiry (5 s and a sweep a second), absurd's claim timeout (10 s).
const CATCH_UP_IDLE: Duration = Duration::from_secs(15);

/// The method's chaos cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fault {
    /// Every worker process SIGKILLed, new ones started at once.
    KillWorkers,
    /// The Postgres server restarted (`scripts/postgres.sh restart`, a fast shutdown).
    RestartPostgres,
    /// `BEGIN; SELECT txid_current();` held open from the fault to the producer's end.
    LongTransaction,
}

impl Fault {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Fault::KillWorkers => "workers killed",
            Fault::RestartPostgres => "Postgres restarted",
            Fault::LongTransaction => "long transaction",
        }
    }
}

/// What one phase measured.
#[derive(Debug, Clone)]
pub(crate) struct Phase {
    pub(crate) workers: usize,
    pub(crate) rate: f64,
    pub(crate) seconds: f64,
    pub(crate) tally: Tally,
    pub(crate) windows: Vec<Pickup>,
    pub(crate) sustained: bool,
    /// Completions a second from the first insert to the last completion.
    pub(crate) throughput: f64,
    pub(crate) recovery: Option<f64>,
    /// The worker process ended on its own during the phase (the public method fails the run
    /// there: nothing restarts it).
    pub(crate) crashed: bool,
    pub(crate) from_ms: i64,
    pub(crate) to_ms: i64,
    /// This system's pickup in its parts; `None` for a peer.
    pub(crate) parts: Option<Parts>,
    /// Jobs not completed by the drain's end that completed during the catch-up after it.
    pub(crate) late: u64,
}

impl Phase {
    pub(crate) fn worst(&self) -> Pickup {
        measure::worst(&self.windows)
    }

    pub(crate) fn json(&self) -> Value {
        let w = self.worst();
        json!({"workers": self.workers, "rate": self.rate, "seconds": self.seconds,
               "produced": self.tally.produced, "completed": self.tally.completed,
               "lost": self.tally.lost, "twice": self.tally.twice, "sustained": self.sustained,
               "throughput": self.throughput, "recoverySeconds": self.recovery, "crashed": self.crashed,
               "lateCompleted": self.late,
               // No job completed: no pickup to compare (a 0 would look fastest).
               "pickupMs": (w.jobs > 0).then(|| json!({"p50": w.p50, "p95": w.p95, "p99": w.p99})),
               "pickupPartsMs": self.parts.as_ref().map(Parts::json),
               "windows": self.windows.iter().map(|p| json!({"p50": p.p50, "p95": p.p95, "p99": p.p99, "jobs": p.jobs})).collect::<Vec<_>>()})
    }
}

/// One system's database, log and records, across its phases.
pub(crate) struct Runner {
    pub(crate) system: System,
    pub(crate) url: String,
    pub(crate) log: PathBuf,
    pub(crate) records: Records,
    pub(crate) window: Duration,
    pub(crate) drain: Duration,
    next_base: i64,
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T, Failure> {
    Ok(tokio::task::spawn_blocking(f).await?)
}

fn restart_postgres() -> Result<(), Failure> {
    let script = aitasks_testkit::workspace_root().join("scripts/postgres.sh");
    let status =
        std::process::Command::new(script).arg("restart").env("AITASK_PG_STATE", "bench").status()?;
    if status.success() {
        Ok(())
    } else {
        Err("scripts/postgres.sh restart failed".into())
    }
}

impl Runner {
    /// A queue of its own for each phase of this system and of the SQS hop: a worker stopped at
    /// the end of the last phase may leave its long poll waiting on the server, which would take
    /// the new phase's first messages and hold them for the visibility timeout (measured: one
    /// receive's worth at each phase's start, on the SQS hop alone too).
    async fn fresh_queue(&mut self) {
        let endpoint = self.system.env.iter().find(|(k, _)| k == "SQS_ENDPOINT").map(|(_, v)| v.clone());
        let Some(endpoint) = endpoint else { return };
        let queues = aitasks_testkit::TestQueues::create_at(&endpoint, 10, 5).await;
        for (key, value) in &mut self.system.env {
            if key == "QUEUE_URL" {
                value.clone_from(&queues.tasks);
            }
        }
    }

    fn all_completed(&self, base: i64, produced: u64) -> bool {
        let phase = measure::of_phase(&self.records.lock().unwrap(), base, produced);
        Tally::of(&phase, produced).completed >= produced
    }

    pub(crate) fn new(
        system: System,
        url: String,
        log: PathBuf,
        window: Duration,
        drain: Duration,
    ) -> Runner {
        Runner { system, url, log, records: Records::default(), window, drain, next_base: 0 }
    }

    async fn start_workers(&self, workers: usize, rate: f64) -> Result<Workers, Failure> {
        let mut command = self.system.command("work", &self.url);
        command.env("WORKERS", workers.to_string()).env("RATE", rate.to_string());
        let (log, records) = (self.log.clone(), self.records.clone());
        blocking(move || Workers::start(command, &log, records)).await?
    }

    pub(crate) async fn run(
        &mut self,
        workers: usize,
        rate: f64,
        seconds: f64,
        fault: Option<Fault>,
    ) -> Result<Phase, Failure> {
        let base = self.next_base;
        self.next_base += 100_000_000;
        self.fresh_queue().await;
        let sweeper = match self.system.launch {
            Launch::OwnBinary("aitasks") => {
                let command = self.system.command("sweep", &self.url);
                let (log, records) = (self.log.clone(), self.records.clone());
                Some(blocking(move || Workers::start(command, &log, records)).await??)
            }
            _ => None,
        };
        let mut running = self.start_workers(workers, rate).await?;
        let mut producer = self.system.command("produce", &self.url);
        producer
            .env("RATE", rate.to_string())
            .env("SECONDS", seconds.to_string())
            .env("SEQ_BASE", base.to_string());
        let log = self.log.clone();
        let from_ms = epoch_ms();
        let limit = Duration::from_secs_f64(seconds) + PRODUCER_SLACK;
        let produced = tokio::spawn(async move { process::produce(producer, &log, limit).await });
        let mut fault_ms = None;
        let mut held = None;
        if let Some(fault) = fault {
            tokio::time::sleep(Duration::from_secs_f64(seconds / 3.0)).await;
            fault_ms = Some(epoch_ms());
            match fault {
                Fault::KillWorkers => {
                    blocking(move || running.kill()).await?;
                    running = self.start_workers(workers, rate).await?;
                }
                Fault::RestartPostgres => blocking(restart_postgres).await??,
                Fault::LongTransaction => {
                    let client = db::connect(&self.url).await?;
                    client.batch_execute("BEGIN; SELECT txid_current();").await?;
                    held = Some(client);
                }
            }
        }
        let produced = produced.await??;
        let end_ms = epoch_ms();
        drop(held);
        let until = Instant::now() + self.drain;
        while Instant::now() < until && !self.all_completed(base, produced) {
            tokio::time::sleep(DRAIN_POLL).await;
        }
        // What completed after this is not the phase's: it is measured up to here.
        let drained_ms = epoch_ms();
        let crashed = running.exited();
        // The backlog the drain left is worked off before the next phase, unmeasured, so that no
        // phase starts behind on the one before it (by fresh workers when these crashed).
        if !self.all_completed(base, produced) {
            if crashed {
                // Workers that cannot start again leave the backlog to the next phase: said, not fatal.
                match self.start_workers(workers, rate).await {
                    Ok(again) => {
                        let gone = std::mem::replace(&mut running, again);
                        blocking(move || gone.stop()).await?;
                    }
                    Err(e) => println!("    (the catch-up's workers did not start: {e})"),
                }
            }
            // Until every job completed, or none did for a while (a job a killed worker settled
            // without printing it never will be printed), at most CATCH_UP.
            let started = Instant::now();
            let (mut seen, mut progress) = (self.records.lock().unwrap().len(), Instant::now());
            while started.elapsed() < CATCH_UP
                && progress.elapsed() < CATCH_UP_IDLE
                && !self.all_completed(base, produced)
            {
                tokio::time::sleep(DRAIN_POLL).await;
                let now = self.records.lock().unwrap().len();
                if now > seen {
                    (seen, progress) = (now, Instant::now());
                }
            }
            println!(
                "    ({} jobs/s, {workers} workers: the drain's backlog worked off in {:.0} s{})",
                rate,
                started.elapsed().as_secs_f64(),
                if self.all_completed(base, produced) { "" } else { ", not all of it" }
            );
        }
        blocking(move || running.stop()).await?;
        if let Some(sweeper) = sweeper {
            blocking(move || sweeper.stop()).await?;
        }
        if let Launch::OwnBinary("aitasks") = self.system.launch {
            // The store is the truth of what completed: a job whose worker was killed between its
            // commit and its printed record is completed, once.
            let settled = super::aitasks::settled_records(&self.url, base, produced).await?;
            let mut records = self.records.lock().unwrap();
            let printed: std::collections::HashSet<i64> =
                measure::of_phase(&records, base, produced).iter().map(|r| r.id).collect();
            records.extend(settled.into_iter().filter(|r| !printed.contains(&r.id)));
        }
        let every_run = measure::of_phase(&self.records.lock().unwrap(), base, produced);
        // A job run twice is counted when its second run came by the catch-up's end; a job the
        // drain missed but the catch-up saw complete is late, not lost for good.
        let all = Tally::of(&every_run, produced);
        let twice = all.twice;
        let phase: Vec<_> = every_run.into_iter().filter(|r| r.done <= drained_ms).collect();
        // From the first insert (a producer's start-up is not the system's), and the recovery
        // looked at until the last insert (not the producer's teardown).
        let from_ms = phase.iter().map(|r| r.at).min().unwrap_or(from_ms);
        let last_insert = phase.iter().map(|r| r.at).max().unwrap_or(end_ms);
        let tally = Tally { twice, ..Tally::of(&phase, produced) };
        let late = all.completed.saturating_sub(tally.completed);
        let last_done = phase.iter().map(|r| r.done).max().unwrap_or(end_ms);
        let throughput = tally.completed as f64 / ((last_done - from_ms).max(1) as f64 / 1000.0);
        Ok(Phase {
            workers,
            rate,
            seconds,
            tally,
            windows: measure::windows(&phase, self.window.as_millis() as i64),
            sustained: measure::sustained(&phase, &tally, rate, throughput),
            throughput,
            crashed,
            recovery: fault_ms.and_then(|at| measure::recovery(&phase, at, last_insert, rate)),
            from_ms,
            to_ms: drained_ms,
            parts: parts::of(&phase),
            late,
        })
    }
}
