//! Callbacks (`sql/callbacks/`): who waits for a task without polling, and the calls that answer
//! them. A callback is attached by a create, becomes owed in the statement that ends its task
//! (the outbox's trigger, migrations/V19), is taken for its call with a lease (so a sender that
//! dies between its call and its record is replaced once the lease passes), and ends when AWS
//! accepts the call, says the caller is gone, or refuses it for good. QueueMessage is at least once.

use std::time::Duration;

use aitasks_contracts::TaskStatus;
use chrono::{DateTime, Utc};
use serde_json::Value;
use tokio_postgres::Row;
use uuid::Uuid;

use crate::error::{StoreError, StoreResult};
use crate::model::PendingEvent;
use crate::params::{limit, millis, truncate_message, CANCELED_CODE};
use crate::pool::GenericClient;
use crate::queries::{
    ATTACH_CALLBACKS, CALLBACK_ROOM, CANCEL_ABANDONED, MARK_DELIVERED_AND_TAKE_OWED, RECORD_CALLBACKS,
    TAKE_HEARTBEATS, TAKE_OWED_CALLBACKS, UNMARK_HEARTBEATS, WAITING_CALLBACKS,
};
use crate::rows::ended_event_from_row;

/// A callback a create names.
#[derive(Clone, PartialEq, Eq)]
pub struct NewCallback<'a> {
    pub task_id: Uuid,
    /// `step_functions` or `lambda_durable` (`aitasks_contracts::Callback::kind`).
    pub kind: &'a str,
    pub token: &'a str,
}

/// What a task ended as, for its callbacks' answer.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskEnd {
    pub status: TaskStatus,
    pub output: Option<Value>,
    pub usage: Option<Value>,
    pub error_code: Option<String>,
    pub error_message: Option<String>,
}

/// An owed callback taken for its call. Its `Debug` leaves the token out.
#[derive(Clone, PartialEq)]
pub struct OwedCallback {
    pub id: i64,
    pub task_id: Uuid,
    pub kind: String,
    pub token: String,
    /// Calls started, this one included.
    pub tries: i32,
    pub end: TaskEnd,
}

impl std::fmt::Debug for OwedCallback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OwedCallback")
            .field("id", &self.id)
            .field("task_id", &self.task_id)
            .field("kind", &self.kind)
            .field("tries", &self.tries)
            .field("end", &self.end)
            .finish_non_exhaustive()
    }
}

/// A waiting callback whose heartbeat is due (or that its task's end made owed). Its `Debug`
/// leaves the token out.
#[derive(Clone, PartialEq)]
pub struct DueHeartbeat {
    pub id: i64,
    pub task_id: Uuid,
    /// The tenant whose callback it is.
    pub app_id: String,
    pub kind: String,
    pub token: String,
    /// Its task has ended: no heartbeat, the delivery duty answers it.
    pub owed: bool,
    /// The task's status when it was taken.
    pub task_status: TaskStatus,
    /// The heartbeat the take recorded, and the one before it (what [`unmark_heartbeats`] puts
    /// back when the call did not go through).
    pub marked_at: DateTime<Utc>,
    pub last_heartbeat_at: DateTime<Utc>,
}

impl std::fmt::Debug for DueHeartbeat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DueHeartbeat")
            .field("id", &self.id)
            .field("task_id", &self.task_id)
            .field("app_id", &self.app_id)
            .field("kind", &self.kind)
            .field("owed", &self.owed)
            .field("task_status", &self.task_status)
            .finish_non_exhaustive()
    }
}

/// What a call came to, as the store records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallbackEnd {
    /// AWS accepted the success or failure call.
    Delivered,
    /// The caller no longer waits (AWS's error code and message).
    Gone(String),
    /// AWS refuses the call for good, or it was tried too often.
    Refused(String),
    /// Try again after this long (what went wrong).
    Retry { after: Duration, error: String },
}

