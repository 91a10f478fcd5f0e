//! What a profile authenticates with, kept out of plain configuration: its API key, and the
//! headers whose values are credentials (`secretHeaders`). `AITASK_MODELS` is plain text on
//! every function, so it names secrets (by ARN) and never holds one; process-task reads them at
//! cold start (aitasks_runtime::secrets) into variables of their own, which the lookup then
//! answers. A header in plain `headers` whose name says it is a credential is refused.

use std::fmt;

use serde_json::{Map, Value};

use crate::error::ProfileError;

/// An API key, or another credential (a secret header's value). Never printed: `Debug` and
/// `Display` show `***`.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> ApiKey {
        ApiKey(key.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// A header sent with every call of a profile whose value is a credential, read from a Secrets
/// Manager secret (`secretHeaders: {"x-api-key": "arn:aws:secretsmanager:…"}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretHeader {
    pub name: String,
    pub secret_arn: String,
    /// The value once read (process-task, at cold start); `None` in the other functions.
    pub value: Option<ApiKey>,
}

/// Parts of a header name that say its value is a credential. A name holding one of them (in
/// any case) is refused in plain `headers`: `Authorization`, `Proxy-Authorization`, `Cookie`,
/// `Set-Cookie`, `api-key`, `x-api-key`, `x-auth-token`, `X-Amz-Security-Token`, … A header so
/// named that is not a credential costs only a secret.
pub const CREDENTIAL_HEADER_WORDS: &[&str] =
    &["auth", "cookie", "credential", "key", "passw", "secret", "session", "signature", "token"];

/// Refuse a plain header whose name says it carries a credential, saying how to send it instead.
pub(crate) fn refuse_credential_header(profile: &str, name: &str) -> Result<(), ProfileError> {
    let lower = name.to_ascii_lowercase();
    match CREDENTIAL_HEADER_WORDS.iter().find(|word| lower.contains(*word)) {
        None => Ok(()),
        Some(word) => Err(ProfileError(format!(
            "profile {profile:?}: header {name:?} looks like a credential (its name contains {word:?}), \
             and headers are plain configuration on every function; put its value in a Secrets \
             Manager secret and name it in secretHeaders instead: \"secretHeaders\": {{{name:?}: \
             \"arn:aws:secretsmanager:…\"}} (and list the ARN in the template's ProfileKeySecretArns)"
        ))),
    }
}

/// The variable a profile's key read from its own secret (`apiKeySecretArn`) is looked up by.
pub fn profile_key_variable(profile_id: &str) -> String {
    format!("AITASK_PROFILE_KEY:{profile_id}")
}

/// The variable the value of a profile's secret header is looked up by.
pub fn profile_header_variable(profile_id: &str, header: &str) -> String {
    format!("AITASK_PROFILE_HEADER:{profile_id}:{}", header.to_ascii_lowercase())
}

/// The `apiKeySecretArn` of every profile in an `AITASK_MODELS` text, by profile id (nothing for
/// text that does not parse: reading the profiles reports that).
pub fn profile_key_secrets(models: &str) -> Vec<(String, String)> {
    let Ok(Value::Object(entries)) = serde_json::from_str::<Value>(models) else { return Vec::new() };
    entries
        .iter()
        .filter_map(|(id, entry)| entry["apiKeySecretArn"].as_str().map(|arn| (id.clone(), arn.to_owned())))
        .collect()
}

/// The secret of every profile's `secretHeaders` in an `AITASK_MODELS` text, by the variable its
/// value is looked up by ([`profile_header_variable`]).
pub fn profile_header_secrets(models: &str) -> Vec<(String, String)> {
    let Ok(Value::Object(entries)) = serde_json::from_str::<Value>(models) else { return Vec::new() };
    let mut secrets = Vec::new();
    for (id, entry) in &entries {
        for (name, arn) in entry["secretHeaders"].as_object().into_iter().flatten() {
            if let Some(arn) = arn.as_str() {
                secrets.push((profile_header_variable(id, name), arn.to_owned()));
            }
        }
    }
    secrets
}

