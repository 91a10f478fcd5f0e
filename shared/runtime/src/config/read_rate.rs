//! Each tenant's read rate (docs/configuration.md; docs/api.md, "Read rate").

use aitasks_contracts::ReadCost;

use super::ConfigError;

/// A token bucket per tenant, in read units ([`ReadCost`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReadRateConfig {
    /// Units a second each tenant's reads may spend (`AITASK_READ_RATE`, 2000; 0: no limit).
    pub per_second: u32,
    /// Units a tenant may spend at once, after a quiet while (`AITASK_READ_BURST`, 20000; at
    /// least the widest read's cost, so that every read can pass).
    pub burst: u32,
}

impl Default for ReadRateConfig {
    fn default() -> Self {
        ReadRateConfig { per_second: 2_000, burst: 20_000 }
    }
}

impl ReadRateConfig {
    /// Read with `number` (a variable as a whole number, or its default).
    pub(super) fn read(
        number: impl Fn(&str, u64) -> Result<u64, ConfigError>,
    ) -> Result<ReadRateConfig, ConfigError> {
        let defaults = ReadRateConfig::default();
        let within = |name: &str, default: u32, low: u32, high: u32| {
            let value = number(name, u64::from(default))?;
            if (u64::from(low)..=u64::from(high)).contains(&value) {
                Ok(value as u32)
            } else {
                Err(ConfigError(format!("{name} must be between {low} and {high}, not {value}")))
            }
        };
        Ok(ReadRateConfig {
            per_second: within("AITASK_READ_RATE", defaults.per_second, 0, 1_000_000)?,
            burst: within("AITASK_READ_BURST", defaults.burst, ReadCost::MAX_UNITS, 100_000_000)?,
        })
    }

    /// No limit (`AITASK_READ_RATE=0`).
    pub fn is_off(&self) -> bool {
        self.per_second == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(pairs: &[(&str, u64)]) -> Result<ReadRateConfig, ConfigError> {
        ReadRateConfig::read(|name, default| {
            Ok(pairs.iter().find(|(n, _)| *n == name).map_or(default, |(_, v)| *v))
        })
    }

    #[test]
    fn the_defaults_let_every_read_pass_and_bad_values_stop_the_start() {
        let defaults = read(&[]).unwrap();
        assert_eq!(defaults, ReadRateConfig::default());
        assert!(!defaults.is_off());
        assert!(read(&[("AITASK_READ_RATE", 0)]).unwrap().is_off());
        assert!(read(&[("AITASK_READ_RATE", 1_000_001)]).is_err());
        let narrow = read(&[("AITASK_READ_BURST", u64::from(ReadCost::MAX_UNITS) - 1)]);
        assert!(narrow.unwrap_err().0.contains("AITASK_READ_BURST must be between 1000"));
        assert_eq!(read(&[("AITASK_READ_BURST", 1_500)]).unwrap().burst, 1_500);
    }
}
