//! The `intake-task` Lambda: configuration, pool and clients are built once per cold start, then
//! every invocation goes to [`intake_task::handle`].

use lambda_runtime::{service_fn, Error, LambdaEvent};

#[tokio::main]
async fn main() -> Result<(), Error> {
    aitasks_lambda_kit::init_tracing();
    let app = aitasks_runtime::App::from_env().await?;
    lambda_runtime::run(service_fn(move |event: LambdaEvent<_>| {
        let app = app.clone();
        async move { intake_task::handle(&app, event).await }
    }))
    .await
}
