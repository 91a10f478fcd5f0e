//! Holds: keep a model profile's or a scope's tasks queued (no attempt spent, no expiry), list
//! them, release them.

use futures::stream::{self, Stream, TryStreamExt};
use reqwest::Method;
use serde_json::json;
use uuid::Uuid;

use crate::answers::holds::{Hold, HoldCreated, HoldPage, HoldTarget, ListHolds};
use crate::answers::Outcome;
use crate::client::{query, Call, Client};
use crate::error::Error;

impl Client {
    /// `POST /v1/holds`: hold a profile or a scope, with an optional reason (1 to 500
    /// characters): a new hold (201, [`Outcome::Created`]) or the tenant's active hold on the
    /// same target (200, [`Outcome::Existing`]), so sending it again is safe.
    pub async fn create_hold(&self, target: &HoldTarget, reason: Option<&str>) -> Result<HoldCreated, Error> {
        let mut body = serde_json::to_value(target).map_err(|e| Error::Config(format!("the body: {e}")))?;
        if let Some(reason) = reason {
            body["reason"] = json!(reason);
        }
        let reply = self.send(&Call::new(Method::POST, "/v1/holds".into()).json(&body)?).await?;
        let outcome = Outcome::of_status(reply.status)
            .ok_or_else(|| reply.unexpected("a hold's create answers 201 or 200"))?;
        Ok(HoldCreated { outcome, hold: reply.decode()? })
    }

    /// `GET /v1/holds/{id}`.
    pub async fn get_hold(&self, id: Uuid) -> Result<Hold, Error> {
        self.send(&Call::new(Method::GET, format!("/v1/holds/{id}"))).await?.decode()
    }

    /// `POST /v1/holds/{id}/release`: the hold, released (one released before as it is); its
    /// parked tasks are sent again in creation order. An automatic hold is the system's:
    /// 409 `HOLD_IS_AUTOMATIC`.
    pub async fn release_hold(&self, id: Uuid) -> Result<Hold, Error> {
        self.send(&Call::new(Method::POST, format!("/v1/holds/{id}/release"))).await?.decode()
    }

    /// One page of `GET /v1/holds`: the tenant's holds and the automatic ones.
    pub async fn holds_page(&self, listing: &ListHolds) -> Result<HoldPage, Error> {
        let target = format!(
            "/v1/holds{}",
            query(&[
                ("state", listing.state.map(|s| s.as_str().to_owned())),
                ("after", listing.after.map(|id| id.to_string())),
                ("limit", Some(listing.limit.to_string())),
            ])
        );
        self.send(&Call::new(Method::GET, target)).await?.decode()
    }

    /// Every hold of the listing, from `listing.after` on, page by page, in creation order.
    pub fn holds(&self, listing: ListHolds) -> impl Stream<Item = Result<Hold, Error>> + '_ {
        let pages = stream::try_unfold(Some(listing), move |state| async move {
            let Some(listing) = state else { return Ok(None) };
            let page = self.holds_page(&listing).await?;
            let next = page.next.map(|after| ListHolds { after: Some(after), ..listing });
            Ok::<_, Error>(Some((page.holds, next)))
        });
        pages.map_ok(|holds| stream::iter(holds.into_iter().map(Ok))).try_flatten()
    }
}
