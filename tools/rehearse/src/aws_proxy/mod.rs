//! The AWS endpoint the functions see: every SQS, Secrets Manager, Step Functions, EventBridge,
//! Lambda durable-callback, S3 and Bedrock control-plane call goes through here. It
//! knows the caller by its access key (each function runs with its own role's credentials, as
//! in Lambda), records the call (service, IAM action, resource ARN, and when it happened), and
//! judges it against the caller's role as IAM would. An allowed call goes on to the emulator
//! (the SQS-compatible server, or moto's Secrets Manager and S3) and its answer comes back
//! unchanged, or is answered here ([`crate::callback_apis`]); a denied one gets the
//! `AccessDeniedException` AWS would send, so the function fails as it would in AWS. S3 and the
//! Bedrock control plane ([`crate::rest_apis`]) are recognized by the service the request is
//! signed for; a Bedrock call, once allowed, goes to the Bedrock stub named by
//! [`AwsProxy::set_bedrock`] signed again with the stub's own credentials (without one it is
//! answered 501 after it was judged).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

use crate::callback_apis::{self, LocalCall, Owners};
use crate::iam::{evaluate_in, Decision, Statement};
use crate::rest_apis;

/// One AWS call a function made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The function's logical id (`?` for credentials no function holds).
    pub function: String,
    /// `cold start`, or the event being handled.
    pub phase: String,
    /// The API operation (`SendMessageBatch`).
    pub operation: String,
    /// The IAM action it needs (`sqs:SendMessage`).
    pub action: String,
    pub resource: String,
    pub decision: Decision,
    /// The message group of each message sent (`SendMessage`, `SendMessageBatch`; `None` for a
    /// message without one).
    pub message_groups: Vec<Option<String>>,
    /// The task token or durable callback id a callback call names (tokens the scenario minted).
    pub subject: Option<String>,
}

/// Who holds a set of credentials.
struct Identity {
    function: String,
    role_arn: String,
    statements: Vec<Statement>,
}

#[derive(Default)]
struct Registry {
    identities: HashMap<String, Identity>,
    phases: HashMap<String, String>,
    /// Queue name → ARN, for the queues of the stack.
    queue_arns: HashMap<String, String>,
    /// Secret name → ARN.
    secret_arns: HashMap<String, String>,
    /// Whose task tokens and durable callback ids the scenario handed out.
    owners: Owners,
    /// Where allowed Bedrock control-plane calls go.
    bedrock: Option<BedrockUpstream>,
    calls: Vec<Call>,
}

/// A Bedrock control-plane stub and the credentials it checks signatures with.
#[derive(Debug, Clone)]
struct BedrockUpstream {
    endpoint: String,
    access_key: String,
    secret_key: String,
}

struct Upstreams {
    sqs: String,
    secrets: String,
    region: String,
    account: String,
    http: reqwest::Client,
}

