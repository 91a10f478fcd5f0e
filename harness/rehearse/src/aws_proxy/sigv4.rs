//! SigV4 re-signing: an allowed Bedrock control-plane call is sent on to the Bedrock stub, which
//! checks its own credentials' signatures, not the function's.

use axum::http::{HeaderMap, Method};

use super::registry::BedrockUpstream;

/// The request's headers signed again, for the stub at `url`, with the stub's credentials.
pub(super) fn resign(
    upstream: &BedrockUpstream,
    method: &Method,
    url: &str,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<HeaderMap, String> {
    let identity = aws_credential_types::Credentials::new(
        upstream.access_key.clone(),
        upstream.secret_key.clone(),
        None,
        None,
        "rehearsal",
    )
    .into();
    let content_type =
        headers.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("application/json");
    let kept = [("content-type", content_type)];
    let params = aws_sigv4::sign::v4::SigningParams::builder()
        .identity(&identity)
        .region(crate::local_aws::REGION)
        .name("bedrock")
        .time(std::time::SystemTime::now())
        .settings(aws_sigv4::http_request::SigningSettings::default())
        .build()
        .map_err(|e| e.to_string())?;
    let signable = aws_sigv4::http_request::SignableRequest::new(
        method.as_str(),
        url,
        kept.into_iter(),
        aws_sigv4::http_request::SignableBody::Bytes(body),
    )
    .map_err(|e| e.to_string())?;
    let (instructions, _) =
        aws_sigv4::http_request::sign(signable, &params.into()).map_err(|e| e.to_string())?.into_parts();
    let mut signed = HeaderMap::new();
    signed.insert("content-type", content_type.parse().map_err(|_| "content-type")?);
    for header in instructions.into_parts().0 {
        let name = axum::http::HeaderName::from_bytes(header.name().as_bytes()).map_err(|e| e.to_string())?;
        signed.insert(name, header.value().parse().map_err(|_| format!("header {}", header.name()))?);
    }
    Ok(signed)
}
