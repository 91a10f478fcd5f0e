//! `make demo`: one task of each kind through the local HTTP API (the dev server in front of
//! Postgres, the SQS-compatible server and the local model), state changes printed as they
//! happen, then each validated result, a duplicate create returning the first task, and the
//! cancellation of a running task.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use aitasks_contracts::TaskStatus;
use std::collections::HashMap;
use std::time::{Duration, Instant};

use aitasks_dev_tokens::Hs256Key;
use serde_json::{json, Value};

mod live_output;

type Failure = Box<dyn std::error::Error + Send + Sync>;

struct Client {
    base: String,
    token: String,
    http: reqwest::Client,
    started: Instant,
}

impl Client {
    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(u16, Value), Failure> {
        let mut request = self.http.request(method, format!("{}{path}", self.base)).bearer_auth(&self.token);
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().await?;
        let status = response.status().as_u16();
        Ok((status, response.json().await.unwrap_or(Value::Null)))
    }

    fn say(&self, line: &str) {
        println!("[{:>6.1}s] {line}", self.started.elapsed().as_secs_f64());
    }
}

fn task_body(run: &str, key: &str, request: Value) -> Value {
    json!({"runId": run, "stepKey": key, "effectKey": format!("demo-{run}/{key}"), "modelId": "default", "request": request})
}

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let address = std::env::var("AITASK_LOCAL_ADDR").unwrap_or_else(|_| "127.0.0.1:9000".into());
    let secret = std::env::var("AITASK_DEV_JWT_SECRET").unwrap_or_else(|_| "dev-secret".into());
    let exp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_secs() + 3600;
    let token = Hs256Key::new(secret.as_bytes())?
        .sign(&json!({"app_id": "demo-app", "sub": "demo-user", "exp": exp}))?;
    let client = Client {
        base: format!("http://{address}"),
        token,
        http: reqwest::Client::new(),
        started: Instant::now(),
    };

    println!("aitasks demo: the dev server at {address}, tenant demo-app\n");
    let (_, run) = client
        .call(
            reqwest::Method::POST,
            "/v1/runs",
            Some(&json!({"scopeId": "demo", "actor": {"userId": "demo-user"}})),
        )
        .await?;
    let run_id = run["id"].as_str().ok_or("the run was not created")?.to_owned();
    client.say(&format!("run {run_id} created"));

    let tasks = [
        (
            "generate_text",
            json!({"kind": "generate_text", "prompt": "Write a one-line tagline for a bakery.", "maxOutputChars": 120}),
        ),
        (
            "classify",
            json!({"kind": "classify", "prompt": "Is this review positive or negative?", "input": {"review": "Fresh bread, friendly staff, I will come back!"}, "choices": ["positive", "negative"]}),
        ),
        (
            "classify_many",
            json!({"kind": "classify_many", "prompt": "Which topics does the message mention?", "input": {"message": "The delivery was late and the invoice was wrong."}, "choices": ["delivery", "billing", "product quality"], "minChoices": 1}),
        ),
        (
            "extract_data",
            json!({"kind": "extract_data", "prompt": "Extract the order details.", "input": {"email": "Please send 3 boxes to Lyon before 2026-12-24T12:00:00Z."}, "fields": [
            {"name": "quantity", "type": "number", "description": "How many boxes", "required": true},
            {"name": "city", "type": "text", "description": "QueueMessage city", "required": true, "maxLength": 60},
            {"name": "deadline", "type": "date_time", "description": "QueueMessage deadline", "required": false}]}),
        ),
    ];
    // The four in one call: a batch answers item by item, as four creates would.
    let body = json!({"tasks": tasks.iter().map(|(kind, request)| task_body(&run_id, kind, request.clone())).collect::<Vec<_>>()});
    let (status, answer) = client.call(reqwest::Method::POST, "/v1/tasks/batch", Some(&body)).await?;
    let results = answer["results"].as_array().cloned().unwrap_or_default();
    if status != 200 || results.len() != tasks.len() {
        return Err(format!("the batch answered {status}: {answer}").into());
    }
    client.say(&format!("batch of {} created in one call", tasks.len()));
    let mut ids = Vec::new();
    for ((kind, _), result) in tasks.iter().zip(&results) {
        if result["status"] != 201 {
            return Err(format!("creating {kind} answered {result}").into());
        }
        let task = &result["task"];
        client.say(&format!(
            "{kind:<14} HTTP {} {} ({})",
            result["status"],
            task["id"].as_str().unwrap_or("?"),
            task["status"].as_str().unwrap_or("?")
        ));
        ids.push((kind.to_string(), task["id"].as_str().unwrap_or_default().to_owned()));
    }

    // Progress: print each state change as it happens.
    let queued = TaskStatus::Queued.as_str();
    let mut last: HashMap<String, String> =
        ids.iter().map(|(_, id)| (id.clone(), queued.to_owned())).collect();
    let mut finished: HashMap<String, Value> = HashMap::new();
    let until = Instant::now() + Duration::from_secs(300);
    while finished.len() < ids.len() && Instant::now() < until {
        for (kind, id) in &ids {
            if finished.contains_key(id) {
                continue;
            }
            let (_, task) = client.call(reqwest::Method::GET, &format!("/v1/tasks/{id}"), None).await?;
            let status = task["status"].as_str().unwrap_or("?").to_owned();
            if last.get(id) != Some(&status) {
                let attempt = task["attempts"].as_i64().unwrap_or(0);
                client.say(&format!(
                    "{kind:<14} {} -> {status} (attempt {attempt})",
                    last.get(id).map(String::as_str).unwrap_or(queued)
                ));
                last.insert(id.clone(), status.clone());
            }
            if TaskStatus::parse(&status).is_some_and(TaskStatus::is_terminal) {
                finished.insert(id.clone(), task);
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    println!("\nResults (each checked against its request's contract before it was stored):");
    let mut succeeded = 0;
    for (kind, id) in &ids {
        match finished.get(id) {
            Some(task) if task["status"] == TaskStatus::Succeeded.as_str() => {
                succeeded += 1;
                println!("  {kind:<14} {}", task["output"]);
                println!("  {:<14} usage {}", "", task["usage"]);
            }
            Some(task) => {
                println!("  {kind:<14} {} {} ({})", task["status"], task["errorCode"], task["errorMessage"])
            }
            None => println!("  {kind:<14} did not finish in time"),
        }
    }

    println!("\nIdempotency: creating the classify task again with the same effect key");
    let (status, again) = client
        .call(reqwest::Method::POST, "/v1/tasks", Some(&task_body(&run_id, "classify", tasks[1].1.clone())))
        .await?;
    println!(
        "  HTTP {status}, task {} (the first task, untouched: {})",
        again["id"].as_str().unwrap_or("?"),
        again["id"] == json!(ids[1].1)
    );

    println!("\nLive output: a generation read while the model writes it (GET /v1/tasks/{{id}}/output, a long poll)");
    let poem = json!({"kind": "generate_text", "prompt": "Write a short poem about the sea.", "maxOutputChars": 600});
    let (_, streaming) =
        client.call(reqwest::Method::POST, "/v1/tasks", Some(&task_body(&run_id, "live-poem", poem))).await?;
    let streaming_id = streaming["id"].as_str().unwrap_or_default().to_owned();
    live_output::follow(&client, &streaming_id).await?;

    println!("\nCancellation: a long generation, canceled while the model is working on it");
    let long = json!({"kind": "generate_text", "prompt": "Write a very long story about a lighthouse keeper, with many chapters.", "maxOutputChars": 20000});
    let (_, slow) = client
        .call(reqwest::Method::POST, "/v1/tasks", Some(&task_body(&run_id, "long-story", long)))
        .await?;
    let slow_id = slow["id"].as_str().unwrap_or_default().to_owned();
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        let (_, task) = client.call(reqwest::Method::GET, &format!("/v1/tasks/{slow_id}"), None).await?;
        if task["status"] == TaskStatus::Running.as_str() || Instant::now() > until {
            client.say(&format!("long-story     {}", task["status"].as_str().unwrap_or("?")));
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let canceled_at = Instant::now();
    let (_, _) = client.call(reqwest::Method::POST, &format!("/v1/tasks/{slow_id}/cancel"), None).await?;
    client.say("long-story     cancel requested");
    let (_, task) = client.call(reqwest::Method::GET, &format!("/v1/tasks/{slow_id}?wait=10"), None).await?;
    client.say(&format!(
        "long-story     -> {} ({}) {:.1}s after the request",
        task["status"].as_str().unwrap_or("?"),
        task["errorCode"].as_str().unwrap_or("-"),
        canceled_at.elapsed().as_secs_f64()
    ));

    println!(
        "\nDeferred delivery: a classify that may wait up to a day for a provider batch (half the price)"
    );
    let mut deferred = task_body(&run_id, "classify-deferred", tasks[1].1.clone());
    deferred["delivery"] = json!({"deferred": {"within": "PT24H"}});
    let (status, queued) = client.call(reqwest::Method::POST, "/v1/tasks", Some(&deferred)).await?;
    println!(
        "  HTTP {status}, window ends {}; the local model's profile has no `batch` (llama.cpp has no batch API), so it runs now",
        queued["deferredBy"].as_str().unwrap_or("?")
    );
    let deferred_id = queued["id"].as_str().unwrap_or_default().to_owned();
    let (_, settled) =
        client.call(reqwest::Method::GET, &format!("/v1/tasks/{deferred_id}?wait=20"), None).await?;
    client.say(&format!(
        "classify-deferred -> {} {}",
        settled["status"].as_str().unwrap_or("?"),
        settled["output"]
    ));

    println!("\nThe run's tasks, listed (GET /v1/tasks?runId=…, keyset pages of 2):");
    let mut after: Option<String> = None;
    loop {
        let mut path = format!("/v1/tasks?runId={run_id}&limit=2");
        if let Some(after) = &after {
            path.push_str(&format!("&after={after}"));
        }
        let (_, page) = client.call(reqwest::Method::GET, &path, None).await?;
        for task in page["tasks"].as_array().into_iter().flatten() {
            println!(
                "  {:<14} {}",
                task["stepKey"].as_str().unwrap_or("?"),
                task["status"].as_str().unwrap_or("?")
            );
        }
        match page["next"].as_str() {
            Some(next) => after = Some(next.to_owned()),
            None => break,
        }
    }

    println!("\n{succeeded} of {} kinds succeeded with the local model.", ids.len());
    if finished.len() < ids.len() {
        return Err("some tasks did not finish".into());
    }
    Ok(())
}
