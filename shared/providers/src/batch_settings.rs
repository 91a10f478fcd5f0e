//! A profile's `batch` object in `AITASK_MODELS`: whether its deferred tasks go through the
//! provider's batch API ([`crate::BatchClient`]), how many to a batch, how long one waits to
//! fill, and the batch prices. Not configuration: it changes when an answer comes and what it
//! costs, not which.

use std::time::Duration;

use crate::error::ProfileError;
use crate::prices::Prices;

/// A profile's `batch` settings: `{enabled?, maxRecords?, maxWaitSeconds?, minRecords?, prices?}`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BatchSettings {
    /// True unless the object says `"enabled": false`.
    pub enabled: bool,
    /// The most tasks in one batch: 1 to 2,000 (the providers take more), 1000 by default. The
    /// result files have no bound: they are read as a stream ([`crate::ResultReader`]).
    pub max_records: u32,
    /// The longest a deferred task waits for its batch to fill before it is sent anyway:
    /// `maxWaitSeconds`, 1 to 86,400, 3600 by default.
    pub max_wait: Duration,
    /// The fewest tasks a batch is sent with (once `max_wait` is over, fewer run on-demand):
    /// 100 for Bedrock (its documented minimum), 1 otherwise; at most `max_records`.
    pub min_records: u32,
    /// Batch list prices; the estimated cost falls back to the profile's `prices` without them.
    pub prices: Option<Prices>,
}

/// The most records a batch may have (OpenAI's and Bedrock's per-file cap).
pub const MAX_BATCH_RECORDS: u32 = 2_000;
/// The longest `maxWaitSeconds`: a day.
pub const MAX_BATCH_WAIT_SECONDS: u64 = 86_400;

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct BatchJson {
    enabled: Option<bool>,
    max_records: Option<u32>,
    max_wait_seconds: Option<u64>,
    min_records: Option<u32>,
    prices: Option<Prices>,
}

impl BatchSettings {
    pub(crate) fn from_json(
        id: &str,
        provider: &str,
        json: BatchJson,
    ) -> Result<BatchSettings, ProfileError> {
        let bad = |what: String| ProfileError(format!("profile {id:?}: batch.{what}"));
        let max_records = json.max_records.unwrap_or(1000);
        if !(1..=MAX_BATCH_RECORDS).contains(&max_records) {
            return Err(bad(format!("maxRecords must be from 1 to {MAX_BATCH_RECORDS}, not {max_records}")));
        }
        let wait = json.max_wait_seconds.unwrap_or(3600);
        if !(1..=MAX_BATCH_WAIT_SECONDS).contains(&wait) {
            return Err(bad(format!(
                "maxWaitSeconds must be from 1 to {MAX_BATCH_WAIT_SECONDS}, not {wait}"
            )));
        }
        let min_records = json.min_records.unwrap_or(if provider == "bedrock" { 100 } else { 1 });
        if min_records == 0 || min_records > max_records {
            return Err(bad(format!(
                "minRecords must be from 1 to maxRecords ({max_records}), not {min_records}"
            )));
        }
        if json.prices.is_some_and(|p| !(p.input_per_million >= 0.0 && p.output_per_million >= 0.0)) {
            return Err(bad("prices must not be negative".to_owned()));
        }
        Ok(BatchSettings {
            enabled: json.enabled.unwrap_or(true),
            max_records,
            max_wait: Duration::from_secs(wait),
            min_records,
            prices: json.prices,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::ModelProfiles;
    use std::collections::HashMap;
    use std::time::Duration;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> =
            pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn batch_settings_are_read_with_their_defaults_and_are_not_configuration() {
        let read = |models: &str| {
            ModelProfiles::from_lookup(env(&[("AITASK_MODELS", models)]))
                .map(|p| p.resolve("m").unwrap().clone())
        };
        let plain = read(r#"{"m": {"model": "m1"}}"#).unwrap();
        assert_eq!((plain.batch, plain.batching()), (None, None));
        let given = read(r#"{"m": {"model": "m1", "batch": {}}}"#).unwrap();
        let batch = given.batching().expect("an object given is enabled");
        assert_eq!(
            (batch.max_records, batch.max_wait, batch.min_records),
            (1000, Duration::from_secs(3600), 1)
        );
        assert!(given.settings.is_empty(), "batch is not a provider setting");
        assert_eq!(given.config_hash(), plain.config_hash(), "batching changes no answer");
        let bedrock =
            read(r#"{"m": {"provider": "bedrock", "model": "b", "batch": {"maxRecords": 500}}}"#).unwrap();
        assert_eq!(bedrock.batching().map(|b| (b.min_records, b.max_records)), Some((100, 500)));
        let off =
            read(r#"{"m": {"model": "m1", "batch": {"enabled": false, "maxWaitSeconds": 60}}}"#).unwrap();
        assert!(off.batch.is_some() && off.batching().is_none());
        let priced = read(
            r#"{"m": {"model": "m1", "prices": {"inputPerMillion": 2, "outputPerMillion": 8},
                "batch": {"prices": {"inputPerMillion": 1, "outputPerMillion": 4}, "minRecords": 5, "maxRecords": 5}}}"#,
        )
        .unwrap();
        assert_eq!(priced.cost(1_000_000, 0), Some(2.0));
        assert_eq!(priced.batch_cost(1_000_000, 1_000_000), Some(5.0), "the batch prices");
        let fallback = read(
            r#"{"m": {"model": "m1", "prices": {"inputPerMillion": 2, "outputPerMillion": 8}, "batch": {}}}"#,
        )
        .unwrap();
        assert_eq!(fallback.batch_cost(1_000_000, 0), Some(2.0), "the profile's prices without batch prices");
        for (batch, said) in [
            (r#"{"maxRecords": 0}"#, "maxRecords must be from 1 to 2000"),
            (r#"{"maxRecords": 2001}"#, "maxRecords must be from 1 to 2000"),
            (r#"{"maxWaitSeconds": 0}"#, "maxWaitSeconds must be from 1 to 86400"),
            (r#"{"maxWaitSeconds": 86401}"#, "maxWaitSeconds"),
            (r#"{"minRecords": 11, "maxRecords": 10}"#, "minRecords must be from 1 to maxRecords (10)"),
            (r#"{"minRecords": 0}"#, "minRecords"),
            (r#"{"maxRecord": 10}"#, "unknown field"),
            (r#"{"prices": {"inputPerMillion": -1, "outputPerMillion": 0}}"#, "must not be negative"),
            (r#"true"#, "batch must be"),
        ] {
            let error = read(&format!(r#"{{"m": {{"model": "m1", "batch": {batch}}}}}"#)).unwrap_err();
            assert!(error.to_string().contains(said), "{batch}: {error}");
        }
    }
}
