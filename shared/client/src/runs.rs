//! Runs: create, read, cancel.

use reqwest::Method;
use serde_json::json;
use uuid::Uuid;

use aitasks_contracts::RunProgress;

use crate::answers::Run;
use crate::client::{Call, Client};
use crate::error::Error;

impl Client {
    /// `POST /v1/runs`: a new run in a scope, optionally with the user who started it. Sent
    /// with an `Idempotency-Key` made for this call, the same on every retry: a retry after an
    /// answer that was lost (a 503 from a connection dropped at the commit, a timeout) answers
    /// the run the first try made, never a second one.
    pub async fn create_run(&self, scope_id: &str, actor_user_id: Option<&str>) -> Result<Run, Error> {
        let key = Uuid::new_v4().to_string();
        self.create_run_with_key(scope_id, actor_user_id, &key).await
    }

    /// [`Client::create_run`] with a key of the caller's (1 to 255 visible ASCII characters): one
    /// run per key, however often and from however many processes it is sent, as long as the
    /// body is the same (another body with the key is refused, 422 `IDEMPOTENCY_KEY_REUSED`).
    pub async fn create_run_with_key(
        &self,
        scope_id: &str,
        actor_user_id: Option<&str>,
        idempotency_key: &str,
    ) -> Result<Run, Error> {
        let body = match actor_user_id {
            Some(user) => json!({"scopeId": scope_id, "actor": {"userId": user}}),
            None => json!({"scopeId": scope_id}),
        };
        let mut call = Call::new(Method::POST, "/v1/runs".into()).json(&body)?;
        call.headers.push(("idempotency-key", idempotency_key.to_owned()));
        self.send(&call).await?.decode()
    }

    /// `GET /v1/runs/{id}`.
    pub async fn get_run(&self, id: Uuid) -> Result<Run, Error> {
        self.send(&Call::new(Method::GET, format!("/v1/runs/{id}"))).await?.decode()
    }

    /// `GET /v1/runs/{id}/progress`: how far along the run is, its tasks counted by status now
    /// (over its first 10,000: `complete` is false past them).
    pub async fn run_progress(&self, id: Uuid) -> Result<RunProgress, Error> {
        self.send(&Call::new(Method::GET, format!("/v1/runs/{id}/progress"))).await?.decode()
    }

    /// `POST /v1/runs/{id}/cancel`: the run, canceled; its queued tasks end `canceled`, running
    /// ones are aborted.
    pub async fn cancel_run(&self, id: Uuid) -> Result<Run, Error> {
        self.send(&Call::new(Method::POST, format!("/v1/runs/{id}/cancel"))).await?.decode()
    }
}
