//! Secrets read from Secrets Manager at cold start, so that credentials never sit in plain
//! environment variables in AWS: `AITASK_DATABASE_SECRET_ARN` (an RDS-style JSON secret:
//! username, password, host, port, dbname) becomes `DATABASE_URL`, and
//! `AITASK_PROVIDER_KEY_SECRET_ARN` (a plain string, or JSON with `apiKey`) becomes
//! `OPENAI_API_KEY`; for the worker, each profile's `apiKeySecretArn` becomes that profile's
//! key, and each secret of its `secretHeaders` (a plain string, or JSON with `value`) that
//! header's value. Locally none is set and the plain variables are used.

use std::collections::HashMap;

use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};
use serde_json::Value;

use crate::config::ConfigError;

/// Values fetched from Secrets Manager, by the variable name they stand for.
#[derive(Default)]
pub struct Secrets(HashMap<String, String>);

impl Secrets {
    pub fn get(&self, name: &str) -> Option<String> {
        self.0.get(name).cloned()
    }

    /// Fetch the secrets the environment names (none locally). With `profile_keys` (the
    /// worker, whose role may read them), also every profile's own key secret
    /// (`apiKeySecretArn` in `AITASK_MODELS`), under `profile_key_variable(id)`, and the secret
    /// of each of its `secretHeaders`, under `profile_header_variable(id, name)`.
    pub async fn load(
        lookup: impl Fn(&str) -> Option<String>,
        profile_keys: bool,
    ) -> Result<Secrets, ConfigError> {
        let database = lookup("AITASK_DATABASE_SECRET_ARN");
        let provider = lookup("AITASK_PROVIDER_KEY_SECRET_ARN");
        let (profiles, headers) = match (profile_keys, lookup("AITASK_MODELS")) {
            (true, Some(models)) => (
                aitasks_providers::profile_key_secrets(&models),
                aitasks_providers::profile_header_secrets(&models),
            ),
            _ => (Vec::new(), Vec::new()),
        };
        if database.is_none() && provider.is_none() && profiles.is_empty() && headers.is_empty() {
            return Ok(Secrets::default());
        }
        let config = crate::aws::sdk_config().await;
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
                    ConfigError(format!("cannot read secret {arn}: {detail}"))
                })?;
                output
                    .secret_string()
                    .map(str::to_owned)
                    .ok_or_else(|| ConfigError(format!("secret {arn} has no string value")))
            }
        };
        let mut values = HashMap::new();
        if let (Some(arn), None) = (database, lookup("DATABASE_URL")) {
            values.insert("DATABASE_URL".to_owned(), database_url(&fetch(arn).await?)?);
        }
        if let Some(arn) = provider {
            values.insert("OPENAI_API_KEY".to_owned(), secret_text(fetch(arn).await?, "apiKey"));
        }
        for (profile, arn) in profiles {
            values.insert(
                aitasks_providers::profile_key_variable(&profile),
                secret_text(fetch(arn).await?, "apiKey"),
            );
        }
        for (variable, arn) in headers {
            values.insert(variable, secret_text(fetch(arn).await?, "value"));
        }
        Ok(Secrets(values))
    }
}

/// A credential's secret: a plain string, or JSON with the credential in `field` (`apiKey` for
/// a provider key, `value` for a header's).
fn secret_text(text: String, field: &str) -> String {
    let value = match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => map.get(field).and_then(Value::as_str).map(str::to_owned).unwrap_or(text),
        _ => text,
    };
    value.trim().to_owned()
}

/// A Postgres URL from an RDS-style secret.
pub fn database_url(secret: &str) -> Result<String, ConfigError> {
    let value: Value =
        serde_json::from_str(secret).map_err(|_| ConfigError("the database secret is not JSON".into()))?;
    let field = |name: &str| {
        value
            .get(name)
            .and_then(|v| v.as_str().map(str::to_owned).or_else(|| v.as_u64().map(|n| n.to_string())))
    };
    let required =
        |name: &str| field(name).ok_or_else(|| ConfigError(format!("the database secret has no {name}")));
    let encode = |text: String| utf8_percent_encode(&text, NON_ALPHANUMERIC).to_string();
    Ok(format!(
        // In AWS the connection is always encrypted (RDS Proxy requires nothing else to verify it).
        "postgres://{}:{}@{}:{}/{}?sslmode=require",
        encode(required("username")?),
        encode(required("password")?),
        required("host")?,
        field("port").unwrap_or_else(|| "5432".into()),
        encode(field("dbname").unwrap_or_else(|| "postgres".into())),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_rds_secret_becomes_a_url_with_an_escaped_password() {
        let url = database_url(r#"{"username": "app", "password": "p@ss:w/rd", "host": "proxy.example", "port": 5432, "dbname": "aitasks"}"#).unwrap();
        assert_eq!(url, "postgres://app:p%40ss%3Aw%2Frd@proxy.example:5432/aitasks?sslmode=require");
        assert!(database_url(r#"{"username": "app"}"#).is_err());
    }

    #[test]
    fn a_credential_is_a_plain_string_or_json_with_its_field() {
        assert_eq!(secret_text(" sk-1\n".into(), "apiKey"), "sk-1");
        assert_eq!(secret_text(r#"{"apiKey": "sk-2"}"#.into(), "apiKey"), "sk-2");
        assert_eq!(secret_text(r#"{"value": "hv-3"}"#.into(), "value"), "hv-3");
        assert_eq!(secret_text(r#"{"apiKey": "sk-2"}"#.into(), "value"), r#"{"apiKey": "sk-2"}"#);
    }
}
