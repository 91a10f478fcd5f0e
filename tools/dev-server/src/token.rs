//! `aitasks-dev-server token [APP]` (`make token`): a token this dev server accepts, for the
//! console's sign-in, the CLI (`AITASKS_TOKEN`) or curl.

use serde_json::json;

/// How long a printed token is good for.
const VALID_SECONDS: u64 = 12 * 3600;

/// A token for tenant `app`, signed with `secret`, valid for [`VALID_SECONDS`].
pub(crate) fn sign(secret: &str, app: &str) -> Result<String, aitasks_dev_tokens::Error> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    let key = aitasks_dev_tokens::Hs256Key::new(secret.as_bytes())?;
    key.sign(&json!({"app_id": app, "sub": "console", "iat": now, "exp": now + VALID_SECONDS}))
}
