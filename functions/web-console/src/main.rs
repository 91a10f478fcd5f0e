//! The `web-console` Lambda (template parameter `Console`): every invocation goes to
//! [`web_console::handle`]. It reads no secret, opens no connection and calls no AWS API.

use lambda_runtime::{service_fn, Error, LambdaEvent};

#[tokio::main]
async fn main() -> Result<(), Error> {
    lambda_runtime::run(service_fn(|event: LambdaEvent<_>| async move {
        Ok::<_, Error>(web_console::handle(&event.payload))
    }))
    .await
}
