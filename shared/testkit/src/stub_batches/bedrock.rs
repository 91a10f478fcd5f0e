//! Bedrock's batch-inference control plane (`POST /model-invocation-job`,
//! `GET /model-invocation-job/{arn}`, `POST /model-invocation-job/{arn}/stop`), accepting only
//! requests SigV4-signed for service `bedrock` with [`BATCH_AWS_SECRET_KEY`]. A job reads its
//! records from moto's S3 when it is created and, when it ends, writes
//! `{output}/{job id}/input.jsonl.out` there. A create with a client request token seen before
//! answers the job made then, as Bedrock does. A record whose `recordId` is not alphanumeric
//! fails its job (`Failed`, its message naming the record), as Bedrock's validation does.

use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

use super::{pad, scripted_answer, shuffle, BatchOutcome, LineScript};

/// The credentials the stub accepts (give them to the batch client; moto takes any).
pub const BATCH_AWS_ACCESS_KEY: &str = "AKIDBATCHSTUB";
pub const BATCH_AWS_SECRET_KEY: &str = "batch-stub-secret-do-not-log";

struct Job {
    arn: String,
    id: String,
    name: String,
    token: Option<String>,
    status: &'static str,
    output_uri: String,
    records: Vec<(String, Value)>,
    message: Option<String>,
}

struct Jobs {
    jobs: Vec<Job>,
    outcome: BatchOutcome,
    auto: bool,
    scripts: std::collections::HashMap<String, LineScript>,
    creates: usize,
    stops: usize,
    bad_signatures: usize,
    random: crate::Xorshift,
    moto: String,
}

/// The running stub.
#[derive(Clone)]
pub struct BedrockBatchStub {
    pub endpoint: String,
    state: Arc<Mutex<Jobs>>,
}

