//! IAM, as AWS applies it to a call: the action an operation needs, the caller found by its
//! access key, the verdict of its role's statements (recorded, with the call), and the
//! `AccessDeniedException` a refused call gets.

use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::registry::{Call, Shared};
use crate::iam::{evaluate_in, Decision};

/// The IAM action an API operation needs. Batch operations are authorized by their single form.
pub fn iam_action(service: &str, operation: &str) -> String {
    let operation = match (service, operation) {
        ("sqs", "SendMessageBatch") => "SendMessage",
        ("sqs", "DeleteMessageBatch") => "DeleteMessage",
        ("sqs", "ChangeMessageVisibilityBatch") => "ChangeMessageVisibility",
        (_, other) => other,
    };
    format!("{service}:{operation}")
}

/// The access key id of a SigV4 `Authorization` header.
fn access_key(headers: &HeaderMap) -> Option<String> {
    let authorization = headers.get("authorization")?.to_str().ok()?;
    let credential = authorization.split("Credential=").nth(1)?;
    Some(credential.split('/').next()?.to_owned())
}

/// Judge a call against its caller's role and record it: the caller, its role and the verdict.
#[allow(clippy::too_many_arguments)]
pub(super) fn judge(
    shared: &Shared,
    headers: &HeaderMap,
    operation: &str,
    action: &str,
    resource: &str,
    context: &[(&str, &str)],
    message_groups: Vec<Option<String>>,
    subject: Option<String>,
) -> (String, String, Decision) {
    let key = access_key(headers).unwrap_or_default();
    {
        let mut registry = shared.lock();
        let (function, role_arn, decision) = match registry.identities.get(&key) {
            Some(identity) => (
                identity.function.clone(),
                identity.role_arn.clone(),
                evaluate_in(&identity.statements, action, resource, context),
            ),
            None => ("?".to_owned(), format!("unknown access key {key}"), Decision::ImplicitlyDenied),
        };
        let phase = registry.phases.get(&function).cloned().unwrap_or_else(|| "cold start".to_owned());
        registry.calls.push(Call {
            function: function.clone(),
            phase,
            operation: operation.to_owned(),
            action: action.to_owned(),
            resource: resource.to_owned(),
            decision: decision.clone(),
            message_groups,
            subject,
        });
        (function, role_arn, decision)
    }
}

/// The `AccessDeniedException` AWS answers a call no statement allows.
pub(super) fn denied(
    shared: &Shared,
    service: &str,
    content_type: &'static str,
    function: &str,
    role_arn: &str,
    action: &str,
    resource: &str,
) -> Response {
    let role = role_arn.rsplit('/').next().unwrap_or(role_arn);
    let message = format!(
        "User: arn:aws:sts::{}:assumed-role/{role}/{function} is not authorized to perform: {action} on resource: {resource} because no identity-based policy allows the {action} action",
        shared.upstreams.account
    );
    // The REST APIs (Lambda's, Bedrock's, S3) answer 403 and name the error in a header, S3 in
    // an XML body; the JSON protocols, 400.
    let status = match service {
        "lambda" | "bedrock" | "s3" => StatusCode::FORBIDDEN,
        _ => StatusCode::BAD_REQUEST,
    };
    let body = if service == "s3" {
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>AccessDenied</Code><Message>{}</Message></Error>",
            message.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
        )
    } else {
        json!({"__type": "AccessDeniedException", "message": message}).to_string()
    };
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert("content-type", content_type.parse().expect("static header"));
    headers.insert("x-amzn-errortype", "AccessDeniedException".parse().expect("static header"));
    if service == "sqs" {
        headers.insert("x-amzn-query-error", "AccessDenied;Sender".parse().expect("static header"));
    }
    response
}
