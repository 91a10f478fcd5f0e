//! Everything a function needs, built once per cold start and shared by every invocation.

use std::sync::Arc;

use aitasks_providers::{BatchClient, HttpProvider, ModelProfiles};
use aitasks_store::{PoolSettings, StorePool};

use crate::bus::Bus;
use crate::callbacks::Callbacks;
use crate::config::{ConfigError, Settings};
use crate::failing_profiles::FailingProfiles;
use crate::queue::Queues;
use crate::read_rate::ReadRate;

/// The pool, the queues, the model profiles, the provider client, and the clients that answer
/// callbacks and put events on a bus.
pub struct App<P = HttpProvider> {
    pub settings: Settings,
    pub pool: StorePool,
    pub queues: Queues,
    pub profiles: ModelProfiles,
    pub provider: P,
    /// The providers' batch APIs, for the batcher's deferred tasks.
    pub batches: BatchClient,
    /// Step Functions and Lambda, to answer and heartbeat callbacks. `None` (an `App` built by
    /// hand without [`App::with_aws`]): callbacks are left owed, for a function that has them.
    pub callbacks: Option<Callbacks>,
    /// The EventBridge bus completion events also go to (`AITASK_EVENT_BUS_NAME`).
    pub bus: Option<Bus>,
    /// Each tenant's read rate (`AITASK_READ_RATE`): this instance's buckets.
    pub reads: ReadRate,
    /// The profiles whose automatic-hold count this instance saw above zero (`crate::holds`).
    pub(crate) failing: FailingProfiles,
}

/// One call to a provider's batch API (an upload, a status, a results file): the sweep has a
/// minute for all its duties.
const BATCH_CALL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// Start-up failed: the function cannot serve.
#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("model profiles: {0}")]
    Profiles(#[from] aitasks_providers::ProfileError),
    #[error("database pool: {0}")]
    Store(#[from] aitasks_store::StoreError),
    #[error("provider client: {0}")]
    Provider(#[from] aitasks_providers::ProviderError),
}

impl App<HttpProvider> {
    /// Read the environment and build everything. No connection is opened yet.
    pub async fn from_env() -> Result<Arc<App>, StartupError> {
        App::build_from_env(false).await
    }

    /// [`App::from_env`] for the functions that call providers, process-task and the sweeper (its
    /// batcher), whose roles may read the profiles' own secrets: every profile's
    /// `apiKeySecretArn` and `secretHeaders` are read.
    pub async fn worker_from_env() -> Result<Arc<App>, StartupError> {
        App::build_from_env(true).await
    }

    async fn build_from_env(worker: bool) -> Result<Arc<App>, StartupError> {
        let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let secrets = crate::secrets::load(env, worker).await?;
        let lookup = |name: &str| env(name).or_else(|| secrets.get(name));
        let settings = Settings::from_lookup(lookup)?;
        let profiles = ModelProfiles::from_lookup(lookup)?;
        if worker {
            // A key or header secret named but not read is a configuration mistake: say so at
            // cold start, not as a 401 on every task.
            let unread = profiles.ids().filter_map(|id| profiles.resolve(id).ok()?.unread_secret()).next();
            if let Some(unread) = unread {
                return Err(ConfigError(unread).into());
            }
        }
        let aws = crate::aws::sdk_config().await;
        let mut provider = HttpProvider::new(settings.runtime.provider_timeout)?;
        if profiles.uses_provider("bedrock") {
            // The role's credentials, the function's region (or AWS_ENDPOINT_URL_BEDROCK_RUNTIME);
            // the SDK's own retries off: every retry is an attempt, counted on the task.
            let config = aws_sdk_bedrockruntime::config::Builder::from(&aws)
                .retry_config(aws_sdk_bedrockruntime::config::retry::RetryConfig::disabled())
                .build();
            provider = provider.with_bedrock(aws_sdk_bedrockruntime::Client::from_conf(config));
        }
        let sqs = aws_sdk_sqs::Client::new(&aws);
        Ok(Arc::new(App::new(settings, profiles, provider, sqs)?.with_aws(&aws)))
    }
}

impl<P> App<P> {
    pub fn new(
        settings: Settings,
        profiles: ModelProfiles,
        provider: P,
        sqs: aws_sdk_sqs::Client,
    ) -> Result<App<P>, StartupError> {
        let mut pool_settings = PoolSettings::new(settings.database_url.clone());
        pool_settings.max_size = settings.db_pool_size;
        let pool = aitasks_store::connect(&pool_settings)?;
        let queues = Queues::new(sqs, settings.task_queue_url.clone(), settings.events_queue_url.clone());
        let batches = BatchClient::new(BATCH_CALL_TIMEOUT)?;
        let reads = ReadRate::new(settings.read_rate);
        Ok(App {
            settings,
            pool,
            queues,
            profiles,
            provider,
            batches,
            callbacks: None,
            bus: None,
            reads,
            failing: FailingProfiles::default(),
        })
    }

    /// The callbacks' clients, the event bus (when the settings name one) and Bedrock batch
    /// inference (when they name its bucket) on this SDK configuration.
    pub fn with_aws(mut self, aws: &aws_config::SdkConfig) -> App<P> {
        self.callbacks = Some(Callbacks::new(aws));
        // Bedrock batch inference signs its S3 and control-plane calls with the role's credentials.
        if let Some((bucket, role_arn)) = self.settings.batch_bucket.clone() {
            let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
            match aitasks_providers::BatchAws::from_sdk_config(aws, bucket, role_arn, env) {
                Some(batch_aws) => self.batches = self.batches.with_aws(batch_aws),
                None => tracing::warn!("AITASK_BATCH_BUCKET is set but the AWS configuration has no credentials or region: Bedrock batches cannot be submitted"),
            }
        }
        self.bus = self
            .settings
            .event_bus
            .clone()
            .map(|settings| Bus::new(aws_sdk_eventbridge::Client::new(aws), settings));
        self
    }

    /// Deliver completion events to every destination, the events queue and the bus (when there
    /// are): the ids every destination took. Without a queue or a bus an event counts as
    /// delivered (nobody listens); an event one took and the other did not is sent to both again
    /// later.
    pub async fn send_events_out(&self, events: &[aitasks_store::PendingEvent]) -> Vec<i64> {
        let mut delivered = self.queues.send_events(events).await;
        if let Some(bus) = &self.bus {
            let on_bus = bus.put(events).await;
            delivered.retain(|id| on_bus.contains(id));
        }
        delivered
    }
}
