//! Lambda's durable-function callback API, locally: no emulator implements it, so this speaks its
//! REST paths (`POST /2025-12-01/durable-execution-callbacks/{CallbackId}/succeed|fail|heartbeat`,
//! errors named by `x-amzn-errortype`) and accepts only requests SigV4-signed with the function's
//! credentials for service `lambda` (it signs each request again with the same secret and
//! compares, as Lambda does). Callbacks are opened by the test; the first success or failure
//! closes one, and any later call on it is a `CallbackTimeoutException`, as Lambda answers for a
//! closed callback. Faults can be injected (throttling, 5xx) to exercise the retries.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

/// The credentials the stub accepts (give them to the function).
pub const DURABLE_ACCESS_KEY: &str = "AKIDDURABLESTUB";
pub const DURABLE_SECRET_KEY: &str = "durable-stub-secret-do-not-log";

/// A call the stub received and what it answered.
#[derive(Debug, Clone, PartialEq)]
pub struct DurableCall {
    pub callback_id: String,
    /// `succeed`, `fail` or `heartbeat`.
    pub action: String,
    /// The `Result` bytes of a success as text, the error object of a failure, `Null` otherwise.
    pub body: Value,
    /// The error type answered, `None` when accepted.
    pub refused: Option<String>,
}

#[derive(Default)]
struct Callbacks {
    /// Open callbacks: true once closed by a success or failure.
    closed: HashMap<String, bool>,
    /// Callbacks whose caller timed out: every call is a `CallbackTimeoutException`.
    timed_out: Vec<String>,
    calls: Vec<DurableCall>,
    /// One in this many calls is answered 429 or 500 before it is looked at (0: none).
    fault_every: u64,
    seen: u64,
    bad_signatures: u64,
}

/// The running stub.
#[derive(Clone)]
pub struct DurableStub {
    pub endpoint: String,
    state: Arc<Mutex<Callbacks>>,
}

impl DurableStub {
    pub async fn start() -> DurableStub {
        let state: Arc<Mutex<Callbacks>> = Arc::default();
        let router = axum::Router::new().fallback(handle).with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let endpoint = format!("http://{}", listener.local_addr().expect("address"));
        tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        DurableStub { endpoint, state }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Callbacks> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new open callback: its id, in the shape Lambda gives them (base64).
    pub fn open(&self) -> String {
        let id = base64_id(&uuid::Uuid::new_v4());
        self.lock().closed.insert(id.clone(), false);
        id
    }

    /// The caller stopped waiting: every call on `id` from now on times out.
    pub fn time_out(&self, id: &str) {
        self.lock().timed_out.push(id.to_owned());
    }

    /// Answer one call in `every` with a throttle or a 5xx, alternately (0: none).
    pub fn faults(&self, every: u64) {
        self.lock().fault_every = every;
    }

    /// Every call received, in order.
    pub fn calls(&self) -> Vec<DurableCall> {
        self.lock().calls.clone()
    }

    /// The successes and failures accepted for `id` (a closed callback takes exactly one).
    pub fn accepted_answers(&self, id: &str) -> Vec<DurableCall> {
        self.calls()
            .into_iter()
            .filter(|c| c.callback_id == id && c.refused.is_none() && c.action != "heartbeat")
            .collect()
    }

    /// Requests refused for their signature.
    pub fn bad_signatures(&self) -> u64 {
        self.lock().bad_signatures
    }
}

/// A callback id as Lambda hands them out: base64 with `+`, `/` and padding, which the SDK must
/// percent-encode in the path.
fn base64_id(id: &uuid::Uuid) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    // Leading bytes that encode as `++++////`.
    let mut bytes = vec![0xfb, 0xef, 0xbe, 0xff, 0xff, 0xff];
    bytes.extend_from_slice(id.as_bytes());
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    while !out.len().is_multiple_of(4) {
        out.push('=');
    }
    out
}

