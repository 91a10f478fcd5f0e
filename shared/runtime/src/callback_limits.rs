//! The callbacks a create may attach (docs/api.md, "Callbacks"): at most
//! `AITASK_CALLBACKS_PER_TASK` live (waiting or owed) on one task, at most
//! `AITASK_TENANT_WAITING_CALLBACKS` waiting for one tenant. Past either, the item is refused
//! with 429 (`WORKFLOW_AI_TASK_CALLBACKS`, `WORKFLOW_AI_TENANT_CALLBACKS`) before anything is
//! stored, so the refusal changes nothing. A token already on the task, or given twice in one
//! request, adds nothing and always fits.
//!
//! The count is read once per request, from an index and bounded by the limit (no counter row,
//! no lock): two requests of one tenant at the same moment can together pass the tenant's limit
//! by at most what the other one carries. The heartbeat's capacity is sized with that room.

use std::collections::{HashMap, HashSet};

use aitasks_contracts::{item_value, AppId, Callback, CreateTask, ErrorCode};
use aitasks_store::{self as store, CallbackRoom};
use serde_json::value::RawValue;

use crate::api_error::ApiError;
use crate::app::App;
use crate::config::callbacks::CallbackConfig;

/// One callback a request brings: its item, its task's effect key, its token.
pub(crate) struct Wanted<'a> {
    pub(crate) item: usize,
    pub(crate) effect_key: &'a str,
    pub(crate) token: &'a str,
}

/// The refusals among `wanted` (in the request's order): item → the refusal to answer it with.
pub(crate) async fn refusals<P>(
    app: &App<P>,
    client: &store::Client,
    tenant: &AppId,
    wanted: &[Wanted<'_>],
) -> Result<HashMap<usize, ApiError>, ApiError> {
    if wanted.is_empty() {
        return Ok(HashMap::new());
    }
    let limits = &app.settings.runtime.callbacks;
    let pairs: Vec<(&str, &str)> = wanted.iter().map(|w| (w.effect_key, w.token)).collect();
    let (tenant_waiting, rooms) =
        store::callback_room(client, tenant.as_str(), &pairs, limits.per_tenant).await?;
    Ok(decide(limits, tenant_waiting, &rooms, wanted)
        .into_iter()
        .zip(wanted)
        .filter_map(|(code, w)| Some((w.item, refusal(code?, limits))))
        .collect())
}

/// The callbacks a bulk create's items bring, read before they are stored (each item's effect
/// key and callback, parsed as the item's own check parses them; an item that is not a valid
/// create brings none: its check refuses it). Only a body that could name a callback is read twice: a key
/// `callback` is in it as those letters or with a `\u` escape.
pub(crate) fn many_callbacks(body: &[u8], items: &[&RawValue]) -> Vec<(usize, String, Callback)> {
    let could = |needle: &[u8]| body.windows(needle.len()).any(|window| window == needle);
    if !could(b"allback") && !could(b"\\u") {
        return Vec::new();
    }
    items
        .iter()
        .enumerate()
        .filter_map(|(i, item)| {
            let parsed = CreateTask::parse(&item_value(item).ok()?).ok()?;
            Some((i, parsed.effect_key.into_string(), parsed.callback?))
        })
        .collect()
}

fn refusal(code: ErrorCode, limits: &CallbackConfig) -> ApiError {
    let limit = match code {
        ErrorCode::TaskCallbacks => limits.per_task,
        _ => limits.per_tenant,
    };
    ApiError::CallbackLimit { code, limit }
}

/// For each wanted callback in order, the code refusing it, if any: the task's live callbacks
/// and the tenant's waiting ones, with those this request adds before it.
fn decide(
    limits: &CallbackConfig,
    tenant_waiting: i64,
    rooms: &[CallbackRoom],
    wanted: &[Wanted<'_>],
) -> Vec<Option<ErrorCode>> {
    let mut added_for_tenant = 0;
    let mut added_for_task: HashMap<&str, i64> = HashMap::new();
    let mut taken: HashSet<(&str, &str)> = HashSet::new();
    rooms
        .iter()
        .zip(wanted)
        .map(|(room, w)| {
            if room.attached || taken.contains(&(w.effect_key, w.token)) {
                return None;
            }
            let on_task = room.task_callbacks + added_for_task.get(w.effect_key).copied().unwrap_or(0);
            if on_task >= limits.per_task {
                return Some(ErrorCode::TaskCallbacks);
            }
            // A callback on an ended task is answered at once: it never waits, never counts.
            if !room.task_ended {
                if tenant_waiting + added_for_tenant >= limits.per_tenant {
                    return Some(ErrorCode::TenantCallbacks);
                }
                added_for_tenant += 1;
            }
            *added_for_task.entry(w.effect_key).or_default() += 1;
            taken.insert((w.effect_key, w.token));
            None
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(per_task: i64, per_tenant: i64) -> CallbackConfig {
        CallbackConfig { per_task, per_tenant, ..CallbackConfig::default() }
    }

    fn fresh(n: usize) -> Vec<CallbackRoom> {
        vec![CallbackRoom { task_callbacks: 0, attached: false, task_ended: false }; n]
    }

    #[test]
    fn one_key_takes_callbacks_up_to_the_task_limit_and_a_repeated_token_is_free() {
        let tokens: Vec<String> = (0..5).map(|i| format!("t{i}")).collect();
        let mut wanted: Vec<Wanted<'_>> =
            tokens.iter().enumerate().map(|(item, token)| Wanted { item, effect_key: "k", token }).collect();
        wanted.push(Wanted { item: 5, effect_key: "k", token: "t0" });
        let codes = decide(&limits(3, 100), 0, &fresh(6), &wanted);
        assert_eq!(
            codes,
            [None, None, None, Some(ErrorCode::TaskCallbacks), Some(ErrorCode::TaskCallbacks), None]
        );
    }

    #[test]
    fn the_tenant_limit_counts_what_waits_already_and_an_attached_token_adds_nothing() {
        let keys = ["a", "b", "c"];
        let wanted: Vec<Wanted<'_>> =
            keys.iter().enumerate().map(|(item, key)| Wanted { item, effect_key: key, token: "t" }).collect();
        let mut rooms = fresh(3);
        rooms[0].attached = true;
        rooms[2].task_callbacks = 1;
        let codes = decide(&limits(25, 10), 9, &rooms, &wanted);
        assert_eq!(codes, [None, None, Some(ErrorCode::TenantCallbacks)], "9 wait, room for one more");
    }

    #[test]
    fn a_callback_on_an_ended_task_does_not_count_against_the_tenant() {
        let keys = ["done", "new"];
        let wanted: Vec<Wanted<'_>> =
            keys.iter().enumerate().map(|(item, key)| Wanted { item, effect_key: key, token: "t" }).collect();
        let mut rooms = fresh(2);
        rooms[0].task_ended = true;
        let codes = decide(&limits(25, 10), 10, &rooms, &wanted);
        assert_eq!(codes, [None, Some(ErrorCode::TenantCallbacks)], "the tenant is at its limit");
    }
}