impl BedrockBatchStub {
    /// A stub whose jobs keep their records in the S3 of moto at `moto_endpoint`.
    pub async fn start(moto_endpoint: &str) -> BedrockBatchStub {
        let state = Arc::new(Mutex::new(Jobs {
            jobs: Vec::new(),
            outcome: BatchOutcome::Complete,
            auto: true,
            scripts: Default::default(),
            creates: 0,
            stops: 0,
            bad_signatures: 0,
            random: crate::Xorshift::new(0xbed_0c4),
            moto: moto_endpoint.trim_end_matches('/').to_owned(),
        }));
        let router = axum::Router::new().fallback(handle).with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let endpoint = format!("http://{}", listener.local_addr().expect("address"));
        tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        BedrockBatchStub { endpoint, state }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Jobs> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Make a bucket in moto's S3.
    pub async fn create_bucket(&self, bucket: &str) {
        let moto = self.lock().moto.clone();
        let response = s3(reqwest::Method::PUT, &format!("{moto}/{bucket}"), Vec::new()).await;
        assert!(response.status().is_success(), "create bucket {bucket}: {}", response.status());
    }

    pub fn set_outcome(&self, outcome: BatchOutcome) {
        self.lock().outcome = outcome;
    }

    /// Move every job one step (Submitted → InProgress → its outcome; Stopping → Stopped).
    pub async fn advance(&self) {
        let count = self.lock().jobs.len();
        for index in 0..count {
            step(&self.state, index).await;
        }
    }

    /// Status reads no longer move jobs on.
    pub fn hold(&self) {
        self.lock().auto = false;
    }

    pub fn release(&self) {
        self.lock().auto = true;
    }

    /// Script the record of task `task_id` (its `recordId`, the id's simple form) in every job
    /// from now on.
    pub fn script(&self, task_id: uuid::Uuid, script: LineScript) {
        self.lock().scripts.insert(task_id.simple().to_string(), script);
    }

    /// Put `lines` at `s3://{bucket}/{key}` in moto's S3 (a batch file the client did not write).
    pub async fn put_object(&self, bucket: &str, key: &str, lines: &str) {
        let moto = self.lock().moto.clone();
        let url = format!("{moto}/{bucket}/{key}");
        let response = s3(reqwest::Method::PUT, &url, lines.as_bytes().to_vec()).await;
        assert!(response.status().is_success(), "put {url}: {}", response.status());
    }

    /// A job of the records in `s3://{bucket}/{key}`, created as the client creates one (signed
    /// with the stub's credentials): the create's status and answer.
    pub async fn create_job(&self, bucket: &str, key: &str) -> (u16, Value) {
        let url = format!("{}/model-invocation-job", self.endpoint);
        let body = json!({"jobName": "raw", "roleArn": "arn:aws:iam::123456789012:role/r",
            "modelId": "m", "modelInvocationType": "Converse",
            "inputDataConfig": {"s3InputDataConfig": {"s3Uri": format!("s3://{bucket}/{key}")}},
            "outputDataConfig": {"s3OutputDataConfig": {"s3Uri": format!("s3://{bucket}/raw-output/")}}})
        .to_string()
        .into_bytes();
        let headers = crate::sigv4::sign_headers(
            (BATCH_AWS_ACCESS_KEY, BATCH_AWS_SECRET_KEY),
            "bedrock",
            Default::default(),
            ("POST", &url, &body),
        );
        let mut request = reqwest::Client::new().post(&url);
        for (name, value) in headers {
            request = request.header(name, value);
        }
        let answer = request.body(body).send().await.expect("the stub answers");
        let status = answer.status().as_u16();
        (status, serde_json::from_str(&answer.text().await.unwrap_or_default()).unwrap_or(Value::Null))
    }

    /// Jobs created (a create answered with an existing job is not one).
    pub fn creates(&self) -> usize {
        self.lock().creates
    }

    /// Jobs stopped (`POST /model-invocation-job/{id}/stop`).
    pub fn stops(&self) -> usize {
        self.lock().stops
    }

    /// Requests refused for their signature.
    pub fn bad_signatures(&self) -> usize {
        self.lock().bad_signatures
    }

    /// The ARNs of the jobs created, oldest first.
    pub fn job_arns(&self) -> Vec<String> {
        self.lock().jobs.iter().map(|job| job.arn.clone()).collect()
    }

    /// The records of every job, `(recordId, modelInput)`, as read from S3.
    pub fn records(&self) -> Vec<(String, Value)> {
        self.lock().jobs.iter().flat_map(|job| job.records.clone()).collect()
    }
}

fn error(status: StatusCode, kind: &str) -> Response {
    let mut response =
        (status, json!({"message": format!("{kind} from the stub")}).to_string()).into_response();
    response.headers_mut().insert("x-amzn-errortype", kind.parse().expect("static header"));
    response.headers_mut().insert("content-type", "application/json".parse().expect("static header"));
    response
}

fn ok(body: Value) -> Response {
    let mut response = (StatusCode::OK, body.to_string()).into_response();
    response.headers_mut().insert("content-type", "application/json".parse().expect("static header"));
    response
}

fn job_json(job: &Job) -> Value {
    json!({"jobArn": job.arn, "jobName": job.name, "status": job.status,
    "outputDataConfig": {"s3OutputDataConfig": {"s3Uri": job.output_uri}},
    "message": match (&job.message, job.status) {
        (Some(message), _) => json!(message),
        (None, "Failed") => json!("the stub failed the job"),
        _ => Value::Null,
    }})
}

fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Ok(byte) = u8::from_str_radix(&text[i + 1..i + 3], 16) {
                out.push(byte);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A signed S3 request to moto.
async fn try_s3(
    method: reqwest::Method,
    url: &str,
    body: Vec<u8>,
) -> Result<reqwest::Response, reqwest::Error> {
    let mut request = reqwest::Client::new().request(method.clone(), url);
    for (name, value) in crate::sigv4::s3_headers(method.as_str(), url, &body) {
        request = request.header(name, value);
    }
    request.body(body).send().await
}

async fn s3(method: reqwest::Method, url: &str, body: Vec<u8>) -> reqwest::Response {
    try_s3(method, url, body).await.expect("moto's S3")
}

/// `s3://bucket/key` as moto's path-style URL.
fn s3_url(moto: &str, uri: &str) -> Option<String> {
    uri.strip_prefix("s3://").map(|rest| format!("{moto}/{rest}"))
}

async fn handle(
    State(state): State<Arc<Mutex<Jobs>>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if !crate::sigv4::signed_with(
        (&method, &uri, &headers, &body[..]),
        BATCH_AWS_ACCESS_KEY,
        BATCH_AWS_SECRET_KEY,
        "bedrock",
    ) {
        state.lock().unwrap_or_else(|p| p.into_inner()).bad_signatures += 1;
        return error(StatusCode::FORBIDDEN, "InvalidSignatureException");
    }
    let path = uri.path().trim_start_matches('/').to_owned();
    let parts: Vec<&str> = path.split('/').collect();
    match (method.as_str(), parts.as_slice()) {
        ("POST", ["model-invocation-job"]) => create(&state, &body).await,
        ("GET", ["model-invocation-jobs"]) => {
            let query = uri.query().unwrap_or_default();
            let wanted = query.split('&').find_map(|pair| pair.strip_prefix("nameContains=")).map(decode);
            let jobs = state.lock().unwrap_or_else(|p| p.into_inner());
            let listed: Vec<Value> = jobs
                .jobs
                .iter()
                .filter(|job| wanted.as_ref().is_none_or(|wanted| job.name.contains(wanted.as_str())))
                .map(|job| json!({"jobArn": job.arn, "jobName": job.name, "status": job.status}))
                .collect();
            ok(json!({"invocationJobSummaries": listed}))
        }
        ("GET", ["model-invocation-job", id]) | ("POST", ["model-invocation-job", id, "stop"]) => {
            let id = decode(id);
            let index = {
                let jobs = state.lock().unwrap_or_else(|p| p.into_inner());
                jobs.jobs.iter().position(|job| job.arn == id || job.id == id)
            };
            let Some(index) = index else { return error(StatusCode::NOT_FOUND, "ResourceNotFoundException") };
            if method == Method::POST {
                let mut jobs = state.lock().unwrap_or_else(|p| p.into_inner());
                jobs.stops += 1;
                jobs.jobs[index].status = "Stopping";
                return ok(json!({}));
            }
            let auto = state.lock().unwrap_or_else(|p| p.into_inner()).auto;
            if auto {
                step(&state, index).await;
            }
            let jobs = state.lock().unwrap_or_else(|p| p.into_inner());
            ok(job_json(&jobs.jobs[index]))
        }
        _ => error(StatusCode::NOT_FOUND, "UnknownOperationException"),
    }
}

async fn create(state: &Arc<Mutex<Jobs>>, body: &[u8]) -> Response {
    let request: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let token = request["clientRequestToken"].as_str().map(str::to_owned);
    let moto = {
        let jobs = state.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(job) = jobs.jobs.iter().find(|job| token.is_some() && job.token == token) {
            return ok(json!({"jobArn": job.arn}));
        }
        jobs.moto.clone()
    };
    let required = ["jobName", "roleArn", "modelId"];
    let input = request.pointer("/inputDataConfig/s3InputDataConfig/s3Uri").and_then(Value::as_str);
    let output = request.pointer("/outputDataConfig/s3OutputDataConfig/s3Uri").and_then(Value::as_str);
    let (Some(input), Some(output)) = (input, output) else {
        return error(StatusCode::BAD_REQUEST, "ValidationException");
    };
    if required.iter().any(|key| !request[*key].is_string()) {
        return error(StatusCode::BAD_REQUEST, "ValidationException");
    }
    let Some(url) = s3_url(&moto, input) else {
        return error(StatusCode::BAD_REQUEST, "ValidationException");
    };
    let Ok(response) = try_s3(reqwest::Method::GET, &url, Vec::new()).await else {
        return error(StatusCode::INTERNAL_SERVER_ERROR, "InternalServerException");
    };
    if !response.status().is_success() {
        return error(StatusCode::BAD_REQUEST, "ValidationException");
    }
    let text = response.text().await.unwrap_or_default();
    let records: Vec<(String, Value)> = text
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .map(|line| (line["recordId"].as_str().unwrap_or_default().to_owned(), line["modelInput"].clone()))
        .collect();
    // Bedrock's validation: a record id is an alphanumeric string, or the job fails.
    let message = records
        .iter()
        .position(|(id, _)| id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric()))
        .map(|n| format!("record {} has a recordId that is not alphanumeric", n + 1));
    let mut jobs = state.lock().unwrap_or_else(|p| p.into_inner());
    jobs.creates += 1;
    let id = format!("stubjob{:05}", jobs.creates);
    let arn = format!("arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/{id}");
    jobs.jobs.push(Job {
        arn: arn.clone(),
        id,
        name: request["jobName"].as_str().unwrap_or_default().to_owned(),
        token,
        status: if message.is_some() { "Failed" } else { "Submitted" },
        output_uri: output.to_owned(),
        records,
        message,
    });
    ok(json!({"jobArn": arn}))
}

/// One step of job `index`; a job that completes writes its records' output to S3.
async fn step(state: &Arc<Mutex<Jobs>>, index: usize) {
    let (out, url) = {
        let mut jobs = state.lock().unwrap_or_else(|p| p.into_inner());
        let outcome = jobs.outcome;
        let next = match (jobs.jobs[index].status, outcome) {
            ("Submitted", _) => "InProgress",
            ("InProgress", BatchOutcome::Complete) => "Completed",
            ("InProgress", BatchOutcome::Fail) => "Failed",
            ("InProgress", BatchOutcome::Expire) => "Expired",
            ("Stopping", _) => "Stopped",
            (done, _) => done,
        };
        let was = jobs.jobs[index].status;
        jobs.jobs[index].status = next;
        if next != "Completed" || was == "Completed" {
            return;
        }
        let records = jobs.jobs[index].records.clone();
        let mut lines = Vec::new();
        for (n, (record_id, input)) in records.iter().enumerate() {
            let script = jobs.scripts.get(record_id).cloned();
            let line = match &script {
                Some(LineScript::Omit) => continue,
                Some(LineScript::Error(status)) => json!({"recordId": record_id, "modelInput": input,
                    "error": {"errorCode": status, "errorMessage": "stub error"}}),
                _ => {
                    let spec = &input["toolConfig"]["tools"][0]["toolSpec"];
                    let answer = scripted_answer(&script, &spec["inputSchema"]["json"]);
                    let mut output = json!({"output": {"message": {"role": "assistant", "content": [
                        {"toolUse": {"toolUseId": format!("tooluse_{n}"), "name": spec["name"], "input": answer}}]}},
                        "stopReason": "tool_use", "usage": {"inputTokens": 11, "outputTokens": 7, "totalTokens": 18}});
                    pad(&mut output, &script);
                    json!({"recordId": record_id, "modelInput": input, "modelOutput": output})
                }
            };
            let copies = if script == Some(LineScript::Duplicate) { 2 } else { 1 };
            for _ in 0..copies {
                lines.push(line.to_string());
            }
        }
        shuffle(&mut lines, &mut jobs.random);
        let job = &jobs.jobs[index];
        let key = format!("{}/{}/input.jsonl.out", job.output_uri.trim_end_matches('/'), job.id);
        let url = s3_url(&jobs.moto, &key).unwrap_or_default();
        (lines.iter().map(|l| format!("{l}\n")).collect::<String>(), url)
    };
    let response = s3(reqwest::Method::PUT, &url, out.into_bytes()).await;
    assert!(response.status().is_success(), "write {url}: {}", response.status());
}
