//! The read API for history (docs/api.md, "History"): the tenant's runs with their task
//! counts, a task's attempts, completion events, callbacks and provider batch, and the tenant's
//! summary. The answers are the contract's own types (`aitasks_contracts::{RunPage,
//! TaskAttempts, TaskEvents, TaskCallbacks, TaskBatch, TenantSummary}`).

use aitasks_contracts::{
    Activity, ErrorCode, ListRuns, ListedRun, RunPage, TaskAttempts, TaskBatch, TaskCallbacks, TaskEvents,
    TenantSummary, RUN_PAGE_MAX,
};
use chrono::SecondsFormat;
use chrono::{DateTime, Utc};
use futures::stream::{self, Stream, TryStreamExt};
use reqwest::Method;
use uuid::Uuid;

use crate::client::{query, Call, Client};
use crate::error::Error;

/// A listing of every run of the tenant, from the first page, full pages.
pub fn all_runs() -> ListRuns {
    ListRuns {
        status: None,
        scope_id: None,
        created_after: None,
        created_before: None,
        after: None,
        limit: RUN_PAGE_MAX,
    }
}

/// An instant as a query parameter (RFC 3339, UTC, microseconds).
pub(crate) fn instant(at: Option<DateTime<Utc>>) -> Option<String> {
    at.map(|at| at.to_rfc3339_opts(SecondsFormat::Micros, true))
}

impl Client {
    /// One page of `GET /v1/runs`.
    pub async fn runs_page(&self, listing: &ListRuns) -> Result<RunPage, Error> {
        let target = format!(
            "/v1/runs{}",
            query(&[
                ("status", listing.status.map(|s| s.as_str().to_owned())),
                ("scopeId", listing.scope_id.clone()),
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

    /// `GET /v1/tasks/{id}/attempts`: the oldest 100 ended attempts, then the one running now.
    pub async fn task_attempts(&self, id: Uuid) -> Result<TaskAttempts, Error> {
        self.send(&Call::new(Method::GET, format!("/v1/tasks/{id}/attempts"))).await?.decode()
    }

    /// `GET /v1/summary`: the tenant's tasks created in `[created_after, created_before)` (the
    /// API's defaults: the 7 days before now), by status, and their usage by day and model.
    pub async fn summary(
        &self,
        created_after: Option<DateTime<Utc>>,
        created_before: Option<DateTime<Utc>>,
    ) -> Result<TenantSummary, Error> {
        let target = format!(
            "/v1/summary{}",
            query(&[("createdAfter", instant(created_after)), ("createdBefore", instant(created_before))])
        );
        self.send(&Call::new(Method::GET, target)).await?.decode()
    }

    /// `GET /v1/activity`: the tenant's activity in buckets of `bucket_seconds` (60, 300, 900,
    /// 3600 or 86400; the API's default: an hour) over `[from, to)` (the API's defaults: the 24
    /// hours before now, 30 days for a bucket of a day).
    pub async fn activity(
        &self,
        bucket_seconds: Option<u32>,
        from: Option<DateTime<Utc>>,
        to: Option<DateTime<Utc>>,
    ) -> Result<Activity, Error> {
        let target = format!(
            "/v1/activity{}",
            query(&[
                ("bucket", bucket_seconds.map(|seconds| seconds.to_string())),
                ("from", instant(from)),
                ("to", instant(to)),
            ])
        );
        self.send(&Call::new(Method::GET, target)).await?.decode()
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
