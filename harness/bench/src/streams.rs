//! Live output (issue 50; docs/api.md, "Live output"), at real time through the dev server: the
//! stub provider streams each task's `generate_text` answer a piece every 50 ms for 10 s, each
//! piece's text the moment it was written (`Reply::Stamped`: microseconds since the Unix epoch,
//! the clock this process's readers read too), and one reader a task long-polls
//! `GET /v1/tasks/{id}/output?segment=&after=&wait=20` as a client would, from the offset of its
//! last answer. At 1 and at 100 concurrent streams, each run on a fresh stack:
//!
//! - **read**: streamed, with the writer's defaults (`AITASK_STREAM_FLUSH_MS` 200,
//!   `AITASK_STREAM_FLUSH_BYTES` 4096) and a reader a task: each piece's way from the provider
//!   to its reader (the reader's clock when the read that carried it answered, less its stamp),
//!   p50 / p95 (the goal: at most 300 ms) / max, and the time from the create to the first text
//!   read. Again with other flush intervals ([`OTHER_FLUSH_MS`]: the 250 ms the issue named, and 100 ms), to compare.
//! - **streamed** and **whole**: the same tasks with no reader, the profile streaming, and with
//!   `"stream": false` (the same answer as one body, as late: the non-streaming path): what a
//!   task cost the database (rows inserted into `task_output_chunks` and `task_streams`, the
//!   statements Postgres received by name, WAL bytes from `pg_current_wal_lsn()`) and the dev
//!   server's CPU (its threads' on-CPU time, `cpu::cpu_ms_of`), from just before the create to
//!   the last task's end. The dev server's CPU also holds the create (one batch request) and
//!   the SQS polling, the same on both sides; without readers in the process, the difference is
//!   the worker's. Its bound: streaming raises it by at most 10%. Run twice each, alternating,
//!   the figure the mean (once in a quick or smoke run).

use std::time::{Duration, Instant};

use aitasks_testkit::{epoch_micros, percentile, stamps_in, Api, Reply, Stack};
use serde_json::{json, Value};

use crate::size::Size;
use crate::{breakdown, cpu, db, row, Failure};

const TENANT: &str = "app-streams";
/// The stub's pace: a piece every 50 ms (some 90 tokens a second: a piece is 18 characters).
const EVERY: Duration = Duration::from_millis(50);
/// The flush intervals measured beside the default, for the reader's latency.
const OTHER_FLUSH_MS: [u64; 2] = [250, 100];

/// How often the run looks whether every task has ended.
const LOOK_EVERY: Duration = Duration::from_millis(50);

/// How long after the last task's end the run's CPU and WAL keep counting: the completion
/// events published just after the settlements.
const SETTLE_TAIL: Duration = Duration::from_millis(300);
/// The longest flush interval there is: a streamed call of 10 s writes twice, so its CPU is
/// nearly all the reading of the stream (its events parsed, its text told).
const SPARSE_FLUSH_MS: u64 = 5_000;
/// The goal for a piece's way from the provider to its reader, p95 (docs/api.md).
const GOAL_P95_MS: f64 = 300.0;
/// The bound on the worker's CPU a task, streaming against not (issue 50).
const CPU_BOUND: f64 = 1.10;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Streamed, a reader a task.
    Read,
    /// Streamed, no reader.
    Streamed,
    /// `"stream": false`, no reader.
    Whole,
}

/// One run's figures.
#[derive(Debug, Default)]
struct Run {
    tasks: usize,
    /// Each piece's way from the provider to its reader, ms.
    latencies: Vec<f64>,
    /// From a task's create to its reader's first text, ms.
    first_text: Vec<f64>,
    /// Reads answered, all readers.
    reads: usize,
    /// Rows in `task_output_chunks` and `task_streams` after the run (nothing is pruned
    /// before the sweeper's first sweep, after it).
    chunk_rows: i64,
    stream_rows: i64,
    /// Statements Postgres received, by name (the store's file), calls.
    statements: Vec<(String, f64)>,
    wal_bytes: f64,
    cpu_ms: f64,
    seconds: f64,
}

impl Run {
    fn per_task(&self, n: f64) -> f64 {
        n / self.tasks.max(1) as f64
    }

    fn calls(&self, name: &str) -> f64 {
        self.statements.iter().filter(|(n, _)| n == name).fold(0.0, |sum, (_, calls)| sum + calls)
    }

    fn statements_per_task(&self) -> f64 {
        self.per_task(self.statements.iter().fold(0.0, |sum, (_, calls)| sum + calls))
    }

