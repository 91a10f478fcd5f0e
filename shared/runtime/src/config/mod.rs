//! Configuration from the environment (docs/configuration.md), read once per cold start. A bad value
//! stops the process at start-up instead of surfacing on the first event.

use std::time::Duration;

pub mod callbacks;
pub mod holds;
pub mod intake;
pub mod intake_senders;
pub mod old_names;
pub mod read_rate;
pub mod streams;
pub mod tenant_quotas;

/// A variable that is missing or cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("configuration: {0}")]
pub struct ConfigError(pub String);

/// The runtime knobs.
#[derive(Debug, Clone, PartialEq)]
pub struct RuntimeConfig {
    /// Claims a task may have (`AITASK_MAX_ATTEMPTS`, 3).
    pub max_attempts: i32,
    /// How often a worker checks for cancellation (`AITASK_CANCEL_POLL_MS`, 500).
    pub cancel_poll: Duration,
    /// How often a worker refreshes the heartbeat and the message visibility
    /// (`AITASK_HEARTBEAT_MS`, 10000).
    pub heartbeat: Duration,
    /// A running task whose heartbeat is older is taken back by the sweeper
    /// (`AITASK_STALE_RUNNING_MS`, 30000).
    pub stale_running: Duration,
    /// A queued task older than this fails (`AITASK_QUEUE_TIMEOUT_MS`, 900000).
    pub queue_timeout: Duration,
    /// One provider call's limit (`AITASK_PROVIDER_TIMEOUT_MS`, 120000).
    pub provider_timeout: Duration,
    /// A queued task whose message was sent this long ago without being claimed is re-sent
    /// (`AITASK_RESEND_AFTER_MS`, 300000).
    pub resend_after: Duration,
    /// A new task's message is left to its create call for this long before the sweeper sends
    /// it (`AITASK_UNSENT_GRACE_MS`, 5000).
    pub unsent_grace: Duration,
    /// How long before the Lambda deadline a worker stops its call and requeues
    /// (`AITASK_DEADLINE_MARGIN_MS`, 5000).
    pub deadline_margin: Duration,
    /// Records of one invocation worked on at once (`AITASK_RECORD_CONCURRENCY`, 10).
    pub record_concurrency: usize,
    /// Rows per sweeper statement, its page (`AITASK_SWEEP_PAGE`, 100), and statements per duty
    /// per run (`AITASK_SWEEP_MAX_PAGES`, 10).
    pub sweep_page: usize,
    pub sweep_max_pages: usize,
    /// Rows per statement of a request's bulk work, a run cancel or a scope delete, its page
    /// (`AITASK_REQUEST_PAGE`, 500) ...
    pub request_page: usize,
    /// ... and how long a request keeps starting pages (`AITASK_REQUEST_WORK_MS`, 5000), well
    /// inside API Gateway's 30 s. What is left is the sweeper's (a run cancel) or the caller's,
    /// told `"more": true` (a delete).
    pub request_work: Duration,
    /// A waiting callback is due for a heartbeat once its last one is this old
    /// (`AITASK_CALLBACK_HEARTBEAT_MS`, 45000): with the one-minute schedule, every sweep
    /// heartbeats each once, so a state whose `HeartbeatSeconds` is two minutes or more never
    /// times out while its task lives (docs/lifecycle.md, "Callbacks").
    pub callback_heartbeat: Duration,
    /// How often the sweeper runs (`AITASK_SWEEP_INTERVAL_MS`, 60000: the stack's schedule).
    /// The dev server sweeps this often; the heartbeat duty ends its window inside it.
    pub sweep_interval: Duration,
    /// A queued task whose every caller is gone is canceled (`AITASK_CALLBACK_CANCEL_WHEN_GONE`,
    /// true).
    pub cancel_when_gone: bool,
    /// The heartbeat's rate, concurrency and budget, and the callbacks a task and a tenant may have.
    pub callbacks: callbacks::CallbackConfig,
    /// The last part of a deferred task's window the batcher keeps for the on-demand path: a
    /// task awaiting a batch this close to its window's end runs on-demand, and a batch that has
    /// not answered by then is given up (`AITASK_DEFERRED_SLACK_MS`, 1800000; 5 minutes to 30).
    pub deferred_slack: Duration,
    /// How often an open batch's status is asked for (`AITASK_BATCH_POLL_MS`, 60000).
    pub batch_poll: Duration,
    /// Holds: the automatic hold's count and probe, a tenant's active holds.
    pub holds: holds::HoldConfig,
    /// Operations a tenant may have running at once (`AITASK_OPERATIONS_PER_TENANT`, 2;
    /// docs/api.md, "Operations").
    pub operations_per_tenant: i64,
    /// Live output: the flush interval and size, and how long a stream outlives its task.
    pub streams: streams::StreamConfig,
}

