//! Operations: cancel or replay every task a filter matches, follow their progress, stop them.

use std::time::Duration;

use futures::stream::{self, Stream, TryStreamExt};
use reqwest::Method;
use tokio::time::Instant;
use uuid::Uuid;

use aitasks_contracts::{ListOperations, Operation, OperationPage, OPERATION_PAGE_MAX};

use crate::answers::operations::{is_ended, NewOperation, OperationCreated};
use crate::answers::Outcome;
use crate::client::{query, Call, Client};
use crate::error::Error;

/// How often [`Client::wait_operation`] reads the operation.
pub const OPERATION_POLL: Duration = Duration::from_secs(1);

/// A listing of every operation of the tenant (or of one state), from the first, full pages.
pub fn all_operations() -> ListOperations {
    ListOperations { state: None, after: None, limit: OPERATION_PAGE_MAX }
}

impl Client {
    /// `POST /v1/operations`: a new operation (202, [`Outcome::Created`]), worked on at once and
    /// then by the sweeper until it is done. Sent with an `Idempotency-Key` made for this call,
    /// the same on every retry: a retry after a lost answer finds the operation the first try
    /// made ([`Outcome::Existing`]), never a second one.
    pub async fn create_operation(&self, operation: &NewOperation) -> Result<OperationCreated, Error> {
        let key = Uuid::new_v4().to_string();
        self.create_operation_with_key(operation, &key).await
    }

    /// [`Client::create_operation`] with a key of the caller's (1 to 255 visible ASCII
    /// characters): one operation per key while the body is the same (another body with it is
    /// refused, 422 `IDEMPOTENCY_KEY_REUSED`).
    pub async fn create_operation_with_key(
        &self,
        operation: &NewOperation,
        idempotency_key: &str,
    ) -> Result<OperationCreated, Error> {
        let mut call = Call::new(Method::POST, "/v1/operations".into()).json(operation)?;
        call.headers.push(("idempotency-key", idempotency_key.to_owned()));
        let reply = self.send(&call).await?;
        let outcome = match reply.status {
            202 => Outcome::Created,
            200 => Outcome::Existing,
            _ => return Err(reply.unexpected("an operation's create answers 202 or 200")),
        };
        Ok(OperationCreated { outcome, operation: reply.decode()? })
    }

    /// `GET /v1/operations/{id}`.
    pub async fn get_operation(&self, id: Uuid) -> Result<Operation, Error> {
        self.send(&Call::new(Method::GET, format!("/v1/operations/{id}"))).await?.decode()
    }

    /// `POST /v1/operations/{id}/stop`: the operation, `stopped` (an ended one as it is). The
    /// tasks it acted on stay as it left them.
    pub async fn stop_operation(&self, id: Uuid) -> Result<Operation, Error> {
        self.send(&Call::new(Method::POST, format!("/v1/operations/{id}/stop"))).await?.decode()
    }

    /// One page of `GET /v1/operations`.
    pub async fn operations_page(&self, listing: &ListOperations) -> Result<OperationPage, Error> {
        let target = format!(
            "/v1/operations{}",
            query(&[
                ("state", listing.state.map(|s| s.as_str().to_owned())),
                ("after", listing.after.map(|id| id.to_string())),
                ("limit", Some(listing.limit.to_string())),
            ])
        );
        self.send(&Call::new(Method::GET, target)).await?.decode()
    }

    /// Every operation of the listing, from `listing.after` on, page by page, in creation order.
    pub fn operations(&self, listing: ListOperations) -> impl Stream<Item = Result<Operation, Error>> + '_ {
        let pages = stream::try_unfold(Some(listing), move |state| async move {
            let Some(listing) = state else { return Ok(None) };
            let page = self.operations_page(&listing).await?;
            let next = page.next.map(|after| ListOperations { after: Some(after), ..listing });
            Ok::<_, Error>(Some((page.operations, next)))
        });
        pages.map_ok(|operations| stream::iter(operations.into_iter().map(Ok))).try_flatten()
    }

    /// Read the operation every [`OPERATION_POLL`] until it is no longer `running`: the ended
    /// operation, or [`Error::OperationDeadline`] with it as last read once `timeout` passes.
    pub async fn wait_operation(&self, id: Uuid, timeout: Duration) -> Result<Operation, Error> {
        self.wait_operation_with(id, timeout, OPERATION_POLL, |_| {}).await
    }

    /// [`Client::wait_operation`] reading every `interval`, calling `seen` with the operation
    /// after every read (a live progress line).
    pub async fn wait_operation_with(
        &self,
        id: Uuid,
        timeout: Duration,
        interval: Duration,
        mut seen: impl FnMut(&Operation),
    ) -> Result<Operation, Error> {
        let deadline = Instant::now() + timeout;
        loop {
            let operation = self.get_operation(id).await?;
            seen(&operation);
            if is_ended(&operation) {
                return Ok(operation);
            }
            if Instant::now() + interval > deadline {
                return Err(Error::OperationDeadline(Box::new(operation)));
            }
            tokio::time::sleep(interval).await;
        }
    }
}