    /// The live output's writes a task: segments opened and chunks appended.
    fn writes_per_task(&self) -> f64 {
        self.per_task(self.calls("output/open_segment") + self.calls("output/append_chunk"))
    }

    fn latency(&self) -> Value {
        let mut sorted = self.latencies.clone();
        sorted.sort_by(f64::total_cmp);
        let mut first = self.first_text.clone();
        first.sort_by(f64::total_cmp);
        json!({"pieces": sorted.len(), "p50Ms": percentile(&sorted, 0.5), "p95Ms": percentile(&sorted, 0.95),
               "maxMs": sorted.last().copied().unwrap_or(f64::NAN),
               "firstTextP50Ms": percentile(&first, 0.5), "readsPerTask": self.per_task(self.reads as f64)})
    }

    fn costs(&self) -> Value {
        json!({"tasks": self.tasks, "chunkRowsPerTask": self.per_task(self.chunk_rows as f64),
               "streamRowsPerTask": self.per_task(self.stream_rows as f64),
               "liveOutputWritesPerTask": self.writes_per_task(),
               "statementsPerTask": self.statements_per_task(),
               "walBytesPerTask": self.per_task(self.wal_bytes), "cpuMsPerTask": self.per_task(self.cpu_ms),
               "seconds": self.seconds})
    }
}

/// Runs of the same kind as one: their costs added up (a task's figures divide by all their
/// tasks), their seconds the mean.
fn mean(runs: Vec<Run>) -> Run {
    let count = runs.len().max(1) as f64;
    let mut runs = runs.into_iter();
    let Some(mut out) = runs.next() else { return Run::default() };
    for run in runs {
        out.tasks += run.tasks;
        out.chunk_rows += run.chunk_rows;
        out.stream_rows += run.stream_rows;
        out.wal_bytes += run.wal_bytes;
        out.cpu_ms += run.cpu_ms;
        out.seconds += run.seconds;
        for (name, calls) in run.statements {
            match out.statements.iter_mut().find(|(n, _)| *n == name) {
                Some((_, sum)) => *sum += calls,
                None => out.statements.push((name, calls)),
            }
        }
    }
    out.seconds /= count;
    out
}

/// One concurrency's figures.
struct Point {
    streams: usize,
    read: Run,
    /// At each of [`OTHER_FLUSH_MS`].
    read_other: Vec<(u64, Run)>,
    streamed: Run,
    /// Streamed at [`SPARSE_FLUSH_MS`].
    sparse: Option<Run>,
    whole: Run,
}

impl Point {
    fn cpu_ratio(&self) -> f64 {
        self.streamed.per_task(self.streamed.cpu_ms)
            / self.whole.per_task(self.whole.cpu_ms).max(f64::EPSILON)
    }

    fn json(&self) -> Value {
        json!({"streams": self.streams, "latency": self.read.latency(),
               "latencyAtOtherFlush": self.read_other.iter().map(|(flush_ms, run)| {
                   let mut latency = run.latency();
                   latency["flushMs"] = json!(flush_ms);
                   latency["liveOutputWritesPerTask"] = json!(run.writes_per_task());
                   latency
               }).collect::<Vec<_>>(),
               "read": self.read.costs(), "streamed": self.streamed.costs(), "whole": self.whole.costs(),
               "streamedAtSparseFlush": self.sparse.as_ref().map(Run::costs),
               "cpuRatio": self.cpu_ratio(),
               "readerCpuMsPerTask": self.read.per_task(self.read.cpu_ms) - self.streamed.per_task(self.streamed.cpu_ms)})
    }
}