impl CallbackEnd {
    fn state(&self) -> &'static str {
        match self {
            CallbackEnd::Delivered => "delivered",
            CallbackEnd::Gone(_) => "gone",
            CallbackEnd::Refused(_) => "refused",
            CallbackEnd::Retry { .. } => "owed",
        }
    }
}

/// Attach callbacks to their tasks (`sql/callbacks/attach_callbacks.sql`): one statement for a create or a
/// whole batch's. Those whose task has ended already are owed at once. The ids of the tasks that
/// got a callback owed now (their sender should call at once).
pub async fn attach_callbacks(
    client: &impl GenericClient,
    callbacks: &[NewCallback<'_>],
) -> StoreResult<Vec<Uuid>> {
    if callbacks.is_empty() {
        return Ok(Vec::new());
    }
    let task_ids: Vec<Uuid> = callbacks.iter().map(|c| c.task_id).collect();
    let kinds: Vec<&str> = callbacks.iter().map(|c| c.kind).collect();
    let tokens: Vec<&str> = callbacks.iter().map(|c| c.token).collect();
    let statement = client.prepare_cached(ATTACH_CALLBACKS.text()).await?;
    let params = ATTACH_CALLBACKS.bind(&[("task_ids", &task_ids), ("kinds", &kinds), ("tokens", &tokens)])?;
    let rows = client.query(&statement, &params).await?;
    let mut owed = Vec::new();
    for row in &rows {
        if row.try_get::<_, String>("state")? == "owed" {
            owed.push(row.try_get("task_id")?);
        }
    }
    Ok(owed)
}

/// A page of owed callbacks whose time has come, leased for `lease` (`sql/callbacks/take_owed_callbacks.sql`).
pub async fn take_owed_callbacks(
    client: &impl GenericClient,
    lease: Duration,
    page: usize,
) -> StoreResult<Vec<OwedCallback>> {
    let statement = client.prepare_cached(TAKE_OWED_CALLBACKS.text()).await?;
    let (lease_ms, page) = (millis(lease), limit(page));
    let params = TAKE_OWED_CALLBACKS.bind(&[("lease_ms", &lease_ms), ("page", &page)])?;
    client.query(&statement, &params).await?.iter().map(owed_from_row).collect()
}

/// After a publish: mark the events that were taken delivered and take, leased for `lease`, the owed
/// callbacks of the tasks those events ended (`sql/callbacks/mark_delivered_and_take_owed.sql`), in one statement.
pub async fn mark_delivered_and_take_owed(
    client: &impl GenericClient,
    delivered: &[i64],
    task_ids: &[Uuid],
    lease: Duration,
) -> StoreResult<Vec<OwedCallback>> {
    let statement = client.prepare_cached(MARK_DELIVERED_AND_TAKE_OWED.text()).await?;
    let lease_ms = millis(lease);
    let params = MARK_DELIVERED_AND_TAKE_OWED.bind(&[
        ("event_ids", &delivered),
        ("task_ids", &task_ids),
        ("lease_ms", &lease_ms),
    ])?;
    client.query(&statement, &params).await?.iter().map(owed_from_row).collect()
}

/// A page of waiting callbacks not heartbeated for `every`, shared between tenants in turns,
/// marked heartbeated now; those whose task has ended come back owed
/// (`sql/callbacks/take_heartbeats.sql`).
pub async fn take_heartbeats(
    client: &impl GenericClient,
    every: Duration,
    page: usize,
) -> StoreResult<Vec<DueHeartbeat>> {
    let statement = client.prepare_cached(TAKE_HEARTBEATS.text()).await?;
    let (every_ms, page) = (millis(every), limit(page));
    let params = TAKE_HEARTBEATS.bind(&[("every_ms", &every_ms), ("page", &page)])?;
    client
        .query(&statement, &params)
        .await?
        .iter()
        .map(|row| {
            Ok(DueHeartbeat {
                id: row.try_get("id")?,
                task_id: row.try_get("task_id")?,
                app_id: row.try_get("app_id")?,
                kind: row.try_get("kind")?,
                token: row.try_get("token")?,
                owed: row.try_get::<_, String>("state")? == "owed",
                task_status: status(row)?,
                marked_at: row.try_get("marked_at")?,
                last_heartbeat_at: row.try_get("last_heartbeat_at")?,
            })
        })
        .collect()
}

/// Give these taken heartbeats back their previous heartbeat, so each is due again at once in
/// its place (`sql/callbacks/unmark_heartbeats.sql`): the call was throttled or failed. How many changed
/// (one a concurrent sweep heartbeated since is left as it is).
pub async fn unmark_heartbeats(client: &impl GenericClient, taken: &[&DueHeartbeat]) -> StoreResult<u64> {
    if taken.is_empty() {
        return Ok(0);
    }
    let ids: Vec<i64> = taken.iter().map(|due| due.id).collect();
    let marked: Vec<DateTime<Utc>> = taken.iter().map(|due| due.marked_at).collect();
    let last: Vec<DateTime<Utc>> = taken.iter().map(|due| due.last_heartbeat_at).collect();
    let statement = client.prepare_cached(UNMARK_HEARTBEATS.text()).await?;
    let params =
        UNMARK_HEARTBEATS.bind(&[("ids", &ids), ("marked_ats", &marked), ("last_heartbeat_ats", &last)])?;
    Ok(client.query(&statement, &params).await?.len() as u64)
}

/// One tenant's waiting callbacks, as the heartbeat duty plans with them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitingCallbacks {
    pub app_id: String,
    /// How many wait, counted up to the `most` asked for.
    pub waiting: i64,
    /// How long until its least recently heartbeated one is due (zero: due now) ...
    pub due_in: Duration,
    /// ... or how long it has been due.
    pub overdue: Duration,
}

