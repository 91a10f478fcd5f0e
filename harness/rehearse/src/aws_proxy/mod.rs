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
//!
//! A module per job: `registry` (who holds which credentials, what was seen), `arns` (the
//! resource a call acts on), `judge` (IAM: the action, the verdict, the refusal), `sigv4` (the
//! Bedrock stub's signature), `forward` (on to an emulator), and `dispatch` (which call a request
//! is, and the order of the above). None imports this root.

mod arns;
mod dispatch;
mod forward;
mod judge;
mod registry;
mod sigv4;

use std::sync::Arc;

use crate::iam::Statement;

pub use judge::iam_action;
pub use registry::Call;
use registry::{BedrockUpstream, Identity, Shared, Upstreams};

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
        let router = axum::Router::new().fallback(dispatch::handle).with_state(shared.clone());
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
