//! `release-delete`, behind API Gateway: release by effect key, delete a scope's or a source's
//! application tasks, and list unreleased sources. Parses, calls the runtime, maps the result.

use aitasks_lambda_kit::{check_method, json_response, serve_http, ApiError, HttpRequest, Route};
use aitasks_runtime::{api, App};
use aws_lambda_events::apigw::{ApiGatewayV2httpRequest, ApiGatewayV2httpResponse};
use lambda_runtime::{Error, LambdaEvent};
use serde_json::json;

/// The paths this function serves (template.yaml routes each, and `ANY` on each for the 405).
const ROUTES: &[Route] = &[
    Route { path: &["v1", "tasks", "release"], allow: &["POST"] },
    Route { path: &["v1", "scopes", "{}", "tasks"], allow: &["DELETE"] },
    Route { path: &["v1", "unreleased-sources"], allow: &["GET"] },
];

/// Handle one API Gateway HTTP API request.
pub async fn handle<P>(
    app: &App<P>,
    event: LambdaEvent<ApiGatewayV2httpRequest>,
) -> Result<ApiGatewayV2httpResponse, Error> {
    Ok(serve_http(&event.payload, |request| async move { route(app, &request).await }).await)
}

async fn route<P>(app: &App<P>, request: &HttpRequest<'_>) -> Result<ApiGatewayV2httpResponse, ApiError> {
    let tenant = request.tenant(&app.settings.app_token_field)?;
    let segments = request.segments();
    let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
    check_method(ROUTES, request.method().as_str(), &segments)?;
    match (request.method().as_str(), segments.as_slice()) {
        ("POST", ["v1", "tasks", "release"]) => {
            let released = api::release(app, &tenant, &request.body()?).await?;
            Ok(json_response(200, &json!({"released": released})))
        }
        ("DELETE", ["v1", "scopes", scope_id, "tasks"]) => {
            let deleted = api::delete_scope_tasks(app, &tenant, scope_id, request.query("sourceId")).await?;
            Ok(json_response(200, &json!(deleted)))
        }
        ("GET", ["v1", "unreleased-sources"]) => {
            let (sources, next) = api::unreleased_sources(
                app,
                &tenant,
                request.query("task"),
                request.query("afterScope"),
                request.query("afterSource"),
            )
            .await?;
            let mut body = json!({"sources": sources});
            if let Some(next) = next {
                body["next"] = json!(next);
            }
            Ok(json_response(200, &body))
        }
        _ => Err(ApiError::NoRoute),
    }
}
