//! API Gateway HTTP API requests in, responses out.

use aitasks_contracts::AppId;
use aitasks_runtime::metrics::{Document, Unit};
use aitasks_runtime::ApiError;
use aws_lambda_events::apigw::{ApiGatewayV2httpRequest, ApiGatewayV2httpResponse};
use aws_lambda_events::encodings::Body;
use base64::Engine;
use http::{HeaderMap, HeaderValue, Method};
use percent_encoding::percent_decode_str;
use serde::Serialize;
use serde_json::json;
use tracing::Instrument;

/// A view of an API Gateway request with what the handlers need.
pub struct HttpRequest<'a> {
    event: &'a ApiGatewayV2httpRequest,
}

impl<'a> HttpRequest<'a> {
    pub fn new(event: &'a ApiGatewayV2httpRequest) -> HttpRequest<'a> {
        HttpRequest { event }
    }

    pub fn method(&self) -> &Method {
        &self.event.request_context.http.method
    }

    /// The path split into decoded segments: `/v1/tasks/abc` → `["v1", "tasks", "abc"]`.
    pub fn segments(&self) -> Vec<String> {
        let raw =
            self.event.raw_path.as_deref().or(self.event.request_context.http.path.as_deref()).unwrap_or("/");
        raw.trim_matches('/')
            .split('/')
            .filter(|s| !s.is_empty())
            .map(|s| percent_decode_str(s).decode_utf8_lossy().into_owned())
            .collect()
    }

    /// The first value of a query parameter.
    pub fn query(&self, name: &str) -> Option<&str> {
        self.event.query_string_parameters.first(name)
    }

    /// A header's value as sent (its first, when it came more than once).
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        self.event.headers.get(name).map(HeaderValue::as_bytes)
    }

    /// The body as bytes (API Gateway base64-encodes bodies that are not text).
    pub fn body(&self) -> Result<Vec<u8>, ApiError> {
        let Some(body) = &self.event.body else { return Ok(Vec::new()) };
        if self.event.is_base64_encoded {
            base64::engine::general_purpose::STANDARD
                .decode(body)
                .map_err(|_| ApiError::invalid("body", "is not valid base64"))
        } else {
            Ok(body.clone().into_bytes())
        }
    }

    /// The tenant: the verified claim named `claim` in the JWT authorizer's context. The
    /// authorizer (or the dev server) verified the token; a request without the claim is
    /// unauthorized.
    pub fn tenant(&self, claim: &str) -> Result<AppId, ApiError> {
        self.event
            .request_context
            .authorizer
            .as_ref()
            .and_then(|authorizer| authorizer.jwt.as_ref())
            .and_then(|jwt| jwt.claims.get(claim))
            .and_then(|tenant| AppId::parse(tenant))
            .inspect(|tenant| crate::request_log::note_tenant(tenant.as_str()))
            .ok_or(ApiError::Unauthorized)
    }
}

