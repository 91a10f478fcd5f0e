//! Dev tokens: HS256 JWTs signed with a shared secret (`AITASK_DEV_JWT_SECRET` on the dev
//! server), checked as the HTTP API's JWT authorizer would: signature, `exp` (required), `nbf`,
//! a clock-skew leeway. Only the dev server, the demo and the tests use them; the deployed stack
//! has API Gateway check its tokens.
//!
//! `jsonwebtoken` parses and validates; the HMAC comes from [`provider`], a backend of our own
//! on RustCrypto's `hmac` and `sha2` (already in every function binary, through the AWS request
//! signer and the Postgres driver). jsonwebtoken's own `rust_crypto` backend would link its RSA
//! (RUSTSEC-2023-0071, no fixed version) and elliptic-curve stacks for an algorithm we never
//! accept, and its `aws_lc_rs` backend a second crypto library.

mod provider;

use jsonwebtoken::{decode, encode, Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::Serialize;
use serde_json::{Map, Value};

pub use jsonwebtoken::errors::Error;

/// One shared secret, for signing and for checking.
pub struct Hs256Key {
    encoding: EncodingKey,
    decoding: DecodingKey,
}

impl Hs256Key {
    pub fn new(secret: &[u8]) -> Result<Hs256Key, Error> {
        provider::install();
        Ok(Hs256Key {
            encoding: EncodingKey::from_secret(secret)?,
            decoding: DecodingKey::from_secret(secret)?,
        })
    }

    /// `claims` as a signed token (header `{"typ":"JWT","alg":"HS256"}`).
    pub fn sign(&self, claims: &impl Serialize) -> Result<String, Error> {
        encode(&Header::new(Algorithm::HS256), claims, &self.encoding)
    }

    /// The claims of a valid token: signed with this key by HS256 (`alg: none` and every other
    /// algorithm are refused), with an `exp` that has not passed and any `nbf` reached, both
    /// within `leeway_seconds`. No audience is checked.
    pub fn verify(&self, token: &str, leeway_seconds: u64) -> Result<Map<String, Value>, Error> {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.leeway = leeway_seconds;
        validation.validate_nbf = true;
        validation.validate_aud = false;
        validation.set_required_spec_claims(&["exp"]);
        Ok(decode::<Map<String, Value>>(token, &self.decoding, &validation)?.claims)
    }
}

#[cfg(test)]
mod tests;
