//! An HTTP server that answers each request with what a script says, and records every request.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use aitasks_client::{Client, RetryPolicy};
use axum::body::{to_bytes, Body};
use axum::extract::{Request, State};
use axum::response::Response;
use serde_json::{json, Value};
use tokio::time::Instant;

/// A request as the stub saw it.
#[derive(Debug, Clone)]
pub(crate) struct Hit {
    pub(crate) method: String,
    /// Path and query.
    pub(crate) target: String,
    pub(crate) body: Value,
    pub(crate) authorization: Option<String>,
    pub(crate) idempotency_key: Option<String>,
    pub(crate) at: Instant,
}

/// What to answer: status, headers, JSON body.
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(&'static str, String)>,
    pub(crate) body: Value,
}

impl Answer {
    pub(crate) fn json(status: u16, body: Value) -> Answer {
        Answer { status, headers: Vec::new(), body }
    }

    pub(crate) fn error(status: u16, code: &str) -> Answer {
        Answer::json(status, json!({"error": {"code": code, "message": format!("{code} from the stub")}}))
    }

    pub(crate) fn header(mut self, name: &'static str, value: impl ToString) -> Answer {
        self.headers.push((name, value.to_string()));
        self
    }
}

type Responder = dyn Fn(usize, &Hit) -> Answer + Send + Sync;

struct Shared {
    hits: Mutex<Vec<Hit>>,
    respond: Box<Responder>,
}

/// A running stub.
pub(crate) struct Stub {
    pub(crate) url: String,
    shared: Arc<Shared>,
}

impl Stub {
    /// Answer request number `n` (from 0) with `respond(n, &hit)`.
    pub(crate) async fn start(respond: impl Fn(usize, &Hit) -> Answer + Send + Sync + 'static) -> Stub {
        let shared = Arc::new(Shared { hits: Mutex::new(Vec::new()), respond: Box::new(respond) });
        let app = axum::Router::new().fallback(handle).with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Stub { url, shared }
    }

    /// Answer the scripted answers in order, then the last one again and again.
    pub(crate) async fn script(answers: Vec<Answer>) -> Stub {
        let answers = Mutex::new(answers);
        Stub::start(move |n, _| {
            let answers = answers.lock().unwrap();
            let a = &answers[n.min(answers.len() - 1)];
            Answer { status: a.status, headers: a.headers.clone(), body: a.body.clone() }
        })
        .await
    }

    pub(crate) fn hits(&self) -> Vec<Hit> {
        self.shared.hits.lock().unwrap().clone()
    }

    /// A client of this stub with a fast retry policy of `tries` tries.
    pub(crate) fn client(&self, tries: u32) -> Client {
        Client::builder(&self.url)
            .token("stub-token")
            .retry(RetryPolicy {
                max_tries: tries,
                base_delay: Duration::from_millis(20),
                max_delay: Duration::from_millis(100),
                max_retry_after: Duration::from_secs(5),
            })
            .build()
            .unwrap()
    }
}

async fn handle(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let method = request.method().to_string();
    let target = request.uri().path_and_query().map(|p| p.to_string()).unwrap_or_default();
    let headers = request.headers();
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let (authorization, idempotency_key) = (header("authorization"), header("idempotency-key"));
    let bytes = to_bytes(request.into_body(), 64 << 20).await.unwrap();
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let hit = Hit { method, target, body, authorization, idempotency_key, at: Instant::now() };
    let n = {
        let mut hits = shared.hits.lock().unwrap();
        hits.push(hit.clone());
        hits.len() - 1
    };
    let answer = (shared.respond)(n, &hit);
    let mut response = Response::builder()
        .status(answer.status)
        .header("content-type", "application/json")
        .header("apigw-requestid", format!("req-{n}"));
    for (name, value) in answer.headers {
        response = response.header(name, value);
    }
    response.body(Body::from(answer.body.to_string())).unwrap()
}

/// A task body as the API answers it.
pub(crate) fn task_json(id: &str, status: &str) -> Value {
    json!({
        "id": id, "appId": "app", "runId": null, "stepKey": "label", "effectKey": "k1",
        "kind": "classify", "request": {"kind": "classify"}, "inputHash": "h", "modelId": "default",
        "status": status, "output": if status == "succeeded" { json!("spam") } else { Value::Null },
        "usage": null, "attempts": 1, "errorCode": null, "errorMessage": null,
        "cancelRequestedAt": null, "createdAt": "2026-12-03T10:00:00Z", "startedAt": null,
        "completedAt": null, "updatedAt": "2026-12-03T10:00:01Z"
    })
}

pub(crate) const TASK_ID: &str = "01936f3e-4b2a-7c3d-8e4f-5a6b7c8d9e0f";
