//! Secrets read from Secrets Manager at cold start, so that credentials never sit in plain
//! environment variables in AWS: `AITASK_DATABASE_SECRET_ARN` (an RDS-style JSON secret:
//! username, password, host, port, dbname) becomes `DATABASE_URL`, and
//! `AITASK_PROVIDER_KEY_SECRET_ARN` (a plain string, or JSON with `apiKey`) becomes
//! `OPENAI_API_KEY`; a caller may name more ([`Wanted`]: the worker's profile keys and header
//! secrets). Locally none is set and the plain variables are used.
//!
//! A crate of its own so that a function which needs only the database URL (`migrate`) links
//! this and the store, not the runtime. [`aws`] is the SDK configuration every AWS client uses.

pub mod aws;
mod text;

use std::collections::HashMap;

pub use text::database_url;
use text::secret_text;

/// A secret that cannot be read or understood; the text says which and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SecretError(pub String);

/// A secret to read beyond the two the environment names: the variable it stands for, its ARN,
/// and the member that holds the value when the secret is JSON (`apiKey`, `value`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted {
    pub variable: String,
    pub arn: String,
    pub field: &'static str,
}

/// Values fetched from Secrets Manager, by the variable name they stand for.
#[derive(Default)]
pub struct Secrets(HashMap<String, String>);

impl Secrets {
    pub fn get(&self, name: &str) -> Option<String> {
        self.0.get(name).cloned()
    }

    /// Fetch the secrets the environment names (none locally), then each of `more`, one at a
    /// time. Nothing is fetched, and no AWS configuration is read, when nothing is named.
    pub async fn load(
        lookup: impl Fn(&str) -> Option<String>,
        more: Vec<Wanted>,
    ) -> Result<Secrets, SecretError> {
        let database = lookup("AITASK_DATABASE_SECRET_ARN");
        let provider = lookup("AITASK_PROVIDER_KEY_SECRET_ARN");
        if database.is_none() && provider.is_none() && more.is_empty() {
            return Ok(Secrets::default());
        }
        let config = aws::sdk_config().await;
        let client = aws_sdk_secretsmanager::Client::new(&config);
        let fetch = |arn: String| {
            let client = client.clone();
            async move {
                let output = client.get_secret_value().secret_id(&arn).send().await.map_err(|e| {
                    use aws_sdk_secretsmanager::error::ProvideErrorMetadata;
                    // AWS's own words when it answered (AccessDeniedException: ...); else the
                    // transport's error with its causes.
                    let detail = match (e.code(), e.message()) {
                        (Some(code), Some(message)) => format!("{code}: {message}"),
                        _ => aws_sdk_secretsmanager::error::DisplayErrorContext(&e).to_string(),
                    };
                    SecretError(format!("cannot read secret {arn}: {detail}"))
                })?;
                output
                    .secret_string()
                    .map(str::to_owned)
                    .ok_or_else(|| SecretError(format!("secret {arn} has no string value")))
            }
        };
        let mut values = HashMap::new();
        if let (Some(arn), None) = (database, lookup("DATABASE_URL")) {
            values.insert("DATABASE_URL".to_owned(), database_url(&fetch(arn).await?)?);
        }
        if let Some(arn) = provider {
            values.insert("OPENAI_API_KEY".to_owned(), secret_text(fetch(arn).await?, "apiKey"));
        }
        for wanted in more {
            values.insert(wanted.variable, secret_text(fetch(wanted.arn).await?, wanted.field));
        }
        Ok(Secrets(values))
    }
}
