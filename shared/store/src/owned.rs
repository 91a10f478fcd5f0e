//! Application-owned tasks: release, retention, deletion of a scope's or a source's data, and
//! the listing of unreleased sources for reconciliation. Run tasks are never touched here.

use std::time::Duration;

use crate::pool::GenericClient;
use crate::sql::{limit, millis};
use crate::StoreResult;

const RELEASE: &str = "UPDATE tasks SET released_at = COALESCE(released_at, now()) \
     WHERE app_id = $1 AND scope_id = $2 AND effect_key = $3 AND run_id IS NULL RETURNING id";

/// Deletes in bounded batches so that a huge scope never makes one huge statement.
/// Active scoped tasks that are deleted leave the application's concurrency count with them.
const DELETE_BATCH: &str = "WITH deleted AS (DELETE FROM tasks WHERE id IN ( \
     SELECT id FROM tasks WHERE app_id = $1 AND scope_id = $2 AND run_id IS NULL \
     AND ($3::text IS NULL OR source_id = $3) LIMIT $4) RETURNING status, cache_key), \
     ended AS (UPDATE app_concurrency SET active = GREATEST(active - (SELECT count(*) FROM deleted \
     WHERE status IN ('queued', 'running') AND cache_key IS NOT NULL)::int, 0) \
     WHERE app_id = $1 AND shard = scope_shard($2)) \
     SELECT count(*) FROM deleted";

/// The cursor is always an index condition: the first page starts after `('', '')`, which every
/// (non-empty) scope id sorts after. One statement per form, so that each plan is exact.
const UNRELEASED_SOURCES: &str = "SELECT DISTINCT scope_id, source_id FROM tasks \
     WHERE app_id = $1 AND run_id IS NULL AND released_at IS NULL AND source_id IS NOT NULL \
     AND (scope_id, source_id) > ($2, $3) ORDER BY scope_id, source_id LIMIT $4";

const UNRELEASED_SOURCES_OF_STEP: &str = "SELECT DISTINCT scope_id, source_id FROM tasks \
     WHERE app_id = $1 AND run_id IS NULL AND released_at IS NULL AND source_id IS NOT NULL \
     AND step_key = $2 AND (scope_id, source_id) > ($3, $4) ORDER BY scope_id, source_id LIMIT $5";

const DELETE_RETAINED: &str = "DELETE FROM tasks WHERE id IN ( \
     SELECT id FROM tasks WHERE run_id IS NULL AND released_at IS NOT NULL AND completed_at IS NOT NULL \
     AND GREATEST(released_at, completed_at) < now() - $1::bigint * interval '1 millisecond' \
     ORDER BY GREATEST(released_at, completed_at), id LIMIT $2 FOR UPDATE SKIP LOCKED)";

/// The page size of [`unreleased_sources`].
pub const UNRELEASED_PAGE: usize = 100;

/// Mark an application-owned task released: the application has durably settled or discarded
/// it, so the result may go once retention has passed. `false` when there is no such task.
pub async fn release(
    client: &impl GenericClient,
    app_id: &str,
    scope_id: &str,
    effect_key: &str,
) -> StoreResult<bool> {
    let statement = client.prepare_cached(RELEASE).await?;
    Ok(!client.query(&statement, &[&app_id, &scope_id, &effect_key]).await?.is_empty())
}

/// Delete a scope's application-owned tasks (or one source's). The admission history stays, so
/// deleting cannot reset a budget; a running task whose row goes is aborted by its worker at
/// its next check and never written back (every write is fenced on the row).
pub async fn delete_owned(
    client: &impl GenericClient,
    app_id: &str,
    scope_id: &str,
    source_id: Option<&str>,
) -> StoreResult<u64> {
    const BATCH: i64 = 1_000;
    let statement = client.prepare_cached(DELETE_BATCH).await?;
    let mut deleted = 0;
    loop {
        let n = client
            .query_one(&statement, &[&app_id, &scope_id, &source_id, &BATCH])
            .await?
            .try_get::<_, i64>(0)? as u64;
        deleted += n;
        if n < BATCH as u64 {
            return Ok(deleted);
        }
    }
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
            let statement = client.prepare_cached(UNRELEASED_SOURCES).await?;
            client.query(&statement, &[&app_id, &scope, &source, &page]).await?
        }
        Some(step_key) => {
            let statement = client.prepare_cached(UNRELEASED_SOURCES_OF_STEP).await?;
            client.query(&statement, &[&app_id, &step_key, &scope, &source, &page]).await?
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
    batch: usize,
) -> StoreResult<u64> {
    let statement = client.prepare_cached(DELETE_RETAINED).await?;
    Ok(client.execute(&statement, &[&millis(retention), &limit(batch)]).await?)
}
