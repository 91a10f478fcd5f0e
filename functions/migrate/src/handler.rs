//! `migrate`: the deploy-time step. A CloudFormation custom resource calls it on create, update
//! and delete; it applies pending migrations (idempotent, under an advisory lock) and answers
//! CloudFormation's pre-signed response URL. Delete does nothing: the data outlives the stack.
//!
//! CloudFormation waits for that answer, so every path answers: a database secret that cannot
//! be read, a database that cannot be reached, a migration that fails and a deadline about to
//! pass all answer `FAILED` with the reason, and a panic answers `FAILED` from the panic hook
//! ([`install_panic_answer`], in `custom_resource`). Nothing fallible runs before the runtime loop: a function that
//! fails at start-up is never invoked, and CloudFormation would wait out the resource's
//! `ServiceTimeout` instead of hearing why.

use std::time::{Duration, SystemTime};

use lambda_runtime::{Error, LambdaEvent};
use serde_json::{json, Value};
use tokio::sync::OnceCell;

mod custom_resource;

pub use custom_resource::{
    arm_panic_answer, install_panic_answer, Armed, CustomResourceRequest, ResponseStatus,
};

/// Time kept back from the Lambda deadline to send the answer.
const ANSWER_MARGIN: Duration = Duration::from_secs(10);

/// Where the migrations go: `DATABASE_URL`, or the schema owner's secret
/// (`AITASK_DATABASE_SECRET_ARN`), read on the first event and kept.
#[derive(Default)]
pub struct Migrator {
    database_url: OnceCell<String>,
}

impl Migrator {
    pub fn new() -> Migrator {
        Migrator::default()
    }

    async fn database_url(&self) -> Result<&str, String> {
        self.database_url
            .get_or_try_init(|| async {
                let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
                if let Some(url) = env("DATABASE_URL") {
                    return Ok(url);
                }
                if env("AITASK_DATABASE_SECRET_ARN").is_none() {
                    return Err("neither DATABASE_URL nor AITASK_DATABASE_SECRET_ARN is set".to_owned());
                }
                let secrets =
                    aitasks_secrets::Secrets::load(env, Vec::new()).await.map_err(|e| e.to_string())?;
                secrets.get("DATABASE_URL").ok_or_else(|| "the database secret gave no URL".to_owned())
            })
            .await
            .map(String::as_str)
    }

    /// Apply every pending migration; what was applied.
    pub async fn apply(&self) -> Result<String, String> {
        let url = self.database_url().await?;
        aitasks_store::migrate(url)
            .await
            .map(|applied| {
                if applied.is_empty() {
                    "the schema is up to date".to_owned()
                } else {
                    format!("applied {applied:?}")
                }
            })
            .map_err(|e| aitasks_telemetry::error_chain(&e))
    }
}

/// Handle one custom-resource event: do the work within the deadline, then answer.
pub async fn handle(migrator: &Migrator, event: LambdaEvent<Value>) -> Result<Value, Error> {
    // Without a response URL there is nobody to answer: not a custom-resource request.
    let request = CustomResourceRequest::parse(&event.payload)?;
    let _armed = arm_panic_answer(&request);
    let remaining = event.context.deadline().duration_since(SystemTime::now()).unwrap_or_default();
    let budget = remaining.saturating_sub(ANSWER_MARGIN).max(Duration::from_secs(1));
    let outcome = match request.request_type.as_str() {
        "Delete" => Ok("nothing to do on delete: the data outlives the stack".to_owned()),
        _ => match tokio::time::timeout(budget, migrator.apply()).await {
            Ok(outcome) => outcome,
            Err(_) => Err(format!(
                "the migrations did not finish within {} s, before the function's deadline (is another migrator holding the lock?)",
                budget.as_secs()
            )),
        },
    };
    let (status, reason) = match outcome {
        Ok(done) => (ResponseStatus::Success, done),
        Err(error) => (ResponseStatus::Failed, error),
    };
    tracing::info!(kind = %request.request_type, status = status.as_str(), %reason, "migrations");
    request.respond(status, &reason).await?;
    Ok(json!({"Status": status.as_str(), "Reason": reason}))
}
