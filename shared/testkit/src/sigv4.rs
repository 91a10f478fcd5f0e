//! Checking a request's SigV4 signature as AWS does: sign it again with the secret and compare
//! (the stubs of Lambda's durable callbacks and of Bedrock's control plane).

use std::time::SystemTime;

use axum::http::{HeaderMap, Method, Uri};

/// `20260101T000000Z` (`X-Amz-Date`) as a time.
pub(crate) fn amz_date(text: &str) -> Option<SystemTime> {
    chrono::NaiveDateTime::parse_from_str(text, "%Y%m%dT%H%M%SZ").ok().map(|t| SystemTime::from(t.and_utc()))
}

/// Whether the request is signed by `access_key`/`secret` for `service` in us-east-1 (the
/// headers it says it signed, its own timestamp).
pub(crate) fn signed_with(
    (method, uri, headers, body): (&Method, &Uri, &HeaderMap, &[u8]),
    access_key: &str,
    secret: &str,
    service: &str,
) -> bool {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let Some(authorization) = header("authorization") else { return false };
    if !authorization.starts_with(&format!("AWS4-HMAC-SHA256 Credential={access_key}/"))
        || !authorization.contains(&format!("/us-east-1/{service}/aws4_request"))
    {
        return false;
    }
    let Some(signed) = authorization.split("SignedHeaders=").nth(1).and_then(|s| s.split(',').next()) else {
        return false;
    };
    let Some(time) = header("x-amz-date").and_then(|d| amz_date(&d)) else {
        return false;
    };
    let signed_headers: Vec<(String, String)> =
        signed.split(';').filter_map(|name| header(name).map(|value| (name.to_owned(), value))).collect();
    let identity = aws_credential_types::Credentials::new(access_key, secret, None, None, "stub").into();
    let Ok(params) = aws_sigv4::sign::v4::SigningParams::builder()
        .identity(&identity)
        .region("us-east-1")
        .name(service)
        .time(time)
        .settings(aws_sigv4::http_request::SigningSettings::default())
        .build()
    else {
        return false;
    };
    let host = header("host").unwrap_or_default();
    let url = format!("http://{host}{}", uri.path_and_query().map(|p| p.as_str()).unwrap_or("/"));
    let Ok(signable) = aws_sigv4::http_request::SignableRequest::new(
        method.as_str(),
        &url,
        signed_headers.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        aws_sigv4::http_request::SignableBody::Bytes(body),
    ) else {
        return false;
    };
    let Ok(output) = aws_sigv4::http_request::sign(signable, &params.into()) else { return false };
    let (_, signature) = output.into_parts();
    authorization.ends_with(&format!("Signature={signature}"))
}

/// The headers that sign an S3 request to moto (any credentials do; an unsigned read is
/// anonymous, and moto refuses it a private object).
pub(crate) fn s3_headers(method: &str, url: &str, body: &[u8]) -> Vec<(String, String)> {
    let mut settings = aws_sigv4::http_request::SigningSettings::default();
    settings.payload_checksum_kind = aws_sigv4::http_request::PayloadChecksumKind::XAmzSha256;
    settings.percent_encoding_mode = aws_sigv4::http_request::PercentEncodingMode::Single;
    settings.uri_path_normalization_mode = aws_sigv4::http_request::UriPathNormalizationMode::Disabled;
    sign_headers(("test", "test"), "s3", settings, (method, url, body))
}

/// The headers that sign a request for `service` in us-east-1 with `access_key`/`secret`, now.
pub(crate) fn sign_headers(
    (access_key, secret): (&str, &str),
    service: &str,
    settings: aws_sigv4::http_request::SigningSettings,
    (method, url, body): (&str, &str, &[u8]),
) -> Vec<(String, String)> {
    let identity = aws_credential_types::Credentials::new(access_key, secret, None, None, "stub").into();
    let params = aws_sigv4::sign::v4::SigningParams::builder()
        .identity(&identity)
        .region("us-east-1")
        .name(service)
        .time(SystemTime::now())
        .settings(settings)
        .build()
        .expect("signing params");
    let signable = aws_sigv4::http_request::SignableRequest::new(
        method,
        url,
        std::iter::empty(),
        aws_sigv4::http_request::SignableBody::Bytes(body),
    )
    .expect("signable");
    let (instructions, _) =
        aws_sigv4::http_request::sign(signable, &params.into()).expect("signed").into_parts();
    instructions.headers().map(|(name, value)| (name.to_owned(), value.to_owned())).collect()
}
