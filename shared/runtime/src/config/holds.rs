//! Holds (docs/api.md, "Holds"): when the automatic hold holds a profile, how often its probe
//! runs, and how many active holds a tenant may have.

use std::time::Duration;

use super::ConfigError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HoldConfig {
    /// Attempts of different tasks in a row failing at a profile on the provider's side that
    /// hold it for every tenant (`AITASK_HOLD_AFTER_FAILURES`, 5; 1 to 1,000).
    pub after_failures: i32,
    /// How often a held profile's probe runs (`AITASK_HOLD_PROBE_MS`, 10000; 1 s to 15 min, what
    /// an SQS delay can wait).
    pub probe: Duration,
    /// A tenant's active holds (`AITASK_HOLDS_PER_TENANT`, 100; 1 to 10,000).
    pub per_tenant: usize,
}

impl Default for HoldConfig {
    fn default() -> Self {
        HoldConfig { after_failures: 5, probe: Duration::from_millis(10_000), per_tenant: 100 }
    }
}

impl HoldConfig {
    pub(super) fn read(
        number: impl Fn(&str, u64) -> Result<u64, ConfigError>,
    ) -> Result<HoldConfig, ConfigError> {
        let defaults = HoldConfig::default();
        Ok(HoldConfig {
            after_failures: number("AITASK_HOLD_AFTER_FAILURES", defaults.after_failures as u64)?
                .clamp(1, 1_000) as i32,
            probe: Duration::from_millis(
                number("AITASK_HOLD_PROBE_MS", defaults.probe.as_millis() as u64)?.clamp(1_000, 900_000),
            ),
            per_tenant: number("AITASK_HOLDS_PER_TENANT", defaults.per_tenant as u64)?.clamp(1, 10_000)
                as usize,
        })
    }
}
