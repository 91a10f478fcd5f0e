//! Which call a request is and where it goes: the JSON protocols (SQS, Secrets Manager) by
//! their `X-Amz-Target`, the callback APIs answered here, S3 and the Bedrock control plane by
//! the service the request is signed for. Each is judged before it goes on.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::arns::resource_of;
use super::forward::{forward, forward_to};
use super::judge::{denied, iam_action, judge};
use super::registry::Shared;
use super::sigv4::resign;
use crate::callback_apis::{self, LocalCall};
use crate::rest_apis;

/// The proxy's one route: every request.
pub(super) async fn handle(
    State(shared): State<Shared>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let target = headers.get("x-amz-target").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    let signed_for = rest_apis::signing_service(&headers).unwrap_or_default();
    if target.is_empty() && (signed_for == "s3" || signed_for == "bedrock") {
        return handle_rest(&shared, &signed_for, method, uri, headers, body).await;
    }
    let local = {
        let registry = shared.lock();
        let upstreams = &shared.upstreams;
        callback_apis::recognize(
            &target,
            uri.path(),
            &body,
            &registry.owners,
            &upstreams.region,
            &upstreams.account,
        )
    };
    if let Some(local) = local {
        return answer_locally(&shared, &headers, local);
    }
    let (service, operation, upstream, content_type) = match target.split_once('.') {
        Some(("AmazonSQS", op)) => ("sqs", op, shared.upstreams.sqs.clone(), "application/x-amz-json-1.0"),
        Some(("secretsmanager", op)) => {
            ("secretsmanager", op, shared.upstreams.secrets.clone(), "application/x-amz-json-1.1")
        }
        _ => {
            return (StatusCode::NOT_IMPLEMENTED, format!("the rehearsal does not serve {target:?}"))
                .into_response()
        }
    };
    let parsed: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let group = |message: &Value| message["MessageGroupId"].as_str().map(str::to_owned);
    let message_groups = match operation {
        "SendMessage" => vec![group(&parsed)],
        "SendMessageBatch" => {
            parsed["Entries"].as_array().map(|e| e.iter().map(group).collect()).unwrap_or_default()
        }
        _ => Vec::new(),
    };
    let action = iam_action(service, operation);
    let resource = resource_of(&shared, service, &parsed);
    let (function, role_arn, decision) =
        judge(&shared, &headers, operation, &action, &resource, &[], message_groups, None);
    if !decision.is_allowed() {
        return denied(&shared, service, content_type, &function, &role_arn, &action, &resource);
    }
    forward(&shared, &upstream, headers, body).await
}

/// A call the rehearsal answers itself ([`callback_apis`]), once judged.
fn answer_locally(shared: &Shared, headers: &HeaderMap, local: LocalCall) -> Response {
    let action = iam_action(local.service, &local.operation);
    let (function, role_arn, decision) = judge(
        shared,
        headers,
        &local.operation,
        &action,
        &local.resource,
        &[],
        Vec::new(),
        local.subject.clone(),
    );
    if !decision.is_allowed() {
        return denied(
            shared,
            local.service,
            local.content_type,
            &function,
            &role_arn,
            &action,
            &local.resource,
        );
    }
    let mut response = (local.status, local.answer).into_response();
    response.headers_mut().insert("content-type", local.content_type.parse().expect("static header"));
    response
}

/// An S3 or Bedrock control-plane call: every permission it needs judged (and recorded) in
/// order, the first refused one answered as the service answers it; an allowed S3 call goes on
/// to moto's S3, an allowed Bedrock call to the Bedrock stub.
async fn handle_rest(
    shared: &Shared,
    signed_for: &str,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some(call) = rest_apis::recognize(
        signed_for,
        method.as_str(),
        uri.path(),
        uri.query(),
        &body,
        &shared.upstreams.region,
        &shared.upstreams.account,
    ) else {
        return (
            StatusCode::NOT_IMPLEMENTED,
            format!("the rehearsal does not serve {signed_for} {method} {uri}"),
        )
            .into_response();
    };
    for check in &call.checks {
        let (function, role_arn, decision) = judge(
            shared,
            &headers,
            &call.operation,
            &check.action,
            &check.resource,
            &check.context(),
            Vec::new(),
            None,
        );
        if !decision.is_allowed() {
            let content_type = if call.service == "s3" { "application/xml" } else { "application/json" };
            return denied(
                shared,
                call.service,
                content_type,
                &function,
                &role_arn,
                &check.action,
                &check.resource,
            );
        }
    }
    let path_and_query = uri.path_and_query().map(|p| p.as_str()).unwrap_or("/").to_owned();
    if call.service == "s3" {
        let url = format!("{}{path_and_query}", shared.upstreams.secrets);
        return forward_to(shared, method, &url, &headers, body).await;
    }
    let Some(bedrock) = shared.lock().bedrock.clone() else {
        return (
            StatusCode::NOT_IMPLEMENTED,
            format!("{} was allowed, but the rehearsal has no Bedrock stub to answer it", call.operation),
        )
            .into_response();
    };
    let url = format!("{}{path_and_query}", bedrock.endpoint);
    match resign(&bedrock, &method, &url, &headers, &body) {
        Ok(signed) => forward_to(shared, method, &url, &signed, body).await,
        Err(error) => {
            (StatusCode::BAD_GATEWAY, format!("cannot sign for the Bedrock stub: {error}")).into_response()
        }
    }
}
