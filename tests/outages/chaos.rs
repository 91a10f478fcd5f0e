//! The chaos run: many tasks of every kind through the dev server, the SQS-compatible server and
//! Postgres while everything that can fail does. The provider answers at random with 500s,
//! 429s with Retry-After, answers slower than the call's timeout, slow answers, non-JSON bodies,
//! non-JSON content and schema-breaking answers; the dev server (the worker) is killed with
//! SIGKILL at random moments and restarted; Postgres is restarted once; duplicate SQS messages
//! are injected; some tasks are canceled. Then, with the sweeper run to quiescence, it checks
//! and prints what must hold: nothing lost, one terminal state each, budgets kept, outputs
//! valid, one completion event each, provider calls bounded, and no secret in any log line.
//! One task in five carries a Lambda durable callback, answered on a stub of Lambda's API that
//! throttles and fails some calls: each gets exactly one success or failure accepted, the one
//! its task's end calls for, whatever was killed.
//!
//! One task in six is deferred to a provider batch (a stub of OpenAI's Files and Batches API):
//! batches complete, fail and expire at random, and what they do not answer runs on-demand.
//!
//! Half the creates come in batches (`POST /v1/tasks/batch`), and every SQS delivery is claimed and
//! settled as one (process-task). `make test` runs 200 tasks; `make chaos` runs 2000
//! (`CHAOS_TASKS`).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aitasks_contracts::{check_answer, AiRequest, Path};
use aitasks_e2e::answer_from_output;
use aitasks_testkit::*;
use reqwest::Method;
use serde_json::{json, Value};
use tokio::sync::Mutex as AsyncMutex;

const APP: &str = "app-chaos";
/// Repair turns the provider client may take after a schema-breaking answer.
const MAX_REPAIRS: i64 = 2;
/// The profiles an attempt may call: `default`, then its fallback `limited` on a retryable failure.
const CHAIN: i64 = 2;

fn task_count() -> usize {
    std::env::var("CHAOS_TASKS").ok().and_then(|v| v.parse().ok()).unwrap_or(200)
}

/// The request for task `i`: every kind in turn, with a marker in the input that lets the
/// provider's log be attributed to the task.
fn request(i: usize) -> Value {
    let input = format!("chaos-{i:05}-end please handle this");
    match i % 4 {
        0 => {
            json!({"kind": "generate_text", "prompt": "Write a title", "input": input, "maxOutputChars": 200})
        }
        1 => json!({"kind": "classify", "prompt": "Sentiment?", "input": input, "choices": ["pos", "neg"]}),
        2 => {
            json!({"kind": "classify_many", "prompt": "Topics?", "input": input, "choices": ["a", "b", "c"]})
        }
        _ => json!({"kind": "extract_data", "prompt": "Extract", "input": input, "fields": [
            {"name": "due", "type": "date_time", "description": "", "required": true},
            {"name": "pages", "type": "number", "description": "", "required": false},
            {"name": "tone", "type": "choice", "description": "", "required": true, "choices": ["calm", "urgent"]}]}),
    }
}

/// Whether task `i` is deferred to a provider batch.
fn is_deferred(i: usize) -> bool {
    i % 6 == 5
}

/// Whether task `i` carries a durable callback.
fn has_callback(i: usize) -> bool {
    i % 5 == 4
}

