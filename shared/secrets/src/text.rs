//! What a secret's text means: an RDS-style JSON secret becomes a Postgres URL; a credential is a
//! plain string or JSON with the credential in one member.

use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};
use serde_json::Value;

use crate::SecretError;

/// A credential's secret: a plain string, or JSON with the credential in `field` (`apiKey` for
/// a provider key, `value` for a header's).
pub(crate) fn secret_text(text: String, field: &str) -> String {
    let value = match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => map.get(field).and_then(Value::as_str).map(str::to_owned).unwrap_or(text),
        _ => text,
    };
    value.trim().to_owned()
}

/// A Postgres URL from an RDS-style secret.
pub fn database_url(secret: &str) -> Result<String, SecretError> {
    let value: Value =
        serde_json::from_str(secret).map_err(|_| SecretError("the database secret is not JSON".into()))?;
    let field = |name: &str| {
        value
            .get(name)
            .and_then(|v| v.as_str().map(str::to_owned).or_else(|| v.as_u64().map(|n| n.to_string())))
    };
    let required =
        |name: &str| field(name).ok_or_else(|| SecretError(format!("the database secret has no {name}")));
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
