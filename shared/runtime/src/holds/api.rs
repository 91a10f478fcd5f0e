//! The holds routes (docs/api.md, "Holds"). A tenant sees its own holds and the automatic ones;
//! another tenant's hold is a 404 exactly as a missing one.

use std::time::Instant;

use aitasks_contracts::{
    parse_json, AppId, HoldAnswer, HoldOn, HoldPage, HoldTargetAnswer, HoldsQuery, ListHolds, PlaceHold,
    ReadCost,
};
use aitasks_store::{self as store, Hold, HoldTarget, Placed};

use crate::api_error::ApiError;
use crate::app::App;

fn answer(hold: Hold) -> HoldAnswer {
    HoldAnswer {
        id: hold.id,
        kind: if hold.is_automatic() { "automatic" } else { "manual" },
        target: match hold.target {
            HoldTarget::Profile(profile) => HoldTargetAnswer::Profile(profile),
            HoldTarget::Scope(scope) => HoldTargetAnswer::Scope(scope),
        },
        reason: hold.reason,
        created_at: hold.created_at,
        released_at: hold.released_at,
        released_by: hold.released_by,
    }
}

/// A path's hold id: one that is not a UUID names nothing.
fn hold_id(text: &str) -> Result<uuid::Uuid, ApiError> {
    uuid::Uuid::parse_str(text).map_err(|_| ApiError::NotFound)
}

/// `POST /v1/holds`: `(true, hold)` placed now (201), `(false, hold)` the tenant's active hold of
/// the same target (200).
pub async fn place_hold<P>(
    app: &App<P>,
    tenant: &AppId,
    body: &[u8],
) -> Result<(bool, HoldAnswer), ApiError> {
    let parsed = parse_json(body).and_then(|v| PlaceHold::parse(&v)).map_err(ApiError::Invalid)?;
    let target = match parsed.on {
        HoldOn::Profile(profile) => {
            if app.profiles.resolve(&profile).is_err() {
                return Err(ApiError::ModelUnknown(profile));
            }
            HoldTarget::Profile(profile)
        }
        HoldOn::Scope(scope) => HoldTarget::Scope(scope),
    };
    let per_tenant = app.settings.runtime.holds.per_tenant;
    let client = store::client(&app.pool).await?;
    match store::place_hold(&client, tenant.as_str(), &target, parsed.reason.as_deref(), per_tenant).await? {
        Placed::Created(hold) => {
            tracing::info!(hold_id = %hold.id, "hold placed");
            Ok((true, answer(hold)))
        }
        Placed::Existing(hold) => Ok((false, answer(hold))),
        Placed::AtLimit => Err(ApiError::HoldsLimit(per_tenant)),
    }
}

/// `GET /v1/holds?state=&after=&limit=`: the tenant's holds and the automatic ones, in creation
/// order, keyset pages.
pub async fn list_holds<P>(
    app: &App<P>,
    tenant: &AppId,
    query: HoldsQuery<'_>,
) -> Result<HoldPage, ApiError> {
    let listing = ListHolds::parse(query).map_err(ApiError::Invalid)?;
    app.reads.charge(&app.pool, tenant, ReadCost::Page).await?;
    let client = store::client(&app.pool).await?;
    let mut holds =
        store::list_holds(&client, tenant.as_str(), listing.state, listing.after, listing.limit + 1).await?;
    let more = holds.len() > listing.limit;
    holds.truncate(listing.limit);
    let next = if more { holds.last().map(|hold| hold.id) } else { None };
    Ok(HoldPage { holds: holds.into_iter().map(answer).collect(), next })
}

/// `GET /v1/holds/{holdId}`.
pub async fn get_hold<P>(app: &App<P>, tenant: &AppId, hold: &str) -> Result<HoldAnswer, ApiError> {
    let hold_id = hold_id(hold)?;
    app.reads.charge(&app.pool, tenant, ReadCost::ByKey).await?;
    let client = store::client(&app.pool).await?;
    store::get_hold(&client, tenant.as_str(), hold_id).await?.map(answer).ok_or(ApiError::NotFound)
}

/// `POST /v1/holds/{holdId}/release`: the hold released, and its parked tasks sent again in
/// creation order for up to `AITASK_REQUEST_WORK_MS` (the sweeper sends the rest). One released
/// already answers as it is; an automatic one is its probe's to release (409).
pub async fn release_hold<P>(app: &App<P>, tenant: &AppId, hold: &str) -> Result<HoldAnswer, ApiError> {
    let hold_id = hold_id(hold)?;
    let config = &app.settings.runtime;
    let client = store::client(&app.pool).await?;
    let Some(released) = store::release_hold(&client, Some(tenant.as_str()), hold_id).await? else {
        return match store::get_hold(&client, tenant.as_str(), hold_id).await? {
            None => Err(ApiError::NotFound),
            Some(hold) if hold.is_automatic() && hold.released_at.is_none() => Err(ApiError::HoldIsAutomatic),
            Some(hold) => Ok(answer(hold)),
        };
    };
    let until = Instant::now() + config.request_work;
    let resent = super::resend(app, &client, hold_id, config.request_page, until).await?;
    tracing::info!(
        hold_id = %hold_id,
        resent = resent.sent,
        all_resent = resent.done,
        "hold released; its parked tasks are sent again"
    );
    Ok(answer(released))
}
