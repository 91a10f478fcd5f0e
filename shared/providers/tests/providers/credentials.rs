//! A profile's credentials as `AITASK_MODELS` names them: credential-like headers refused in
//! plain configuration, `secretHeaders` read from the variables process-task fills from their
//! secrets, and neither part of the configuration hash.

use std::collections::HashMap;

use aitasks_providers::{ApiKey, ModelProfiles};
use serde_json::json;

fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    move |name| map.get(name).cloned()
}

#[test]
fn secret_headers_are_read_and_are_not_configuration() {
    let models = r#"{"p": {"model": "m", "headers": {"anthropic-beta": "b"}, "secretHeaders": {"x-api-key": "arn:h"}}}"#;
    let profiles = ModelProfiles::from_lookup(env(&[
        ("AITASK_MODELS", models),
        ("AITASK_PROFILE_HEADER:p:x-api-key", "hv-1"),
    ]))
    .unwrap();
    let p = profiles.resolve("p").unwrap();
    assert_eq!(p.secret_headers.len(), 1);
    assert_eq!(p.secret_headers[0].value.as_ref().map(ApiKey::expose), Some("hv-1"));
    assert_eq!(p.unread_secret(), None);
    assert!(!format!("{p:?}").contains("hv-1"), "Debug never shows the value");
    assert!(!p.settings.contains_key("secretHeaders"), "not a setting");
    let unread = ModelProfiles::from_lookup(env(&[("AITASK_MODELS", models)])).unwrap();
    let unread = unread.resolve("p").unwrap();
    assert_eq!(unread.config_hash(), p.config_hash(), "the value is not configuration");
    assert!(unread.unread_secret().is_some_and(|m| m.contains("arn:h") && m.contains("x-api-key")));
    let without = models.replace(r#", "secretHeaders": {"x-api-key": "arn:h"}"#, "");
    let without = ModelProfiles::from_lookup(env(&[("AITASK_MODELS", &without)])).unwrap();
    assert_eq!(without.resolve("p").unwrap().config_hash(), p.config_hash(), "nor is the ARN");
}

#[test]
fn credential_headers_in_plain_configuration_are_refused() {
    for (name, value) in [("Authorization", "Bearer bx-41"), ("x-api-key", "kv-41"), ("Cookie", "s=ck-41")] {
        let models = json!({"p": {"model": "m", "headers": {name: value}}}).to_string();
        let error = ModelProfiles::from_lookup(env(&[("AITASK_MODELS", &models)])).unwrap_err().to_string();
        assert!(error.contains(&format!("header {name:?}")) && error.contains("secretHeaders"), "{error}");
        assert!(!error.contains(value), "the value is not repeated: {error}");
    }
}
