//! Operations (`sql/operations/`): cancel or replay every task of a tenant that matches a filter,
//! a page at a time (docs/api.md, "Operations"). Created under the tenant's advisory lock (the
//! limit on running operations, the idempotency key); then each page is worked under a lease,
//! the operation's row locked `FOR UPDATE SKIP LOCKED` for the page's transaction
//! ([`take_operation`]), which walks at most a page of the tenant's tasks from the cursor
//! ([`OperationLease::walk_operation`]), acts on those that match, and writes the cursor and the
//! page's counts before it commits ([`OperationLease::advance_operation`]). A crash rolls the
//! page back: the next lease redoes it from the cursor.

use std::collections::BTreeMap;

use aitasks_contracts::{
    ErrorCode, ListOperations, Operation, OperationAction, OperationFilter, OperationState, TaskStatus,
};
use chrono::{DateTime, Utc};
use deadpool_postgres::Transaction;
use tokio_postgres::Row;
use uuid::Uuid;

use crate::cancel::RunTasksCanceled;
use crate::error::{StoreError, StoreResult};
use crate::model::{new_id, Custody, PendingEvent};
use crate::params::{limit, CANCELED_CODE};
use crate::pool::{Client, GenericClient};
use crate::queries::{
    ADVANCE_OPERATION, CANCEL_OPERATION_PAGE, CREATE_OPERATION, CREATE_OPERATION_LOCK, GET_OPERATION,
    LIST_OPERATIONS, NEXT_OPERATIONS, STOP_OPERATION, TAKE_OPERATION, WALK_OPERATION_OF_RUN,
    WALK_OPERATION_OF_SCOPE, WALK_OPERATION_OF_TENANT,
};
use crate::replays::{replay_sources, ReplaySource};

/// An operation to create.
#[derive(Debug, Clone)]
pub struct NewOperation {
    pub app_id: String,
    pub action: OperationAction,
    pub filter: OperationFilter,
    pub recompute: bool,
    /// The client's key for this create (`Idempotency-Key`).
    pub idempotency_key: Option<String>,
}

/// What an operation create found.
#[derive(Debug, Clone, PartialEq)]
pub enum CreatedOperation {
    New(Operation),
    /// The idempotency key names an operation of the tenant already: that one, untouched.
    Existing(Operation),
    /// The tenant has its limit of running operations; nothing was stored.
    AtLimit,
}

fn operation_from_row(row: &Row) -> StoreResult<Operation> {
    let corrupt = |what: &str, text: &str| StoreError::Corrupt(format!("operation {what} {text:?}"));
    let action: &str = row.try_get("action")?;
    let state: &str = row.try_get("state")?;
    let counts = |column: &str| -> StoreResult<BTreeMap<String, i64>> {
        serde_json::from_value(row.try_get(column)?).map_err(|e| corrupt(column, &e.to_string()))
    };
    Ok(Operation {
        id: row.try_get("id")?,
        action: OperationAction::parse(action).ok_or_else(|| corrupt("action", action))?,
        filter: serde_json::from_value(row.try_get("filter")?)
            .map_err(|e| corrupt("filter", &e.to_string()))?,
        recompute: row.try_get("recompute")?,
        state: OperationState::parse(state).ok_or_else(|| corrupt("state", state))?,
        matched: row.try_get("matched")?,
        done: row.try_get("done")?,
        skipped: row.try_get("skipped")?,
        failed: row.try_get("failed")?,
        skipped_because: counts("skipped_because")?,
        failed_because: counts("failed_because")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        ended_at: row.try_get("ended_at")?,
    })
}

