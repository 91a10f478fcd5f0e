//! `POST /v1/tasks` and `POST /v1/tasks/batch`. Both check an item the same way, in the
//! contract's order: body (400), size (413), model (400); then the store answers run (404/409),
//! existing effect key (200) and admission (429). A bulk create's unscoped items without a tenant
//! quota go to the store in one statement; the others keep their own transaction each, so
//! scoped admission stays exact item by item. Whatever the path, a key given twice is created
//! by its first item that the store takes, and the later ones answer 200 with that task.
//!
//! A create's `callback` is attached to its task, new or found by its effect key, before the
//! task's message is sent (one statement for a bulk create's callbacks); one whose task has ended
//! already is answered at once. One that would pass a limit on callbacks is refused (429) before
//! its item is stored ([`crate::callback_limits`]). A create without a `callback` waits by
//! reading the task (GET, a long poll): it counts as a caller for as long as the task lives, so a
//! task it named is never canceled because every callback attached to it is gone
//! (docs/events.md).
//!
//! A deferred create (`delivery.deferred`) whose profile batches is stored awaiting a batch and
//! sends no message: the sweeper's batcher takes it ([`crate::batcher`]).

use std::collections::HashSet;

use aitasks_contracts::{
    item_value, parse_json, request_hash, stored_size, AppId, Callback, CreateMany, CreateTask, Owner, Scope,
    MAX_BULK_BODY_BYTES, MAX_CREATE_BODY_BYTES, REQUEST_MAX_BYTES,
};
use aitasks_store::{self as store, Created, NewCallback, NewTask, OwedMessage, TaskOwner};
use serde_json::{json, Value};
use tracing::Instrument;

use crate::api_error::ApiError;
use crate::app::App;
use crate::callback_limits::{self, Wanted};
use crate::metrics::count_created;

/// A create that passed every check the request alone can answer.
struct Checked {
    task: NewTask,
    scope: Option<Scope>,
    callback: Option<Callback>,
}

/// A bulk create's plain items are written together until they hold this many bytes of requests (as
/// stored): a statement's worth, and a bound on what a bulk create holds in memory at once.
const PLAIN_FLUSH_BYTES: usize = 1_000_000;

/// One item of a bulk create: refused unparsed when it is larger than a single create body may be,
/// else parsed and checked as one.
fn check_item<P>(
    app: &App<P>,
    tenant: &AppId,
    item: &serde_json::value::RawValue,
) -> Result<Checked, ApiError> {
    if item.get().len() > MAX_CREATE_BODY_BYTES {
        return Err(ApiError::TooLarge);
    }
    check(app, tenant, &item_value(item).map_err(ApiError::Invalid)?)
}

/// A bulk create answers with summaries: a created or found task's request is not kept (the answer
/// never holds it, and a thousand of them as trees would not fit a function's memory).
fn summary_only(mut created: Created) -> Created {
    match &mut created {
        Created::New(task) | Created::Existing(task) => task.request = Value::Null,
    }
    created
}

