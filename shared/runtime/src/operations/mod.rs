//! Operations (docs/api.md, "Operations"): cancel or replay every task of the tenant that
//! matches a filter. `POST /v1/operations` stores the operation (at most
//! `AITASK_OPERATIONS_PER_TENANT` running per tenant; idempotent with an `Idempotency-Key`) and
//! works on it for up to `AITASK_REQUEST_WORK_MS`; the sweeper's `operations` duty continues
//! every running operation a page a turn, round robin ([`runner`]). Read, listed and stopped by
//! its tenant only.

pub(crate) mod runner;

use std::time::Instant;

use aitasks_contracts::{
    parse_json, AppId, CreateOperation, IdempotencyKey, ListOperations, Operation, OperationPage,
    OperationsQuery, ReadCost,
};
use aitasks_store::{self as store, CreatedOperation, NewOperation};
use uuid::Uuid;

use crate::api_error::ApiError;
use crate::app::App;

/// An operation as `POST /v1/operations` found or made it.
#[derive(Debug, Clone, PartialEq)]
pub enum CreatedOp {
    /// New: 202, with its progress after the request's share of the work.
    New(Operation),
    /// The idempotency key's operation, with the same body: 200.
    Existing(Operation),
}

fn operation_id(text: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(text).map_err(|_| ApiError::NotFound)
}

/// `POST /v1/operations`.
pub async fn create_operation<P>(
    app: &App<P>,
    tenant: &AppId,
    body: &[u8],
    idempotency_key: Option<&[u8]>,
) -> Result<CreatedOp, ApiError> {
    let parsed = parse_json(body).and_then(|v| CreateOperation::parse(&v)).map_err(ApiError::Invalid)?;
    let key = ApiError::idempotency_key(idempotency_key)?;
    let started = Instant::now();
    let new = NewOperation {
        app_id: tenant.as_str().to_owned(),
        action: parsed.action,
        filter: parsed.filter,
        recompute: parsed.recompute,
        idempotency_key: key.map(IdempotencyKey::into_string),
    };
    let limit = app.settings.runtime.operations_per_tenant;
    let created = {
        let mut client = store::client(&app.pool).await?;
        store::create_operation(&mut client, &new, limit).await?
    };
    match created {
        CreatedOperation::AtLimit => Err(ApiError::OperationsLimit { limit }),
        CreatedOperation::Existing(found) => {
            if found.action != new.action || found.filter != new.filter || found.recompute != new.recompute {
                return Err(ApiError::IdempotencyKeyReused);
            }
            Ok(CreatedOp::Existing(found))
        }
        CreatedOperation::New(operation) => {
            let until = started + app.settings.runtime.request_work;
            // Boxed: the pages' futures (a replay's create inside) nest deep, and the route
            // table's future would otherwise hold them all inline.
            let worked = Box::pin(runner::work_until(app, operation.id, until)).await?;
            Ok(CreatedOp::New(worked.unwrap_or(operation)))
        }
    }
}

/// `GET /v1/operations/{operationId}`.
pub async fn get_operation<P>(app: &App<P>, tenant: &AppId, id: &str) -> Result<Operation, ApiError> {
    let id = operation_id(id)?;
    app.reads.charge(&app.pool, tenant, ReadCost::ByKey).await?;
    let client = store::client(&app.pool).await?;
    store::get_operation(&client, tenant.as_str(), id).await?.ok_or(ApiError::NotFound)
}

/// `GET /v1/operations?state=&after=&limit=`: keyset pages in creation order.
pub async fn list_operations<P>(
    app: &App<P>,
    tenant: &AppId,
    query: OperationsQuery<'_>,
) -> Result<OperationPage, ApiError> {
    let listing = ListOperations::parse(query).map_err(ApiError::Invalid)?;
    app.reads.charge(&app.pool, tenant, ReadCost::Page).await?;
    let client = store::client(&app.pool).await?;
    let (operations, next) = store::list_operations(&client, tenant.as_str(), &listing).await?;
    Ok(OperationPage { operations, next })
}

/// `POST /v1/operations/{operationId}/stop`: no page starts after it; an ended operation is
/// answered as it is.
pub async fn stop_operation<P>(app: &App<P>, tenant: &AppId, id: &str) -> Result<Operation, ApiError> {
    let id = operation_id(id)?;
    let client = store::client(&app.pool).await?;
    store::stop_operation(&client, tenant.as_str(), id).await?.ok_or(ApiError::NotFound)
}