pub(crate) async fn section(size: Size) -> Result<Value, Failure> {
    let pieces: usize = size.pick(200, 100, 10);
    let concurrency: Vec<usize> = size.pick(vec![1, 100], vec![1, 100], vec![1, 4]);
    let rounds = size.pick(2, 1, 1);
    println!(
        "\nstreams (live output): a generate_text answer streamed by the stub provider, {pieces} pieces one every {} ms ({:.1} s) stamped when written, at real time; a reader a task long-polls GET /v1/tasks/{{id}}/output?wait=20 through the dev server",
        EVERY.as_millis(),
        (EVERY * pieces as u32).as_secs_f64()
    );
    let mut points = Vec::new();
    for &streams in &concurrency {
        let read = run(streams, pieces, Mode::Read, None).await?;
        let mut read_other = Vec::new();
        let mut sparse = None;
        if !size.is_smoke() {
            for flush_ms in OTHER_FLUSH_MS {
                read_other.push((flush_ms, run(streams, pieces, Mode::Read, Some(flush_ms)).await?));
            }
            sparse = Some(run(streams, pieces, Mode::Streamed, Some(SPARSE_FLUSH_MS)).await?);
        }
        let (mut streamed, mut whole) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            streamed.push(run(streams, pieces, Mode::Streamed, None).await?);
            whole.push(run(streams, pieces, Mode::Whole, None).await?);
        }
        points.push(Point {
            streams,
            read,
            read_other,
            streamed: mean(streamed),
            sparse,
            whole: mean(whole),
        });
    }
    print(&points);
    Ok(json!({"pieces": pieces, "everyMs": EVERY.as_millis() as u64, "sparseFlushMs": SPARSE_FLUSH_MS,
              "rounds": rounds, "points": points.iter().map(Point::json).collect::<Vec<_>>()}))
}

fn print(points: &[Point]) {
    let streams = |n: usize| if n == 1 { "1 stream".to_owned() } else { format!("{n} streams") };
    println!("provider chunk to reader, flush every 200 ms or 4096 bytes (the defaults):");
    row("", &points.iter().map(|p| streams(p.streams)).collect::<Vec<_>>());
    let each = |f: &dyn Fn(&Point) -> String| points.iter().map(f).collect::<Vec<_>>();
    let ms = |run: &Run, key: &str| run.latency()[key].as_f64().unwrap_or(f64::NAN);
    row("  p50 ms", &each(&|p| format!("{:.0}", ms(&p.read, "p50Ms"))));
    row(&format!("  p95 ms (goal <= {GOAL_P95_MS:.0})"), &each(&|p| format!("{:.0}", ms(&p.read, "p95Ms"))));
    row("  max ms", &each(&|p| format!("{:.0}", ms(&p.read, "maxMs"))));
    row("  pieces read", &each(&|p| p.read.latencies.len().to_string()));
    row("  create to first text read, p50 ms", &each(&|p| format!("{:.0}", ms(&p.read, "firstTextP50Ms"))));
    row("  reads a task", &each(&|p| format!("{:.1}", p.read.per_task(p.read.reads as f64))));
    for (i, flush_ms) in OTHER_FLUSH_MS.iter().enumerate() {
        fn other(p: &Point, i: usize) -> Option<&Run> {
            p.read_other.get(i).map(|(_, run)| run)
        }
        if points.iter().any(|p| other(p, i).is_none()) {
            continue;
        }
        let at = |p: &Point, key: &str| other(p, i).map_or(f64::NAN, |r| ms(r, key));
        row(
            &format!("  at AITASK_STREAM_FLUSH_MS={flush_ms}: p50/p95/max ms"),
            &each(&|p| format!("{:.0}/{:.0}/{:.0}", at(p, "p50Ms"), at(p, "p95Ms"), at(p, "maxMs"))),
        );
        row(
            &format!("  at AITASK_STREAM_FLUSH_MS={flush_ms}: writes a task"),
            &each(&|p| format!("{:.1}", other(p, i).map_or(f64::NAN, Run::writes_per_task))),
        );
    }
    println!("a task's cost, streamed beside not streamed (\"stream\": false), no reader:");
    let mut heads = Vec::new();
    for p in points {
        heads.push(format!("{} stream", p.streams));
        heads.push(format!("{} whole", p.streams));
    }
    row("", &heads);
    let both = |f: &dyn Fn(&Run) -> String| {
        points.iter().flat_map(|p| [f(&p.streamed), f(&p.whole)]).collect::<Vec<_>>()
    };
    row("  rows into task_output_chunks", &both(&|r| format!("{:.1}", r.per_task(r.chunk_rows as f64))));
    row("  rows into task_streams", &both(&|r| format!("{:.1}", r.per_task(r.stream_rows as f64))));
    row("  live output writes (statements)", &both(&|r| format!("{:.1}", r.writes_per_task())));
    row("  statements, all", &both(&|r| format!("{:.1}", r.statements_per_task())));
    row("  WAL bytes", &both(&|r| format!("{:.0}", r.per_task(r.wal_bytes))));
    row("  dev server CPU ms (worker, create)", &both(&|r| format!("{:.2}", r.per_task(r.cpu_ms))));
    if points.iter().all(|p| p.sparse.is_some()) {
        row(
            &format!("  CPU ms at AITASK_STREAM_FLUSH_MS={SPARSE_FLUSH_MS} (writes a task)"),
            &points
                .iter()
                .flat_map(|p| {
                    let sparse = p
                        .sparse
                        .as_ref()
                        .map_or((f64::NAN, f64::NAN), |r| (r.per_task(r.cpu_ms), r.writes_per_task()));
                    [format!("{:.2}", sparse.0), format!("({:.1})", sparse.1)]
                })
                .collect::<Vec<_>>(),
        );
    }
    row(
        &format!("CPU streamed / whole (bound <= {CPU_BOUND:.2})"),
        &points.iter().flat_map(|p| [format!("{:.3}", p.cpu_ratio()), String::new()]).collect::<Vec<_>>(),
    );
    row(
        "readers: dev server CPU ms a task, reads a task",
        &points
            .iter()
            .flat_map(|p| {
                let readers = p.read.per_task(p.read.cpu_ms) - p.streamed.per_task(p.streamed.cpu_ms);
                [format!("{readers:.2}"), format!("{:.1}", p.read.per_task(p.read.reads as f64))]
            })
            .collect::<Vec<_>>(),
    );
    row(
        "readers: output/read_output statements a task",
        &points
            .iter()
            .flat_map(|p| {
                [format!("{:.1}", p.read.per_task(p.read.calls("output/read_output"))), String::new()]
            })
            .collect::<Vec<_>>(),
    );
}

