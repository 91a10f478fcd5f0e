//! Dev tokens: HS256 JWTs signed with `AITASK_DEV_JWT_SECRET`, checked as the HTTP API's JWT
//! authorizer would (signature, `exp`, `nbf`, at most 60 s of clock-skew leeway). The verified
//! claims become the request context's `authorizer.jwt.claims`.

use std::collections::HashMap;

use aitasks_dev_tokens::Hs256Key;
use serde_json::Value;

/// Clock skew allowed on `exp` and `nbf`.
const LEEWAY_SECONDS: u64 = 60;

pub(crate) struct DevAuthorizer {
    key: Hs256Key,
}

impl DevAuthorizer {
    pub(crate) fn new(secret: &str) -> Result<DevAuthorizer, aitasks_dev_tokens::Error> {
        Ok(DevAuthorizer { key: Hs256Key::new(secret.as_bytes())? })
    }

    /// The claims of a valid `Authorization: Bearer` token, as strings (as API Gateway passes
    /// them), or `None`. Only HS256: `alg: none` and every other algorithm are refused.
    pub(crate) fn verify(&self, authorization: Option<&str>) -> Option<HashMap<String, String>> {
        let token = authorization?.strip_prefix("Bearer ")?.trim();
        let claims = self.key.verify(token, LEEWAY_SECONDS).ok()?;
        Some(
            claims
                .into_iter()
                .map(|(name, value)| {
                    let text = match value {
                        Value::String(s) => s,
                        other => other.to_string(),
                    };
                    (name, text)
                })
                .collect(),
        )
    }
}