pub(crate) fn response(status: u16, body: String, extra: HeaderMap) -> ApiGatewayV2httpResponse {
    let mut headers = extra;
    headers.insert(http::header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    let mut response = ApiGatewayV2httpResponse::default();
    response.status_code = i64::from(status);
    response.headers = headers;
    response.body = Some(Body::Text(body));
    response
}

/// Run a router over an API Gateway request: every `ApiError` it returns becomes its HTTP
/// answer here, so handlers only route.
pub async fn serve_http<'a, F, Fut>(event: &'a ApiGatewayV2httpRequest, route: F) -> ApiGatewayV2httpResponse
where
    F: FnOnce(HttpRequest<'a>) -> Fut,
    Fut: std::future::Future<Output = Result<ApiGatewayV2httpResponse, ApiError>>,
{
    let started = std::time::Instant::now();
    let route_key = crate::request_log::route_of(event);
    let span = tracing::info_span!(
        "request",
        route = %route_key,
        api_request_id = event.request_context.request_id.as_deref().unwrap_or_default(),
        tenant = tracing::field::Empty,
        task_id = tracing::field::Empty,
    );
    let result = route(HttpRequest::new(event)).instrument(span.clone()).await;
    let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
    let outcome = match &result {
        Ok(response) => response.status_code.to_string(),
        Err(error) => error.code().as_str().to_owned(),
    };
    Document::new(&[&["Route"], &["Route", "Outcome"]])
        .dimension("Route", &route_key)
        .dimension("Outcome", &outcome)
        .metric("Requests", Unit::Count, 1.0)
        .metric("LatencyMs", Unit::Milliseconds, latency_ms)
        .emit();
    let _entered = span.enter();
    match result {
        Ok(response) => {
            tracing::info!(status = response.status_code, latency_ms, "request");
            response
        }
        Err(error) => {
            let (status, code) = (error.status(), error.code().as_str());
            if status >= 500 {
                // The cause, with every source (the store's SQLSTATE among them), stays here;
                // the caller gets an opaque body.
                tracing::error!(status, error_code = code, latency_ms, cause = %crate::error_chain(&error), "request");
            } else {
                tracing::info!(status, error_code = code, latency_ms, "request");
            }
            error_response(&error)
        }
    }
}

/// A JSON success answer.
pub fn json_response(status: u16, value: &impl Serialize) -> ApiGatewayV2httpResponse {
    match serde_json::to_string(value) {
        Ok(body) => response(status, body, HeaderMap::new()),
        Err(error) => error_response(&ApiError::Internal(Box::new(error))),
    }
}

/// The one mapping from [`ApiError`] to an HTTP answer: `{"error": {code, message, details?}}`,
/// `Retry-After` on rate limits, and an opaque body for 5xx (the cause goes to the log).
pub fn error_response(error: &ApiError) -> ApiGatewayV2httpResponse {
    let mut headers = HeaderMap::new();
    if let Some(seconds) = retry_after_seconds(error) {
        if let Ok(value) = HeaderValue::from_str(&seconds.to_string()) {
            headers.insert(http::header::RETRY_AFTER, value);
        }
    }
    if let ApiError::MethodNotAllowed { allow } = error {
        if let Ok(value) = HeaderValue::from_str(&allow.join(", ")) {
            headers.insert(http::header::ALLOW, value);
        }
    }
    response(error.status(), json!({"error": error_body(error)}).to_string(), headers)
}

/// The `error` object of an answer: `{code, message, details?, moreProblems?}` (a batch item's
/// `error` too, with `retryAfter` in seconds where a whole answer would send the header).
pub fn error_body(error: &ApiError) -> serde_json::Value {
    error_body_listing(error, usize::MAX)
}

/// [`error_body`] listing at most `listed` of an invalid request's problems in `details`;
/// `moreProblems` counts the ones found and not listed (absent when there are none).
pub(crate) fn error_body_listing(error: &ApiError, listed: usize) -> serde_json::Value {
    let mut body = json!({"code": error.code().as_str(), "message": error.public_message()});
    if let ApiError::Invalid(problems) = error {
        let shown = &problems.listed()[..problems.listed().len().min(listed)];
        body["details"] = json!(shown);
        let more = problems.len() - shown.len();
        if more > 0 {
            body["moreProblems"] = json!(more);
        }
    }
    body
}

/// Whole seconds to wait before trying a refused admission or read again, rounded up.
pub fn retry_after_seconds(error: &ApiError) -> Option<u64> {
    match error {
        ApiError::Admission { retry_after: Some(wait), .. } | ApiError::ReadRate { retry_after: wait } => {
            Some((wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn errors_carry_code_details_and_retry_after() {
        let invalid = ApiError::invalid("stepKey", "is required");
        let answer = error_response(&invalid);
        assert_eq!(answer.status_code, 400);
        let Some(Body::Text(text)) = &answer.body else { panic!("text body") };
        let body: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(body["error"]["code"], "INVALID_REQUEST");
        assert_eq!(body["error"]["details"][0]["path"], "stepKey");
        assert!(body["error"].get("moreProblems").is_none(), "nothing was left out");

        let mut many = aitasks_contracts::Problems::new();
        for i in 0..aitasks_contracts::PROBLEMS_MAX + 7 {
            many.add(&aitasks_contracts::Path::root().key("request").index(i), "is wrong");
        }
        let body = error_body(&ApiError::Invalid(many.clone()));
        assert_eq!(body["details"].as_array().map(Vec::len), Some(aitasks_contracts::PROBLEMS_MAX));
        assert_eq!(body["moreProblems"], 7);
        let body = error_body_listing(&ApiError::Invalid(many), 2);
        assert_eq!(body["details"].as_array().map(Vec::len), Some(2));
        assert_eq!(body["moreProblems"], aitasks_contracts::PROBLEMS_MAX + 5);

        let limited = ApiError::Admission {
            code: aitasks_contracts::ErrorCode::RateLimit,
            retry_after: Some(Duration::from_millis(2500)),
        };
        let answer = error_response(&limited);
        assert_eq!(answer.status_code, 429);
        assert_eq!(answer.headers.get("retry-after").unwrap(), "3");
        // Under a second is one second, not two; a whole number of seconds is itself.
        for (wait_ms, header) in [(500, 1), (1, 1), (0, 1), (1000, 1), (1001, 2)] {
            let read = ApiError::ReadRate { retry_after: Duration::from_millis(wait_ms) };
            assert_eq!(retry_after_seconds(&read), Some(header), "a wait of {wait_ms} ms");
        }

        let internal = error_response(&ApiError::Internal("password=hunter2 in a stack".into()));
        let Some(Body::Text(text)) = &internal.body else { panic!("text body") };
        assert!(!text.contains("hunter2"), "5xx bodies are opaque");
    }
}
