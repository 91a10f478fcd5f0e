//! A Step Functions stand-in for the callback API at volume: it speaks the service's wire format
//! (`POST /`, `X-Amz-Target: AWSStepFunctions.SendTaskHeartbeat|SendTaskSuccess|SendTaskFailure`,
//! awsJson1_0 bodies, errors named by `__type`), records every call with the moment it arrived
//! (a failure with its `error` and `cause`), and answers after an optional latency (AWS's round trip). moto runs real state machines but
//! is too slow for ten thousand waiting tokens; this one measures what a caller with
//! `HeartbeatSeconds` would see: the longest gap between heartbeats per token, the calls a
//! second, how many were in flight at once. A token told [`SfnStub::time_out`] answers
//! `TaskTimedOut`, as Step Functions does for a caller that stopped waiting. With
//! [`SfnStub::set_quota`] its `SendTaskHeartbeat` is throttled as the account's is: a token
//! bucket, part of whose refill the workflows' own calls take, and `ThrottlingException` when
//! it is empty. [`SfnStub::fail_heartbeats`] fails the next heartbeats with a 503, as a moment's
//! trouble on AWS's side does.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aws_config::SdkConfig;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

/// One call the stand-in received.
#[derive(Debug, Clone, PartialEq)]
pub struct SfnCall {
    /// `SendTaskHeartbeat`, `SendTaskSuccess` or `SendTaskFailure`.
    pub action: String,
    pub token: String,
    pub at: Instant,
    /// The error type answered, `None` when accepted.
    pub refused: Option<String>,
    /// A `SendTaskFailure`'s `error` and `cause`, as sent.
    pub error: Option<String>,
    pub cause: Option<String>,
}

#[derive(Default)]
struct Recorded {
    calls: Vec<SfnCall>,
    timed_out: HashSet<String>,
    latency: Duration,
    in_flight: usize,
    most_in_flight: usize,
    bucket: Option<Bucket>,
    /// The heartbeats still to fail with a 5xx (`ServiceUnavailable`), whoever's.
    failing: usize,
}

/// Step Functions' throttle of one API, per account and region: a bucket of `size` calls,
/// refilled at `refill` a second, of which the account's workflows take `others` a second.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quota {
    pub size: f64,
    pub refill: f64,
    pub others: f64,
}

#[derive(Debug)]
struct Bucket {
    quota: Quota,
    calls: f64,
    at: Instant,
}

impl Bucket {
    /// Take one call from the bucket, if it holds one.
    fn take(&mut self, now: Instant) -> bool {
        let elapsed = now.saturating_duration_since(self.at).as_secs_f64();
        self.at = self.at.max(now);
        let quota = self.quota;
        self.calls = (self.calls + elapsed * (quota.refill - quota.others)).clamp(0.0, quota.size);
        if self.calls >= 1.0 {
            self.calls -= 1.0;
            true
        } else {
            false
        }
    }
}

/// The running stand-in (it runs until the test process ends).
#[derive(Clone)]
pub struct SfnStub {
    pub endpoint: String,
    state: Arc<Mutex<Recorded>>,
}

