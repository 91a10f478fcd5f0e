//! A local AWS Lambda Runtime API (the `2018-06-01` HTTP interface a custom runtime polls), so
//! that a function's real release binary runs as Lambda runs it: the process starts, asks for
//! the next invocation, answers it (or reports an error), and asks again. A start-up failure is
//! reported to `init/error`, as in Lambda.
//!
//! One [`RuntimeApi`] serves one function process. [`RuntimeApi::invoke`] hands it an event and
//! waits for its answer; the `Lambda-Runtime-Deadline-Ms` header carries the function's timeout.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::routing::{get, post};
use serde_json::Value;
use tokio::sync::Notify;

/// How one invocation ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// `invocation/{id}/response`: the handler's result.
    Response(Value),
    /// `invocation/{id}/error`: the handler failed; the runtime's error document.
    Error(Value),
}

/// Why an invocation has no answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum InvokeError {
    /// The process reported a start-up failure to `init/error` before it took the event.
    #[error("the function failed to start: {0}")]
    Init(Value),
    /// No answer within the function's timeout (Lambda would end the process).
    #[error("no answer within {0:?}")]
    TimedOut(Duration),
}

struct Pending {
    id: String,
    event: Value,
    timeout: Duration,
}

#[derive(Default)]
struct Inner {
    queue: VecDeque<Pending>,
    answers: HashMap<String, Answer>,
    init_error: Option<Value>,
    /// When the process first asked for an invocation: its start-up is over.
    first_next: Option<Instant>,
}

#[derive(Clone)]
struct Shared {
    inner: Arc<Mutex<Inner>>,
    /// Wakes a `next` waiting for an event.
    event_ready: Arc<Notify>,
    /// Wakes an `invoke` waiting for an answer.
    answered: Arc<Notify>,
    function_arn: Arc<String>,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The Runtime API of one function process.
pub struct RuntimeApi {
    /// `host:port`, the value of `AWS_LAMBDA_RUNTIME_API`.
    pub address: String,
    shared: Shared,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for RuntimeApi {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl RuntimeApi {
    /// Listen on a free loopback port. `function_arn` is what each invocation names.
    pub async fn start(function_arn: &str) -> std::io::Result<RuntimeApi> {
        let shared = Shared {
            inner: Arc::default(),
            event_ready: Arc::new(Notify::new()),
            answered: Arc::new(Notify::new()),
            function_arn: Arc::new(function_arn.to_owned()),
        };
        let router = axum::Router::new()
            .route("/2018-06-01/runtime/invocation/next", get(next))
            .route("/2018-06-01/runtime/invocation/{id}/response", post(response))
            .route("/2018-06-01/runtime/invocation/{id}/error", post(error))
            .route("/2018-06-01/runtime/init/error", post(init_error))
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?.to_string();
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        Ok(RuntimeApi { address, shared, server })
    }

    /// When the process first asked for an invocation (its cold start ended), if it has.
    pub fn ready_at(&self) -> Option<Instant> {
        self.shared.lock().first_next
    }

    /// The start-up failure the process reported, if it did.
    pub fn init_error(&self) -> Option<Value> {
        self.shared.lock().init_error.clone()
    }

    /// Hand the process one event and wait for its answer, for at most `timeout` (which is also
    /// the deadline the invocation is given).
    pub async fn invoke(&self, event: Value, timeout: Duration) -> Result<Answer, InvokeError> {
        let id = uuid::Uuid::new_v4().to_string();
        let until = tokio::time::Instant::now() + timeout;
        {
            let mut inner = self.shared.lock();
            inner.queue.push_back(Pending { id: id.clone(), event, timeout });
        }
        self.shared.event_ready.notify_one();
        loop {
            let answered = self.shared.answered.notified();
            {
                let mut inner = self.shared.lock();
                if let Some(answer) = inner.answers.remove(&id) {
                    return Ok(answer);
                }
                if let Some(init) = &inner.init_error {
                    return Err(InvokeError::Init(init.clone()));
                }
            }
            if tokio::time::timeout_at(until, answered).await.is_err() {
                return Err(InvokeError::TimedOut(timeout));
            }
        }
    }

    /// Wait until the process asked for its first invocation or reported a start-up failure;
    /// `false` when neither happened within `timeout`.
    pub async fn wait_started(&self, timeout: Duration) -> bool {
        let until = tokio::time::Instant::now() + timeout;
        loop {
            {
                let inner = self.shared.lock();
                if inner.first_next.is_some() || inner.init_error.is_some() {
                    return true;
                }
            }
            if tokio::time::Instant::now() >= until {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

async fn next(State(shared): State<Shared>) -> (HeaderMap, String) {
    loop {
        let ready = shared.event_ready.notified();
        {
            let mut inner = shared.lock();
            inner.first_next.get_or_insert_with(Instant::now);
            if let Some(pending) = inner.queue.pop_front() {
                let deadline =
                    SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default() + pending.timeout;
                let mut headers = HeaderMap::new();
                let mut set = |name: &'static str, value: String| {
                    if let Ok(value) = HeaderValue::from_str(&value) {
                        headers.insert(name, value);
                    }
                };
                set("lambda-runtime-aws-request-id", pending.id.clone());
                set("lambda-runtime-deadline-ms", deadline.as_millis().to_string());
                set("lambda-runtime-invoked-function-arn", shared.function_arn.to_string());
                // A sampled trace per invocation, as Lambda gives a function with active tracing.
                set("lambda-runtime-trace-id", aitasks_runtime::xray::TraceContext::new_root().header());
                return (headers, pending.event.to_string());
            }
        }
        ready.await;
    }
}

fn record(shared: &Shared, id: String, answer: Answer) -> StatusCode {
    shared.lock().answers.insert(id, answer);
    shared.answered.notify_waiters();
    StatusCode::ACCEPTED
}

async fn response(State(shared): State<Shared>, Path(id): Path<String>, body: String) -> StatusCode {
    let value = serde_json::from_str(&body).unwrap_or(Value::String(body));
    record(&shared, id, Answer::Response(value))
}

async fn error(State(shared): State<Shared>, Path(id): Path<String>, body: String) -> StatusCode {
    let value = serde_json::from_str(&body).unwrap_or(Value::String(body));
    record(&shared, id, Answer::Error(value))
}

async fn init_error(State(shared): State<Shared>, body: String) -> StatusCode {
    let value = serde_json::from_str(&body).unwrap_or(Value::String(body));
    shared.lock().init_error = Some(value);
    shared.answered.notify_waiters();
    StatusCode::ACCEPTED
}