/// A profile's `secretHeaders`, taken out of its fields (they are not configuration: the hash
/// leaves them out), with each value that `lookup` has. `plain` is the profile's `headers`,
/// which may not name the same header.
pub(crate) fn secret_headers(
    profile: &str,
    fields: &mut Map<String, Value>,
    plain: &[String],
    lookup: &impl Fn(&str) -> Option<String>,
) -> Result<Vec<SecretHeader>, ProfileError> {
    let bad = |what: String| ProfileError(format!("profile {profile:?}: secretHeaders {what}"));
    let entries = match fields.remove("secretHeaders") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Object(entries)) => entries,
        Some(_) => return Err(bad("must be an object of header names and secret ARNs".into())),
    };
    let mut headers: Vec<SecretHeader> = Vec::with_capacity(entries.len());
    for (name, arn) in entries {
        if reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err() {
            return Err(bad(format!("names {name:?}, which is not a valid header name")));
        }
        let Some(arn) = arn.as_str().filter(|arn| !arn.is_empty()) else {
            return Err(bad(format!("{name:?} must be a secret's ARN")));
        };
        let mut taken = plain.iter().chain(headers.iter().map(|h| &h.name));
        if taken.any(|other| other.eq_ignore_ascii_case(&name)) {
            return Err(bad(format!("names {name:?} twice, or a header of headers too")));
        }
        let value = lookup(&profile_header_variable(profile, &name));
        if value.as_deref().is_some_and(|v| reqwest::header::HeaderValue::from_str(v).is_err()) {
            // Never the value itself: it is a credential.
            return Err(bad(format!(
                "{name:?}: its secret {arn} does not hold a valid header value (a line break?)"
            )));
        }
        headers.push(SecretHeader { name, secret_arn: arn.to_owned(), value: value.map(ApiKey) });
    }
    Ok(headers)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn credential_header_names_are_refused_in_any_case_with_the_way_out() {
        for name in [
            "Authorization",
            "proxy-authorization",
            "Cookie",
            "Set-Cookie",
            "api-key",
            "X-API-KEY",
            "x-auth-token",
            "X-Amz-Security-Token",
            "Helicone-Auth",
        ] {
            let error = refuse_credential_header("p", name).unwrap_err().to_string();
            assert!(error.contains(&format!("{name:?}")) && error.contains("secretHeaders"), "{error}");
        }
        for name in ["anthropic-beta", "OpenAI-Organization", "openai-project", "HTTP-Referer", "X-Title"] {
            assert!(refuse_credential_header("p", name).is_ok(), "{name}");
        }
    }

    #[test]
    fn secret_headers_are_found_read_and_checked() {
        let models = r#"{"p": {"model": "m", "secretHeaders": {"X-Api-Key": "arn:k"}}, "q": {"model": "m"}}"#;
        assert_eq!(
            profile_header_secrets(models),
            vec![("AITASK_PROFILE_HEADER:p:x-api-key".to_owned(), "arn:k".to_owned())]
        );
        let read = |fields: Value, value: Option<&str>| {
            let mut fields = fields.as_object().cloned().unwrap_or_default();
            let plain = vec!["anthropic-beta".to_owned()];
            let value = value.map(str::to_owned);
            secret_headers("p", &mut fields, &plain, &|name| {
                (name == "AITASK_PROFILE_HEADER:p:x-api-key").then(|| value.clone()).flatten()
            })
        };
        let headers = read(json!({"secretHeaders": {"X-Api-Key": "arn:k"}}), Some("v-1")).unwrap();
        assert_eq!(headers[0].value.as_ref().map(ApiKey::expose), Some("v-1"));
        assert!(!format!("{headers:?}").contains("v-1"), "Debug never shows the value");
        assert_eq!(read(json!({"secretHeaders": {"X-Api-Key": "arn:k"}}), None).unwrap()[0].value, None);
        for (fields, value) in [
            (json!({"secretHeaders": ["arn:k"]}), None),
            (json!({"secretHeaders": {"bad name": "arn:k"}}), None),
            (json!({"secretHeaders": {"x-api-key": ""}}), None),
            (json!({"secretHeaders": {"Anthropic-Beta": "arn:k"}}), None),
            (json!({"secretHeaders": {"x-api-key": "arn:k"}}), Some("hv\n-broken-7")),
        ] {
            let refused = read(fields.clone(), value);
            assert!(refused.is_err(), "{fields}");
            assert!(!refused.unwrap_err().to_string().contains("broken-7"), "the value is never shown");
        }
    }
}