/// Create an operation, or find the tenant's operation of its idempotency key (the caller
/// compares the body), or refuse past `running_max` running operations. One transaction under
/// the tenant's advisory lock: two round trips.
pub async fn create_operation(
    client: &mut Client,
    new: &NewOperation,
    running_max: i64,
) -> StoreResult<CreatedOperation> {
    let transaction = client.transaction().await?;
    let (lock, create) = tokio::try_join!(
        transaction.prepare_cached(CREATE_OPERATION_LOCK.text()),
        transaction.prepare_cached(CREATE_OPERATION.text())
    )?;
    transaction.execute(&lock, &CREATE_OPERATION_LOCK.bind(&[("app_id", &new.app_id)])?).await?;
    let id = new_id();
    let filter = serde_json::to_value(&new.filter).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let action = new.action.as_str();
    let params = CREATE_OPERATION.bind(&[
        ("id", &id),
        ("app_id", &new.app_id),
        ("action", &action),
        ("filter", &filter),
        ("recompute", &new.recompute),
        ("idempotency_key", &new.idempotency_key),
        ("running_max", &running_max),
    ])?;
    let row = transaction.query_opt(&create, &params).await?;
    transaction.commit().await?;
    let Some(row) = row else { return Ok(CreatedOperation::AtLimit) };
    let operation = operation_from_row(&row)?;
    Ok(if row.try_get("new")? {
        CreatedOperation::New(operation)
    } else {
        CreatedOperation::Existing(operation)
    })
}

/// One operation of the tenant, or `None` (another tenant's is `None` too).
pub async fn get_operation(
    client: &impl GenericClient,
    app_id: &str,
    id: Uuid,
) -> StoreResult<Option<Operation>> {
    let statement = client.prepare_cached(GET_OPERATION.text()).await?;
    let params = GET_OPERATION.bind(&[("id", &id), ("app_id", &app_id)])?;
    client.query_opt(&statement, &params).await?.as_ref().map(operation_from_row).transpose()
}

/// A page of the tenant's operations in creation order, and the id the next page starts after.
pub async fn list_operations(
    client: &impl GenericClient,
    app_id: &str,
    listing: &ListOperations,
) -> StoreResult<(Vec<Operation>, Option<Uuid>)> {
    let statement = client.prepare_cached(LIST_OPERATIONS.text()).await?;
    let after = listing.after.unwrap_or(Uuid::nil());
    let state = listing.state.map(OperationState::as_str);
    let one_more = limit(listing.limit + 1);
    let params = LIST_OPERATIONS.bind(&[
        ("app_id", &app_id),
        ("after", &after),
        ("state", &state),
        ("limit", &one_more),
    ])?;
    let mut operations = client
        .query(&statement, &params)
        .await?
        .iter()
        .map(operation_from_row)
        .collect::<StoreResult<Vec<_>>>()?;
    let next = if operations.len() > listing.limit {
        operations.truncate(listing.limit);
        operations.last().map(|operation| operation.id)
    } else {
        None
    };
    Ok((operations, next))
}

/// Stop a running operation of the tenant (waiting for a page in flight); one that is not
/// running is answered as it is. `None` when the tenant has no such operation.
pub async fn stop_operation(
    client: &impl GenericClient,
    app_id: &str,
    id: Uuid,
) -> StoreResult<Option<Operation>> {
    let statement = client.prepare_cached(STOP_OPERATION.text()).await?;
    let params = STOP_OPERATION.bind(&[("id", &id), ("app_id", &app_id)])?;
    match client.query_opt(&statement, &params).await? {
        Some(row) => operation_from_row(&row).map(Some),
        None => get_operation(client, app_id, id).await,
    }
}

/// Up to `page` running operations, the one worked on least recently first.
pub async fn next_operations(client: &impl GenericClient, page: usize) -> StoreResult<Vec<Uuid>> {
    let statement = client.prepare_cached(NEXT_OPERATIONS.text()).await?;
    let page = limit(page);
    let params = NEXT_OPERATIONS.bind(&[("page", &page)])?;
    client.query(&statement, &params).await?.iter().map(|row| Ok(row.try_get("id")?)).collect()
}

