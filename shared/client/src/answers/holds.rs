//! Holds of a model profile or a scope (`/v1/holds`).

use aitasks_contracts::HOLD_PAGE_MAX;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::answers::Outcome;

/// What a hold holds: a model profile's tasks (every profile of a task's chain held), or a
/// scope's.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum HoldTarget {
    #[serde(rename = "profile")]
    Profile(String),
    #[serde(rename = "scopeId")]
    Scope(String),
}

impl std::fmt::Display for HoldTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HoldTarget::Profile(profile) => write!(f, "profile {profile}"),
            HoldTarget::Scope(scope) => write!(f, "scope {scope}"),
        }
    }
}

/// Who placed a hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HoldKind {
    /// A person, through the API.
    Manual,
    /// The system, after a profile's provider failed several tasks in a row (for every tenant).
    Automatic,
}

impl HoldKind {
    pub const fn as_str(self) -> &'static str {
        match self {
            HoldKind::Manual => "manual",
            HoldKind::Automatic => "automatic",
        }
    }
}

/// Who released a hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReleasedBy {
    /// A release request.
    Person,
    /// The first probe call the provider answered (an automatic hold).
    Probe,
}

/// Whether a hold still holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HoldState {
    Active,
    Released,
}

impl HoldState {
    pub const fn as_str(self) -> &'static str {
        match self {
            HoldState::Active => "active",
            HoldState::Released => "released",
        }
    }
}

/// A hold: while active, its tasks stay queued, spend no attempt and do not expire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Hold {
    pub id: Uuid,
    pub target: HoldTarget,
    pub kind: HoldKind,
    pub reason: Option<String>,
    pub created_at: DateTime<Utc>,
    pub released_at: Option<DateTime<Utc>>,
    pub released_by: Option<ReleasedBy>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Hold {
    pub fn is_active(&self) -> bool {
        self.released_at.is_none()
    }
}

/// What `POST /v1/holds` answered: a new hold (201, [`Outcome::Created`]) or the tenant's active
/// hold on the same target (200, [`Outcome::Existing`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HoldCreated {
    pub outcome: Outcome,
    pub hold: Hold,
}

/// One page of `GET /v1/holds`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HoldPage {
    pub holds: Vec<Hold>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<Uuid>,
}

/// A listing of the tenant's holds and the automatic ones, in creation order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListHolds {
    pub state: Option<HoldState>,
    pub after: Option<Uuid>,
    /// Holds per page (1..100).
    pub limit: usize,
}

impl Default for ListHolds {
    /// Every hold, from the first, full pages.
    fn default() -> ListHolds {
        ListHolds { state: None, after: None, limit: HOLD_PAGE_MAX }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    #[test]
    fn a_hold_target_is_the_one_key_object_the_api_writes() {
        let hold: Hold = serde_json::from_value(json!({
            "id": "01936f3e-4b2a-7c3d-8e4f-5a6b7c8d9e0f", "target": {"scopeId": "inbox"}, "kind": "manual",
            "reason": null, "createdAt": "2026-02-01T10:00:00Z", "releasedAt": null, "releasedBy": null
        }))
        .unwrap();
        assert_eq!((hold.target.clone(), hold.is_active()), (HoldTarget::Scope("inbox".into()), true));
        assert_eq!(serde_json::to_value(&hold.target).unwrap(), json!({"scopeId": "inbox"}));
        let profile = serde_json::to_value(HoldTarget::Profile("fast".into())).unwrap();
        assert_eq!(profile, json!({"profile": "fast"}));
    }
}