impl RuntimeConfig {
    /// The most a retry after `attempt` waits: 1 s doubling to a minute. The worker waits a
    /// random part of it (`decision::decide`).
    pub fn backoff_cap(&self, attempt: i32) -> Duration {
        let exponent = u32::try_from(attempt.saturating_sub(1)).unwrap_or(0).min(6);
        Duration::from_secs(1u64 << exponent).min(Duration::from_secs(60))
    }

    /// How long the heartbeat duty keeps heartbeating what comes due, from the sweep's start,
    /// once the other duties are done: its budget, but never past nine tenths of the schedule's
    /// period, so a sweep ends before the next one starts.
    pub fn heartbeat_window(&self) -> Duration {
        self.callbacks.heartbeat_budget.min(self.sweep_interval * 9 / 10)
    }

    /// How far each heartbeat pushes the SQS message's visibility.
    pub fn visibility_extension(&self) -> Duration {
        (self.heartbeat * 3).max(Duration::from_secs(30))
    }
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            max_attempts: 3,
            cancel_poll: Duration::from_millis(500),
            heartbeat: Duration::from_millis(10_000),
            stale_running: Duration::from_millis(30_000),
            queue_timeout: Duration::from_millis(900_000),
            provider_timeout: Duration::from_millis(120_000),
            resend_after: Duration::from_millis(300_000),
            unsent_grace: Duration::from_millis(5_000),
            deadline_margin: Duration::from_millis(5_000),
            record_concurrency: 10,
            sweep_page: 100,
            sweep_max_pages: 10,
            request_page: 500,
            request_work: Duration::from_millis(5_000),
            callback_heartbeat: Duration::from_millis(45_000),
            sweep_interval: Duration::from_millis(60_000),
            cancel_when_gone: true,
            callbacks: callbacks::CallbackConfig::default(),
            deferred_slack: Duration::from_millis(1_800_000),
            batch_poll: Duration::from_millis(60_000),
            holds: holds::HoldConfig::default(),
            operations_per_tenant: 2,
            streams: streams::StreamConfig::default(),
        }
    }
}

/// Everything a function reads from its environment.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub database_url: String,
    /// Connections per instance (`AITASK_DB_POOL_SIZE`, 4).
    pub db_pool_size: usize,
    pub task_queue_url: String,
    pub events_queue_url: Option<String>,
    /// The token's field naming the tenant (`AITASK_APP_TOKEN_FIELD`, `app_id`; a JWT "claim").
    pub app_token_field: String,
    /// The optional cap on active scoped tasks of every application together
    /// (`AITASK_SYSTEM_ACTIVE_CAP`): it protects a provider every tenant shares. Unset: none.
    pub system_active_cap: Option<i64>,
    /// Server-side quotas per tenant (`AITASK_TENANT_QUOTAS`).
    pub tenant_quotas: tenant_quotas::TenantQuotas,
    /// Each tenant's read rate (`AITASK_READ_RATE`, `AITASK_READ_BURST`).
    pub read_rate: read_rate::ReadRateConfig,
    /// Completion events also go to this EventBridge bus (`AITASK_EVENT_BUS_NAME`), with this
    /// `source` (`AITASK_EVENT_SOURCE`, `aitasks`).
    pub event_bus: Option<EventBus>,
    /// Whose tasks each intake queue takes (`AITASK_INTAKE_TENANTS`; the intake function only).
    pub intake_tenants: intake::IntakeTenants,
    /// Which sender (SQS `SenderId`) may create tasks of which tenant through them
    /// (`AITASK_INTAKE_SENDERS`; none by default).
    pub intake_senders: intake_senders::IntakeSenders,
    /// Bedrock batch inference: the bucket its files go through (`AITASK_BATCH_BUCKET`) and the
    /// service role Bedrock assumes (`AITASK_BATCH_ROLE_ARN`); both, or no Bedrock batches.
    pub batch_bucket: Option<(String, String)>,
    pub runtime: RuntimeConfig,
}

