//! Model profiles: which endpoint and model a `modelId` means. From `AITASK_MODELS` (JSON:
//! `{modelId: {"provider": "openai", "model", "baseUrl"?, "apiKeyEnv"?, ...}}`), with a
//! `default` profile that falls back to `OPENAI_BASE_URL` / `OPENAI_API_KEY` /
//! `AITASK_DEFAULT_MODEL`.

use std::collections::BTreeMap;
use std::time::Duration;

use aitasks_contracts::canonical_hash;
use serde_json::{json, Map, Value};

use crate::batch_settings::BatchJson;
pub use crate::batch_settings::{BatchSettings, MAX_BATCH_RECORDS, MAX_BATCH_WAIT_SECONDS};
use crate::credentials::{profile_key_variable, secret_headers, ApiKey, SecretHeader};
use crate::error::{ProfileError, ProviderError};
pub use crate::prices::Prices;
pub use crate::settings::{CallSettings, TokenLimitField};

pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com/v1";
pub const DEFAULT_MODEL: &str = "gpt-4o-mini";
const DEFAULT_KEY_ENV: &str = "OPENAI_API_KEY";

/// One resolved model configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelProfile {
    pub id: String,
    pub provider: String,
    pub model: String,
    pub base_url: String,
    pub api_key: Option<ApiKey>,
    /// `apiKeySecretArn`: the Secrets Manager secret holding this profile's key.
    pub key_secret_arn: Option<String>,
    /// `secretHeaders`: headers whose values are credentials, each from a secret. Not part of
    /// the configuration hash.
    pub secret_headers: Vec<SecretHeader>,
    /// Other settings from `AITASK_MODELS`, part of the configuration hash.
    pub settings: Map<String, Value>,
    /// What the model costs, when the profile says (`"prices"`): for the estimated-cost
    /// metric only, so not part of the configuration hash (a price changes no answer).
    pub prices: Option<Prices>,
    /// What every call sends besides the request (temperature, token field, seed, ...): read
    /// from `settings`, which the configuration hash covers.
    pub call: CallSettings,
    /// How long one call may take (`timeoutMs`); the client's default when `None`. Not part of
    /// the hash: it changes whether an answer comes, not which.
    pub timeout: Option<Duration>,
    /// Limits every worker instance respects together (`limits`), held in Postgres. Not part of
    /// the hash either.
    pub limits: Option<CallLimits>,
    /// `batch`: deferred tasks of this profile go through the provider's batch API
    /// ([`crate::BatchClient`]). Not part of the hash: it changes when an answer comes and what
    /// it costs, not which. `None`: deferred tasks of this profile run on-demand.
    pub batch: Option<BatchSettings>,
    /// Whether an on-demand call reads the answer as a stream (`"stream"`, default true; docs/api.md,
    /// "Live output"). Not part of the hash: a streamed answer is assembled into the same one.
    pub stream: bool,
}

/// A profile's provider-side limits: calls started and tokens used per UTC minute, calls in
/// flight at once. Each is optional.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CallLimits {
    pub requests_per_minute: Option<u32>,
    pub tokens_per_minute: Option<u64>,
    pub concurrent: Option<u32>,
}

impl ModelProfile {
    /// The `batch` settings when batching is enabled (`None`: deferred tasks run on-demand).
    pub fn batching(&self) -> Option<&BatchSettings> {
        self.batch.as_ref().filter(|batch| batch.enabled)
    }

    /// The estimated cost of a call at the profile's prices, when it has them.
    pub fn cost(&self, input_tokens: u64, output_tokens: u64) -> Option<f64> {
        self.prices.map(|prices| prices.cost(input_tokens, output_tokens))
    }

    /// The estimated cost of a batch line: the batch prices, else the profile's.
    pub fn batch_cost(&self, input_tokens: u64, output_tokens: u64) -> Option<f64> {
        let prices = self.batch.and_then(|batch| batch.prices).or(self.prices);
        prices.map(|prices| prices.cost(input_tokens, output_tokens))
    }

