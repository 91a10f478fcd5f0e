//! Holds (docs/api.md, "Holds"): `POST /v1/holds`'s body and `GET /v1/holds`'s query, parsed
//! strictly, and the hold as the API answers it.

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

use crate::fields::Fields;
use crate::limits::{ID_MAX_CHARS, MODEL_ID_MAX_CHARS};
use crate::problems::{Path, Problems};

/// A hold's reason: 1 to 500 characters.
pub const HOLD_REASON_MAX_CHARS: usize = 500;
/// Holds in one page of `GET /v1/holds`.
pub const HOLD_PAGE_MAX: usize = 100;

/// What `POST /v1/holds` holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HoldOn {
    Profile(String),
    Scope(String),
}

/// `POST /v1/holds`: `{"profile": id}` or `{"scopeId": s}`, and a `reason`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlaceHold {
    pub on: HoldOn,
    pub reason: Option<String>,
}

impl PlaceHold {
    pub fn parse(body: &Value) -> Result<PlaceHold, Problems> {
        let mut problems = Problems::new();
        let root = Path::root();
        let fields = Fields::object(body, &root, &["profile", "scopeId", "reason"], &mut problems)
            .ok_or_else(|| problems.clone())?;
        // A target given as null is a problem (it names nothing), not an absent one.
        let profile = fields
            .present("profile")
            .then(|| fields.string("profile", 1, MODEL_ID_MAX_CHARS, &mut problems))
            .flatten();
        let scope =
            fields.has("scopeId").then(|| fields.string("scopeId", 1, ID_MAX_CHARS, &mut problems)).flatten();
        let reason = fields
            .has("reason")
            .then(|| fields.string("reason", 1, HOLD_REASON_MAX_CHARS, &mut problems))
            .flatten();
        let on = match (fields.present("profile"), fields.present("scopeId")) {
            (true, true) | (false, false) => {
                problems.add(&root, "must have exactly one of profile and scopeId");
                None
            }
            (true, false) => profile.map(HoldOn::Profile),
            (false, true) => scope.map(HoldOn::Scope),
        };
        match on {
            Some(on) if problems.is_empty() => Ok(PlaceHold { on, reason }),
            _ => Err(problems),
        }
    }
}

/// `GET /v1/holds?state=&after=&limit=`, as given.
#[derive(Debug, Clone, Copy, Default)]
pub struct HoldsQuery<'a> {
    pub state: Option<&'a str>,
    pub after: Option<&'a str>,
    pub limit: Option<&'a str>,
}

/// A parsed holds listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListHolds {
    /// `active`, `released`, or both.
    pub state: Option<&'static str>,
    pub after: Option<Uuid>,
    pub limit: usize,
}

impl ListHolds {
    pub fn parse(query: HoldsQuery<'_>) -> Result<ListHolds, Problems> {
        let root = Path::root();
        let mut problems = Problems::new();
        let state = match query.state {
            None => None,
            Some("active") => Some("active"),
            Some("released") => Some("released"),
            Some(_) => {
                problems.add(&root.key("state"), "must be one of active, released");
                None
            }
        };
        let after = query.after.and_then(|text| {
            let after = Uuid::parse_str(text).ok();
            if after.is_none() {
                problems.add(&root.key("after"), "must be a hold id (the page's next)");
            }
            after
        });
        let limit = match query.limit.map(|text| text.parse::<usize>()) {
            None => HOLD_PAGE_MAX,
            Some(Ok(limit)) if (1..=HOLD_PAGE_MAX).contains(&limit) => limit,
            Some(_) => {
                problems.add(&root.key("limit"), format!("must be an integer from 1 to {HOLD_PAGE_MAX}"));
                HOLD_PAGE_MAX
            }
        };
        if problems.is_empty() {
            Ok(ListHolds { state, after, limit })
        } else {
            Err(problems)
        }
    }
}

/// A hold's target as the API answers it: `{"profile": id}` or `{"scopeId": s}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum HoldTargetAnswer {
    #[serde(rename = "profile")]
    Profile(String),
    #[serde(rename = "scopeId")]
    Scope(String),
}

/// A hold (docs/api.md, "Holds").
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HoldAnswer {
    pub id: Uuid,
    pub target: HoldTargetAnswer,
    /// `manual` (a tenant's) or `automatic` (the system's, every tenant's).
    pub kind: &'static str,
    pub reason: Option<String>,
    pub created_at: DateTime<Utc>,
    pub released_at: Option<DateTime<Utc>>,
    /// `person`, `probe`, or `null` while active.
    pub released_by: Option<String>,
}

/// A page of holds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HoldPage {
    pub holds: Vec<HoldAnswer>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<Uuid>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_hold_names_exactly_one_target_and_refuses_unknown_fields() {
        let parsed = PlaceHold::parse(&json!({"profile": "default", "reason": "provider incident"})).unwrap();
        assert_eq!(parsed.on, HoldOn::Profile("default".into()));
        assert_eq!(parsed.reason.as_deref(), Some("provider incident"));
        assert_eq!(PlaceHold::parse(&json!({"scopeId": "ws"})).unwrap().on, HoldOn::Scope("ws".into()));
        assert_eq!(PlaceHold::parse(&json!({"scopeId": "ws", "reason": null})).unwrap().reason, None);
        for bad in [
            json!({}),
            json!({"profile": "a", "scopeId": "b"}),
            json!({"profile": ""}),
            json!({"profile": "a", "reason": ""}),
            json!({"profile": "a", "reason": "x".repeat(501)}),
            json!({"profile": "a", "extra": 1}),
            json!({"profile": 7}),
            json!({"profile": null}),
            json!({"profile": "a", "scopeId": null}),
            json!([]),
        ] {
            assert!(PlaceHold::parse(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_listing_takes_a_state_a_cursor_and_a_limit() {
        let all = ListHolds::parse(HoldsQuery::default()).unwrap();
        assert_eq!((all.state, all.after, all.limit), (None, None, HOLD_PAGE_MAX));
        let active =
            ListHolds::parse(HoldsQuery { state: Some("active"), limit: Some("5"), after: None }).unwrap();
        assert_eq!((active.state, active.limit), (Some("active"), 5));
        assert!(ListHolds::parse(HoldsQuery { state: Some("held"), ..Default::default() }).is_err());
        assert!(ListHolds::parse(HoldsQuery { limit: Some("0"), ..Default::default() }).is_err());
        assert!(ListHolds::parse(HoldsQuery { after: Some("x"), ..Default::default() }).is_err());
    }
}