/// The profile of every run: the stub's model, streaming or not.
fn models(stream: bool) -> String {
    json!({"default": {"provider": "openai", "model": "stub-model", "stream": stream}}).to_string()
}

/// One run of `streams` tasks at once on a fresh stack.
async fn run(streams: usize, pieces: usize, mode: Mode, flush_ms: Option<u64>) -> Result<Run, Failure> {
    // Each poller takes up to 10 messages, worked side by side: every task starts at once.
    let pollers = (streams / 5).max(2).to_string();
    let flush = flush_ms.map(|ms| ms.to_string());
    let models = models(mode != Mode::Whole);
    let mut env: Vec<(&str, &str)> = vec![
        ("RUST_LOG", "warn"),
        ("AITASK_METRICS", "off"),
        ("AITASK_MODELS", &models),
        ("AITASK_LOCAL_POLLERS", &pollers),
        ("AITASK_LOCAL_POLL_WAIT_S", "10"),
        ("AITASK_DB_POOL_SIZE", "32"),
        // The deployed defaults, not the test stack's faster ones: what a running task costs.
        ("AITASK_CANCEL_POLL_MS", "500"),
        ("AITASK_HEARTBEAT_MS", "10000"),
        ("AITASK_STALE_RUNNING_MS", "30000"),
        ("AITASK_SWEEP_INTERVAL_MS", "60000"),
    ];
    if let Some(flush) = &flush {
        env.push(("AITASK_STREAM_FLUSH_MS", flush));
    }
    let stack = Stack::start_with(&env).await;
    stack.stub.set_default(Reply::Stamped { pieces, every: EVERY });
    let api = stack.api(TENANT);
    let pid = stack.server.pid().ok_or("the dev server has no pid")?;
    // A checkpoint first: every page a run touches first then costs the WAL a full-page image
    // (where the cluster writes them), on both sides alike, rather than when a timed
    // checkpoint happens to fall in a run.
    db::connect(&stack.db.url).await?.batch_execute("CHECKPOINT").await?;
    db::reset_statements(&stack.db.url, &stack.db.name).await?;
    let client = stack.db.client().await;
    let wal_at = "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::float8";
    let wal_before: f64 = client.query_one(wal_at, &[]).await?.get(0);
    let cpu_before = cpu::cpu_ms_of(pid);
    let begun = Instant::now();

    let items: Vec<Value> = (0..streams)
        .map(|n| {
            json!({"owner": {"scopeId": "streams"}, "stepKey": "write", "effectKey": format!("stream-{n}"),
                   "modelId": "default",
                   "request": {"kind": "generate_text", "prompt": "Write.", "maxOutputChars": 8000}})
        })
        .collect();
    let (status, answer) = api.post("/v1/tasks/batch", &json!({"tasks": items})).await;
    if status != 200 {
        return Err(format!("the batch answered {status}: {answer}").into());
    }
    let created = Instant::now();
    let mut ids = Vec::with_capacity(streams);
    for result in answer["results"].as_array().ok_or("no results")? {
        ids.push(
            result["task"]["id"].as_str().ok_or_else(|| format!("an item was refused: {result}"))?.to_owned(),
        );
    }
    let readers: Vec<_> = match mode {
        Mode::Read => ids.iter().map(|id| tokio::spawn(follow(api.clone(), id.clone(), created))).collect(),
        _ => Vec::new(),
    };

    let ended = "SELECT count(*) FROM tasks WHERE status IN ('succeeded', 'failed', 'canceled')";
    let patience = EVERY * pieces as u32 + Duration::from_secs(120);
    let mut look = tokio::time::interval(LOOK_EVERY);
    while stack.db.count(ended).await < streams as i64 {
        if begun.elapsed() > patience {
            return Err(format!("the tasks did not end in {patience:?}").into());
        }
        look.tick().await;
    }
    let seconds = begun.elapsed().as_secs_f64();
    let mut figures = Run { tasks: streams, seconds, ..Run::default() };
    for reader in readers {
        let (latencies, first_text, reads) = reader.await??;
        if latencies.len() != pieces {
            return Err(format!("a reader read {} of the {pieces} pieces", latencies.len()).into());
        }
        figures.latencies.extend(latencies);
        figures.first_text.extend(first_text);
        figures.reads += reads;
    }
    // The last settlements' events are published just after them: their CPU counts too.
    tokio::time::sleep(SETTLE_TAIL).await;
    figures.cpu_ms = cpu::cpu_ms_of(pid) - cpu_before;
    let wal_after: f64 = client.query_one(wal_at, &[]).await?.get(0);
    figures.wal_bytes = wal_after - wal_before;
    let succeeded = stack
        .db
        .count(&format!("SELECT count(*) FROM tasks WHERE app_id = '{TENANT}' AND status = 'succeeded'"))
        .await;
    if succeeded != streams as i64 {
        let failed: Vec<String> = client
            .query("SELECT coalesce(error::text, status) FROM tasks WHERE status <> 'succeeded' LIMIT 3", &[])
            .await?
            .iter()
            .map(|row| row.get(0))
            .collect();
        return Err(format!("{succeeded} of {streams} tasks succeeded: {failed:?}").into());
    }
    figures.chunk_rows = stack.db.count("SELECT count(*) FROM task_output_chunks").await;
    figures.stream_rows = stack.db.count("SELECT count(*) FROM task_streams").await;
    figures.statements = breakdown::statements(&stack.db.url, &stack.db.name)
        .await?
        .into_iter()
        .map(|seen| (seen.name, seen.calls))
        .collect();
    Ok(figures)
}

