//! Dev tokens: HS256 JWTs as the dev server (and, with other keys, API Gateway) expects them.

use aitasks_dev_tokens::Hs256Key;
use serde_json::{json, Value};

/// The dev server's default secret (`AITASK_DEV_JWT_SECRET`).
pub const DEV_SECRET: &str = "dev-secret";

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// A valid token for an application, good for an hour.
pub fn dev_token(app_id: &str) -> String {
    token_with(DEV_SECRET, json!({"app_id": app_id, "sub": "tester", "exp": now() + 3600}))
}

/// A token with any claims, signed with `secret`. `exp`/`nbf` given as offsets from now in
/// seconds under the keys `expIn`/`nbfIn` are turned into timestamps.
pub fn token_with(secret: &str, mut claims: Value) -> String {
    for (offset, claim) in [("expIn", "exp"), ("nbfIn", "nbf")] {
        if let Some(seconds) = claims.get(offset).and_then(Value::as_i64) {
            claims[claim] = json!(now() as i64 + seconds);
            if let Some(map) = claims.as_object_mut() {
                map.remove(offset);
            }
        }
    }
    let key = Hs256Key::new(secret.as_bytes()).expect("an HMAC key from any bytes");
    key.sign(&claims).expect("HS256 signing cannot fail")
}