/// Every tenant with waiting callbacks: how many wait (up to `most` a tenant; 0 counts none) and
/// when its next heartbeat is due, a callback being due once its last heartbeat is `every` old
/// (`sql/callbacks/waiting_callbacks.sql`).
pub async fn waiting_callbacks(
    client: &impl GenericClient,
    every: Duration,
    most: u64,
) -> StoreResult<Vec<WaitingCallbacks>> {
    let statement = client.prepare_cached(WAITING_CALLBACKS.text()).await?;
    let (every_ms, most) = (millis(every), i64::try_from(most).unwrap_or(i64::MAX));
    let params = WAITING_CALLBACKS.bind(&[("every_ms", &every_ms), ("most", &most)])?;
    client
        .query(&statement, &params)
        .await?
        .iter()
        .map(|row| {
            let due_in_ms: i64 = row.try_get("due_in_ms")?;
            Ok(WaitingCallbacks {
                app_id: row.try_get("app_id")?,
                waiting: row.try_get("waiting")?,
                due_in: Duration::from_millis(u64::try_from(due_in_ms).unwrap_or(0)),
                overdue: Duration::from_millis(due_in_ms.min(0).unsigned_abs()),
            })
        })
        .collect()
}

/// What one callback a create brings would add, before the create is stored
/// ([`callback_room`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallbackRoom {
    /// Live callbacks (waiting or owed) of the tenant's task with that effect key (0: no task yet).
    pub task_callbacks: i64,
    /// The token is on that task already: attaching it again adds nothing.
    pub attached: bool,
    /// That task has ended: its callback is answered at once, never waits.
    pub task_ended: bool,
}

