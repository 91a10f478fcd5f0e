//! The callbacks' capacity and limits (docs/configuration.md, "Callbacks"; why these defaults:
//! docs/lifecycle.md, "Callbacks").

use std::time::Duration;

use super::ConfigError;

/// How fast the sweeper heartbeats, and how many callbacks a task and a tenant may have waiting.
#[derive(Debug, Clone, PartialEq)]
pub struct CallbackConfig {
    /// Heartbeat calls a second, at most, from one sweep (`AITASK_CALLBACK_CALLS_PER_SECOND`;
    /// by default [`quota_share`] of the region's refill): under Step Functions'
    /// `SendTaskHeartbeat` refill of 300 a second in its smaller regions (500 in us-east-1,
    /// us-west-2 and eu-west-1), per account and region, leaving the rest to the workflows.
    pub calls_per_second: u32,
    /// Heartbeat calls in flight at once (`AITASK_CALLBACK_CONCURRENCY`, 32).
    pub concurrency: usize,
    /// How long the heartbeat duty keeps taking pages once the sweep's other duties are done
    /// (`AITASK_CALLBACK_HEARTBEAT_BUDGET_MS`, 45000). While they run, it keeps going.
    pub heartbeat_budget: Duration,
    /// Live (waiting or owed) callbacks one task may have (`AITASK_CALLBACKS_PER_TASK`, 25).
    pub per_task: i64,
    /// Waiting callbacks one tenant may have (`AITASK_TENANT_WAITING_CALLBACKS`, 10000).
    pub per_tenant: i64,
}

impl Default for CallbackConfig {
    fn default() -> Self {
        CallbackConfig {
            calls_per_second: 250,
            concurrency: 32,
            heartbeat_budget: Duration::from_millis(45_000),
            per_task: 25,
            per_tenant: 10_000,
        }
    }
}

/// Step Functions' largest regions, where `SendTaskHeartbeat` refills at 500 a second (300
/// elsewhere): the Step Functions developer guide, "Quotas related to API action throttling".
pub const LARGE_REGIONS: [&str; 3] = ["us-east-1", "us-west-2", "eu-west-1"];

/// `SendTaskHeartbeat`'s refill a second in `region` (the smaller figure when unknown).
pub fn heartbeat_refill(region: Option<&str>) -> u32 {
    if region.is_some_and(|region| LARGE_REGIONS.contains(&region)) {
        500
    } else {
        300
    }
}

/// The default pace in `region`: four fifths of the refill in the large regions (400 of 500),
/// five sixths elsewhere (250 of 300), leaving 100 and 50 a second to the workflows' own calls.
pub fn quota_share(region: Option<&str>) -> u32 {
    match heartbeat_refill(region) {
        500 => 400,
        _ => 250,
    }
}

impl CallbackConfig {
    /// Read with `number` (a variable as a whole number, or its default); the rate's default
    /// depends on the function's `region`.
    pub(super) fn read(
        number: impl Fn(&str, u64) -> Result<u64, ConfigError>,
        region: Option<&str>,
    ) -> Result<CallbackConfig, ConfigError> {
        let defaults = CallbackConfig { calls_per_second: quota_share(region), ..CallbackConfig::default() };
        let within = |name: &str, default: u64, low: u64, high: u64| {
            let value = number(name, default)?;
            if (low..=high).contains(&value) {
                Ok(value)
            } else {
                Err(ConfigError(format!("{name} must be between {low} and {high}, not {value}")))
            }
        };
        Ok(CallbackConfig {
            calls_per_second: within(
                "AITASK_CALLBACK_CALLS_PER_SECOND",
                u64::from(defaults.calls_per_second),
                1,
                10_000,
            )? as u32,
            concurrency: within("AITASK_CALLBACK_CONCURRENCY", defaults.concurrency as u64, 1, 256)? as usize,
            // Its Lambda has 180 s: the duty's own part stays well inside.
            heartbeat_budget: Duration::from_millis(within(
                "AITASK_CALLBACK_HEARTBEAT_BUDGET_MS",
                45_000,
                100,
                120_000,
            )?),
            per_task: within("AITASK_CALLBACKS_PER_TASK", defaults.per_task as u64, 1, 1_000)? as i64,
            per_tenant: within("AITASK_TENANT_WAITING_CALLBACKS", defaults.per_tenant as u64, 1, 1_000_000)?
                as i64,
        })
    }

    /// Heartbeats one sweep can send: its rate over its budget.
    pub fn heartbeats_per_sweep(&self) -> u64 {
        u64::from(self.calls_per_second) * self.heartbeat_budget.as_secs()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(pairs: &[(&str, u64)]) -> Result<CallbackConfig, ConfigError> {
        read_in(pairs, None)
    }

    fn read_in(pairs: &[(&str, u64)], region: Option<&str>) -> Result<CallbackConfig, ConfigError> {
        CallbackConfig::read(
            |name, default| Ok(pairs.iter().find(|(n, _)| *n == name).map_or(default, |(_, v)| *v)),
            region,
        )
    }

    #[test]
    fn the_default_rate_is_a_share_of_the_region_s_refill() {
        assert_eq!(read_in(&[], Some("us-east-1")).unwrap().calls_per_second, 400);
        assert_eq!(read_in(&[], Some("eu-west-1")).unwrap().calls_per_second, 400);
        assert_eq!(read_in(&[], Some("ap-southeast-2")).unwrap().calls_per_second, 250);
        assert_eq!(read_in(&[], None).unwrap().calls_per_second, 250);
        let set = read_in(&[("AITASK_CALLBACK_CALLS_PER_SECOND", 120)], Some("us-east-1")).unwrap();
        assert_eq!(set.calls_per_second, 120, "a set rate wins");
    }

    #[test]
    fn the_defaults_hold_ten_thousand_and_bad_values_stop_the_start() {
        let defaults = read(&[]).unwrap();
        assert_eq!(defaults, CallbackConfig::default());
        assert!(defaults.heartbeats_per_sweep() >= 10_000, "{}", defaults.heartbeats_per_sweep());
        assert!(read(&[("AITASK_CALLBACK_CALLS_PER_SECOND", 0)]).is_err());
        assert!(read(&[("AITASK_CALLBACK_HEARTBEAT_BUDGET_MS", 170_000)]).is_err());
        assert_eq!(read(&[("AITASK_CALLBACKS_PER_TASK", 3)]).unwrap().per_task, 3);
    }
}
