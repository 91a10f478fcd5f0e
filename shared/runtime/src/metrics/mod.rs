//! Metrics in CloudWatch Embedded Metric Format: one JSON document per API request, per task
//! settlement and per sweep, written to stdout, where Lambda sends it to the function's log
//! group and CloudWatch turns it into metrics (namespace `AITASK_METRICS_NAMESPACE`, `aitasks`).
//!
//! A document per event, with its dimensions fixed at the call site, needs no aggregation state
//! shared between concurrent invocations (the dev server runs every function in one process),
//! and a line lost with a crashed instance loses only that event's figures. Dimensions are
//! low-cardinality by construction: route keys, outcomes and error codes, model profile names;
//! never a task or tenant id (those are properties: searchable in the log, not metrics).
//! The specification:
//! <https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html>.

mod creates;
mod holds;
mod worker;

pub(crate) use creates::count_created;
pub(crate) use holds::{hold_probe, profile_held, profile_released};
pub(crate) use worker::{gave_back, published, retried, settled, AttemptFigures, Parts};

use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Map, Value};

/// A metric's unit, as the specification names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Count,
    Milliseconds,
    Seconds,
    /// A plain number (an amount of money, say).
    None,
}

impl Unit {
    fn as_str(self) -> &'static str {
        match self {
            Unit::Count => "Count",
            Unit::Milliseconds => "Milliseconds",
            Unit::Seconds => "Seconds",
            Unit::None => "None",
        }
    }
}

/// One EMF document under construction.
#[derive(Debug, Clone)]
pub struct Document {
    dimension_sets: Vec<Vec<&'static str>>,
    metrics: Vec<(&'static str, Unit)>,
    members: Map<String, Value>,
}

impl Document {
    /// A document whose metrics are aggregated by each of `dimension_sets` (`&[&[]]` for none).
    pub fn new(dimension_sets: &[&[&'static str]]) -> Document {
        Document {
            dimension_sets: dimension_sets.iter().map(|set| set.to_vec()).collect(),
            metrics: Vec::new(),
            members: Map::new(),
        }
    }

    /// A dimension's value (every name the dimension sets use must get one).
    pub fn dimension(mut self, name: &'static str, value: &str) -> Document {
        self.members.insert(name.to_owned(), Value::from(value));
        self
    }

    /// A metric and its value.
    pub fn metric(mut self, name: &'static str, unit: Unit, value: f64) -> Document {
        self.metrics.push((name, unit));
        self.members.insert(name.to_owned(), json!(value));
        self
    }

    /// A metric, when there is a value.
    pub fn metric_opt(self, name: &'static str, unit: Unit, value: Option<f64>) -> Document {
        match value {
            Some(value) => self.metric(name, unit, value),
            None => self,
        }
    }

    /// A property: in the log line, searchable, not a metric.
    pub fn property(mut self, name: &'static str, value: impl Into<Value>) -> Document {
        self.members.insert(name.to_owned(), value.into());
        self
    }

    /// The document as the specification has it.
    pub fn to_value(&self) -> Value {
        let timestamp =
            SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or_default();
        let mut document = self.members.clone();
        document.insert(
            "_aws".to_owned(),
            json!({
                "Timestamp": timestamp,
                "CloudWatchMetrics": [{
                    "Namespace": namespace(),
                    "Dimensions": self.dimension_sets,
                    "Metrics": self.metrics.iter()
                        .map(|(name, unit)| json!({"Name": name, "Unit": unit.as_str()}))
                        .collect::<Vec<_>>(),
                }],
            }),
        );
        Value::Object(document)
    }

    /// Write it as one line to stdout (nothing when `AITASK_METRICS=off`).
    pub fn emit(self) {
        if !enabled() {
            return;
        }
        let line = self.to_value().to_string();
        let mut stdout = std::io::stdout().lock();
        // A metric that cannot be written is not worth failing the work it measures.
        let _ = writeln!(stdout, "{line}");
    }
}

/// `AITASK_METRICS=off` turns the documents off (the benchmark's uninstrumented side).
fn enabled() -> bool {
    static ENABLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ENABLED.get_or_init(|| !std::env::var("AITASK_METRICS").is_ok_and(|v| v.eq_ignore_ascii_case("off")))
}

fn namespace() -> String {
    std::env::var("AITASK_METRICS_NAMESPACE")
        .ok()
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "aitasks".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_names_every_dimension_and_metric_it_carries() {
        let document = Document::new(&[&["Route"], &["Route", "Outcome"]])
            .dimension("Route", "POST /v1/tasks")
            .dimension("Outcome", "201")
            .metric("Requests", Unit::Count, 1.0)
            .metric_opt("LatencyMs", Unit::Milliseconds, Some(12.5))
            .metric_opt("Skipped", Unit::Count, None)
            .property("TaskId", "t-1")
            .to_value();
        let aws = &document["_aws"];
        assert!(aws["Timestamp"].as_u64().is_some());
        let directive = &aws["CloudWatchMetrics"][0];
        assert_eq!(directive["Namespace"], "aitasks");
        assert_eq!(directive["Dimensions"], json!([["Route"], ["Route", "Outcome"]]));
        assert_eq!(
            directive["Metrics"],
            json!([{"Name": "Requests", "Unit": "Count"}, {"Name": "LatencyMs", "Unit": "Milliseconds"}])
        );
        assert_eq!((document["Requests"].as_f64(), document["LatencyMs"].as_f64()), (Some(1.0), Some(12.5)));
        assert!(document.get("Skipped").is_none());
        assert_eq!(document["TaskId"], "t-1");
    }
}
