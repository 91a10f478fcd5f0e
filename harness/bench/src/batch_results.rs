//! A provider batch whose result file is over 100 MiB, settled by the sweeper function (issue 36,
//! `BENCH_ONLY=batch_results`): 2,000 deferred `generate_text` tasks in one OpenAI batch (the
//! stub of the Files and Batches API, `aitasks_testkit::StubBatches`), each answered with a long
//! text of quotes and newlines, which an OpenAI line escapes twice (the answer is a JSON string
//! inside the line's JSON). The release `sweeper` binary runs against a local Lambda Runtime API
//! (as in the footprint section) and is invoked until the batch has ended; its peak RSS (VmHWM)
//! is read after the sweep that formed and submitted the batch and after the one that settled it.

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use aitasks_testkit::runtime_api::{Answer, RuntimeApi};
use aitasks_testkit::{app_owner, hash_of, new_task, StubBatches, TestQueues, BATCH_STUB_KEY};
use serde_json::{json, Value};

use crate::footprint::peak_rss_kib;
use crate::size::Size;
use crate::{db, row, Failure};

/// Tasks in the batch: the most `batch.maxRecords` allows (a smoke run: 20).
const TASKS: usize = 2_000;
/// Each answer's characters: with the escaping, about 53 kB a line, over 100 MiB in all (a
/// smoke run: 200).
const ANSWER_CHARS: usize = 42_000;

/// The answers' text: prose with quotes and newlines, as a long model answer has.
fn answer_text(chars: usize) -> String {
    "The model wrote \"yes\" twice.\n".chars().cycle().take(chars).collect()
}

async fn create_tasks(
    url: &str,
    profile_hash: &str,
    tasks: usize,
    answer_chars: usize,
) -> Result<(), Failure> {
    let pool = aitasks_store::connect(&aitasks_store::PoolSettings::new(url))?;
    let client = pool.get().await?;
    let request = json!({"kind": "generate_text", "prompt": "Write it out.", "maxOutputChars": answer_chars});
    let page_size = tasks.min(500);
    for page in 0..tasks / page_size {
        let tasks: Vec<_> = (0..page_size)
            .map(|i| {
                let mut task = new_task("bench-batch", app_owner("nightly"), &format!("big-{page}-{i}"));
                task.kind = "generate_text".to_owned();
                task.request = request.clone();
                task.input_hash = hash_of(&request);
                task.model_id = "batchable".to_owned();
                task.model_config_hash = Some(profile_hash.to_owned());
                task.deferred_window_ms = Some(86_400_000);
                task.awaiting_batch = true;
                task
            })
            .collect();
        for created in aitasks_store::create_tasks(&client, "bench-batch", &tasks).await? {
            created?;
        }
    }
    Ok(())
}

async fn count(url: &str, query: &str) -> Result<i64, Failure> {
    let pool = aitasks_store::connect(&aitasks_store::PoolSettings::new(url))?;
    Ok(pool.get().await?.query_one(query, &[]).await?.get(0))
}

