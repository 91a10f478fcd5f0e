//! Who the proxy knows and what it saw: the credentials each function holds (its role and the
//! role's statements), the phase each function is in, the stack's queue and secret ARNs, the
//! callback owners, where Bedrock calls go, the emulators behind, and every call recorded.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::callback_apis::Owners;
use crate::iam::{Decision, Statement};

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
pub(super) struct Identity {
    pub(super) function: String,
    pub(super) role_arn: String,
    pub(super) statements: Vec<Statement>,
}

#[derive(Default)]
pub(super) struct Registry {
    pub(super) identities: HashMap<String, Identity>,
    pub(super) phases: HashMap<String, String>,
    /// Queue name → ARN, for the queues of the stack.
    pub(super) queue_arns: HashMap<String, String>,
    /// Secret name → ARN.
    pub(super) secret_arns: HashMap<String, String>,
    /// Whose task tokens and durable callback ids the scenario handed out.
    pub(super) owners: Owners,
    /// Where allowed Bedrock control-plane calls go.
    pub(super) bedrock: Option<BedrockUpstream>,
    pub(super) calls: Vec<Call>,
}

/// A Bedrock control-plane stub and the credentials it checks signatures with.
#[derive(Debug, Clone)]
pub(super) struct BedrockUpstream {
    pub(super) endpoint: String,
    pub(super) access_key: String,
    pub(super) secret_key: String,
}

/// The emulators allowed calls go on to, and the stack's region and account.
pub(super) struct Upstreams {
    /// The SQS-compatible server.
    pub(super) sqs: String,
    /// moto: Secrets Manager and S3.
    pub(super) secrets: String,
    pub(super) region: String,
    pub(super) account: String,
    pub(super) http: reqwest::Client,
}

/// What every request the proxy serves shares.
#[derive(Clone)]
pub(super) struct Shared {
    pub(super) registry: Arc<Mutex<Registry>>,
    pub(super) upstreams: Arc<Upstreams>,
}

impl Shared {
    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, Registry> {
        self.registry.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
