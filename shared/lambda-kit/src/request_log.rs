//! One log line per API request: route, tenant, status, error code, task id where there is one,
//! latency, and for a 5xx the whole cause (with the store's SQLSTATE). The route is the API
//! Gateway route key (`POST /v1/tasks/{taskId}`), never the raw path, so it stays a small set.
//!
//! The fields live on a `request` span, so every line logged while the request is handled
//! carries them too (the JSON format puts span fields at the top level); the handlers fill in
//! the tenant and the task once they know them.

use aws_lambda_events::apigw::ApiGatewayV2httpRequest;

/// The routes of the HTTP API, as API Gateway names them (`template.yaml`), for events whose
/// route key is `$default` (the dev server). Every route of docs/api.md; a literal segment is listed before a pattern in the same place
/// (`/v1/tasks/batch` before `/v1/tasks/{taskId}`), as API Gateway prefers it.
const ROUTES: [(&str, &[&str]); 30] = [
    ("POST", &["v1", "runs"]),
    ("GET", &["v1", "runs"]),
    ("GET", &["v1", "runs", "{runId}"]),
    ("POST", &["v1", "runs", "{runId}", "cancel"]),
    ("GET", &["v1", "runs", "{runId}", "progress"]),
    ("POST", &["v1", "tasks", "release"]),
    ("POST", &["v1", "tasks", "batch"]),
    ("POST", &["v1", "tasks"]),
    ("GET", &["v1", "tasks"]),
    ("GET", &["v1", "tasks", "{taskId}"]),
    ("POST", &["v1", "tasks", "{taskId}", "cancel"]),
    ("GET", &["v1", "tasks", "{taskId}", "attempts"]),
    ("GET", &["v1", "tasks", "{taskId}", "events"]),
    ("GET", &["v1", "tasks", "{taskId}", "callbacks"]),
    ("GET", &["v1", "tasks", "{taskId}", "batch"]),
    ("POST", &["v1", "tasks", "{taskId}", "replay"]),
    ("GET", &["v1", "tasks", "{taskId}", "replays"]),
    ("GET", &["v1", "tasks", "{taskId}", "output"]),
    ("GET", &["v1", "summary"]),
    ("GET", &["v1", "activity"]),
    ("DELETE", &["v1", "scopes", "{scopeId}", "tasks"]),
    ("GET", &["v1", "unreleased-sources"]),
    ("POST", &["v1", "operations"]),
    ("GET", &["v1", "operations"]),
    ("GET", &["v1", "operations", "{operationId}"]),
    ("POST", &["v1", "operations", "{operationId}", "stop"]),
    ("POST", &["v1", "holds"]),
    ("GET", &["v1", "holds"]),
    ("GET", &["v1", "holds", "{holdId}"]),
    ("POST", &["v1", "holds", "{holdId}", "release"]),
];

/// The route key of a request: API Gateway's own when it has one, else the matching route of
/// the API, else `METHOD (no route)`.
pub fn route_of(event: &ApiGatewayV2httpRequest) -> String {
    let given = event.request_context.route_key.as_deref().or(event.route_key.as_deref());
    if let Some(key) = given.filter(|key| *key != "$default" && !key.is_empty()) {
        return key.to_owned();
    }
    let method = event.request_context.http.method.as_str();
    let path = event.raw_path.as_deref().unwrap_or("/");
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let matches = |pattern: &[&str]| {
        pattern.len() == segments.len()
            && pattern.iter().zip(&segments).all(|(p, s)| p.starts_with('{') || p == s)
    };
    ROUTES
        .iter()
        .find(|(m, pattern)| *m == method && matches(pattern))
        .map(|(m, pattern)| format!("{m} /{}", pattern.join("/")))
        .unwrap_or_else(|| format!("{method} (no route)"))
}

/// Record the tenant on the current request's line (and every line logged while it is handled).
pub fn note_tenant(tenant: &str) {
    tracing::Span::current().record("tenant", tenant);
}

/// Record the task a request is about.
pub fn note_task(task_id: impl std::fmt::Display) {
    tracing::Span::current().record("task_id", tracing::field::display(task_id));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(method: &str, path: &str, route_key: Option<&str>) -> ApiGatewayV2httpRequest {
        let mut event = ApiGatewayV2httpRequest::default();
        event.request_context.http.method = method.parse().unwrap();
        event.raw_path = Some(path.to_owned());
        event.request_context.route_key = route_key.map(str::to_owned);
        event
    }

    #[test]
    fn a_route_is_its_template_never_the_raw_path() {
        let id = "0190d1c3-0000-7000-8000-000000000000";
        assert_eq!(
            route_of(&event("GET", &format!("/v1/tasks/{id}"), Some("$default"))),
            "GET /v1/tasks/{taskId}"
        );
        assert_eq!(route_of(&event("POST", "/v1/tasks/release", None)), "POST /v1/tasks/release");
        assert_eq!(
            route_of(&event("DELETE", "/v1/scopes/s 1/tasks", None)),
            "DELETE /v1/scopes/{scopeId}/tasks"
        );
        assert_eq!(route_of(&event("PUT", "/v1/tasks", None)), "PUT (no route)");
        // A literal segment before a pattern, and the routes of replays, operations and holds.
        assert_eq!(route_of(&event("POST", "/v1/tasks/batch", None)), "POST /v1/tasks/batch");
        assert_eq!(
            route_of(&event("POST", &format!("/v1/tasks/{id}/replay"), None)),
            "POST /v1/tasks/{taskId}/replay"
        );
        assert_eq!(
            route_of(&event("POST", &format!("/v1/operations/{id}/stop"), None)),
            "POST /v1/operations/{operationId}/stop"
        );
        assert_eq!(route_of(&event("GET", &format!("/v1/holds/{id}"), None)), "GET /v1/holds/{holdId}");
        assert_eq!(
            route_of(&event("POST", "/v1/tasks", Some("POST /v1/tasks"))),
            "POST /v1/tasks",
            "API Gateway's own key when it has one"
        );
    }
}
