//! The runtime's side of scoped inference: the result-cache key and the call into the store.

use aitasks_contracts::{canonical_hash, Scope};
use aitasks_store::{
    self as store, AdmissionBudget, NewTask, ScopedAdmission, ScopedCreated, StoreError, TaskOwner,
};
use serde_json::json;

/// The cache key: source, its revision, the normalized request, the model configuration hash
/// and, for application-owned tasks, the owner (scope and usage subject), canonically hashed.
pub(crate) fn cache_key(task: &NewTask, scope: &Scope) -> String {
    let owner = match &task.owner {
        TaskOwner::Run(_) => serde_json::Value::Null,
        TaskOwner::Application { scope_id, usage_subject } => {
            json!({"scopeId": scope_id, "usageSubject": usage_subject})
        }
    };
    canonical_hash(&json!({
        "source": scope.source_id,
        "revision": scope.source_revision,
        "request": task.request,
        "model": task.model_config_hash,
        "owner": owner,
    }))
}

/// Create a scoped task through the cache and admission.
pub(crate) async fn create_scoped(
    client: &mut store::Client,
    task: &NewTask,
    scope: &Scope,
    limits: store::ServerLimits,
) -> Result<ScopedCreated, StoreError> {
    let budget = scope.budget;
    let admission = ScopedAdmission {
        source_id: scope.source_id.clone(),
        cache_key: cache_key(task, scope),
        recompute: scope.recompute,
        budget: AdmissionBudget {
            burst: budget.burst,
            tasks_per_minute: budget.tasks_per_minute,
            max_steps_per_source: budget.max_steps_per_source,
            sources_per_24_hours: budget.sources_per24_hours,
            scope_concurrent: budget.scope_concurrent,
            global_concurrent: budget.global_concurrent,
        },
        limits,
    };
    store::create_scoped(client, task, &admission).await
}