fn create_body(
    i: usize,
    run_id: &str,
    callbacks: &Mutex<HashMap<usize, String>>,
    durable: &DurableStub,
) -> Value {
    let owner = if i.is_multiple_of(2) {
        json!({"runId": run_id})
    } else if i.is_multiple_of(3) {
        // Scoped: admission with roomy limits, and a cache that some tasks hit.
        json!({"owner": {"scopeId": format!("scope-{}", i % 7)},
               "scope": {"sourceId": format!("doc-{}", i % 5), "sourceRevision": format!("r{}", i % 40),
                         "budget": {"burst": 100000, "tasksPerMinute": 100000, "maxStepsPerSource": 100000,
                                    "sourcesPer24Hours": 100000, "scopeConcurrent": 100000,
                                    "globalConcurrent": 100000}}})
    } else {
        json!({"owner": {"scopeId": format!("scope-{}", i % 7)}})
    };
    let mut body = json!({"stepKey": "chaos", "effectKey": format!("chaos-{i}"), "modelId": "default",
                          "request": request(i)});
    for (key, value) in owner.as_object().expect("object") {
        body[key] = value.clone();
    }
    if is_deferred(i) {
        body["modelId"] = json!("batchable");
        body["delivery"] = json!({"deferred": {"within": "PT2H"}});
    }
    if has_callback(i) {
        // A create sent again (its answer lost to a kill) names the same callback.
        let id = callbacks.lock().expect("callbacks").entry(i).or_insert_with(|| durable.open()).clone();
        body["callback"] = json!({"lambdaDurable": {"callbackId": id}});
    }
    body
}

fn faults() -> Reply {
    let status = |status: u16, retry_after: Option<u64>| Reply::Status {
        status,
        body: format!("{{\"error\": {{\"message\": \"chaos {status}\"}}}}"),
        retry_after,
    };
    Reply::OneOf(vec![
        (55, Reply::Auto),
        (8, status(500, None)),
        (3, status(503, None)),
        (5, status(429, Some(1))),
        (3, Reply::Slow(Duration::from_millis(2500), Box::new(Reply::Auto))),
        (8, Reply::Slow(Duration::from_millis(300), Box::new(Reply::Auto))),
        (5, Reply::Garbage),
        (4, Reply::Content("this is not JSON".into())),
        (9, Reply::Answer(json!({"unexpected": true}))),
        // A NUL inside an answer: invalid (the store cannot hold it), repaired within the attempt,
        // and never a cost to the tasks whose successes share its group commit.
        (4, Reply::Content("{\"text\": \"nul \\u0000 inside\"}".into())),
    ])
}

