//! Dev tokens: HS256 JWTs signed with `AITASK_DEV_JWT_SECRET`, checked as the HTTP API's JWT
//! authorizer would (signature, `exp`, `nbf`, at most 60 s of clock-skew leeway). The verified
//! claims become the request context's `authorizer.jwt.claims`.

use std::collections::HashMap;

use jsonwebtoken::{decode, Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};

pub(crate) struct DevAuthorizer {
    key: DecodingKey,
    validation: Validation,
}

impl DevAuthorizer {
    pub(crate) fn new(secret: &str) -> Result<DevAuthorizer, jsonwebtoken::errors::Error> {
        // Only HS256: `alg: none` and every other algorithm are refused.
        let mut validation = Validation::new(Algorithm::HS256);
        validation.leeway = 60;
        validation.validate_nbf = true;
        validation.validate_aud = false;
        validation.set_required_spec_claims(&["exp"]);
        Ok(DevAuthorizer { key: DecodingKey::from_secret(secret.as_bytes())?, validation })
    }

    /// The claims of a valid `Authorization: Bearer` token, as strings (as API Gateway passes
    /// them), or `None`.
    pub(crate) fn verify(&self, authorization: Option<&str>) -> Option<HashMap<String, String>> {
        let token = authorization?.strip_prefix("Bearer ")?.trim();
        let data = decode::<Map<String, Value>>(token, &self.key, &self.validation).ok()?;
        Some(
            data.claims
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
