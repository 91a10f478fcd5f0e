//! The secrets a function reads at cold start ([`aitasks_secrets`]: the database URL and the
//! provider key), and for the worker also each model profile's own: each profile's
//! `apiKeySecretArn` becomes that profile's key, and each secret of its `secretHeaders` (a plain
//! string, or JSON with `value`) that header's value.

pub use aitasks_secrets::{database_url, SecretError, Secrets, Wanted};

use crate::config::ConfigError;

impl From<SecretError> for ConfigError {
    fn from(error: SecretError) -> ConfigError {
        ConfigError(error.0)
    }
}

/// Fetch the secrets the environment names (none locally). With `profile_keys` (the worker,
/// whose role may read them), also every profile's own key secret (`apiKeySecretArn` in
/// `AITASK_MODELS`), under `profile_key_variable(id)`, and the secret of each of its
/// `secretHeaders`, under `profile_header_variable(id, name)`.
pub async fn load(
    lookup: impl Fn(&str) -> Option<String>,
    profile_keys: bool,
) -> Result<Secrets, ConfigError> {
    let mut more = Vec::new();
    if let (true, Some(models)) = (profile_keys, lookup("AITASK_MODELS")) {
        more.extend(aitasks_providers::profile_key_secrets(&models).into_iter().map(|(profile, arn)| {
            Wanted { variable: aitasks_providers::profile_key_variable(&profile), arn, field: "apiKey" }
        }));
        more.extend(
            aitasks_providers::profile_header_secrets(&models).into_iter().map(|(variable, arn)| Wanted {
                variable,
                arn,
                field: "value",
            }),
        );
    }
    Ok(Secrets::load(lookup, more).await?)
}
