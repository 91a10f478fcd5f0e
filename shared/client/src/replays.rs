//! A task's replays: replay one task, read the replays it has.

use reqwest::Method;
use uuid::Uuid;

use aitasks_contracts::TaskReplays;

use crate::answers::replays::Replay;
use crate::answers::Created;
use crate::client::{Call, Client};
use crate::error::Error;

impl Client {
    /// `POST /v1/tasks/{id}/replay`: a new task with the ended task's request, model, owner and
    /// scope, admitted like a create, its `replay_of` naming the original (which is never
    /// touched). Idempotent on its effect key (`replay:{id}` unless `replay.effect_key` names
    /// another): asked again, it answers the same task ([`crate::Outcome::Existing`]).
    pub async fn replay(&self, id: Uuid, replay: &Replay) -> Result<Created, Error> {
        let call = Call::new(Method::POST, format!("/v1/tasks/{id}/replay")).json(replay)?;
        self.send(&call).await?.created()
    }

    /// `GET /v1/tasks/{id}/replays`: the task's replays, oldest first (at most 100).
    pub async fn replays(&self, id: Uuid) -> Result<TaskReplays, Error> {
        self.send(&Call::new(Method::GET, format!("/v1/tasks/{id}/replays"))).await?.decode()
    }
}
