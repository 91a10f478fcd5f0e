//! Application-owned tasks: release, retention, deletion of a scope's or a source's data, and
//! the listing of unreleased sources for reconciliation. Run tasks are never touched here.

use std::time::Duration;

use crate::error::StoreResult;
use crate::params::{limit, millis};
use crate::pool::{Client, GenericClient};
use crate::queries::{
    DELETE_OWNED_PAGE, DELETE_RETAINED, LOCK_SCOPE, RELEASE, UNRELEASED_SOURCES, UNRELEASED_SOURCES_OF_STEP,
};

pub use aitasks_contracts::UNRELEASED_PAGE;

/// Mark an application-owned task released: the application has durably settled or discarded
/// it, so the result may go once retention has passed. `false` when there is no such task.
pub async fn release(
    client: &impl GenericClient,
    app_id: &str,
    scope_id: &str,
    effect_key: &str,
) -> StoreResult<bool> {
    let statement = client.prepare_cached(RELEASE.text()).await?;
    let params =
        RELEASE.bind(&[("app_id", &app_id), ("scope_id", &scope_id), ("effect_key", &effect_key)])?;
    Ok(!client.query(&statement, &params).await?.is_empty())
}

/// Delete up to `page` of a scope's application-owned tasks (or one source's), in a transaction
/// of its own that holds the scope's admission lock: a create of the scope that already read a
/// cached output finishes first (and its copy is deleted here), or starts after (and finds no
/// cache). Returns how many went; fewer than `page` means none are left.
///
/// The admission history stays, so deleting cannot reset a budget; a running task whose row
/// goes is aborted by its worker at its next check and never written back (every write is
/// fenced on the row).
pub async fn delete_owned_page(
    client: &mut Client,
    app_id: &str,
    scope_id: &str,
    source_id: Option<&str>,
    page: usize,
) -> StoreResult<u64> {
    let transaction = client.transaction().await?;
    let (lock, delete) = tokio::try_join!(
        transaction.prepare_cached(LOCK_SCOPE.text()),
        transaction.prepare_cached(DELETE_OWNED_PAGE.text())
    )?;
    let lock_params = LOCK_SCOPE.bind(&[("app_id", &app_id), ("scope_id", &scope_id)])?;
    let page = limit(page);
    let params = DELETE_OWNED_PAGE.bind(&[
        ("app_id", &app_id),
        ("scope_id", &scope_id),
        ("source_id", &source_id),
        ("page", &page),
    ])?;
    // Pipelined: the server takes the lock first; the delete's snapshot comes after it.
    let (_, row) =
        tokio::try_join!(transaction.execute(&lock, &lock_params), transaction.query_one(&delete, &params))?;
    transaction.commit().await?;
    Ok(row.try_get::<_, i64>(0)? as u64)
}

/// A `(scope, source)` pair.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceRef {
    pub scope_id: String,
    pub source_id: String,
}

/// One page of the sources that still have unreleased application tasks, in `(scope, source)`
/// order after `after`, optionally only for one step key. `next` is set when a further page may
/// exist.
pub async fn unreleased_sources(
    client: &impl GenericClient,
    app_id: &str,
    step_key: Option<&str>,
    after: Option<&SourceRef>,
) -> StoreResult<(Vec<SourceRef>, Option<SourceRef>)> {
    let (scope, source) = after.map_or(("", ""), |a| (a.scope_id.as_str(), a.source_id.as_str()));
    let page = limit(UNRELEASED_PAGE);
    let rows = match step_key {
        None => {
            let statement = client.prepare_cached(UNRELEASED_SOURCES.text()).await?;
            let params = UNRELEASED_SOURCES.bind(&[
                ("app_id", &app_id),
                ("after_scope", &scope),
                ("after_source", &source),
                ("page", &page),
            ])?;
            client.query(&statement, &params).await?
        }
        Some(step_key) => {
            let statement = client.prepare_cached(UNRELEASED_SOURCES_OF_STEP.text()).await?;
            let params = UNRELEASED_SOURCES_OF_STEP.bind(&[
                ("app_id", &app_id),
                ("step_key", &step_key),
                ("after_scope", &scope),
                ("after_source", &source),
                ("page", &page),
            ])?;
            client.query(&statement, &params).await?
        }
    };
    let sources: Vec<SourceRef> = rows
        .iter()
        .map(|row| Ok(SourceRef { scope_id: row.try_get(0)?, source_id: row.try_get(1)? }))
        .collect::<StoreResult<_>>()?;
    let next = (sources.len() == UNRELEASED_PAGE).then(|| sources[UNRELEASED_PAGE - 1].clone());
    Ok((sources, next))
}

/// Delete released application tasks whose release and completion are both older than
/// `retention` (24 h). Bounded, `SKIP LOCKED`.
pub async fn delete_retained(
    client: &impl GenericClient,
    retention: Duration,
    page: usize,
) -> StoreResult<u64> {
    let statement = client.prepare_cached(DELETE_RETAINED.text()).await?;
    let (retention_ms, page) = (millis(retention), limit(page));
    let params = DELETE_RETAINED.bind(&[("retention_ms", &retention_ms), ("page", &page)])?;
    Ok(client.execute(&statement, &params).await?)
}