/// Check one create body (already JSON) against the contract and the configured models.
fn check<P>(app: &App<P>, tenant: &AppId, body: &Value) -> Result<Checked, ApiError> {
    let parsed = CreateTask::parse(body).map_err(ApiError::Invalid)?;
    let request = parsed.request.to_value();
    if stored_size(&request) > REQUEST_MAX_BYTES {
        return Err(ApiError::TooLarge);
    }
    let profile = app
        .profiles
        .resolve(&parsed.model_id)
        .map_err(|_| ApiError::ModelUnknown(parsed.model_id.clone()))?;
    let window = parsed.delivery.within();
    let owner = match parsed.owner {
        Owner::Run(run_id) => TaskOwner::Run(run_id),
        Owner::Application { scope_id, usage_subject } => TaskOwner::Application {
            scope_id,
            usage_subject: usage_subject.map(|s| json!({"type": s.kind, "id": s.id})),
        },
    };
    let task = NewTask {
        app_id: tenant.as_str().to_owned(),
        owner,
        step_key: parsed.step_key,
        effect_key: parsed.effect_key.into_string(),
        kind: parsed.request.kind().as_str().to_owned(),
        input_hash: request_hash(&parsed.request),
        request,
        model_id: parsed.model_id,
        model_ref: Some(profile.model_ref()),
        model_config_hash: Some(profile.config_hash()),
        max_attempts: app.settings.runtime.max_attempts,
        trace_header: crate::xray::current_header(),
        deferred_window_ms: window.map(|w| i64::try_from(w.as_millis()).unwrap_or(i64::MAX)),
        // A profile without a batch API runs a deferred task now: it keeps its window only.
        awaiting_batch: window.is_some() && profile.batching().is_some(),
        has_poller: parsed.callback.is_none(),
        scope_terms: parsed.scope.as_ref().map(Scope::terms),
        replay_of: None,
        replay_operation: None,
    };
    Ok(Checked { task, scope: parsed.scope, callback: parsed.callback })
}

/// Attach the callbacks of stored creates to their tasks, and answer at once those whose task
/// has ended already (a cache hit, an existing task). Before the tasks' messages are sent, so a
/// task never runs before its callback is there to be answered.
async fn attach<P>(
    app: &App<P>,
    client: &store::Client,
    callbacks: &[(uuid::Uuid, &Callback)],
) -> Result<(), ApiError> {
    if callbacks.is_empty() {
        return Ok(());
    }
    let new: Vec<NewCallback<'_>> = callbacks
        .iter()
        .map(|(task_id, callback)| NewCallback {
            task_id: *task_id,
            kind: callback.kind(),
            token: callback.token(),
        })
        .collect();
    let mut owed = store::attach_callbacks(client, &new).await?;
    owed.sort_unstable();
    owed.dedup();
    app.answer_callbacks_of(&owed).await;
    Ok(())
}

/// Record the creates without a callback that found a live task by its effect key: their
/// callers read it, so it is never canceled for want of callers. (A new task records it as it
/// is inserted, [`NewTask::has_poller`].)
async fn mark_pollers<'a>(
    client: &store::Client,
    found: impl Iterator<Item = &'a Created>,
) -> Result<(), ApiError> {
    let live: Vec<uuid::Uuid> = found
        .filter_map(|created| match created {
            Created::Existing(task) if !task.status.is_terminal() => Some(task.id),
            _ => None,
        })
        .collect();
    Ok(store::mark_pollers(client, &live).await?)
}

/// One item through the store on its own: the tenant's quota or scoped admission, in a
/// transaction of its own; a plain create in one statement.
async fn store_one<P>(app: &App<P>, client: &mut store::Client, item: &Checked) -> Result<Created, ApiError> {
    let limits = app.settings.limits_for(&item.task.app_id);
    Ok(match &item.scope {
        None => match limits.tenant_tasks_per_day {
            None => store::create_task(&*client, &item.task).await?,
            Some(limit) => store::create_task_within_quota(client, &item.task, limit).await?,
        },
        Some(scope) => {
            let scoped = crate::admission::create_scoped(client, &item.task, scope, limits).await?;
            if let Some(event) = scoped.event {
                app.publish(vec![event]).await;
            }
            scoped.created
        }
    })
}

/// `POST /v1/tasks`: 201 with a new task, 200 with the existing one for a used effect key.
pub async fn create_task<P>(app: &App<P>, tenant: &AppId, body: &[u8]) -> Result<Created, ApiError> {
    // A body this large cannot hold a request within the limit (whatever its whitespace), so
    // it is refused before any parsing time or memory is spent on it.
    if body.len() > MAX_CREATE_BODY_BYTES {
        return Err(ApiError::TooLarge);
    }
    let item = check(app, tenant, &parse_json(body).map_err(ApiError::Invalid)?)?;
    let (created, client) = store_checked(app, tenant, &item).await?;
    if let Created::New(task) = &created {
        send_one(app, &client, task).await;
    }
    Ok(created)
}