/// A reader of one task's live output, as a client reads it: from the offset of its last answer,
/// starting over on a new segment, until the task ended and its text was read to the end. Each
/// piece's way from the provider to here (ms), the time from the create to the first text (ms,
/// none if the reader saw none before the end), and the reads it made.
async fn follow(api: Api, id: String, created: Instant) -> Result<(Vec<f64>, Vec<f64>, usize), Failure> {
    let (mut segment, mut after): (Option<i64>, i64) = (None, 0);
    let (mut text, mut counted) = (String::new(), 0);
    let (mut latencies, mut first_text, mut reads) = (Vec::new(), Vec::new(), 0);
    let until = Instant::now() + Duration::from_secs(600);
    while Instant::now() < until {
        let mut path = format!("/v1/tasks/{id}/output?after={after}&wait=20");
        if let Some(segment) = segment {
            path.push_str(&format!("&segment={segment}"));
        }
        let (status, read) = api.get(&path).await;
        let now = epoch_micros();
        reads += 1;
        if status != 200 {
            return Err(format!("the output read answered {status}: {read}").into());
        }
        if read["segment"].as_i64() != segment {
            segment = read["segment"].as_i64();
            text.clear();
            counted = 0;
        }
        let piece = read["text"].as_str().unwrap_or_default();
        if !piece.is_empty() && first_text.is_empty() {
            first_text.push(created.elapsed().as_secs_f64() * 1000.0);
        }
        text.push_str(piece);
        after = read["next"].as_i64().ok_or("no next")?;
        let stamps = stamps_in(&text);
        latencies.extend(stamps[counted..].iter().map(|stamp| now.saturating_sub(*stamp) as f64 / 1000.0));
        counted = stamps.len();
        if read["ended"] == true && (piece.is_empty() || read["final"] == true) {
            return Ok((latencies, first_text, reads));
        }
    }
    Err(format!("the reader of {id} did not see its end").into())
}