pub(crate) async fn section(base: &str, bin_dir: &Path, size: Size) -> Result<Value, Failure> {
    let tasks = size.pick(TASKS, TASKS, 20);
    let answer_chars = size.pick(ANSWER_CHARS, ANSWER_CHARS, 200);
    let url = db::fresh_database(base, "aitasks_bench_batch_results").await?;
    let queues = TestQueues::create(3, 30).await;
    let batches = StubBatches::start().await;
    batches.answer_with_text(answer_text(answer_chars));
    let models = json!({
        "batchable": {"provider": "openai", "model": "stub-batch-model", "baseUrl": batches.base_url,
                      "apiKeyEnv": "BATCH_KEY",
                      "prices": {"inputPerMillion": 0.2, "outputPerMillion": 0.8},
                      "batch": {"maxRecords": tasks, "maxWaitSeconds": 3600,
                                "prices": {"inputPerMillion": 0.1, "outputPerMillion": 0.4}}}
    })
    .to_string();
    let lookup = |name: &str| match name {
        "AITASK_MODELS" => Some(models.clone()),
        "BATCH_KEY" => Some(BATCH_STUB_KEY.to_owned()),
        _ => None,
    };
    let profiles = aitasks_providers::ModelProfiles::from_lookup(lookup)?;
    let profile_hash = profiles.resolve("batchable").map_err(|e| format!("{e:?}"))?.config_hash();
    create_tasks(&url, &profile_hash, tasks, answer_chars).await?;

    let runtime = RuntimeApi::start("arn:aws:lambda:us-east-1:123456789012:function:sweeper").await?;
    let env: HashMap<&str, String> = HashMap::from([
        ("AWS_LAMBDA_RUNTIME_API", runtime.address.clone()),
        ("AWS_LAMBDA_FUNCTION_NAME", "sweeper".to_owned()),
        ("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "512".to_owned()),
        ("AWS_LAMBDA_FUNCTION_VERSION", "1".to_owned()),
        ("AWS_LAMBDA_LOG_STREAM_NAME", "bench".to_owned()),
        ("AWS_LAMBDA_LOG_GROUP_NAME", "bench".to_owned()),
        ("DATABASE_URL", url.clone()),
        ("AITASK_TASK_QUEUE_URL", queues.tasks.clone()),
        ("AITASK_EVENTS_QUEUE_URL", queues.events.clone()),
        ("AWS_ENDPOINT_URL_SQS", queues.endpoint.clone()),
        ("AWS_REGION", "us-east-1".to_owned()),
        ("AWS_ACCESS_KEY_ID", "bench".to_owned()),
        ("AWS_SECRET_ACCESS_KEY", "bench".to_owned()),
        ("AITASK_MODELS", models.clone()),
        ("BATCH_KEY", BATCH_STUB_KEY.to_owned()),
        ("AITASK_BATCH_POLL_MS", "100".to_owned()),
        ("RUST_LOG", "warn".to_owned()),
    ]);
    let mut env = env;
    // A cluster that serves TLS only (the dev stack's): its CA, as the tests have it.
    let ca_file = std::env::var("AITASK_DB_CA_FILE").unwrap_or_default();
    if !ca_file.is_empty() {
        env.insert("AITASK_DB_CA_FILE", ca_file);
    }
    let mut child = tokio::process::Command::new(bin_dir.join("sweeper"))
        .env_clear()
        .envs(env)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    let pid = child.id().ok_or("the sweeper exited at once")?;
    let schedule: Value = serde_json::from_str(&std::fs::read_to_string(
        aitasks_testkit::workspace_root().join("tests/fixtures/eventbridge-schedule.json"),
    )?)?;

    let mut submitted_peak = None;
    let mut settle = None;
    for _ in 0..10 {
        let started = Instant::now();
        let answer = runtime.invoke(schedule.clone(), Duration::from_secs(300)).await;
        let took = started.elapsed();
        if !matches!(answer, Ok(Answer::Response(_))) {
            return Err(format!("a sweep failed: {answer:?}").into());
        }
        if submitted_peak.is_none() && batches.creates() == 1 {
            submitted_peak = peak_rss_kib(pid);
        }
        if count(&url, "SELECT count(*) FROM task_batches WHERE outcome IS NOT NULL").await? == 1 {
            settle = Some(took);
            break;
        }
        let pool = aitasks_store::connect(&aitasks_store::PoolSettings::new(&url))?;
        pool.get().await?.batch_execute("UPDATE task_batches SET due_at = now()").await?;
    }
    let settled_peak = peak_rss_kib(pid).unwrap_or(0);
    let _ = child.kill().await;
    let settle = settle.ok_or("the batch never ended")?;
    let succeeded =
        count(&url, "SELECT count(*) FROM tasks WHERE status = 'succeeded' AND attempts = 1").await?;
    let bytes = batches.result_bytes();
    let mib = |kib: u64| kib as f64 / 1024.0;

    println!("\nbatch results: one OpenAI batch of {tasks} long answers settled by the sweeper function");
    row("", &["figure".into()]);
    row("result file (MiB)", &[format!("{:.1}", bytes as f64 / 1_048_576.0)]);
    row("tasks settled (succeeded, first attempt)", &[format!("{succeeded}")]);
    row("result file reads", &[format!("{}", batches.file_reads())]);
    row("on-demand calls (paid twice)", &[format!("{}", batches.on_demand_calls())]);
    row("the settling sweep (s)", &[format!("{:.1}", settle.as_secs_f64())]);
    row("sweeper peak RSS after the submit (MiB)", &[format!("{:.1}", mib(submitted_peak.unwrap_or(0)))]);
    row("sweeper peak RSS after the settle (MiB)", &[format!("{:.1}", mib(settled_peak))]);
    if succeeded != tasks as i64 {
        return Err(format!("{succeeded} of {tasks} tasks settled").into());
    }
    Ok(json!({
        "tasks": tasks, "resultFileBytes": bytes, "succeeded": succeeded,
        "fileReads": batches.file_reads(), "onDemandCalls": batches.on_demand_calls(),
        "settleSeconds": settle.as_secs_f64(),
        "peakRssKiBAfterSubmit": submitted_peak, "peakRssKiBAfterSettle": settled_peak,
    }))
}