fn error(status: StatusCode, kind: &str) -> Response {
    let mut response =
        (status, json!({"Type": "User", "message": format!("{kind} from the stub")}).to_string())
            .into_response();
    let headers = response.headers_mut();
    headers.insert("x-amzn-errortype", kind.parse().expect("static header"));
    headers.insert("content-type", "application/json".parse().expect("static header"));
    response
}

fn percent_decode(text: &str) -> String {
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

async fn handle(
    State(state): State<Arc<Mutex<Callbacks>>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if !signed_with_secret(&method, &uri, &headers, &body) {
        state.lock().unwrap_or_else(|p| p.into_inner()).bad_signatures += 1;
        return error(StatusCode::FORBIDDEN, "InvalidSignatureException");
    }
    let parts: Vec<&str> = uri.path().trim_start_matches('/').split('/').collect();
    let [version, "durable-execution-callbacks", id, action] = parts.as_slice() else {
        return error(StatusCode::NOT_FOUND, "UnknownOperationException");
    };
    if *version != "2025-12-01" || method != Method::POST {
        return error(StatusCode::NOT_FOUND, "UnknownOperationException");
    }
    let id = percent_decode(id);
    let action = (*action).to_owned();
    let mut callbacks = state.lock().unwrap_or_else(|p| p.into_inner());
    callbacks.seen += 1;
    let fault = callbacks.fault_every > 0 && callbacks.seen % callbacks.fault_every == 0;
    let parsed = match action.as_str() {
        "succeed" => Value::String(String::from_utf8_lossy(&body).into_owned()),
        "fail" => serde_json::from_slice(&body).unwrap_or(Value::Null),
        _ => Value::Null,
    };
    let refused = if fault {
        Some(if callbacks.seen % (2 * callbacks.fault_every) == 0 {
            (StatusCode::TOO_MANY_REQUESTS, "TooManyRequestsException")
        } else {
            (StatusCode::INTERNAL_SERVER_ERROR, "ServiceException")
        })
    } else if !matches!(action.as_str(), "succeed" | "fail" | "heartbeat") {
        Some((StatusCode::NOT_FOUND, "UnknownOperationException"))
    } else if callbacks.timed_out.contains(&id) {
        Some((StatusCode::BAD_REQUEST, "CallbackTimeoutException"))
    } else {
        match callbacks.closed.get(&id).copied() {
            None => Some((StatusCode::NOT_FOUND, "ResourceNotFoundException")),
            Some(true) => Some((StatusCode::BAD_REQUEST, "CallbackTimeoutException")),
            Some(false) => {
                if action != "heartbeat" {
                    callbacks.closed.insert(id.clone(), true);
                }
                None
            }
        }
    };
    callbacks.calls.push(DurableCall {
        callback_id: id,
        action,
        body: parsed,
        refused: refused.map(|(_, kind)| kind.to_owned()),
    });
    match refused {
        Some((status, kind)) => error(status, kind),
        None => (StatusCode::OK, "").into_response(),
    }
}

/// Whether the request's SigV4 signature is the one [`DURABLE_SECRET_KEY`] gives (the headers it
/// says it signed, its own timestamp, region us-east-1, service lambda).
fn signed_with_secret(method: &Method, uri: &Uri, headers: &HeaderMap, body: &[u8]) -> bool {
    crate::sigv4::signed_with((method, uri, headers, body), DURABLE_ACCESS_KEY, DURABLE_SECRET_KEY, "lambda")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_base64_and_dates_read_back() {
        let id = base64_id(&uuid::Uuid::nil());
        assert!(id.len().is_multiple_of(4) && id.contains('/') && id.contains('+'), "{id}");
        assert_eq!(percent_decode("cb%2F%2Bx%3D%3D"), "cb/+x==");
        let t = crate::sigv4::amz_date("20260102T030405Z").unwrap();
        assert_eq!(t.duration_since(std::time::SystemTime::UNIX_EPOCH).unwrap().as_secs(), 1_767_323_045);
    }
}