    /// Which JSON Schema keywords the endpoint takes: the `schemaDialect` setting (`"strict"`,
    /// the default, for OpenAI structured outputs; `"full"` for endpoints such as llama.cpp that
    /// enforce the whole schema while generating).
    pub fn schema_dialect(&self) -> aitasks_contracts::SchemaDialect {
        match self.settings.get("schemaDialect").and_then(Value::as_str) {
            Some("full") => aitasks_contracts::SchemaDialect::Full,
            _ => aitasks_contracts::SchemaDialect::Strict,
        }
    }

    /// A secret this profile names that gave nothing (`apiKeySecretArn`, `secretHeaders`), said
    /// as a cold start reports it: process-task, which reads them, refuses to start then.
    pub fn unread_secret(&self) -> Option<String> {
        if let (Some(arn), None) = (&self.key_secret_arn, &self.api_key) {
            return Some(format!("profile {:?}: its key secret {arn} gave no key", self.id));
        }
        self.secret_headers.iter().find(|header| header.value.is_none()).map(|header| {
            format!(
                "profile {:?}: the secret {} of header {:?} gave no value",
                self.id, header.secret_arn, header.name
            )
        })
    }

    /// The model reference stored on a task (no secrets).
    pub fn model_ref(&self) -> Value {
        json!({"provider": self.provider, "model": self.model, "baseUrl": self.base_url})
    }

    /// Hash of everything that can change an answer (provider, endpoint, model, settings);
    /// secrets and the name of their variable are left out. Part of the result-cache key.
    pub fn config_hash(&self) -> String {
        canonical_hash(&json!({
            "provider": self.provider,
            "model": self.model,
            "baseUrl": self.base_url,
            "settings": self.settings,
        }))
    }
}

/// Every configured model, by id.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelProfiles {
    profiles: BTreeMap<String, ModelProfile>,
}

impl ModelProfiles {
    /// Read profiles through `lookup` (the environment, or a map in tests).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<ModelProfiles, ProfileError> {
        let mut profiles = BTreeMap::new();
        if let Some(text) = lookup("AITASK_MODELS") {
            let parsed: Value =
                serde_json::from_str(&text).map_err(|e| ProfileError(format!("not JSON: {e}")))?;
            let Value::Object(entries) = parsed else {
                return Err(ProfileError("must be a JSON object of profiles".into()));
            };
            for (id, entry) in entries {
                profiles.insert(id.clone(), profile_from_json(&id, entry, &lookup)?);
            }
        }
        for profile in profiles.values() {
            if let Some(missing) =
                profile.call.fallbacks.iter().find(|f| !profiles.contains_key(*f) && *f != "default")
            {
                return Err(ProfileError(format!(
                    "profile {:?}: fallback {missing:?} is not a profile",
                    profile.id
                )));
            }
        }
        if !profiles.contains_key("default") {
            profiles.insert(
                "default".to_owned(),
                ModelProfile {
                    id: "default".to_owned(),
                    provider: "openai".to_owned(),
                    model: lookup("AITASK_DEFAULT_MODEL").unwrap_or_else(|| DEFAULT_MODEL.to_owned()),
                    base_url: trim_base(
                        lookup("OPENAI_BASE_URL").unwrap_or_else(|| DEFAULT_BASE_URL.to_owned()),
                    ),
                    api_key: lookup(DEFAULT_KEY_ENV).map(ApiKey::new),
                    key_secret_arn: None,
                    secret_headers: Vec::new(),
                    // AITASK_SCHEMA_DIALECT=full: the default endpoint enforces full JSON Schema.
                    settings: lookup("AITASK_SCHEMA_DIALECT")
                        .map(|dialect| Map::from_iter([("schemaDialect".to_owned(), Value::String(dialect))]))
                        .unwrap_or_default(),
                    prices: None,
                    call: CallSettings::default(),
                    timeout: None,
                    limits: None,
                    batch: None,
                    stream: true,
                },
            );
        }
        Ok(ModelProfiles { profiles })
    }

    /// The profile of a model id, or [`ProviderError::ModelUnknown`] (`AI_MODEL_UNKNOWN`).
    pub fn resolve(&self, model_id: &str) -> Result<&ModelProfile, ProviderError> {
        self.profiles.get(model_id).ok_or_else(|| ProviderError::ModelUnknown(model_id.to_owned()))
    }

    /// The profile of `model_id`, then its fallbacks in order: what one attempt may try.
    pub fn chain(&self, model_id: &str) -> Result<Vec<&ModelProfile>, ProviderError> {
        let first = self.resolve(model_id)?;
        let mut chain = vec![first];
        for fallback in &first.call.fallbacks {
            chain.push(self.resolve(fallback)?);
        }
        Ok(chain)
    }

    /// Whether any profile calls `provider` (`"bedrock"`: the worker then needs a Bedrock client).
    pub fn uses_provider(&self, provider: &str) -> bool {
        self.profiles.values().any(|p| p.provider == provider)
    }

    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.profiles.keys().map(String::as_str)
    }
}

