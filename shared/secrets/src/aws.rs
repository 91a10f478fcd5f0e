//! AWS SDK configuration with the one TLS stack every binary uses (rustls on ring).

use aws_smithy_http_client::tls::{self, rustls_provider::CryptoMode};

/// The SDK's configuration from the environment (`AWS_REGION`, `AWS_ENDPOINT_URL_SQS`, the
/// credentials chain), over an HTTPS client on rustls with ring.
pub async fn sdk_config() -> aws_config::SdkConfig {
    aws_config::defaults(aws_config::BehaviorVersion::latest()).http_client(https_client()).load().await
}

/// An HTTP(S) client for the SDK (any service's client takes it).
pub fn https_client() -> aws_sdk_secretsmanager::config::SharedHttpClient {
    aws_smithy_http_client::Builder::new().tls_provider(tls::Provider::Rustls(CryptoMode::Ring)).build_https()
}
