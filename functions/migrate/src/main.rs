//! The `migrate` Lambda: reads the database location once per cold start, then answers
//! CloudFormation custom-resource events with [`migrate::handle`].

use lambda_runtime::{service_fn, Error, LambdaEvent};
use serde_json::Value;

#[tokio::main]
async fn main() -> Result<(), Error> {
    aitasks_lambda_kit::init_tracing();
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let secrets = aitasks_runtime::secrets::Secrets::load(env).await?;
    let database_url = env("DATABASE_URL")
        .or_else(|| secrets.get("DATABASE_URL"))
        .ok_or("DATABASE_URL or AITASK_DATABASE_SECRET_ARN is required")?;
    let database_url = std::sync::Arc::new(database_url);
    lambda_runtime::run(service_fn(move |event: LambdaEvent<Value>| {
        let database_url = database_url.clone();
        async move { migrate::handle(&database_url, event).await }
    }))
    .await
}
