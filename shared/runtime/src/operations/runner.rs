//! An operation's pages. Each is one lease on the operation (its row locked `FOR UPDATE SKIP
//! LOCKED` for the page's transaction, so no two runners work one page), a walk of at most
//! `AITASK_REQUEST_PAGE` tasks from the cursor, the action on those that match, and the cursor
//! and counts written before the lease's transaction commits:
//!
//! - cancel: the page's tasks get the cancel in the lease's transaction itself, so the cancel and
//!   its counts commit together or not at all;
//! - replay: each replay is a create of its own (the create path, [`crate::create`]) under the
//!   derived key `replay:{taskId}` and names the operation; a page redone after a crash finds the
//!   replays it made by their keys and counts them done once (the counts of the page that
//!   crashed were never committed). A key that names a task another request made is
//!   `ALREADY_REPLAYED`.

use std::time::Instant;

use aitasks_contracts::{derived_replay_key, skip, AppId, Operation, OperationAction};
use aitasks_store::{self as store, Created, OperationLease, PageCounts, StoreError};
use uuid::Uuid;

use crate::api_error::ApiError;
use crate::app::App;
use crate::replays::replay_body;

/// Work on one operation, a page at a time, until it ends or `until` passes (a page started
/// before then is finished). Its state after the last page, or `None` when it is not running or
/// another runner holds it now.
pub(crate) async fn work_until<P>(
    app: &App<P>,
    id: Uuid,
    until: Instant,
) -> Result<Option<Operation>, ApiError> {
    let mut last = None;
    loop {
        match work_page(app, id, true).await? {
            None => return Ok(last),
            Some(operation) => {
                let running = operation.state == aitasks_contracts::OperationState::Running;
                last = Some(operation);
                if !running || Instant::now() >= until {
                    return Ok(last);
                }
            }
        }
    }
}

/// One page of a running operation, or `None` when it is not running, another runner holds it
/// now, or it replays and `replays` is false (its lease let go untouched).
pub(crate) async fn work_page<P>(
    app: &App<P>,
    id: Uuid,
    replays: bool,
) -> Result<Option<Operation>, ApiError> {
    let page = app.settings.runtime.request_page;
    let mut client = store::client(&app.pool).await?;
    let Some(lease) = store::take_operation(&mut client, id).await? else { return Ok(None) };
    if lease.operation.action == OperationAction::Replay && !replays {
        return Ok(None);
    }
    let app_id = lease.app_id().to_owned();
    let walk = lease.walk_operation(page).await?;
    let mut counts = PageCounts::default();
    let operation = match lease.operation.action {
        OperationAction::Cancel => {
            let canceled = lease.cancel_operation_page(&walk.matched).await?;
            counts.done = canceled.touched() as i64;
            let ended = walk.matched.len() as i64 - counts.done;
            if ended > 0 {
                counts.skipped.insert(skip::ALREADY_ENDED.to_owned(), ended);
            }
            let operation = lease.advance_operation(&walk, page, &counts).await?;
            app.publish(canceled.ended).await;
            operation
        }
        OperationAction::Replay => {
            let made = replay_page(app, &lease, &walk.matched, &mut counts).await?;
            let operation = lease.advance_operation(&walk, page, &counts).await?;
            crate::create::send_replays(app, &made).await?;
            operation
        }
    };
    // The answer shows the counts by reason too: read back as committed.
    Ok(store::get_operation(&client, &app_id, operation.id).await?)
}

/// The replays of a page's matched tasks, each through the create path; the ones whose messages
/// the caller sends once the page is committed (the new ones, and those a failed page made). A store that fails (503, 500) ends the
/// page unwritten: the lease rolls back, and the page is redone.
async fn replay_page<P>(
    app: &App<P>,
    lease: &OperationLease<'_>,
    matched: &[Uuid],
    counts: &mut PageCounts,
) -> Result<Vec<Result<Created, ApiError>>, ApiError> {
    let operation = &lease.operation;
    let tenant = AppId::parse(lease.app_id()).ok_or(ApiError::NotFound)?;
    let sources = lease.replay_sources(matched).await?;
    // A matched task deleted since the walk (its scope's data deleted) cannot be replayed.
    for _ in sources.len()..matched.len() {
        counts.skip(skip::TASK_NOT_REPLAYABLE);
    }
    let mut made = Vec::new();
    for source in &sources {
        let original = source.task.id;
        let key = derived_replay_key(original);
        let body = match replay_body(source, key.as_str(), operation.recompute) {
            Ok(body) => body,
            Err(refusal) => {
                counts.skip(refusal.reason());
                continue;
            }
        };
        match crate::create::create_replay(app, &tenant, &body, original, Some(operation.id), true).await {
            Ok(Created::New(task)) => {
                counts.done += 1;
                made.push(Ok(Created::New(task)));
            }
            // Made by this operation before a crash or a failed page: done, counted now (that
            // page's counts were rolled back with it), and sent again, since that page may have
            // ended before its sends (a duplicate message claims nothing; an ended one is not sent).
            Ok(Created::Existing(task)) if task.replay_operation == Some(operation.id) => {
                counts.done += 1;
                made.push(Ok(Created::New(task)));
            }
            Ok(Created::Existing(_)) => counts.skip(skip::ALREADY_REPLAYED),
            Err(error @ (ApiError::Unavailable(_) | ApiError::Internal(_))) => return Err(error),
            Err(refusal) => counts.fail(refusal.code()),
        }
    }
    Ok(made)
}

/// What the sweeper's duty did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct OperationsWorked {
    pub(crate) pages: u64,
    pub(crate) ended: u64,
}

/// The sweeper's `operations` duty: every running operation gets a page a turn, the one worked
/// on least recently first (round robin), until `until`. Cancel pages only end work, and go on
/// for the whole window; replay pages add tasks to the queue every tenant shares, so at most
/// `replay_pages` of them run a sweep (their replays enter the queue at most that many pages a
/// sweep, beyond the first seconds of the operation's own POST).
pub(crate) async fn continue_operations<P>(
    app: &App<P>,
    replay_pages: usize,
    until: Instant,
) -> Result<OperationsWorked, StoreError> {
    /// Operations read a turn: a page each.
    const TURN: usize = 100;
    let mut worked = OperationsWorked::default();
    let mut replayed = 0;
    while Instant::now() < until {
        let running = {
            let client = store::client(&app.pool).await?;
            store::next_operations(&client, TURN).await?
        };
        if running.is_empty() {
            break;
        }
        let mut progressed = false;
        for id in running {
            if Instant::now() >= until {
                break;
            }
            // None: held by another runner, ended meanwhile, or a replay past this sweep's pages.
            let page = work_page(app, id, replayed < replay_pages).await.map_err(into_store_error)?;
            if let Some(operation) = page {
                progressed = true;
                worked.pages += 1;
                if operation.action == OperationAction::Replay {
                    replayed += 1;
                }
                if operation.state != aitasks_contracts::OperationState::Running {
                    worked.ended += 1;
                }
            }
        }
        if !progressed {
            break;
        }
    }
    Ok(worked)
}

/// A page's failure as the sweeper counts a duty's: the store's error.
fn into_store_error(error: ApiError) -> StoreError {
    match error {
        ApiError::Unavailable(error) => error,
        ApiError::Internal(cause) => match cause.downcast::<StoreError>() {
            Ok(error) => *error,
            Err(other) => StoreError::Corrupt(crate::error_chain(other.as_ref())),
        },
        other => StoreError::Corrupt(other.to_string()),
    }
}
