use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use jsonwebtoken::errors::ErrorKind;
use serde_json::json;

use super::*;

fn now() -> u64 {
    jsonwebtoken::get_current_timestamp()
}

fn part(value: &Value) -> String {
    URL_SAFE_NO_PAD.encode(value.to_string())
}

fn kind(result: Result<Map<String, Value>, Error>) -> ErrorKind {
    result.expect_err("the token is refused").into_kind()
}

/// RFC 7515, appendix A.1: the HS256 example JWS and its key. The HMAC is the standard one,
/// not merely consistent with itself.
#[test]
fn the_rfc_7515_example_verifies_and_a_changed_one_does_not() {
    let key = URL_SAFE_NO_PAD
        .decode("AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow")
        .expect("the RFC's key");
    let token = "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9\
                 .eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ\
                 .dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    let key = Hs256Key::new(&key).expect("key");
    // The example's exp (2011) is long past: only the leeway lets it through.
    let claims = key.verify(token, now()).expect("the RFC's example verifies");
    assert_eq!(claims["iss"], "joe");
    assert_eq!(claims["http://example.com/is_root"], true);

    let changed = token.replace("dBjftJeZ4CVP", "dBjftJeZ4CVQ");
    assert_eq!(kind(key.verify(&changed, now())), ErrorKind::InvalidSignature);
}

#[test]
fn a_signed_token_verifies_with_its_claims() {
    let key = Hs256Key::new(b"dev-secret").expect("key");
    let token = key.sign(&json!({"app_id": "a1", "sub": "tester", "exp": now() + 60})).expect("sign");
    let header: Value = serde_json::from_slice(
        &URL_SAFE_NO_PAD.decode(token.split('.').next().unwrap_or_default()).expect("b64"),
    )
    .expect("header");
    assert_eq!(header, json!({"typ": "JWT", "alg": "HS256"}));
    let claims = key.verify(&token, 0).expect("verifies");
    assert_eq!((claims["app_id"].as_str(), claims["sub"].as_str()), (Some("a1"), Some("tester")));
}

#[test]
fn another_secret_is_refused() {
    let token = Hs256Key::new(b"another").expect("key").sign(&json!({"exp": now() + 60})).expect("sign");
    let key = Hs256Key::new(b"dev-secret").expect("key");
    assert_eq!(kind(key.verify(&token, 0)), ErrorKind::InvalidSignature);
}

#[test]
fn only_hs256_is_accepted() {
    let key = Hs256Key::new(b"dev-secret").expect("key");
    let claims = part(&json!({"exp": now() + 60}));
    let signature = key.sign(&json!({"exp": now() + 60})).expect("sign");
    let signature = signature.rsplit('.').next().unwrap_or_default();
    for alg in ["HS384", "HS512", "RS256", "ES256", "EdDSA"] {
        let token = format!("{}.{claims}.{signature}", part(&json!({"alg": alg, "typ": "JWT"})));
        assert_eq!(kind(key.verify(&token, 0)), ErrorKind::InvalidAlgorithm, "{alg}");
    }
    let none = format!("{}.{claims}.", part(&json!({"alg": "none", "typ": "JWT"})));
    assert!(key.verify(&none, 0).is_err(), "alg none");
}

#[test]
fn exp_is_required_and_exp_and_nbf_are_checked_within_the_leeway() {
    let key = Hs256Key::new(b"dev-secret").expect("key");
    let token = |claims: Value| key.sign(&claims).expect("sign");
    assert_eq!(
        kind(key.verify(&token(json!({"sub": "x"})), 60)),
        ErrorKind::MissingRequiredClaim("exp".into())
    );
    assert_eq!(kind(key.verify(&token(json!({"exp": now() - 120})), 60)), ErrorKind::ExpiredSignature);
    assert!(key.verify(&token(json!({"exp": now() - 30})), 60).is_ok(), "expired within the leeway");
    assert_eq!(
        kind(key.verify(&token(json!({"exp": now() + 7200, "nbf": now() + 3600})), 60)),
        ErrorKind::ImmatureSignature
    );
    assert!(
        key.verify(&token(json!({"exp": now() + 7200, "nbf": now() + 30})), 60).is_ok(),
        "nbf within the leeway"
    );
}