/// The EventBridge bus completion events also go to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventBus {
    pub name: String,
    pub source: String,
}

impl Settings {
    /// The configured limits that apply to a create by `tenant`.
    pub fn limits_for(&self, tenant: &str) -> aitasks_store::ServerLimits {
        aitasks_store::ServerLimits {
            system_cap: self.system_active_cap,
            tenant_tasks_per_day: self.tenant_quotas.tasks_per_day(tenant),
        }
    }

    pub fn from_env() -> Result<Settings, ConfigError> {
        Settings::from_lookup(|name| std::env::var(name).ok().filter(|v| !v.is_empty()))
    }

    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Settings, ConfigError> {
        old_names::refuse_conflicts(&lookup)?;
        let lookup = |name: &str| old_names::read(&lookup, name);
        let required = |name: &str| lookup(name).ok_or_else(|| ConfigError(format!("{name} is required")));
        let number = |name: &str, default: u64| -> Result<u64, ConfigError> {
            match lookup(name) {
                None => Ok(default),
                Some(text) => text
                    .trim()
                    .parse::<u64>()
                    .map_err(|_| ConfigError(format!("{name} must be a whole number, not {text:?}"))),
            }
        };
        let millis = |name: &str, default: u64| number(name, default).map(Duration::from_millis);
        let defaults = RuntimeConfig::default();
        let max_attempts = number("AITASK_MAX_ATTEMPTS", 3)?;
        if !(1..=100).contains(&max_attempts) {
            return Err(ConfigError("AITASK_MAX_ATTEMPTS must be between 1 and 100".into()));
        }
        let runtime = RuntimeConfig {
            max_attempts: max_attempts as i32,
            cancel_poll: millis("AITASK_CANCEL_POLL_MS", 500)?.max(Duration::from_millis(10)),
            heartbeat: millis("AITASK_HEARTBEAT_MS", 10_000)?.max(Duration::from_millis(10)),
            stale_running: millis("AITASK_STALE_RUNNING_MS", 30_000)?,
            queue_timeout: millis("AITASK_QUEUE_TIMEOUT_MS", 900_000)?,
            provider_timeout: millis("AITASK_PROVIDER_TIMEOUT_MS", 120_000)?,
            resend_after: millis("AITASK_RESEND_AFTER_MS", 300_000)?,
            unsent_grace: millis("AITASK_UNSENT_GRACE_MS", 5_000)?,
            deadline_margin: millis("AITASK_DEADLINE_MARGIN_MS", 5_000)?,
            record_concurrency: number("AITASK_RECORD_CONCURRENCY", 10)?.max(1) as usize,
            sweep_page: number("AITASK_SWEEP_PAGE", defaults.sweep_page as u64)?.max(1) as usize,
            sweep_max_pages: number("AITASK_SWEEP_MAX_PAGES", defaults.sweep_max_pages as u64)?.max(1)
                as usize,
            request_page: number("AITASK_REQUEST_PAGE", defaults.request_page as u64)?.clamp(1, 10_000)
                as usize,
            request_work: millis("AITASK_REQUEST_WORK_MS", 5_000)?,
            callback_heartbeat: millis("AITASK_CALLBACK_HEARTBEAT_MS", 45_000)?
                .max(Duration::from_millis(100)),
            sweep_interval: millis("AITASK_SWEEP_INTERVAL_MS", 60_000)?.max(Duration::from_millis(100)),
            cancel_when_gone: match lookup("AITASK_CALLBACK_CANCEL_WHEN_GONE").as_deref().map(str::trim) {
                None | Some("true") => true,
                Some("false") => false,
                Some(other) => {
                    return Err(ConfigError(format!(
                        "AITASK_CALLBACK_CANCEL_WHEN_GONE must be true or false, not {other:?}"
                    )))
                }
            },
            callbacks: callbacks::CallbackConfig::read(number, lookup("AWS_REGION").as_deref())?,
            deferred_slack: millis("AITASK_DEFERRED_SLACK_MS", 1_800_000)?
                .clamp(Duration::from_secs(300), Duration::from_secs(1_800)),
            batch_poll: millis("AITASK_BATCH_POLL_MS", 60_000)?
                .clamp(Duration::from_millis(100), Duration::from_secs(300)),
            holds: holds::HoldConfig::read(number)?,
            operations_per_tenant: number("AITASK_OPERATIONS_PER_TENANT", 2)?.clamp(1, 1_000) as i64,
            streams: streams::StreamConfig::read(number)?,
        };
        Ok(Settings {
            database_url: required("DATABASE_URL")?,
            db_pool_size: number("AITASK_DB_POOL_SIZE", 4)?.clamp(1, 100) as usize,
            task_queue_url: required("AITASK_TASK_QUEUE_URL")?,
            events_queue_url: lookup("AITASK_EVENTS_QUEUE_URL"),
            app_token_field: lookup("AITASK_APP_TOKEN_FIELD").unwrap_or_else(|| "app_id".to_owned()),
            tenant_quotas: match lookup("AITASK_TENANT_QUOTAS") {
                Some(text) => tenant_quotas::TenantQuotas::parse(&text)?,
                None => Default::default(),
            },
            read_rate: read_rate::ReadRateConfig::read(number)?,
            event_bus: lookup("AITASK_EVENT_BUS_NAME").map(|name| EventBus {
                name,
                source: lookup("AITASK_EVENT_SOURCE").unwrap_or_else(|| "aitasks".to_owned()),
            }),
            intake_tenants: match lookup("AITASK_INTAKE_TENANTS") {
                Some(text) => intake::IntakeTenants::parse(&text)?,
                None => Default::default(),
            },
            intake_senders: match lookup("AITASK_INTAKE_SENDERS") {
                Some(text) => intake_senders::IntakeSenders::parse(&text)?,
                None => Default::default(),
            },
            system_active_cap: match lookup("AITASK_SYSTEM_ACTIVE_CAP") {
                None => None,
                Some(_) => match number("AITASK_SYSTEM_ACTIVE_CAP", 0)? {
                    0 => {
                        return Err(ConfigError(
                            "AITASK_SYSTEM_ACTIVE_CAP must be at least 1 (unset it for no cap)".into(),
                        ))
                    }
                    cap => Some(cap.min(i64::MAX as u64) as i64),
                },
            },
            batch_bucket: lookup("AITASK_BATCH_BUCKET").zip(lookup("AITASK_BATCH_ROLE_ARN")),
            runtime,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_overrides() {
        let env = |pairs: Vec<(&'static str, &'static str)>| {
            move |name: &str| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
        };
        let base = vec![("DATABASE_URL", "postgres://x"), ("AITASK_TASK_QUEUE_URL", "http://q")];
        let settings = Settings::from_lookup(env(base.clone())).unwrap();
        assert_eq!(settings.runtime, RuntimeConfig::default());
        assert_eq!(settings.app_token_field, "app_id");
        assert_eq!(settings.event_bus, None);
        let mut bus = base.clone();
        bus.push(("AITASK_EVENT_BUS_NAME", "workflows"));
        bus.push(("AITASK_CALLBACK_CANCEL_WHEN_GONE", "false"));
        let settings = Settings::from_lookup(env(bus)).unwrap();
        assert_eq!(settings.event_bus, Some(EventBus { name: "workflows".into(), source: "aitasks".into() }));
        assert!(!settings.runtime.cancel_when_gone);
        let mut unclear = base.clone();
        unclear.push(("AITASK_CALLBACK_CANCEL_WHEN_GONE", "yes"));
        assert!(Settings::from_lookup(env(unclear)).is_err());
        let mut custom = base.clone();
        custom.push(("AITASK_CANCEL_POLL_MS", "50"));
        custom.push(("AITASK_MAX_ATTEMPTS", "5"));
        let settings = Settings::from_lookup(env(custom)).unwrap();
        assert_eq!(settings.runtime.cancel_poll, Duration::from_millis(50));
        assert_eq!(settings.runtime.max_attempts, 5);
        let mut broken = base;
        broken.push(("AITASK_HEARTBEAT_MS", "soon"));
        assert!(Settings::from_lookup(env(broken)).is_err());
        assert!(Settings::from_lookup(env(vec![])).is_err(), "DATABASE_URL is required");
    }

    /// docs/configuration.md states the slack's range; the code keeps exactly that range (a value
    /// outside it is moved to its nearer end).
    #[test]
    fn the_deferred_slack_keeps_the_documented_range() {
        let docs = include_str!("../../../../docs/configuration.md");
        let row =
            docs.lines().find(|line| line.starts_with("| `AITASK_DEFERRED_SLACK_MS`")).expect("documented");
        let range =
            row.split('(').nth(1).and_then(|rest| rest.split(')').next()).expect("a range in the row");
        let (low, high) = range.split_once(" to ").expect("\"<low> to <high>\"");
        let number = |text: &str| -> u64 {
            text.trim()
                .chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
                .parse()
                .expect("a number")
        };
        let (low, high) = (number(low), number(high));
        let slack = |ms: u64| {
            let ms = ms.to_string();
            let lookup = |name: &str| match name {
                "DATABASE_URL" => Some("postgres://x".to_owned()),
                "AITASK_TASK_QUEUE_URL" => Some("http://q".to_owned()),
                "AITASK_DEFERRED_SLACK_MS" => Some(ms.clone()),
                _ => None,
            };
            Settings::from_lookup(lookup).unwrap().runtime.deferred_slack.as_millis() as u64
        };
        assert_eq!((slack(low), slack(high)), (low, high), "the documented ends are kept as given");
        assert_eq!((slack(low - 1), slack(high + 1)), (low, high), "outside, the nearer end");
    }

    #[test]
    fn backoff_doubles_up_to_a_minute() {
        let config = RuntimeConfig::default();
        let waits: Vec<u64> = (1..=9).map(|a| config.backoff_cap(a).as_secs()).collect();
        assert_eq!(waits, vec![1, 2, 4, 8, 16, 32, 60, 60, 60]);
    }

    #[test]
    fn the_old_names_of_renamed_variables_are_still_read() {
        let lookup = |name: &str| match name {
            "DATABASE_URL" => Some("postgres://x".to_owned()),
            "AITASK_TASK_QUEUE_URL" => Some("http://q".to_owned()),
            "AITASK_SWEEP_BATCH" => Some("7".to_owned()),
            "AITASK_BATCH_CONCURRENCY" => Some("3".to_owned()),
            "AITASK_APP_CLAIM" => Some("tenant".to_owned()),
            _ => None,
        };
        let settings = Settings::from_lookup(lookup).unwrap();
        assert_eq!(settings.runtime.sweep_page, 7);
        assert_eq!(settings.runtime.record_concurrency, 3);
        assert_eq!(settings.app_token_field, "tenant");
    }
}
