//! What a profile's settings send to the provider with every call: the per-profile part of
//! `AITASK_MODELS` beyond provider, model, endpoint and key. Every setting here changes what
//! the model is asked, so every one is part of the configuration hash; an unknown name is
//! refused (a misspelt `temprature` would otherwise be hashed and silently never sent).

use serde_json::{Map, Value};

use crate::credentials::refuse_credential_header;
use crate::error::ProfileError;

/// Which body field carries the output-token cap. OpenAI's reasoning models refuse
/// `max_tokens` (and `temperature`) and take `max_completion_tokens`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenLimitField {
    MaxTokens,
    MaxCompletionTokens,
}

impl TokenLimitField {
    pub fn as_str(self) -> &'static str {
        match self {
            TokenLimitField::MaxTokens => "max_tokens",
            TokenLimitField::MaxCompletionTokens => "max_completion_tokens",
        }
    }
}

/// The settings sent with each call.
#[derive(Debug, Clone, PartialEq)]
pub struct CallSettings {
    /// `None` sends no temperature (`"temperature": null`, for models that refuse one); 0 when
    /// the profile does not say.
    pub temperature: Option<f64>,
    pub token_limit_field: TokenLimitField,
    /// A cap on output tokens below the per-kind one.
    pub max_output_tokens: Option<u32>,
    pub seed: Option<i64>,
    /// OpenAI's `reasoning_effort` (`low`, `medium`, `high`).
    pub reasoning_effort: Option<String>,
    /// Extra HTTP headers (a beta flag, an organization); never a credential (a name that looks
    /// like one is refused: `secretHeaders` carries those).
    pub headers: Vec<(String, String)>,
    /// Profiles tried in order, within the same attempt, when this one fails with a retryable
    /// error (`ModelProfiles` checks that each exists).
    pub fallbacks: Vec<String>,
}

impl Default for CallSettings {
    fn default() -> Self {
        CallSettings {
            temperature: Some(0.0),
            token_limit_field: TokenLimitField::MaxTokens,
            max_output_tokens: None,
            seed: None,
            reasoning_effort: None,
            headers: Vec::new(),
            fallbacks: Vec::new(),
        }
    }
}

const KNOWN: &[&str] = &[
    "schemaDialect",
    "temperature",
    "maxTokensField",
    "maxOutputTokens",
    "seed",
    "reasoningEffort",
    "headers",
    "fallbacks",
];