/// A replay (docs/api.md, "Replaying a task"): `body` is the create the original's columns
/// make, checked and stored exactly as `POST /v1/tasks` would check and store it (model, run,
/// effect key, quotas, scoped admission, result cache); the new task names the original and the
/// operation that made it, if one did. Its message is sent here unless `defer_send` (an
/// operation's page sends its replays' messages together, [`send_replays`]).
pub(crate) async fn create_replay<P>(
    app: &App<P>,
    tenant: &AppId,
    body: &Value,
    replay_of: uuid::Uuid,
    operation: Option<uuid::Uuid>,
    defer_send: bool,
) -> Result<Created, ApiError> {
    let mut item = check(app, tenant, body)?;
    item.task.replay_of = Some(replay_of);
    item.task.replay_operation = operation;
    let (created, client) = store_checked(app, tenant, &item).await?;
    if let (Created::New(task), false) = (&created, defer_send) {
        send_one(app, &client, task).await;
    }
    Ok(created)
}

/// Send the messages of an operation page's new replays, ten to a call, as a bulk create does.
pub(crate) async fn send_replays<P>(
    app: &App<P>,
    created: &[Result<Created, ApiError>],
) -> Result<(), ApiError> {
    send_new(app, created).await;
    Ok(())
}

/// A checked create through the store: its callback's limits, the store's create (admission
/// for a scoped one), its callback attached or its poller marked, the metrics.
async fn store_checked<P>(
    app: &App<P>,
    tenant: &AppId,
    item: &Checked,
) -> Result<(Created, store::Client), ApiError> {
    let store_span = tracing::info_span!("store create");
    let mut client = store::client(&app.pool).instrument(store_span.clone()).await?;
    if let Some(callback) = &item.callback {
        let wanted = [Wanted { item: 0, effect_key: &item.task.effect_key, token: callback.token() }];
        let refused =
            callback_limits::refusals(app, &client, tenant, &wanted).instrument(store_span.clone()).await;
        if let Some(refusal) = refused?.remove(&0) {
            return Err(refusal);
        }
    }
    let created = store_one(app, &mut client, item).instrument(store_span).await?;
    let noted = match &item.callback {
        Some(callback) => attach(app, &client, &[(created.task().id, callback)]).await,
        None => mark_pollers(&client, std::iter::once(&created)).await,
    };
    if let Err(error) = noted {
        // Stored, but the request fails before its send, and a retry finds the task existing and
        // sends nothing: owed again now, for the sweeper's next run.
        owe_again(&client, new_ids([Ok(&created)])).await;
        return Err(error);
    }
    count_created([(Some(&created), item.scope.is_some())]);
    Ok((created, client))
}

/// A new task's message, after the commit. The task was inserted marked sent: a send that fails
/// marks it unsent for the sweeper, and a crash before the send leaves it to the sweeper's
/// lost-message duty (docs/lifecycle.md). Consumers tolerate the duplicate a late send can cause.
async fn send_one<P>(app: &App<P>, client: &store::Client, task: &store::Task) {
    if task.status != store::TaskStatus::Queued || task.awaiting_batch {
        return;
    }
    let send = app.queues.send_task(task.id, &task.app_id);
    if let Err(error) = send.instrument(tracing::info_span!("send task message")).await {
        tracing::warn!(task_id = %task.id, error = %crate::error_chain(&error), "send failed; the sweeper will send it");
        owe_again(client, vec![task.id]).await;
    }
}

/// The ids of the new tasks among a request's answers.
fn new_ids<'a>(answers: impl IntoIterator<Item = Result<&'a Created, &'a ApiError>>) -> Vec<uuid::Uuid> {
    answers
        .into_iter()
        .filter_map(|answer| match answer {
            Ok(Created::New(task)) => Some(task.id),
            _ => None,
        })
        .collect()
}