/// The lease on a running operation for one page: its transaction holds the operation's row.
/// Dropped without [`OperationLease::advance_operation`], the page is rolled back (nothing it
/// wrote in the transaction stays) and the next lease redoes it.
pub struct OperationLease<'a> {
    transaction: Transaction<'a>,
    pub operation: Operation,
    app_id: String,
    cursor_at: Option<DateTime<Utc>>,
    cursor_id: Option<Uuid>,
}

/// Take the lease on a running operation, or `None` when it is not running or another runner
/// holds it now.
pub async fn take_operation(client: &mut Client, id: Uuid) -> StoreResult<Option<OperationLease<'_>>> {
    let transaction = client.transaction().await?;
    let statement = transaction.prepare_cached(TAKE_OPERATION.text()).await?;
    let Some(row) = transaction.query_opt(&statement, &TAKE_OPERATION.bind(&[("id", &id)])?).await? else {
        transaction.rollback().await?;
        return Ok(None);
    };
    Ok(Some(OperationLease {
        operation: operation_from_row(&row)?,
        app_id: row.try_get("app_id")?,
        cursor_at: row.try_get("cursor_at")?,
        cursor_id: row.try_get("cursor_id")?,
        transaction,
    }))
}

/// One page of an operation's walk: the tasks it matched, in walk order, and where it ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Walk {
    pub matched: Vec<Uuid>,
    /// Tasks looked at: fewer than the page means the walk is over.
    pub looked_at: usize,
    /// The last task looked at, the next page's cursor.
    pub last: Option<(DateTime<Utc>, Uuid)>,
}

/// What a page did to the tasks it matched, by reason.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PageCounts {
    pub done: i64,
    pub skipped: BTreeMap<String, i64>,
    pub failed: BTreeMap<String, i64>,
}

impl PageCounts {
    pub fn skip(&mut self, reason: &str) {
        *self.skipped.entry(reason.to_owned()).or_default() += 1;
    }

    pub fn fail(&mut self, code: ErrorCode) {
        *self.failed.entry(code.as_str().to_owned()).or_default() += 1;
    }
}

