//! `migrate`: the deploy-time step. A CloudFormation custom resource calls it on create and
//! update; it applies pending migrations (idempotent, under an advisory lock) and reports the
//! outcome to CloudFormation's response URL. Delete does nothing: the data outlives the stack.

use lambda_runtime::{Error, LambdaEvent};
use serde_json::{json, Value};

/// Handle one custom-resource event.
pub async fn handle(database_url: &str, event: LambdaEvent<Value>) -> Result<(), Error> {
    let request = event.payload;
    let field = |name: &str| request.get(name).and_then(Value::as_str).unwrap_or_default().to_owned();
    let kind = field("RequestType");
    let response_url = field("ResponseURL");
    if response_url.is_empty() {
        return Err("not a CloudFormation custom-resource event (no ResponseURL)".into());
    }
    let outcome = match kind.as_str() {
        "Delete" => Ok("nothing to do on delete".to_owned()),
        _ => aitasks_store::migrate(database_url)
            .await
            .map(|applied| format!("applied {applied:?}"))
            .map_err(|e| aitasks_store::redact(&e.to_string())),
    };
    let (status, reason) = match outcome {
        Ok(done) => ("SUCCESS", done),
        Err(error) => ("FAILED", error),
    };
    tracing::info!(%kind, status, %reason, "migrations");
    let physical_id = Some(field("PhysicalResourceId"))
        .filter(|id| !id.is_empty())
        .unwrap_or_else(|| "aitasks-migrations".into());
    let body = json!({
        "Status": status,
        "Reason": reason,
        "PhysicalResourceId": physical_id,
        "StackId": field("StackId"),
        "RequestId": field("RequestId"),
        "LogicalResourceId": field("LogicalResourceId"),
    });
    reqwest::Client::new().put(response_url).body(body.to_string()).send().await?.error_for_status()?;
    Ok(())
}
