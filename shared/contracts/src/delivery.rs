//! The `delivery` of a create body (docs/api.md, "Deferred tasks"): `"now"` (the default, the
//! on-demand path) or `{"deferred": {"within": "PT24H"}}`, a task that may wait for a provider's
//! batch API (about half the token price) as long as it is done within that ISO 8601 duration.

use std::time::Duration;

use serde_json::Value;

use crate::fields::Fields;
use crate::problems::{Path, Problems};

/// The longest a deferred task may wait: the providers' batch window (OpenAI's
/// `completion_window: 24h`, Anthropic's and Bedrock's 24 hours).
pub const DEFERRED_MAX_WITHIN: Duration = Duration::from_secs(24 * 60 * 60);
/// The shortest: a batch needs the time to form and to answer, the batcher keeps the last part of
/// the window (`AITASK_DEFERRED_SLACK_MS`, at most 30 minutes) to run on-demand what a batch has
/// not answered, and the stack's deadline alarm fires for work left with under an hour.
pub const DEFERRED_MIN_WITHIN: Duration = Duration::from_secs(2 * 60 * 60);

/// When a task is to be done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DeliveryMode {
    /// Run it now, on-demand.
    #[default]
    Now,
    /// It may wait for a batch, as long as it is done within this long of its creation.
    Deferred { within: Duration },
}

impl DeliveryMode {
    pub fn parse(value: &Value, path: &Path, problems: &mut Problems) -> Option<DeliveryMode> {
        if value.as_str() == Some("now") {
            return Some(DeliveryMode::Now);
        }
        if value.is_string() {
            problems.add(path, "must be \"now\" or {\"deferred\": {\"within\": \"PT24H\"}}");
            return None;
        }
        let fields = Fields::object(value, path, &["deferred"], problems)?;
        let inner_path = fields.path("deferred");
        let inner =
            Fields::object(fields.required("deferred", problems)?, &inner_path, &["within"], problems)?;
        let within_path = inner.path("within");
        let text = inner.required("within", problems)?;
        let Some(within) = text.as_str().and_then(parse_duration) else {
            problems.add(&within_path, "must be an ISO 8601 duration of hours, minutes or a day, such as \"PT24H\", \"PT150M\" or \"P1D\"");
            return None;
        };
        if !(DEFERRED_MIN_WITHIN..=DEFERRED_MAX_WITHIN).contains(&within) {
            problems
                .add(&within_path, "must be at least PT2H and at most PT24H (the providers' batch window)");
            return None;
        }
        Some(DeliveryMode::Deferred { within })
    }

    /// The window of a deferred task.
    pub fn within(self) -> Option<Duration> {
        match self {
            DeliveryMode::Now => None,
            DeliveryMode::Deferred { within } => Some(within),
        }
    }
}

/// An ISO 8601 duration of one unit, days, hours or minutes, in whole numbers without leading
/// zeros (`P1D`, `PT24H`, `PT90M`): a window is at most a day, and one form per length keeps the
/// contract exact (openapi.yaml's pattern accepts what this accepts, no more).
pub fn parse_duration(text: &str) -> Option<Duration> {
    let (number, unit_seconds) = if let Some(time) = text.strip_prefix("PT") {
        let (number, unit) = time.split_at(time.len().checked_sub(1)?);
        (
            number,
            match unit {
                "H" => 3_600,
                "M" => 60,
                _ => return None,
            },
        )
    } else {
        (text.strip_prefix('P')?.strip_suffix('D')?, 86_400)
    };
    let well_formed = !number.is_empty()
        && number.len() <= 6
        && number.bytes().all(|b| b.is_ascii_digit())
        && !number.starts_with('0');
    if !well_formed {
        return None;
    }
    let count: u64 = number.parse().ok()?;
    Some(Duration::from_secs(count * unit_seconds))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn durations_of_days_hours_minutes_and_seconds_are_read() {
        let hours = |h: u64| Some(Duration::from_secs(h * 3600));
        assert_eq!(parse_duration("PT24H"), hours(24));
        assert_eq!(parse_duration("P1D"), hours(24));
        assert_eq!(parse_duration("PT90M"), Some(Duration::from_secs(5400)));
        for bad in [
            "",
            "P",
            "PT",
            "24H",
            "PT1.5H",
            "P1W",
            "P1M",
            "PT1H30M",
            "PT01H",
            "PT9999999H",
            "pt1h",
            "PT-1H",
            "PT5400S",
            "P0D",
            "PT0H",
        ] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }

    #[test]
    fn delivery_is_now_or_deferred_within_the_batch_window() {
        let parse = |value: Value| {
            let mut problems = Problems::new();
            let parsed = DeliveryMode::parse(&value, &Path::root().key("delivery"), &mut problems);
            (parsed, problems.to_string())
        };
        assert_eq!(parse(json!("now")).0, Some(DeliveryMode::Now));
        assert_eq!(
            parse(json!({"deferred": {"within": "PT24H"}})).0,
            Some(DeliveryMode::Deferred { within: DEFERRED_MAX_WITHIN })
        );
        for (bad, path) in [
            (json!("later"), "delivery"),
            (json!({"deferred": {"within": "PT25H"}}), "delivery.deferred.within"),
            (json!({"deferred": {"within": "PT30M"}}), "delivery.deferred.within"),
            (json!({"deferred": {"within": "PT1H"}}), "delivery.deferred.within"),
            (json!({"deferred": {"within": 86400}}), "delivery.deferred.within"),
            (json!({"deferred": {}}), "delivery.deferred.within"),
            (json!({"deferred": {"within": "PT2H", "by": 1}}), "delivery.deferred.by"),
            (json!({"soon": true}), "delivery.soon"),
        ] {
            let (_, problems) = parse(bad.clone());
            assert!(problems.contains(path), "{bad}: {problems}");
        }
    }
}
