//! `/console` and its files, from the `aitasks-console` crate, before any token check.

use axum::body::Body;
use axum::response::Response;

/// The console's answer to a request under `/console`, or `None` for any other path.
pub(crate) fn answer(parts: &http::request::Parts) -> Option<Response> {
    let if_none_match = parts.headers.get(http::header::IF_NONE_MATCH).and_then(|v| v.to_str().ok());
    let answer = aitasks_console::answer(parts.method.as_str(), parts.uri.path(), if_none_match)?;
    let mut response = Response::new(Body::from(answer.body));
    *response.status_mut() =
        http::StatusCode::from_u16(answer.status).unwrap_or(http::StatusCode::INTERNAL_SERVER_ERROR);
    for (name, value) in answer.headers {
        if let Ok(value) = http::HeaderValue::from_str(&value) {
            response.headers_mut().insert(name, value);
        }
    }
    Some(response)
}
