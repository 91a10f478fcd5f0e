//! Forwarding: an allowed call goes on to its emulator as it came, and the answer comes back
//! unchanged.

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};

use super::registry::Shared;

/// A JSON-protocol call (`POST /`) to `upstream`.
pub(super) async fn forward(shared: &Shared, upstream: &str, headers: HeaderMap, body: Bytes) -> Response {
    forward_to(shared, Method::POST, &format!("{upstream}/"), &headers, body).await
}

/// The request as it came (method, headers but the host's, body) to `url`; the answer back.
pub(super) async fn forward_to(
    shared: &Shared,
    method: Method,
    url: &str,
    headers: &HeaderMap,
    body: Bytes,
) -> Response {
    let method = reqwest::Method::from_bytes(method.as_str().as_bytes()).unwrap_or(reqwest::Method::POST);
    let mut request = shared.upstreams.http.request(method, url).body(body);
    for (name, value) in headers {
        if name != "host" && name != "content-length" {
            request = request.header(name, value);
        }
    }
    match request.send().await {
        Ok(answer) => {
            let status = StatusCode::from_u16(answer.status().as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
            let mut out = HeaderMap::new();
            for (name, value) in answer.headers() {
                if name != "content-length" && name != "transfer-encoding" && name != "connection" {
                    out.insert(name.clone(), value.clone());
                }
            }
            let bytes = answer.bytes().await.unwrap_or_default();
            (status, out, bytes).into_response()
        }
        Err(error) => {
            (StatusCode::BAD_GATEWAY, format!("the emulator did not answer: {error}")).into_response()
        }
    }
}