impl SfnStub {
    pub async fn start() -> SfnStub {
        let state: Arc<Mutex<Recorded>> = Arc::default();
        let router = axum::Router::new().fallback(handle).with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let endpoint = format!("http://{}", listener.local_addr().expect("address"));
        tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        SfnStub { endpoint, state }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Recorded> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// An SDK configuration whose Step Functions (and Lambda) client calls this stand-in.
    pub async fn sdk_config(&self) -> SdkConfig {
        crate::moto::local_sdk_config(&self.endpoint).await
    }

    /// Every call waits this long before its answer.
    pub fn set_latency(&self, latency: Duration) {
        self.lock().latency = latency;
    }

    /// Throttle `SendTaskHeartbeat` as `quota` says, from a full bucket.
    pub fn set_quota(&self, quota: Quota) {
        self.lock().bucket = Some(Bucket { quota, calls: quota.size, at: Instant::now() });
    }

    /// The caller holding `token` stopped waiting: every call on it is `TaskTimedOut`.
    /// The next `calls` heartbeats fail as AWS's do for a moment: 503 `ServiceUnavailable`.
    pub fn fail_heartbeats(&self, calls: usize) {
        self.lock().failing = calls;
    }

    pub fn time_out(&self, token: &str) {
        self.lock().timed_out.insert(token.to_owned());
    }

    /// Every call received, in order of arrival.
    pub fn calls(&self) -> Vec<SfnCall> {
        self.lock().calls.clone()
    }

    /// The most calls in flight at once.
    pub fn most_in_flight(&self) -> usize {
        self.lock().most_in_flight
    }

    /// The accepted heartbeats of each token, in order.
    pub fn heartbeats(&self) -> HashMap<String, Vec<Instant>> {
        let mut beats: HashMap<String, Vec<Instant>> = HashMap::new();
        for call in
            self.lock().calls.iter().filter(|c| c.action == "SendTaskHeartbeat" && c.refused.is_none())
        {
            beats.entry(call.token.clone()).or_default().push(call.at);
        }
        beats
    }

    /// The most calls that arrived within any one second (a sliding window).
    pub fn peak_calls_per_second(&self) -> usize {
        let mut times: Vec<Instant> = self.lock().calls.iter().map(|c| c.at).collect();
        times.sort_unstable();
        let mut start = 0;
        let mut peak = 0;
        for end in 0..times.len() {
            while times[end].duration_since(times[start]) >= Duration::from_secs(1) {
                start += 1;
            }
            peak = peak.max(end - start + 1);
        }
        peak
    }
}

/// The longest silence each token saw, from `since` (when it was attached, or the run began)
/// through its heartbeats to `until`: what a state's `HeartbeatSeconds` is measured against.
pub fn longest_gaps(
    tokens: &[String],
    beats: &HashMap<String, Vec<Instant>>,
    since: Instant,
    until: Instant,
) -> Vec<Duration> {
    tokens
        .iter()
        .map(|token| {
            let mut last = since;
            let mut longest = Duration::ZERO;
            for at in beats.get(token).into_iter().flatten().chain(std::iter::once(&until)) {
                longest = longest.max(at.saturating_duration_since(last));
                last = (*at).max(last);
            }
            longest
        })
        .collect()
}

/// Each token's longest gap from its first heartbeat to `until` (a token never heartbeated has
/// none), sorted: what a state that had its first heartbeat would see between them.
pub fn gaps_between_heartbeats(
    tokens: &[String],
    beats: &HashMap<String, Vec<Instant>>,
    until: Instant,
) -> Vec<Duration> {
    let mut between: Vec<Duration> = tokens
        .iter()
        .filter_map(|token| {
            let first = *beats.get(token)?.first()?;
            longest_gaps(std::slice::from_ref(token), beats, first, until).pop()
        })
        .collect();
    between.sort_unstable();
    between
}

fn error(kind: &str) -> Response {
    let body = json!({"__type": kind, "message": format!("{kind} from the stand-in")}).to_string();
    let status =
        if kind == "ServiceUnavailable" { StatusCode::SERVICE_UNAVAILABLE } else { StatusCode::BAD_REQUEST };
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert("x-amzn-errortype", kind.parse().expect("static header"));
    headers.insert("content-type", "application/x-amz-json-1.0".parse().expect("static header"));
    response
}

async fn handle(State(state): State<Arc<Mutex<Recorded>>>, headers: HeaderMap, body: Bytes) -> Response {
    let at = Instant::now();
    let action = headers
        .get("x-amz-target")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("AWSStepFunctions."))
        .unwrap_or_default()
        .to_owned();
    let sent = serde_json::from_slice::<Value>(&body).unwrap_or(Value::Null);
    let text = |field: &str| sent[field].as_str().map(str::to_owned);
    let token = text("taskToken").unwrap_or_default();
    let (error_sent, cause) = (text("error"), text("cause"));
    let latency = {
        let mut recorded = state.lock().unwrap_or_else(|p| p.into_inner());
        recorded.in_flight += 1;
        recorded.most_in_flight = recorded.most_in_flight.max(recorded.in_flight);
        recorded.latency
    };
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    let mut recorded = state.lock().unwrap_or_else(|p| p.into_inner());
    recorded.in_flight -= 1;
    let refused = if !matches!(action.as_str(), "SendTaskHeartbeat" | "SendTaskSuccess" | "SendTaskFailure") {
        Some("UnknownOperationException")
    } else if token.is_empty() {
        Some("InvalidToken")
    } else if recorded.timed_out.contains(&token) {
        Some("TaskTimedOut")
    } else if action == "SendTaskHeartbeat" && recorded.bucket.as_mut().is_some_and(|bucket| !bucket.take(at))
    {
        Some("ThrottlingException")
    } else if action == "SendTaskHeartbeat" && recorded.failing > 0 {
        recorded.failing -= 1;
        Some("ServiceUnavailable")
    } else {
        None
    };
    recorded.calls.push(SfnCall {
        action,
        token,
        at,
        refused: refused.map(str::to_owned),
        error: error_sent,
        cause,
    });
    match refused {
        Some(kind) => error(kind),
        None => {
            let mut response = (StatusCode::OK, "{}").into_response();
            response
                .headers_mut()
                .insert("content-type", "application/x-amz-json-1.0".parse().expect("static header"));
            response
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bucket_gives_its_size_at_once_then_what_the_workflows_leave_of_its_refill() {
        let t0 = Instant::now();
        let quota = Quota { size: 3.0, refill: 5.0, others: 3.0 };
        let mut bucket = Bucket { quota, calls: 3.0, at: t0 };
        let taken = (0..5).filter(|_| bucket.take(t0)).count();
        assert_eq!(taken, 3, "the full bucket, then throttled");
        let later = t0 + Duration::from_secs(2);
        let taken = (0..10).filter(|_| bucket.take(later)).count();
        assert_eq!(taken, 3, "two seconds of 5 - 3 a second, capped at the size");
    }

    #[test]
    fn a_token_s_longest_gap_runs_from_its_start_through_its_beats_to_the_end() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let beats = HashMap::from([("a".to_owned(), vec![t0 + s(10), t0 + s(40), t0 + s(50)])]);
        let gaps = longest_gaps(&["a".to_owned(), "b".to_owned()], &beats, t0, t0 + s(60));
        assert_eq!(gaps, [s(30), s(60)], "a: 10..40; b never beat");
    }
}
