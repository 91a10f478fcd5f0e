//! A jsonwebtoken crypto backend that knows HS256 and nothing else: RustCrypto's `Hmac<Sha256>`,
//! whose `verify_slice` compares in constant time. Any other algorithm is refused here, even
//! before the `Validation` (which allows HS256 alone) gets to it.

use hmac::{Hmac, KeyInit, Mac};
use jsonwebtoken::crypto::{CryptoProvider, JwtSigner, JwtVerifier, KeyUtils};
use jsonwebtoken::errors::{Error, ErrorKind};
use jsonwebtoken::signature::{self, Signer, Verifier};
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey, EncodingKey};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

static HS256_ONLY: CryptoProvider = CryptoProvider {
    signer_factory: signer,
    verifier_factory: verifier,
    // JWK helpers (RSA and EC key components, thumbprints): never used for HS256 tokens.
    key_utils: KeyUtils::new_unimplemented(),
};

/// Makes [`HS256_ONLY`] jsonwebtoken's provider for this process. Idempotent: the first call
/// installs it, later ones find it installed.
pub(crate) fn install() {
    let _ = HS256_ONLY.install_default();
}

fn hmac_key(family: AlgorithmFamily, secret: &[u8]) -> Result<HmacSha256, Error> {
    if family != AlgorithmFamily::Hmac {
        return Err(ErrorKind::InvalidKeyFormat.into());
    }
    HmacSha256::new_from_slice(secret).map_err(|_| ErrorKind::InvalidKeyFormat.into())
}

fn signer(algorithm: &Algorithm, key: &EncodingKey) -> Result<Box<dyn JwtSigner>, Error> {
    match algorithm {
        Algorithm::HS256 => Ok(Box::new(Hs256(hmac_key(key.family(), key.as_bytes())?))),
        _ => Err(ErrorKind::InvalidAlgorithm.into()),
    }
}

fn verifier(algorithm: &Algorithm, key: &DecodingKey) -> Result<Box<dyn JwtVerifier>, Error> {
    match algorithm {
        Algorithm::HS256 => Ok(Box::new(Hs256(hmac_key(key.family(), key.try_get_as_bytes()?)?))),
        _ => Err(ErrorKind::InvalidAlgorithm.into()),
    }
}

/// An HMAC-SHA256 keyed with the token secret; cloned for each message.
struct Hs256(HmacSha256);

impl Signer<Vec<u8>> for Hs256 {
    fn try_sign(&self, message: &[u8]) -> Result<Vec<u8>, signature::Error> {
        let mut mac = self.0.clone();
        mac.update(message);
        Ok(mac.finalize().into_bytes().to_vec())
    }
}

impl Verifier<Vec<u8>> for Hs256 {
    fn verify(&self, message: &[u8], tag: &Vec<u8>) -> Result<(), signature::Error> {
        let mut mac = self.0.clone();
        mac.update(message);
        mac.verify_slice(tag).map_err(|_| signature::Error::new())
    }
}

impl JwtSigner for Hs256 {
    fn algorithm(&self) -> Algorithm {
        Algorithm::HS256
    }
}

impl JwtVerifier for Hs256 {
    fn algorithm(&self) -> Algorithm {
        Algorithm::HS256
    }
}
