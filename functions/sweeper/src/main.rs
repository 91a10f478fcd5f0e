//! The `sweeper` Lambda: configuration, pool and clients are built once per cold start, then every
//! invocation goes to [`sweeper::handle`]. It reads the profiles' key secrets as process-task does:
//! its batcher calls the providers' batch APIs.

use lambda_runtime::{service_fn, Error, LambdaEvent};

#[tokio::main]
async fn main() -> Result<(), Error> {
    aitasks_lambda_kit::init_tracing();
    let app = aitasks_runtime::App::worker_from_env().await?;
    lambda_runtime::run(service_fn(move |event: LambdaEvent<_>| {
        let app = app.clone();
        async move { sweeper::handle(&app, event).await }
    }))
    .await
}
