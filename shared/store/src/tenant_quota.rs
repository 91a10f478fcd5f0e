//! Server-side quotas per tenant: new tasks per UTC day, from configuration
//! (`AITASK_TENANT_QUOTAS`), whatever the caller's own budget. Spent in the create's own
//! transaction, so a create that does not happen (a refusal, an existing effect key, an error)
//! spends nothing. A tenant's creates wait on its day row only while they commit; other tenants
//! never do.

use std::time::Duration;

use chrono::{Days, Utc};

use crate::create::{create_task, insert_task};
use crate::error::{StoreError, StoreResult};
use crate::model::{AdmissionRefusal, Created, NewTask};
use crate::params::limit;
use crate::pool::{Client, GenericClient};
use crate::queries::{PRUNE_QUOTA_DAYS, SPEND_TASK};
use crate::read::get_task_by_effect_key;

/// Count one new task for `app_id` today, within `limit`.
pub(crate) async fn spend_task(
    client: &impl GenericClient,
    app_id: &str,
    limit: i64,
) -> StoreResult<Result<(), AdmissionRefusal>> {
    let statement = client.prepare_cached(SPEND_TASK.text()).await?;
    let params = SPEND_TASK.bind(&[("app_id", &app_id), ("limit", &limit)])?;
    Ok(match client.query_opt(&statement, &params).await? {
        Some(_) => Ok(()),
        None => Err(AdmissionRefusal::TenantQuota { retry_after: until_tomorrow() }),
    })
}

/// Time left until the next UTC midnight (at least a second).
fn until_tomorrow() -> Duration {
    let now = Utc::now();
    let tomorrow = now
        .date_naive()
        .checked_add_days(Days::new(1))
        .and_then(|day| day.and_hms_opt(0, 0, 0))
        .map(|midnight| midnight.and_utc());
    tomorrow
        .and_then(|midnight| (midnight - now).to_std().ok())
        .unwrap_or(Duration::from_secs(1))
        .max(Duration::from_secs(1))
}

/// [`create_task`] within the tenant's daily quota: an existing effect key answers as
/// always and spends nothing; a new task spends one, or is refused with
/// [`AdmissionRefusal::TenantQuota`].
pub async fn create_task_within_quota(
    client: &mut Client,
    task: &NewTask,
    limit: i64,
) -> StoreResult<Created> {
    let transaction = client.transaction().await?;
    if let Err(refusal) = spend_task(&transaction, &task.app_id, limit).await? {
        transaction.rollback().await?;
        // Spent, but a retry of a create that already happened still gets its task back.
        return match get_task_by_effect_key(&*client, &task.app_id, &task.effect_key).await? {
            Some(existing) => Ok(Created::Existing(existing)),
            None => Err(StoreError::Admission(refusal)),
        };
    }
    match insert_task(&transaction, task).await? {
        Some(created) => {
            transaction.commit().await?;
            Ok(Created::New(created))
        }
        None => {
            transaction.rollback().await?;
            create_task(&*client, task).await
        }
    }
}

/// Delete quota rows older than a week, up to `page`.
pub async fn prune_quota_days(client: &impl GenericClient, page: usize) -> StoreResult<u64> {
    let statement = client.prepare_cached(PRUNE_QUOTA_DAYS.text()).await?;
    let page = limit(page);
    let params = PRUNE_QUOTA_DAYS.bind(&[("page", &page)])?;
    Ok(client.execute(&statement, &params).await?)
}
