//! Application-owned tasks of a scope: release, delete, the sources not yet released.

use reqwest::Method;
use serde_json::json;

use crate::answers::{Deleted, Released, SourceRef, UnreleasedPage};
use crate::client::{query, segment, Call, Client};
use crate::error::Error;

impl Client {
    /// `POST /v1/tasks/release`: release an application-owned task of a scope.
    pub async fn release(&self, scope_id: &str, effect_key: &str) -> Result<Released, Error> {
        let body = json!({"scopeId": scope_id, "effectKey": effect_key});
        self.send(&Call::new(Method::POST, "/v1/tasks/release".into()).json(&body)?).await?.decode()
    }

    /// `DELETE /v1/scopes/{scopeId}/tasks[?sourceId=S]`: one bounded round; `more: true` says
    /// rows are left (call it again, or use [`Client::delete_scope_tasks_all`]).
    pub async fn delete_scope_tasks(
        &self,
        scope_id: &str,
        source_id: Option<&str>,
    ) -> Result<Deleted, Error> {
        let target = format!(
            "/v1/scopes/{}/tasks{}",
            segment(scope_id),
            query(&[("sourceId", source_id.map(str::to_owned))])
        );
        self.send(&Call::new(Method::DELETE, target)).await?.decode()
    }

    /// [`Client::delete_scope_tasks`] again and again until nothing is left: the total deleted.
    pub async fn delete_scope_tasks_all(
        &self,
        scope_id: &str,
        source_id: Option<&str>,
    ) -> Result<u64, Error> {
        let mut total = 0;
        loop {
            let round = self.delete_scope_tasks(scope_id, source_id).await?;
            total += round.deleted;
            if !round.more {
                return Ok(total);
            }
        }
    }

    /// One page (100) of `GET /v1/unreleased-sources?task=stepKey`, after `after` (the previous
    /// page's `next`).
    pub async fn unreleased_sources(
        &self,
        step_key: &str,
        after: Option<&SourceRef>,
    ) -> Result<UnreleasedPage, Error> {
        let target = format!(
            "/v1/unreleased-sources{}",
            query(&[
                ("task", Some(step_key.to_owned())),
                ("afterScope", after.map(|a| a.scope_id.clone())),
                ("afterSource", after.map(|a| a.source_id.clone())),
            ])
        );
        self.send(&Call::new(Method::GET, target)).await?.decode()
    }
}
