//! Tasks: create, read, wait for, cancel, list.

use std::time::Duration;

use aitasks_contracts::{ListTasks, TaskFilter, MAX_WAIT_SECONDS, TASK_PAGE_MAX};
use futures::stream::{self, Stream, TryStreamExt};
use reqwest::Method;
use tokio::time::Instant;
use uuid::Uuid;

use crate::answers::{Created, Task, TaskPage};
use crate::body::TaskBody;
use crate::client::{query, Call, Client};
use crate::error::Error;

/// A listing of a run's or a scope's tasks, from its first page, every status, full pages.
pub fn tasks_of(filter: TaskFilter) -> ListTasks {
    ListTasks {
        filter,
        status: None,
        kind: None,
        model_id: None,
        created_after: None,
        created_before: None,
        after: None,
        limit: TASK_PAGE_MAX,
    }
}

impl Client {
    /// `POST /v1/tasks`: a new task (201, [`crate::Outcome::Created`]) or, for an effect key already
    /// taken, its task as it is (200, [`crate::Outcome::Existing`]). Safe to retry: the effect key makes
    /// it idempotent.
    pub async fn create(&self, body: &TaskBody) -> Result<Created, Error> {
        let reply = self.send(&Call::new(Method::POST, "/v1/tasks".into()).json(body)?).await?;
        reply.created()
    }

    /// `GET /v1/tasks/{id}`.
    pub async fn get(&self, id: Uuid) -> Result<Task, Error> {
        self.send(&Call::new(Method::GET, format!("/v1/tasks/{id}"))).await?.decode()
    }

    /// `GET /v1/tasks/{id}?wait=S`: the task once it has ended, or after `wait` (clamped to the
    /// API's 0..=20 s), whichever comes first.
    pub async fn get_waiting(&self, id: Uuid, wait: Duration) -> Result<Task, Error> {
        let seconds = wait.as_secs().min(MAX_WAIT_SECONDS);
        let mut call = Call::new(Method::GET, format!("/v1/tasks/{id}?wait={seconds}"));
        call.extra_time = Duration::from_secs(seconds);
        self.send(&call).await?.decode()
    }

    /// `GET /v1/tasks?effectKey=K`: the task of an effect key.
    pub async fn get_by_effect_key(&self, effect_key: &str) -> Result<Task, Error> {
        let target = format!("/v1/tasks{}", query(&[("effectKey", Some(effect_key.to_owned()))]));
        self.send(&Call::new(Method::GET, target)).await?.decode()
    }

    /// Wait for a task to end, by long polls of at most 20 s, until `timeout` passes: the ended
    /// task, or [`Error::WaitDeadline`] with the task as last read.
    pub async fn wait(&self, id: Uuid, timeout: Duration) -> Result<Task, Error> {
        self.wait_with(id, timeout, Duration::from_secs(MAX_WAIT_SECONDS), |_| {}).await
    }

    /// [`Client::wait`] with long polls of at most `slice` each, calling `seen` with the task
    /// after every read (a live status line).
    pub async fn wait_with(
        &self,
        id: Uuid,
        timeout: Duration,
        slice: Duration,
        mut seen: impl FnMut(&Task),
    ) -> Result<Task, Error> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            // Whole seconds, rounded down: the last read may come before the deadline, never after.
            let task = self.get_waiting(id, left.min(slice)).await?;
            seen(&task);
            if task.is_terminal() {
                return Ok(task);
            }
            if Instant::now() + Duration::from_secs(1) > deadline {
                return Err(Error::WaitDeadline(Box::new(task)));
            }
        }
    }

    /// `POST /v1/tasks/{id}/cancel`: the task (a terminal one as it is).
    pub async fn cancel(&self, id: Uuid) -> Result<Task, Error> {
        self.send(&Call::new(Method::POST, format!("/v1/tasks/{id}/cancel"))).await?.decode()
    }

    /// One page of `GET /v1/tasks?runId=R|scopeId=S`.
    pub async fn list_page(&self, listing: &ListTasks) -> Result<TaskPage, Error> {
        let (key, owner) = match &listing.filter {
            TaskFilter::Run(id) => ("runId", id.to_string()),
            TaskFilter::Scope(scope) => ("scopeId", scope.clone()),
        };
        let target = format!(
            "/v1/tasks{}",
            query(&[
                (key, Some(owner)),
                ("status", listing.status.map(|s| s.as_str().to_owned())),
                ("kind", listing.kind.map(|kind| kind.as_str().to_owned())),
                ("modelId", listing.model_id.clone()),
                ("createdAfter", crate::history::instant(listing.created_after)),
                ("createdBefore", crate::history::instant(listing.created_before)),
                ("after", listing.after.map(|id| id.to_string())),
                ("limit", Some(listing.limit.to_string())),
            ])
        );
        self.send(&Call::new(Method::GET, target)).await?.decode()
    }

    /// Every task of the listing, from `listing.after` on, page by page (keyset pages: a task
    /// created while paging appears once, at the end).
    pub fn list(&self, listing: ListTasks) -> impl Stream<Item = Result<Task, Error>> + '_ {
        let pages = stream::try_unfold(Some(listing), move |state| async move {
            let Some(listing) = state else { return Ok(None) };
            let page = self.list_page(&listing).await?;
            let next = page.next.map(|after| ListTasks { after: Some(after), ..listing });
            Ok::<_, Error>(Some((page.tasks, next)))
        });
        pages.map_ok(|tasks| stream::iter(tasks.into_iter().map(Ok))).try_flatten()
    }

    /// Every task of the listing, collected (see [`Client::list`]).
    pub async fn list_all(&self, listing: ListTasks) -> Result<Vec<Task>, Error> {
        self.list(listing).try_collect().await
    }
}