/// POST until the server answers with something other than a 5xx (it may be dead for a moment).
async fn post_until_answered(api: &Api, path: &str, body: &Value) -> Answer {
    let until = Instant::now() + Duration::from_secs(120);
    loop {
        match api.try_send(Method::POST, path, Some(body.to_string().into_bytes())).await {
            Ok(answer) if answer.status < 500 => return answer,
            _ => {}
        }
        assert!(Instant::now() < until, "{path} never answered");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn chaos_loses_nothing_and_settles_everything_once() {
    let _outage = crate::OUTAGE.lock().await;
    let total = task_count();
    let seed = std::env::var("CHAOS_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(7)
    }) | 1;
    println!("chaos: {total} tasks, CHAOS_SEED={seed}");
    let started = Instant::now();

    let db = TestDb::new().await;
    let queues = TestQueues::create(50, 5).await;
    let stub = StubProvider::start().await;
    stub.set_default(faults());
    // The default profile falls back, on a retryable failure, to one limited in concurrency and
    // calls a minute (held in Postgres for every worker): give-backs and the line mixed in.
    let models = json!({
        "default": {"model": "chaos-model", "baseUrl": stub.base_url, "fallbacks": ["limited"]},
        "limited": {"model": "chaos-limited", "baseUrl": stub.base_url,
                    "limits": {"concurrent": 2, "requestsPerMinute": 600}},
    })
    .to_string();
    let durable = DurableStub::start().await;
    durable.faults(4);
    let batches = StubBatches::start().await;
    let mut models: Value = serde_json::from_str(&models).expect("models");
    models["batchable"] = json!({"model": "chaos-batch", "baseUrl": batches.base_url, "apiKeyEnv": "BATCH_KEY",
                                 "batch": {"maxRecords": 10, "maxWaitSeconds": 1}});
    let models = models.to_string();
    let callbacks: Arc<Mutex<HashMap<usize, String>>> = Arc::default();
    let env = Stack::env(
        &db,
        &queues,
        &stub,
        &[
            ("AWS_ENDPOINT_URL_LAMBDA", durable.endpoint.as_str()),
            ("AWS_ACCESS_KEY_ID", DURABLE_ACCESS_KEY),
            ("AWS_SECRET_ACCESS_KEY", DURABLE_SECRET_KEY),
            ("AITASK_MODELS", models.as_str()),
            ("AITASK_PROVIDER_TIMEOUT_MS", "1500"),
            ("AITASK_RESEND_AFTER_MS", "3000"),
            ("AITASK_STALE_RUNNING_MS", "2000"),
            ("AITASK_LOCAL_POLLERS", "4"),
            ("BATCH_KEY", BATCH_STUB_KEY),
            ("AITASK_BATCH_POLL_MS", "300"),
        ],
    );
    let server = Arc::new(AsyncMutex::new(DevServer::spawn(env).await));
    let address = server.lock().await.address.clone();
    let api = Api::new(&address, dev_token(APP));
    let (status, run) = api.post("/v1/runs", &json!({"scopeId": "chaos"})).await;
    assert_eq!(status, 201, "{run}");
    let run_id = run["id"].as_str().expect("run id").to_owned();

    // Accepted tasks: index → id. A create is accepted once it answered 201 or 200.
    let accepted: Arc<Mutex<BTreeMap<usize, String>>> = Arc::default();
    // Faults go on while tasks are created and worked on: at least this long.
    let chaos_for = Duration::from_millis((total as u64 * 15).max(10_000));
    let creating = Arc::new(AtomicBool::new(true));
    let next = Arc::new(AtomicUsize::new(0));
    let kills = Arc::new(AtomicUsize::new(0));
    let duplicates = Arc::new(AtomicUsize::new(0));

    // Half the creators send one task at a time, half send batches of up to BATCH.
    const BATCH: usize = 7;
    let creators: Vec<_> = (0..16)
        .map(|creator| {
            let (api, run_id, accepted, next) = (api.clone(), run_id.clone(), accepted.clone(), next.clone());
            let (callbacks, durable) = (callbacks.clone(), durable.clone());
            let batched = creator % 2 == 1;
            tokio::spawn(async move {
                loop {
                    let first = next.fetch_add(if batched { BATCH } else { 1 }, Ordering::Relaxed);
                    if first >= total {
                        return;
                    }
                    let indexes: Vec<usize> = (first..total.min(first + if batched { BATCH } else { 1 })).collect();
                    let ids: Vec<String> = if batched {
                        let body = json!({"tasks": indexes.iter().map(|&i| create_body(i, &run_id, &callbacks, &durable)).collect::<Vec<_>>()});
                        let answer = post_until_answered(&api, "/v1/tasks/batch", &body).await;
                        assert_eq!(answer.status, 200, "batch from {first}: {}", answer.body);
                        let results = answer.body["results"].as_array().expect("results").clone();
                        assert_eq!(results.len(), indexes.len());
                        results
                            .iter()
                            .zip(&indexes)
                            .map(|(result, i)| {
                                assert!(matches!(result["status"].as_u64(), Some(200 | 201)), "item {i}: {result}");
                                result["task"]["id"].as_str().expect("task id").to_owned()
                            })
                            .collect()
                    } else {
                        let answer =
                            post_until_answered(&api, "/v1/tasks", &create_body(first, &run_id, &callbacks, &durable)).await;
                        assert!(
                            matches!(answer.status, 200 | 201),
                            "create {first}: {} {}",
                            answer.status,
                            answer.body
                        );
                        vec![answer.body["id"].as_str().expect("task id").to_owned()]
                    };
                    for (i, id) in indexes.into_iter().zip(ids) {
                        accepted.lock().expect("accepted").insert(i, id.clone());
                        if i % 20 == 3 {
                            let cancel =
                                post_until_answered(&api, &format!("/v1/tasks/{id}/cancel"), &json!({})).await;
                            assert_eq!(cancel.status, 200, "cancel {i}: {}", cancel.body);
                        }
                    }
                }
            })
        })
        .collect();

    // SIGKILL the worker at random moments while tasks are created.
    let killer = {
        let (server, creating, kills) = (server.clone(), creating.clone(), kills.clone());
        tokio::spawn(async move {
            let mut random = Xorshift::new(seed);
            while creating.load(Ordering::Relaxed) || started.elapsed() < chaos_for {
                tokio::time::sleep(Duration::from_millis(800 + random.below(2200))).await;
                let mut server = server.lock().await;
                server.kill().await;
                kills.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(random.below(500))).await;
                server.restart().await;
            }
        })
    };

    // Provider batches end at random: answered, failed, expired.
    let batch_faults = {
        let (batches, creating) = (batches.clone(), creating.clone());
        tokio::spawn(async move {
            let mut random = Xorshift::new(seed.rotate_left(29));
            while creating.load(Ordering::Relaxed) || started.elapsed() < chaos_for {
                let outcome = match random.below(3) {
                    0 => BatchOutcome::Complete,
                    1 => BatchOutcome::Fail,
                    _ => BatchOutcome::Expire,
                };
                batches.set_outcome(outcome);
                tokio::time::sleep(Duration::from_millis(500 + random.below(1500))).await;
            }
            batches.set_outcome(BatchOutcome::Complete);
        })
    };

    // Duplicate deliveries of messages for tasks already accepted.
    let duplicator = {
        let (accepted, creating, duplicates) = (accepted.clone(), creating.clone(), duplicates.clone());
        let sqs = queues.clone();
        tokio::spawn(async move {
            let mut random = Xorshift::new(seed.rotate_left(17));
            while creating.load(Ordering::Relaxed) || started.elapsed() < chaos_for {
                tokio::time::sleep(Duration::from_millis(150)).await;
                let ids: Vec<String> = accepted.lock().expect("accepted").values().cloned().collect();
                if ids.is_empty() {
                    continue;
                }
                let id = &ids[random.below(ids.len() as u64) as usize];
                sqs.send(&sqs.tasks, &json!({"taskId": id}).to_string()).await;
                duplicates.fetch_add(1, Ordering::Relaxed);
            }
        })
    };

    // Postgres goes down once, when about a third of the tasks are in.
    while next.load(Ordering::Relaxed) < total / 3 {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    {
        // Held so that the killer does not start a dev server (which migrates) mid-restart.
        let _server = server.lock().await;
        restart_postgres();
    }
    println!("chaos: Postgres restarted after {:.1}s", started.elapsed().as_secs_f64());

    for creator in creators {
        creator.await.expect("creator");
    }
    creating.store(false, Ordering::Relaxed);
    println!(
        "chaos: {} creates accepted in {:.1}s",
        accepted.lock().expect("accepted").len(),
        started.elapsed().as_secs_f64()
    );
    killer.await.expect("killer");
    batch_faults.await.expect("batch faults");
    duplicator.await.expect("duplicator");
    println!(
        "chaos: faults stopped after {:.1}s: {} kills, {} duplicate messages",
        started.elapsed().as_secs_f64(),
        kills.load(Ordering::Relaxed),
        duplicates.load(Ordering::Relaxed)
    );

    // Quiescence: nothing queued or running, every completion event delivered.
    let until = Instant::now() + Duration::from_secs(240);
    loop {
        let open = db
            .count_surviving_restart("SELECT count(*) FROM tasks WHERE status IN ('queued', 'running')")
            .await;
        let undelivered =
            db.count_surviving_restart("SELECT count(*) FROM task_events WHERE delivered_at IS NULL").await;
        let unanswered = db
            .count_surviving_restart("SELECT count(*) FROM task_callbacks WHERE state IN ('waiting', 'owed')")
            .await;
        if open == 0 && undelivered == 0 && unanswered == 0 {
            break;
        }
        assert!(
            Instant::now() < until,
            "not quiescent: {open} tasks open, {undelivered} events undelivered, {unanswered} callbacks unanswered"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    println!("chaos: quiescent after {:.1}s", started.elapsed().as_secs_f64());

    let accepted = accepted.lock().expect("accepted").clone();
    assert_eq!(accepted.len(), total, "every create was eventually accepted");

    // Every task's event reached the events queue: `delivered_at` cannot say so for an event a
    // worker handed over to its own publish (written delivered at the commit, migrations/V41),
    // which a killed worker's returning message or the dev server's start brings back.
    let mut unseen: std::collections::HashSet<String> = accepted.values().cloned().collect();
    let until = Instant::now() + Duration::from_secs(120);
    while !unseen.is_empty() && Instant::now() < until {
        for body in queues.drain(&queues.events, Duration::from_secs(1)).await {
            if let Some(id) = serde_json::from_str::<Value>(&body)
                .ok()
                .and_then(|e| e["taskId"].as_str().map(str::to_owned))
            {
                unseen.remove(&id);
            }
        }
    }
    assert!(
        unseen.is_empty(),
        "{} tasks' events never reached the events queue: {:?}",
        unseen.len(),
        unseen.iter().take(5).collect::<Vec<_>>()
    );
    println!("chaos: every event published after {:.1}s", started.elapsed().as_secs_f64());
    let client = db.client().await;
    let rows = client
        .query(
            "SELECT t.id::text, t.effect_key, t.status, t.error_code, t.attempts, t.max_attempts, t.request, \
             t.output, (SELECT count(*) FROM task_events e WHERE e.task_id = t.id) AS events \
             FROM tasks t WHERE t.app_id = $1",
            &[&APP],
        )
        .await
        .expect("read the tasks");
    assert_eq!(rows.len(), total, "no task lost, none made twice");

    let calls_by_marker = {
        let mut calls: HashMap<usize, i64> = HashMap::new();
        for body in stub.requests() {
            let text = body.to_string();
            if let Some(at) = text.find("chaos-") {
                if let Ok(i) = text[at + 6..at + 11].parse::<usize>() {
                    *calls.entry(i).or_default() += 1;
                }
            }
        }
        calls
    };

    let mut by_outcome: BTreeMap<(String, String), usize> = BTreeMap::new();
    let (mut most_attempts, mut most_calls_per_attempt, mut outputs_checked) = (0i32, 0f64, 0usize);
    for row in &rows {
        let id: String = row.get("id");
        let effect_key: String = row.get("effect_key");
        let status: String = row.get("status");
        let code: Option<String> = row.get("error_code");
        let attempts: i32 = row.get("attempts");
        let max_attempts: i32 = row.get("max_attempts");
        let events: i64 = row.get("events");
        let i: usize = effect_key.trim_start_matches("chaos-").parse().expect("index");
        assert_eq!(accepted.get(&i), Some(&id), "the accepted id is the stored one");
        assert!(matches!(status.as_str(), "succeeded" | "failed" | "canceled"), "{id} ended {status}");
        assert_eq!(events, 1, "{id} ({status}) has exactly one completion event");
        assert!(attempts <= max_attempts, "{id}: {attempts} attempts over the budget {max_attempts}");
        let calls = calls_by_marker.get(&i).copied().unwrap_or(0);
        most_attempts = most_attempts.max(attempts);
        if attempts > 0 {
            most_calls_per_attempt = most_calls_per_attempt.max(calls as f64 / f64::from(attempts));
        }
        assert!(
            calls <= i64::from(attempts) * (1 + MAX_REPAIRS) * CHAIN,
            "{id}: {calls} provider calls for {attempts} attempts"
        );
        if status == "succeeded" {
            let request =
                AiRequest::parse(&row.get::<_, Value>("request"), &Path::root()).expect("stored request");
            let output: Value = row.get("output");
            let checked = check_answer(&request, &answer_from_output(&request, &output));
            assert_eq!(checked.ok(), Some(output.clone()), "{id}: the output passes the contract checker");
            outputs_checked += 1;
        }
        *by_outcome.entry((status, code.unwrap_or_else(|| "-".into()))).or_default() += 1;
    }
    let non_terminal_with_event = db
        .count_surviving_restart(
            "SELECT count(*) FROM task_events e JOIN tasks t ON t.id = e.task_id \
         WHERE t.status NOT IN ('succeeded', 'failed', 'canceled')",
        )
        .await;
    assert_eq!(non_terminal_with_event, 0, "no event for a task that is not terminal");
    println!(
        "chaos: checks passed: {} of {total} tasks terminal, each with exactly 1 completion event; \
         0 events for non-terminal tasks; at most {most_attempts} attempts (budget 3); \
         at most {most_calls_per_attempt:.1} provider calls per attempt (bound {}); \
         {outputs_checked} succeeded outputs pass the contract checker; 0 tasks queued or running",
        rows.len(),
        (1 + MAX_REPAIRS) * CHAIN
    );

    println!("chaos: outcomes by status and error code");
    for ((status, code), n) in &by_outcome {
        println!("  {status:<10} {code:<32} {n:>6}");
    }
    println!(
        "chaos: {} provider calls ({} completed, {} abandoned by their caller)",
        stub.calls(),
        stub.completed(),
        stub.aborted()
    );
    assert!(by_outcome.keys().any(|(s, _)| s == "succeeded"), "some tasks succeed despite the faults");
    let batch_outcomes = client
        .query("SELECT COALESCE(outcome, state), count(*) FROM task_batches GROUP BY 1 ORDER BY 1", &[])
        .await
        .expect("batches");
    let batch_outcomes: Vec<String> = batch_outcomes
        .iter()
        .map(|row| format!("{} {}", row.get::<_, String>(0), row.get::<_, i64>(1)))
        .collect();
    println!(
        "chaos: {} deferred tasks in {} provider batches ({}), {} of their lines run on-demand",
        (0..total).filter(|&i| is_deferred(i)).count(),
        batches.creates(),
        batch_outcomes.join(", "),
        batches.on_demand_calls()
    );
    assert!(batches.creates() > 0, "some deferred tasks went through a batch");

    // Every callback got exactly one answer accepted, the one its task's end calls for.
    let status_of: HashMap<String, String> =
        rows.iter().map(|row| (row.get::<_, String>("id"), row.get::<_, String>("status"))).collect();
    let callbacks = callbacks.lock().expect("callbacks").clone();
    let calls = durable.calls();
    for (i, callback_id) in &callbacks {
        let answers = durable.accepted_answers(callback_id);
        let status = &status_of[&accepted[i]];
        let expected = if status == "succeeded" { "succeed" } else { "fail" };
        assert_eq!(answers.len(), 1, "task {i} ({status}): {answers:?}");
        assert_eq!(answers[0].action, expected, "task {i} ended {status}");
    }
    let answers = calls.iter().filter(|c| c.action != "heartbeat").count();
    let refused = calls.iter().filter(|c| c.refused.is_some()).count();
    assert_eq!(durable.bad_signatures(), 0);
    println!(
        "chaos: {} callbacks, each answered exactly once ({answers} answer calls, {refused} refused and retried or late)",
        callbacks.len()
    );
    assert_eq!(callbacks.len(), (0..total).filter(|&i| has_callback(i)).count());

    // No secret in any log line, errors and restarts included.
    let logs = server.lock().await.logs();
    assert!(logs.lines().count() > 100, "the dev server logged the run");
    assert!(!logs.contains(STUB_API_KEY), "the provider API key appears in the logs");
    let password = app_password(&db.app_url).expect("the functions' login has a password (make up)");
    assert!(!logs.contains(&password), "the database password appears in the logs");
    assert!(!callbacks.values().any(|id| logs.contains(id.as_str())), "a callback id appears in the logs");
    println!("chaos: done in {:.1}s", started.elapsed().as_secs_f64());
}

/// The password in a `postgres://user:password@host/db` URL.
fn app_password(url: &str) -> Option<String> {
    let credentials = url.split_once("://")?.1.split_once('@')?.0;
    Some(credentials.split_once(':')?.1.to_owned()).filter(|p| !p.is_empty())
}