/// Tasks inserted marked sent whose message did not go out (the send failed, or the request
/// failed before it): owed again, so the sweeper sends them after its grace. A mark that fails
/// too leaves them to the lost-message duty (docs/lifecycle.md).
async fn owe_again(client: &store::Client, task_ids: Vec<uuid::Uuid>) {
    if task_ids.is_empty() {
        return;
    }
    if let Err(error) = store::owe_again(client, &task_ids).await {
        tracing::warn!(unsent = task_ids.len(), error = %crate::error_chain(&error), "could not mark the failed sends unsent; the lost-message sweep will send them");
    }
}

/// `POST /v1/tasks/batch`: every item answered in order, each as its own create would be. A
/// refusal of the whole request (401, a body that is not a bulk create, 413 past the body limit, 503)
/// stores nothing.
pub async fn create_many<P>(
    app: &App<P>,
    tenant: &AppId,
    body: &[u8],
) -> Result<Vec<Result<Created, ApiError>>, ApiError> {
    if body.len() > MAX_BULK_BODY_BYTES {
        return Err(ApiError::TooLarge);
    }
    let many = CreateMany::parse(body).map_err(ApiError::Invalid)?;
    let quota = app.settings.limits_for(tenant.as_str()).tenant_tasks_per_day;
    let store_span = tracing::info_span!("store create", items = many.items.len());
    let mut client = store::client(&app.pool).instrument(store_span.clone()).await?;
    let mut answers: Vec<Option<Result<Created, ApiError>>> = Vec::with_capacity(many.items.len());
    let mut scoped: Vec<bool> = Vec::with_capacity(many.items.len());
    let mut callbacks: Vec<Option<Callback>> = Vec::with_capacity(many.items.len());
    let mut plain = Plain::default();
    // The callbacks past a limit, refused before anything is stored.
    let brought = callback_limits::many_callbacks(body, &many.items);
    let wanted: Vec<Wanted<'_>> = brought
        .iter()
        .map(|(item, effect_key, callback)| Wanted { item: *item, effect_key, token: callback.token() })
        .collect();
    let mut refused =
        callback_limits::refusals(app, &client, tenant, &wanted).instrument(store_span.clone()).await?;
    let stored = async {
        // One item at a time: parsed, checked, and (plain ones) gathered for one statement,
        // flushed once they hold PLAIN_FLUSH_BYTES of requests, so a bulk create is never all in
        // memory as trees at once.
        for (i, item) in many.items.iter().enumerate() {
            let item = check_item(app, tenant, item).and_then(|item| match refused.remove(&i) {
                Some(refusal) if item.callback.is_some() => Err(refusal),
                _ => Ok(item),
            });
            scoped.push(item.as_ref().is_ok_and(|item| item.scope.is_some()));
            callbacks.push(item.as_ref().ok().and_then(|item| item.callback.clone()));
            match item {
                Err(refusal) => answers.push(Some(Err(refusal))),
                Ok(item) if item.scope.is_none() && quota.is_none() => {
                    plain.push(i, item.task);
                    answers.push(None);
                    if plain.bytes >= PLAIN_FLUSH_BYTES {
                        plain.store(&client, tenant, &mut answers).await?;
                    }
                }
                Ok(item) => {
                    // An earlier plain item with this key goes to the store first, so that the
                    // earlier item is the one that creates (docs/api.md).
                    if plain.keys.contains(&item.task.effect_key) {
                        plain.store(&client, tenant, &mut answers).await?;
                    }
                    match store_one(app, &mut client, &item).await {
                        // The store failing refuses the whole request (503, 500): the caller
                        // sends the bulk create again, and the items already stored answer 200.
                        Err(error @ (ApiError::Unavailable(_) | ApiError::Internal(_))) => return Err(error),
                        answer => answers.push(Some(answer.map(summary_only))),
                    }
                }
            }
        }
        plain.store(&client, tenant, &mut answers).await
    }
    .instrument(store_span)
    .await;
    if let Err(error) = stored {
        // The items stored before the failure are not sent, and the retry finds them existing:
        // owed again now, for the sweeper's next run.
        owe_again(&client, new_ids(answers.iter().flatten().map(Result::as_ref))).await;
        return Err(error);
    }
    let answers: Vec<Result<Created, ApiError>> = answers.into_iter().flatten().collect();
    let attached: Vec<(uuid::Uuid, &Callback)> = answers
        .iter()
        .zip(&callbacks)
        .filter_map(|(answer, callback)| Some((answer.as_ref().ok()?.task().id, callback.as_ref()?)))
        .collect();
    // The store failing here refuses the whole request, as above: sent again, every item
    // answers 200 and its callback is attached then; the new tasks are owed again meanwhile.
    let polled = answers
        .iter()
        .zip(&callbacks)
        .filter(|(_, callback)| callback.is_none())
        .filter_map(|(answer, _)| answer.as_ref().ok());
    let noted = match attach(app, &client, &attached).await {
        Ok(()) => mark_pollers(&client, polled).await,
        Err(error) => Err(error),
    };
    if let Err(error) = noted {
        owe_again(&client, new_ids(answers.iter().map(Result::as_ref))).await;
        return Err(error);
    }
    count_created(answers.iter().map(|answer| answer.as_ref().ok()).zip(scoped));
    send_new(app, &answers).await;
    Ok(answers)
}