impl CallSettings {
    /// Read the settings of profile `id`.
    pub fn parse(id: &str, settings: &Map<String, Value>) -> Result<CallSettings, ProfileError> {
        let bad = |key: &str, what: &str| ProfileError(format!("profile {id:?}: {key} must be {what}"));
        if let Some(unknown) = settings.keys().find(|key| !KNOWN.contains(&key.as_str())) {
            return Err(ProfileError(format!(
                "profile {id:?}: unknown setting {unknown:?} (known: {}, and provider, model, baseUrl, apiKeyEnv, apiKeySecretArn, secretHeaders, prices, timeoutMs, limits, batch, stream)",
                KNOWN.join(", ")
            )));
        }
        let mut call = CallSettings::default();
        match settings.get("schemaDialect") {
            None => {}
            Some(Value::String(d)) if d == "strict" || d == "full" => {}
            Some(_) => return Err(bad("schemaDialect", "\"strict\" or \"full\"")),
        }
        match settings.get("temperature") {
            None => {}
            Some(Value::Null) => call.temperature = None,
            Some(value) => {
                let t = value.as_f64().filter(|t| (0.0..=2.0).contains(t));
                call.temperature =
                    Some(t.ok_or_else(|| bad("temperature", "a number from 0 to 2, or null"))?);
            }
        }
        call.token_limit_field = match settings.get("maxTokensField").map(Value::as_str) {
            None | Some(Some("max_tokens")) => TokenLimitField::MaxTokens,
            Some(Some("max_completion_tokens")) => TokenLimitField::MaxCompletionTokens,
            Some(_) => return Err(bad("maxTokensField", "\"max_tokens\" or \"max_completion_tokens\"")),
        };
        if let Some(value) = settings.get("maxOutputTokens") {
            let cap = value.as_u64().filter(|n| *n > 0).and_then(|n| u32::try_from(n).ok());
            call.max_output_tokens = Some(cap.ok_or_else(|| bad("maxOutputTokens", "a positive integer"))?);
        }
        if let Some(value) = settings.get("seed") {
            call.seed = Some(value.as_i64().ok_or_else(|| bad("seed", "an integer"))?);
        }
        if let Some(value) = settings.get("reasoningEffort") {
            let effort = value.as_str().filter(|e| !e.is_empty());
            call.reasoning_effort =
                Some(effort.ok_or_else(|| bad("reasoningEffort", "a string"))?.to_owned());
        }
        if let Some(value) = settings.get("headers") {
            let headers = value.as_object().ok_or_else(|| bad("headers", "an object of strings"))?;
            for (name, value) in headers {
                let valid = reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_ok()
                    && value.as_str().is_some_and(|v| reqwest::header::HeaderValue::from_str(v).is_ok());
                if !valid {
                    return Err(bad("headers", "an object of valid header names and string values"));
                }
                refuse_credential_header(id, name)?;
                call.headers.push((name.clone(), value.as_str().unwrap_or_default().to_owned()));
            }
        }
        if let Some(value) = settings.get("fallbacks") {
            let names = value.as_array().ok_or_else(|| bad("fallbacks", "a list of profile ids"))?;
            for name in names {
                let name = name.as_str().filter(|n| !n.is_empty() && *n != id);
                let name = name.ok_or_else(|| bad("fallbacks", "a list of other profiles' ids"))?;
                if !call.fallbacks.iter().any(|seen| seen == name) {
                    call.fallbacks.push(name.to_owned());
                }
            }
        }
        Ok(call)
    }

    /// The output-token cap for a request whose kind allows `kind_cap`.
    pub fn token_cap(&self, kind_cap: u32) -> u32 {
        self.max_output_tokens.map_or(kind_cap, |cap| cap.min(kind_cap))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(settings: Value) -> Result<CallSettings, ProfileError> {
        CallSettings::parse("p", settings.as_object().unwrap())
    }

    #[test]
    fn settings_are_read_with_their_defaults() {
        assert_eq!(parse(json!({})).unwrap(), CallSettings::default());
        let call = parse(json!({"temperature": null, "maxTokensField": "max_completion_tokens", "seed": 7,
            "reasoningEffort": "low", "maxOutputTokens": 100, "headers": {"anthropic-beta": "x"}}))
        .unwrap();
        assert_eq!(call.temperature, None);
        assert_eq!(call.token_limit_field.as_str(), "max_completion_tokens");
        assert_eq!((call.seed, call.reasoning_effort.as_deref()), (Some(7), Some("low")));
        assert_eq!((call.token_cap(4096), call.token_cap(50)), (100, 50));
        assert_eq!(call.headers, vec![("anthropic-beta".to_owned(), "x".to_owned())]);
    }

    #[test]
    fn unknown_and_mistyped_settings_are_refused() {
        for settings in [
            json!({"temprature": 0.2}),
            json!({"temperature": "hot"}),
            json!({"temperature": 3}),
            json!({"maxTokensField": "tokens"}),
            json!({"seed": 1.5}),
            json!({"maxOutputTokens": 0}),
            json!({"headers": {"bad header": "x"}}),
            json!({"headers": {"x-a": 1}}),
            json!({"headers": {"Authorization": "Bearer x"}}),
            json!({"schemaDialect": "loose"}),
            json!({"fallbacks": "b"}),
            json!({"fallbacks": ["p"]}),
            json!({"fallbacks": [1]}),
        ] {
            assert!(parse(settings.clone()).is_err(), "{settings}");
        }
    }
}
