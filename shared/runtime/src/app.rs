//! Everything a function needs, built once per cold start and shared by every invocation.

use std::sync::Arc;

use aitasks_providers::{HttpProvider, ModelProfiles};
use aitasks_store::{PoolSettings, StorePool};

use crate::config::{ConfigError, Settings};
use crate::queue::Queues;

/// The pool, the queues, the model profiles and the provider client.
pub struct App<P = HttpProvider> {
    pub settings: Settings,
    pub pool: StorePool,
    pub queues: Queues,
    pub profiles: ModelProfiles,
    pub provider: P,
}

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

    /// [`App::from_env`] for process-task, the one function that calls providers (and whose
    /// role may read the profiles' own secrets): every profile's `apiKeySecretArn` and
    /// `secretHeaders` are read.
    pub async fn worker_from_env() -> Result<Arc<App>, StartupError> {
        App::build_from_env(true).await
    }

    async fn build_from_env(worker: bool) -> Result<Arc<App>, StartupError> {
        let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let secrets = crate::secrets::Secrets::load(env, worker).await?;
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
        Ok(Arc::new(App::new(settings, profiles, provider, sqs)?))
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
        Ok(App { settings, pool, queues, profiles, provider })
    }

    /// Publish completion events after their transition committed, and mark them delivered.
    /// Failures are logged and left to the sweeper, which re-delivers what was not marked.
    pub async fn publish(&self, events: Vec<aitasks_store::PendingEvent>) {
        if events.is_empty() {
            return;
        }
        let delivered = self.queues.publish_events(&events).await;
        if delivered.is_empty() {
            return;
        }
        let marked = async {
            let client = aitasks_store::client(&self.pool).await?;
            aitasks_store::mark_delivered(&client, &delivered).await
        };
        if let Err(error) = marked.await {
            tracing::warn!(error = %crate::error_chain(&error), "could not mark events delivered; the sweeper will deliver them again");
        }
    }
}