#[derive(Clone)]
struct Shared {
    registry: Arc<Mutex<Registry>>,
    upstreams: Arc<Upstreams>,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Registry> {
        self.registry.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The recording, judging endpoint.
pub struct AwsProxy {
    /// `http://127.0.0.1:port`: both `AWS_ENDPOINT_URL_SQS` and `AWS_ENDPOINT_URL_SECRETS_MANAGER`.
    pub endpoint: String,
    shared: Shared,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for AwsProxy {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl AwsProxy {
    pub async fn start(sqs: &str, secrets: &str, region: &str, account: &str) -> std::io::Result<AwsProxy> {
        let shared = Shared {
            registry: Arc::default(),
            upstreams: Arc::new(Upstreams {
                sqs: sqs.trim_end_matches('/').to_owned(),
                secrets: secrets.trim_end_matches('/').to_owned(),
                region: region.to_owned(),
                account: account.to_owned(),
                http: reqwest::Client::new(),
            }),
        };
        let router = axum::Router::new().fallback(handle).with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let endpoint = format!("http://{}", listener.local_addr()?);
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        Ok(AwsProxy { endpoint, shared, server })
    }

    /// Credentials `access_key` belong to `function`, whose role has `statements`.
    pub fn register(&self, access_key: &str, function: &str, role_arn: &str, statements: Vec<Statement>) {
        self.shared.lock().identities.insert(
            access_key.to_owned(),
            Identity { function: function.to_owned(), role_arn: role_arn.to_owned(), statements },
        );
    }

    /// Calls of `function` from now on are attributed to `phase`.
    pub fn set_phase(&self, function: &str, phase: &str) {
        self.shared.lock().phases.insert(function.to_owned(), phase.to_owned());
    }

    pub fn add_queue(&self, name: &str, arn: &str) {
        self.shared.lock().queue_arns.insert(name.to_owned(), arn.to_owned());
    }

    pub fn add_secret(&self, name: &str, arn: &str) {
        self.shared.lock().secret_arns.insert(name.to_owned(), arn.to_owned());
    }

    /// A task token an execution of `state_machine_arn` handed out.
    pub fn add_task_token(&self, token: &str, state_machine_arn: &str) {
        self.shared.lock().owners.task_tokens.insert(token.to_owned(), state_machine_arn.to_owned());
    }

    /// A callback id an execution of the durable function `function_arn` opened.
    pub fn add_callback_id(&self, id: &str, function_arn: &str) {
        self.shared.lock().owners.callback_ids.insert(id.to_owned(), function_arn.to_owned());
    }

    /// Allowed Bedrock control-plane calls go to `endpoint`, signed again for it with
    /// `access_key`/`secret_key` (a stub checks its own signatures, not the function's).
    pub fn set_bedrock(&self, endpoint: &str, access_key: &str, secret_key: &str) {
        self.shared.lock().bedrock = Some(BedrockUpstream {
            endpoint: endpoint.trim_end_matches('/').to_owned(),
            access_key: access_key.to_owned(),
            secret_key: secret_key.to_owned(),
        });
    }

    /// Every call so far, in order.
    pub fn calls(&self) -> Vec<Call> {
        self.shared.lock().calls.clone()
    }
}

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

fn resource_of(shared: &Shared, service: &str, body: &Value) -> String {
    let upstreams = &shared.upstreams;
    let registry = shared.lock();
    match service {
        "sqs" => {
            let url = body["QueueUrl"].as_str().unwrap_or_default();
            let name = url.trim_end_matches('/').rsplit('/').next().unwrap_or_default();
            registry
                .queue_arns
                .get(name)
                .cloned()
                .unwrap_or_else(|| format!("arn:aws:sqs:{}:{}:{name}", upstreams.region, upstreams.account))
        }
        _ => {
            let id = body["SecretId"].as_str().unwrap_or_default();
            if id.starts_with("arn:") {
                id.to_owned()
            } else {
                registry.secret_arns.get(id).cloned().unwrap_or_else(|| {
                    format!("arn:aws:secretsmanager:{}:{}:secret:{id}", upstreams.region, upstreams.account)
                })
            }
        }
    }
}

async fn handle(
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

/// The request's headers signed again, for the stub at `url`, with the stub's credentials.
fn resign(
    upstream: &BedrockUpstream,
    method: &Method,
    url: &str,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<HeaderMap, String> {
    let identity = aws_credential_types::Credentials::new(
        upstream.access_key.clone(),
        upstream.secret_key.clone(),
        None,
        None,
        "rehearsal",
    )
    .into();
    let content_type =
        headers.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("application/json");
    let kept = [("content-type", content_type)];
    let params = aws_sigv4::sign::v4::SigningParams::builder()
        .identity(&identity)
        .region(crate::local_aws::REGION)
        .name("bedrock")
        .time(std::time::SystemTime::now())
        .settings(aws_sigv4::http_request::SigningSettings::default())
        .build()
        .map_err(|e| e.to_string())?;
    let signable = aws_sigv4::http_request::SignableRequest::new(
        method.as_str(),
        url,
        kept.into_iter(),
        aws_sigv4::http_request::SignableBody::Bytes(body),
    )
    .map_err(|e| e.to_string())?;
    let (instructions, _) =
        aws_sigv4::http_request::sign(signable, &params.into()).map_err(|e| e.to_string())?.into_parts();
    let mut signed = HeaderMap::new();
    signed.insert("content-type", content_type.parse().map_err(|_| "content-type")?);
    for header in instructions.into_parts().0 {
        let name = axum::http::HeaderName::from_bytes(header.name().as_bytes()).map_err(|e| e.to_string())?;
        signed.insert(name, header.value().parse().map_err(|_| format!("header {}", header.name()))?);
    }
    Ok(signed)
}

/// Judge a call against its caller's role and record it: the caller, its role and the verdict.
#[allow(clippy::too_many_arguments)]
fn judge(
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
fn denied(
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

async fn forward(shared: &Shared, upstream: &str, headers: HeaderMap, body: Bytes) -> Response {
    forward_to(shared, Method::POST, &format!("{upstream}/"), &headers, body).await
}

/// The request as it came (method, headers but the host's, body) to `url`; the answer back.
async fn forward_to(
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
