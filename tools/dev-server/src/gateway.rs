//! HTTP in, API Gateway HTTP API (payload 2.0) events out, to the same handlers the Lambdas run.

use std::collections::HashMap;
use std::sync::Arc;

use aitasks_lambda_kit::{error_response, ApiError};
use aitasks_runtime::App;
use aws_lambda_events::apigw::{
    ApiGatewayRequestAuthorizer, ApiGatewayRequestAuthorizerJwtDescription, ApiGatewayV2httpRequest,
    ApiGatewayV2httpResponse,
};
use aws_lambda_events::encodings::Body as LambdaBody;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use base64::Engine;
use lambda_runtime::{Context, LambdaEvent};
use tracing::Instrument;

use crate::auth::DevAuthorizer;
use crate::hosts::Hosts;

/// API Gateway HTTP APIs take bodies up to 10 MB.
pub(crate) const MAX_BODY: usize = 10 * 1024 * 1024;

pub(crate) struct Gateway {
    pub app: Arc<App>,
    pub authorizer: DevAuthorizer,
    pub hosts: Hosts,
}

/// Every request: a `Host` of its own (hosts.rs), then health check, or authorize → event →
/// the function that owns the route.
pub(crate) async fn handle(State(gateway): State<Arc<Gateway>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    if !gateway.hosts.allows(Hosts::of(&parts)) {
        return crate::hosts::refused();
    }
    if parts.uri.path() == "/healthz" {
        return Response::new(Body::from("{\"ok\":true}"));
    }
    // The web console's files need no token: what it shows comes from the API, with the user's.
    if let Some(answer) = crate::console::answer(&parts) {
        return answer;
    }
    let authorization = parts.headers.get(http::header::AUTHORIZATION).and_then(|v| v.to_str().ok());
    let Some(claims) = gateway.authorizer.verify(authorization) else {
        return into_response(error_response(&ApiError::Unauthorized));
    };
    let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY).await else {
        return into_response(error_response(&ApiError::TooLarge));
    };
    let event = api_gateway_event(&parts, &bytes, claims);
    let mut context = Context::default();
    let span = crate::invocation::start(&mut context);
    let path = parts.uri.path();
    let invocation = LambdaEvent::new(event, context);
    let result = if is_release_delete_route(path) {
        release_delete::handle(&gateway.app, invocation).instrument(span).await
    } else {
        create_task::handle(&gateway.app, invocation).instrument(span).await
    };
    match result {
        Ok(response) => into_response(response),
        Err(error) => into_response(error_response(&ApiError::Internal(error))),
    }
}

/// The routes the `release-delete` function serves (see template.yaml).
fn is_release_delete_route(path: &str) -> bool {
    path == "/v1/tasks/release" || path.starts_with("/v1/scopes/") || path == "/v1/unreleased-sources"
}

fn api_gateway_event(
    parts: &http::request::Parts,
    body: &[u8],
    claims: HashMap<String, String>,
) -> ApiGatewayV2httpRequest {
    let mut event = ApiGatewayV2httpRequest::default();
    let query = parts.uri.query().unwrap_or_default();
    let mut params: HashMap<String, Vec<String>> = HashMap::new();
    for (key, value) in form_urlencoded::parse(query.as_bytes()) {
        params.entry(key.into_owned()).or_default().push(value.into_owned());
    }
    event.version = Some("2.0".into());
    event.route_key = Some("$default".into());
    event.raw_path = Some(parts.uri.path().to_owned());
    event.raw_query_string = Some(query.to_owned());
    event.query_string_parameters = query_map::QueryMap::from(params);
    event.headers = parts.headers.clone();
    if !body.is_empty() {
        match std::str::from_utf8(body) {
            Ok(text) => event.body = Some(text.to_owned()),
            Err(_) => {
                event.body = Some(base64::engine::general_purpose::STANDARD.encode(body));
                event.is_base64_encoded = true;
            }
        }
    }
    event.request_context.http.method = parts.method.clone();
    event.request_context.http.path = Some(parts.uri.path().to_owned());
    event.request_context.http.protocol = Some("HTTP/1.1".into());
    event.request_context.request_id = Some(uuid::Uuid::new_v4().to_string());
    event.request_context.route_key = Some("$default".into());
    let mut jwt = ApiGatewayRequestAuthorizerJwtDescription::default();
    jwt.claims = claims;
    let mut authorizer = ApiGatewayRequestAuthorizer::default();
    authorizer.jwt = Some(jwt);
    event.request_context.authorizer = Some(authorizer);
    event
}

fn into_response(lambda: ApiGatewayV2httpResponse) -> Response {
    let body = match lambda.body {
        Some(LambdaBody::Text(text)) => Body::from(text),
        Some(LambdaBody::Binary(bytes)) => Body::from(bytes),
        _ => Body::empty(),
    };
    let mut response = Response::new(body);
    *response.status_mut() = http::StatusCode::from_u16(lambda.status_code as u16)
        .unwrap_or(http::StatusCode::INTERNAL_SERVER_ERROR);
    *response.headers_mut() = lambda.headers;
    response
}
