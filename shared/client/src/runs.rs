//! Runs: create, read, cancel.

use reqwest::Method;
use serde_json::json;
use uuid::Uuid;

use crate::answers::Run;
use crate::client::{Call, Client};
use crate::error::Error;

impl Client {
    /// `POST /v1/runs`: a new run in a scope, optionally with the user who started it. Not
    /// idempotent (each call makes a run), so it is tried again only when the API certainly
    /// stored nothing (429, 503, no connection).
    pub async fn create_run(&self, scope_id: &str, actor_user_id: Option<&str>) -> Result<Run, Error> {
        let body = match actor_user_id {
            Some(user) => json!({"scopeId": scope_id, "actor": {"userId": user}}),
            None => json!({"scopeId": scope_id}),
        };
        let mut call = Call::new(Method::POST, "/v1/runs".into()).json(&body)?;
        call.idempotent = false;
        self.send(&call).await?.decode()
    }

    /// `GET /v1/runs/{id}`.
    pub async fn get_run(&self, id: Uuid) -> Result<Run, Error> {
        self.send(&Call::new(Method::GET, format!("/v1/runs/{id}"))).await?.decode()
    }

    /// `POST /v1/runs/{id}/cancel`: the run, canceled; its queued tasks end `canceled`, running
    /// ones are aborted.
    pub async fn cancel_run(&self, id: Uuid) -> Result<Run, Error> {
        self.send(&Call::new(Method::POST, format!("/v1/runs/{id}/cancel"))).await?.decode()
    }
}
