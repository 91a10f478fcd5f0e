//! The read API for history (docs/api.md, "History"): the tenant's runs with their task
//! counts, and a task's completion events, callbacks and provider batch. The answers are the
//! contract's own types (`aitasks_contracts::{RunPage, TaskEvents, TaskCallbacks, TaskBatch}`).
//! A task's attempts, once the API serves them, are one more method here.

use aitasks_contracts::{
    ErrorCode, ListRuns, ListedRun, RunPage, TaskBatch, TaskCallbacks, TaskEvents, RUN_PAGE_MAX,
};
use chrono::SecondsFormat;
use futures::stream::{self, Stream, TryStreamExt};
use reqwest::Method;
use uuid::Uuid;

use crate::client::{query, Call, Client};
use crate::error::Error;

/// A listing of every run of the tenant, from the first page, full pages.
pub fn all_runs() -> ListRuns {
    ListRuns { status: None, created_after: None, created_before: None, after: None, limit: RUN_PAGE_MAX }
}

impl Client {
    /// One page of `GET /v1/runs`.
    pub async fn runs_page(&self, listing: &ListRuns) -> Result<RunPage, Error> {
        let instant = |at: Option<chrono::DateTime<chrono::Utc>>| {
            at.map(|at| at.to_rfc3339_opts(SecondsFormat::Micros, true))
        };
        let target = format!(
            "/v1/runs{}",
            query(&[
                ("status", listing.status.map(|s| s.as_str().to_owned())),
                ("createdAfter", instant(listing.created_after)),
                ("createdBefore", instant(listing.created_before)),
                ("after", listing.after.map(|id| id.to_string())),
                ("limit", Some(listing.limit.to_string())),
            ])
        );
        self.send(&Call::new(Method::GET, target)).await?.decode()
    }

    /// Every run of the listing, from `listing.after` on, page by page (keyset pages: a run
    /// created while paging appears once, at the end).
    pub fn runs(&self, listing: ListRuns) -> impl Stream<Item = Result<ListedRun, Error>> + '_ {
        let pages = stream::try_unfold(Some(listing), move |state| async move {
            let Some(listing) = state else { return Ok(None) };
            let page = self.runs_page(&listing).await?;
            let next = page.next.map(|after| ListRuns { after: Some(after), ..listing });
            Ok::<_, Error>(Some((page.runs, next)))
        });
        pages.map_ok(|runs| stream::iter(runs.into_iter().map(Ok))).try_flatten()
    }

    /// `GET /v1/tasks/{id}/events`: the oldest 100 completion events.
    pub async fn task_events(&self, id: Uuid) -> Result<TaskEvents, Error> {
        self.send(&Call::new(Method::GET, format!("/v1/tasks/{id}/events"))).await?.decode()
    }

    /// `GET /v1/tasks/{id}/callbacks`: the oldest 100 callbacks, without their tokens.
    pub async fn task_callbacks(&self, id: Uuid) -> Result<TaskCallbacks, Error> {
        self.send(&Call::new(Method::GET, format!("/v1/tasks/{id}/callbacks"))).await?.decode()
    }

    /// `GET /v1/tasks/{id}/batch`: the provider batch a deferred task was sent in; `Ok(None)`
    /// when the task is in none (the API's 404 `NOT_IN_BATCH`).
    pub async fn task_batch(&self, id: Uuid) -> Result<Option<TaskBatch>, Error> {
        match self.send(&Call::new(Method::GET, format!("/v1/tasks/{id}/batch"))).await {
            Ok(reply) => reply.decode().map(Some),
            Err(Error::Api(error)) if error.error_code() == Some(ErrorCode::NotInBatch) => Ok(None),
            Err(error) => Err(error),
        }
    }
}
