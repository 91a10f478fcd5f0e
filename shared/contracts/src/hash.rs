//! Canonical JSON (RFC 8785) and SHA-256: equal values hash equally whatever their key order
//! or number spelling.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// RFC 8785 canonical JSON text of a value.
pub fn canonical_json(value: &Value) -> String {
    // A serde_json::Value always serializes (string keys, finite numbers); the fallback is
    // unreachable and still deterministic.
    serde_json_canonicalizer::to_string(value).unwrap_or_else(|_| value.to_string())
}

/// Lower-case hex SHA-256 of the canonical JSON of a value.
pub fn canonical_hash(value: &Value) -> String {
    hex::encode(Sha256::digest(canonical_json(value).as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stored request hashes must not move when the SHA-256 crate does: a known answer
    /// (`printf '{"a":1,"b":[true,null]}' | sha256sum`).
    #[test]
    fn the_hash_is_plain_sha256_of_the_canonical_text() {
        let value = serde_json::json!({"b": [true, null], "a": 1.0});
        assert_eq!(canonical_json(&value), r#"{"a":1,"b":[true,null]}"#);
        assert_eq!(
            canonical_hash(&value),
            "1cc69c7fa23616ca2ec3ee70d24390a6225c8832db8a4c814c7e0e7f942f8668"
        );
    }
}