/// A profile field read into its own type (`prices`, `limits`), taken out of the settings.
fn typed<T: serde::de::DeserializeOwned>(
    fields: &mut Map<String, Value>,
    id: &str,
    key: &str,
    shape: &str,
) -> Result<Option<T>, ProfileError> {
    match fields.remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => serde_json::from_value(value)
            .map(Some)
            .map_err(|e| ProfileError(format!("profile {id:?}: {key} must be {shape}: {e}"))),
    }
}

fn trim_base(url: String) -> String {
    url.trim_end_matches('/').to_owned()
}

fn profile_from_json(
    id: &str,
    entry: Value,
    lookup: &impl Fn(&str) -> Option<String>,
) -> Result<ModelProfile, ProfileError> {
    let Value::Object(mut fields) = entry else {
        return Err(ProfileError(format!("profile {id:?} must be an object")));
    };
    let mut text = |key: &str| -> Result<Option<String>, ProfileError> {
        match fields.remove(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if !s.is_empty() => Ok(Some(s)),
            Some(_) => Err(ProfileError(format!("profile {id:?}: {key} must be a non-empty string"))),
        }
    };
    let provider = text("provider")?.unwrap_or_else(|| "openai".to_owned());
    let (default_base, default_key_env) = match provider.as_str() {
        "openai" => (lookup("OPENAI_BASE_URL").unwrap_or_else(|| DEFAULT_BASE_URL.to_owned()), DEFAULT_KEY_ENV),
        "anthropic" => (ANTHROPIC_BASE_URL.to_owned(), "ANTHROPIC_API_KEY"),
        // The SDK's own endpoint for the function's region (AWS_ENDPOINT_URL_BEDROCK_RUNTIME
        // overrides it); credentials come from the role, never a key.
        "bedrock" => ("bedrock-runtime".to_owned(), ""),
        _ => {
            return Err(ProfileError(format!(
                "profile {id:?}: provider {provider:?} is not supported (\"openai\" for any OpenAI-compatible endpoint, \"anthropic\" or \"bedrock\")"
            )))
        }
    };
    let model = text("model")?.ok_or_else(|| ProfileError(format!("profile {id:?}: model is required")))?;
    let base_url = text("baseUrl")?.unwrap_or(default_base);
    let key_env = text("apiKeyEnv")?.unwrap_or_else(|| default_key_env.to_owned());
    // A key of its own in Secrets Manager: process-task reads it at cold start into
    // `profile_key_variable(id)` (aitasks_runtime::secrets); the ARN is not configuration.
    let key_secret = text("apiKeySecretArn")?;
    let timeout = match fields.remove("timeoutMs") {
        None | Some(Value::Null) => None,
        Some(value) => {
            Some(Duration::from_millis(value.as_u64().filter(|ms| *ms > 0).ok_or_else(|| {
                ProfileError(format!("profile {id:?}: timeoutMs must be a positive integer"))
            })?))
        }
    };
    let stream = match fields.remove("stream") {
        None | Some(Value::Null) => true,
        Some(Value::Bool(stream)) => stream,
        Some(_) => return Err(ProfileError(format!("profile {id:?}: stream must be true or false"))),
    };
    let prices: Option<Prices> = typed(&mut fields, id, "prices", "{inputPerMillion, outputPerMillion}")?;
    if prices.is_some_and(|p| !(p.input_per_million >= 0.0 && p.output_per_million >= 0.0)) {
        return Err(ProfileError(format!("profile {id:?}: prices must not be negative")));
    }
    let limits: Option<CallLimits> = typed(
        &mut fields,
        id,
        "limits",
        "{requestsPerMinute?, tokensPerMinute?, concurrent?} of positive integers",
    )?;
    let limits = match limits {
        None => None,
        Some(limits) => {
            let zero = [
                limits.requests_per_minute.map(u64::from),
                limits.tokens_per_minute,
                limits.concurrent.map(u64::from),
            ]
            .contains(&Some(0));
            if zero
                || i32::try_from(limits.requests_per_minute.unwrap_or(0)).is_err()
                || i32::try_from(limits.concurrent.unwrap_or(0)).is_err()
                || i64::try_from(limits.tokens_per_minute.unwrap_or(0)).is_err()
            {
                return Err(ProfileError(format!("profile {id:?}: limits must be positive integers")));
            }
            Some(limits)
        }
    };
    let batch = match typed::<BatchJson>(
        &mut fields,
        id,
        "batch",
        "{enabled?, maxRecords?, maxWaitSeconds?, minRecords?, prices?}",
    )? {
        None => None,
        Some(json) => Some(BatchSettings::from_json(id, &provider, json)?),
    };
    // Taken out before the settings are read: they are credentials, not configuration.
    let secret_headers = {
        let plain: Vec<String> = fields
            .get("headers")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(n, _)| n.clone())
            .collect();
        secret_headers(id, &mut fields, &plain, lookup)?
    };
    let call = CallSettings::parse(id, &fields)?;
    Ok(ModelProfile {
        secret_headers,
        prices,
        call,
        timeout,
        limits,
        batch,
        stream,
        id: id.to_owned(),
        provider,
        model,
        base_url: trim_base(base_url),
        api_key: match &key_secret {
            Some(_) => lookup(&profile_key_variable(id)).map(ApiKey::new),
            None => lookup(&key_env).map(ApiKey::new),
        },
        key_secret_arn: key_secret,
        settings: fields,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::credentials::profile_key_secrets;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> =
            pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn the_default_profile_falls_back_to_the_openai_variables() {
        let profiles = ModelProfiles::from_lookup(env(&[
            ("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1/"),
            ("OPENAI_API_KEY", "sk-secret"),
            ("AITASK_DEFAULT_MODEL", "smollm2"),
        ]))
        .unwrap();
        let default = profiles.resolve("default").unwrap();
        assert_eq!(default.base_url, "http://127.0.0.1:8080/v1");
        assert_eq!(default.model, "smollm2");
        assert_eq!(default.api_key.as_ref().map(ApiKey::expose), Some("sk-secret"));
        assert!(!format!("{default:?}").contains("sk-secret"), "Debug never shows the key");
        assert_eq!(profiles.resolve("gpt-x").unwrap_err().code().as_str(), "AI_MODEL_UNKNOWN");
    }

    #[test]
    fn profiles_come_from_aitask_models_and_hash_without_secrets() {
        let models = r#"{"fast": {"provider": "openai", "model": "m1", "baseUrl": "http://a/v1", "apiKeyEnv": "FAST_KEY", "seed": 7},
                         "default": {"model": "m2"}}"#;
        let profiles =
            ModelProfiles::from_lookup(env(&[("AITASK_MODELS", models), ("FAST_KEY", "k1")])).unwrap();
        let fast = profiles.resolve("fast").unwrap();
        assert_eq!(fast.api_key.as_ref().map(ApiKey::expose), Some("k1"));
        assert_eq!(fast.model_ref(), json!({"provider": "openai", "model": "m1", "baseUrl": "http://a/v1"}));
        assert_eq!(profiles.resolve("default").unwrap().model, "m2");

        let other_key =
            ModelProfiles::from_lookup(env(&[("AITASK_MODELS", models), ("FAST_KEY", "k2")])).unwrap();
        assert_eq!(
            other_key.resolve("fast").unwrap().config_hash(),
            fast.config_hash(),
            "keys are not configuration"
        );
        let other_seed = models.replace("\"seed\": 7", "\"seed\": 8");
        let changed = ModelProfiles::from_lookup(env(&[("AITASK_MODELS", &other_seed)])).unwrap();
        assert_ne!(
            changed.resolve("fast").unwrap().config_hash(),
            fast.config_hash(),
            "settings are configuration"
        );
        assert_eq!(fast.config_hash().len(), 64);
    }

    #[test]
    fn prices_give_the_estimated_cost_and_are_not_configuration() {
        let priced =
            r#"{"m": {"model": "m1", "prices": {"inputPerMillion": 0.15, "outputPerMillion": 0.6}}}"#;
        let plain = r#"{"m": {"model": "m1"}}"#;
        let priced = ModelProfiles::from_lookup(env(&[("AITASK_MODELS", priced)])).unwrap();
        let plain = ModelProfiles::from_lookup(env(&[("AITASK_MODELS", plain)])).unwrap();
        let (priced, plain) = (priced.resolve("m").unwrap(), plain.resolve("m").unwrap());
        let prices = priced.prices.expect("prices read");
        assert!((prices.cost(1_000_000, 2_000_000) - 1.35).abs() < 1e-9);
        assert!(priced.settings.is_empty(), "prices are not a provider setting");
        assert_eq!(priced.config_hash(), plain.config_hash(), "a price changes no answer");
        assert_eq!(plain.prices, None);
    }

    #[test]
    fn a_profile_s_own_key_secret_is_found_and_its_key_used() {
        let models = r#"{"own": {"model": "m", "apiKeySecretArn": "arn:aws:secretsmanager:r:1:secret:k"}, "plain": {"model": "m"}}"#;
        assert_eq!(
            profile_key_secrets(models),
            vec![("own".to_owned(), "arn:aws:secretsmanager:r:1:secret:k".to_owned())]
        );
        let variable = profile_key_variable("own");
        let profiles = ModelProfiles::from_lookup(env(&[
            ("AITASK_MODELS", models),
            (variable.as_str(), "sk-own"),
            ("OPENAI_API_KEY", "sk-shared"),
        ]))
        .unwrap();
        let own = profiles.resolve("own").unwrap();
        assert_eq!(
            own.api_key.as_ref().map(ApiKey::expose),
            Some("sk-own"),
            "its secret's key, not the shared one"
        );
        assert_eq!(
            profiles.resolve("plain").unwrap().api_key.as_ref().map(ApiKey::expose),
            Some("sk-shared")
        );
        let without = models.replace(r#", "apiKeySecretArn": "arn:aws:secretsmanager:r:1:secret:k""#, "");
        let other = ModelProfiles::from_lookup(env(&[("AITASK_MODELS", &without)])).unwrap();
        assert_eq!(
            other.resolve("own").unwrap().config_hash(),
            own.config_hash(),
            "the ARN is not configuration"
        );
    }

    #[test]
    fn bad_profiles_are_refused() {
        for models in [
            r#"[1]"#,
            r#"{"x": {"provider": "cohere", "model": "m"}}"#,
            r#"{"x": {}}"#,
            "not json",
            r#"{"x": {"model": "m", "prices": {"inputPerMillion": -1, "outputPerMillion": 0}}}"#,
            r#"{"x": {"model": "m", "prices": {"input": 1}}}"#,
        ] {
            assert!(ModelProfiles::from_lookup(env(&[("AITASK_MODELS", models)])).is_err(), "{models}");
        }
    }
}