/// A bulk create's plain items not yet stored: one statement stores them all, whenever an item that
/// must go after one of them (the same key, stored on its own) comes up, and at the end.
#[derive(Default)]
struct Plain {
    tasks: Vec<NewTask>,
    at: Vec<usize>,
    keys: HashSet<String>,
    /// Their requests' bytes as stored.
    bytes: usize,
}

impl Plain {
    fn push(&mut self, at: usize, task: NewTask) {
        self.keys.insert(task.effect_key.clone());
        self.bytes += stored_size(&task.request);
        self.tasks.push(task);
        self.at.push(at);
    }

    /// Store them, each answer into its item's place.
    async fn store(
        &mut self,
        client: &store::Client,
        tenant: &AppId,
        answers: &mut [Option<Result<Created, ApiError>>],
    ) -> Result<(), ApiError> {
        let stored = store::create_tasks(client, tenant.as_str(), &self.tasks).await?;
        for (i, answer) in self.at.iter().zip(stored) {
            answers[*i] = Some(answer.map(summary_only).map_err(ApiError::from));
        }
        *self = Plain::default();
        Ok(())
    }
}

/// The messages of a bulk create's new queued tasks: `SendMessageBatch`, ten to a call. The tasks
/// were inserted marked sent; those whose send failed are marked unsent, for the sweeper.
async fn send_new<P>(app: &App<P>, answers: &[Result<Created, ApiError>]) {
    let owed: Vec<OwedMessage> = answers
        .iter()
        .filter_map(|answer| match answer {
            Ok(Created::New(task)) if task.status == store::TaskStatus::Queued && !task.awaiting_batch => {
                Some(OwedMessage { task_id: task.id, app_id: task.app_id.clone() })
            }
            _ => None,
        })
        .collect();
    if owed.is_empty() {
        return;
    }
    let failed = app.queues.send_tasks(&owed).instrument(tracing::info_span!("send task message")).await;
    if !failed.is_empty() {
        tracing::warn!(unsent = failed.len(), "some sends failed; the sweeper will send them");
        // A client only now: a pool with none free leaves them to the lost-message duty.
        match store::client(&app.pool).await {
            Ok(client) => owe_again(&client, failed).await,
            Err(error) => {
                tracing::warn!(error = %crate::error_chain(&error), "could not mark the failed sends unsent; the lost-message sweep will send them")
            }
        }
    }
}