/// The tenant's waiting callbacks (counted up to `tenant_limit`), and for each `(effect key,
/// token)` what attaching it would add (`sql/callbacks/callback_room.sql`), in the order given.
pub async fn callback_room(
    client: &impl GenericClient,
    app_id: &str,
    callbacks: &[(&str, &str)],
    tenant_limit: i64,
) -> StoreResult<(i64, Vec<CallbackRoom>)> {
    if callbacks.is_empty() {
        return Ok((0, Vec::new()));
    }
    let effect_keys: Vec<&str> = callbacks.iter().map(|(key, _)| *key).collect();
    let tokens: Vec<&str> = callbacks.iter().map(|(_, token)| *token).collect();
    let statement = client.prepare_cached(CALLBACK_ROOM.text()).await?;
    let params = CALLBACK_ROOM.bind(&[
        ("effect_keys", &effect_keys),
        ("tokens", &tokens),
        ("app_id", &app_id),
        ("tenant_limit", &tenant_limit),
    ])?;
    let rows = client.query(&statement, &params).await?;
    let mut tenant_waiting = 0;
    let mut rooms = Vec::with_capacity(rows.len());
    for row in &rows {
        tenant_waiting = row.try_get("tenant_waiting")?;
        rooms.push(CallbackRoom {
            task_callbacks: row.try_get("task_callbacks")?,
            attached: row.try_get("attached")?,
            task_ended: row.try_get("task_ended")?,
        });
    }
    Ok((tenant_waiting, rooms))
}

/// Record what the calls came to (`sql/callbacks/record_callbacks.sql`); how many callbacks changed.
pub async fn record_callbacks(
    client: &impl GenericClient,
    outcomes: &[(i64, CallbackEnd)],
) -> StoreResult<u64> {
    if outcomes.is_empty() {
        return Ok(0);
    }
    let ids: Vec<i64> = outcomes.iter().map(|(id, _)| *id).collect();
    let states: Vec<&str> = outcomes.iter().map(|(_, end)| end.state()).collect();
    let retry_ms: Vec<i64> = outcomes
        .iter()
        .map(|(_, end)| match end {
            CallbackEnd::Retry { after, .. } => millis(*after),
            _ => 0,
        })
        .collect();
    let errors: Vec<Option<String>> = outcomes
        .iter()
        .map(|(_, end)| match end {
            CallbackEnd::Delivered => None,
            CallbackEnd::Gone(error) | CallbackEnd::Refused(error) | CallbackEnd::Retry { error, .. } => {
                Some(truncate_message(error))
            }
        })
        .collect();
    let statement = client.prepare_cached(RECORD_CALLBACKS.text()).await?;
    let params = RECORD_CALLBACKS.bind(&[
        ("ids", &ids),
        ("states", &states),
        ("retry_ms", &retry_ms),
        ("errors", &errors),
    ])?;
    Ok(client.query(&statement, &params).await?.len() as u64)
}

/// Of these tasks, end `canceled` the queued ones whose every callback is gone
/// (`sql/callbacks/cancel_abandoned.sql`); their completion events, to publish.
pub async fn cancel_abandoned(
    client: &impl GenericClient,
    task_ids: &[Uuid],
) -> StoreResult<Vec<PendingEvent>> {
    if task_ids.is_empty() {
        return Ok(Vec::new());
    }
    let statement = client.prepare_cached(CANCEL_ABANDONED.text()).await?;
    let params = CANCEL_ABANDONED.bind(&[("task_ids", &task_ids), ("canceled_code", &CANCELED_CODE)])?;
    client.query(&statement, &params).await?.iter().map(ended_event_from_row).collect()
}

fn status(row: &Row) -> StoreResult<TaskStatus> {
    let text: String = row.try_get("status")?;
    TaskStatus::parse(&text).ok_or_else(|| StoreError::Corrupt(format!("unknown task status {text:?}")))
}

fn owed_from_row(row: &Row) -> StoreResult<OwedCallback> {
    Ok(OwedCallback {
        id: row.try_get("id")?,
        task_id: row.try_get("task_id")?,
        kind: row.try_get("kind")?,
        token: row.try_get("token")?,
        tries: row.try_get("tries")?,
        end: TaskEnd {
            status: status(row)?,
            output: row.try_get("output")?,
            usage: row.try_get("usage")?,
            error_code: row.try_get("error_code")?,
            error_message: row.try_get("error_message")?,
        },
    })
}
