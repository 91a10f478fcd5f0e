//! The ARN a JSON-protocol call acts on: the stack's own queue or secret by its name (as
//! `add_queue` and `add_secret` registered them), else the ARN AWS would give it in the stack's
//! region and account.

use serde_json::Value;

use super::registry::Shared;

/// The resource of an SQS call (its `QueueUrl`) or a Secrets Manager call (its `SecretId`).
pub(super) fn resource_of(shared: &Shared, service: &str, body: &Value) -> String {
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
