//! What a replay of one task asks (`POST /v1/tasks/{id}/replay`); its answer is a [`crate::Task`],
//! and a task's replays are the contract's [`aitasks_contracts::TaskReplays`].

use serde::Serialize;

/// What a replay of one task asks; the default asks nothing: the derived effect key
/// `replay:{taskId}`, the result cache as a create uses it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Replay {
    /// The new task's effect key (1 to 500 characters) instead of the derived one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effect_key: Option<String>,
    /// Skip the result cache: ask the provider again even for a request answered before.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub recompute: bool,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    #[test]
    fn a_replay_asking_nothing_sends_an_empty_object() {
        assert_eq!(serde_json::to_value(Replay::default()).unwrap(), json!({}));
        let asked = Replay { effect_key: Some("again".into()), recompute: true };
        assert_eq!(serde_json::to_value(asked).unwrap(), json!({"effectKey": "again", "recompute": true}));
    }
}
