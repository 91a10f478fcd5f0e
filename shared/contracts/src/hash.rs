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