impl OperationLease<'_> {
    /// The operation's tenant.
    pub fn app_id(&self) -> &str {
        &self.app_id
    }

    /// The next page of the operation's walk: at most `page` tasks after the cursor (a run's, a
    /// scope's or the whole tenant's, created before the operation), each matched against the
    /// filter. One statement.
    pub async fn walk_operation(&self, page: usize) -> StoreResult<Walk> {
        let operation = &self.operation;
        let filter = &operation.filter;
        let statuses: Vec<&str> = filter.status.iter().map(|status| TaskStatus::as_str(*status)).collect();
        let kind = filter.kind.map(|kind| kind.as_str());
        // Before any task (a task's creation is a Postgres timestamp, never before 1970).
        let cursor_at = self.cursor_at.unwrap_or(DateTime::<Utc>::UNIX_EPOCH);
        let cursor_id = self.cursor_id.unwrap_or(Uuid::nil());
        let page = limit(page);
        let mut values: Vec<crate::statement::Param<'_>> = vec![
            ("app_id", &self.app_id),
            ("statuses", &statuses),
            ("kind", &kind),
            ("model_id", &filter.model_id),
            ("error_code", &filter.error_code),
            ("created_after", &filter.created_after),
            ("created_before", &filter.created_before),
            ("operation_created_at", &operation.created_at),
            ("page", &page),
        ];
        let sql = match (&filter.run_id, &filter.scope_id) {
            (Some(run_id), _) => {
                values.extend_from_slice(&[
                    ("run_id", run_id),
                    ("operation_id", &operation.id),
                    ("cursor_id", &cursor_id),
                ]);
                &WALK_OPERATION_OF_RUN
            }
            (None, Some(scope_id)) => {
                values.extend_from_slice(&[
                    ("scope_id", scope_id),
                    ("operation_id", &operation.id),
                    ("cursor_id", &cursor_id),
                ]);
                &WALK_OPERATION_OF_SCOPE
            }
            (None, None) => {
                values.push(("cursor_at", &cursor_at));
                &WALK_OPERATION_OF_TENANT
            }
        };
        let statement = self.transaction.prepare_cached(sql.text()).await?;
        let rows = self.transaction.query(&statement, &sql.bind(&values)?).await?;
        let mut walk = Walk { looked_at: rows.len(), ..Walk::default() };
        for row in &rows {
            let id: Uuid = row.try_get("id")?;
            if row.try_get::<_, Option<bool>>("matches")?.unwrap_or(false) {
                walk.matched.push(id);
            }
            walk.last = Some((row.try_get("created_at")?, id));
        }
        Ok(walk)
    }

    /// Cancel the page's matched tasks (their rows locked in id order): queued ones end
    /// `canceled` with their events, running ones are flagged; ended ones are left as they are.
    pub async fn cancel_operation_page(&self, task_ids: &[Uuid]) -> StoreResult<RunTasksCanceled> {
        let mut canceled = RunTasksCanceled::default();
        if task_ids.is_empty() {
            return Ok(canceled);
        }
        let statement = self.transaction.prepare_cached(CANCEL_OPERATION_PAGE.text()).await?;
        let params = CANCEL_OPERATION_PAGE.bind(&[
            ("task_ids", &task_ids),
            ("app_id", &self.app_id),
            ("canceled_code", &CANCELED_CODE),
        ])?;
        for row in self.transaction.query(&statement, &params).await? {
            let task_id: Uuid = row.try_get("id")?;
            match row.try_get::<_, Option<i64>>("event_id")? {
                Some(id) => canceled.ended.push(PendingEvent {
                    id,
                    task_id,
                    payload: row.try_get("event_payload")?,
                    custody: Custody::Outbox,
                }),
                None => canceled.flagged.push(task_id),
            }
        }
        Ok(canceled)
    }

    /// The page's tasks to replay, whole, with their scope terms.
    pub async fn replay_sources(&self, task_ids: &[Uuid]) -> StoreResult<Vec<ReplaySource>> {
        replay_sources(&self.transaction, &self.app_id, task_ids).await
    }

    /// The page is done: the cursor past `walk`, its counts added, the operation `done` when
    /// the walk is over (fewer than `page` looked at); then the lease's transaction commits.
    pub async fn advance_operation(
        self,
        walk: &Walk,
        page: usize,
        counts: &PageCounts,
    ) -> StoreResult<Operation> {
        let (cursor_at, cursor_id) = match walk.last {
            Some((at, id)) => (Some(at), Some(id)),
            None => (self.cursor_at, self.cursor_id),
        };
        let finished = walk.looked_at < page;
        let matched = walk.matched.len() as i64;
        let (skip_codes, skip_counts): (Vec<&str>, Vec<i64>) =
            counts.skipped.iter().map(|(code, n)| (code.as_str(), *n)).unzip();
        let (fail_codes, fail_counts): (Vec<&str>, Vec<i64>) =
            counts.failed.iter().map(|(code, n)| (code.as_str(), *n)).unzip();
        let skipped: i64 = skip_counts.iter().sum();
        let failed: i64 = fail_counts.iter().sum();
        let statement = self.transaction.prepare_cached(ADVANCE_OPERATION.text()).await?;
        let params = ADVANCE_OPERATION.bind(&[
            ("id", &self.operation.id),
            ("cursor_at", &cursor_at),
            ("cursor_id", &cursor_id),
            ("matched", &matched),
            ("done", &counts.done),
            ("skipped", &skipped),
            ("failed", &failed),
            ("skip_codes", &skip_codes),
            ("skip_counts", &skip_counts),
            ("fail_codes", &fail_codes),
            ("fail_counts", &fail_counts),
            ("finished", &finished),
        ])?;
        self.transaction.execute(&statement, &params).await?;
        self.transaction.commit().await?;
        let mut operation = self.operation;
        operation.matched += matched;
        operation.done += counts.done;
        operation.skipped += skipped;
        operation.failed += failed;
        if finished {
            operation.state = OperationState::Done;
        }
        Ok(operation)
    }
}
