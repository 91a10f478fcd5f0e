//! AWS requests without an SDK: SigV4-signed (`aws-sigv4`, the credentials of the function's
//! role) over the same reqwest client, for the few S3 calls (PutObject, GetObject,
//! ListObjectsV2) and Bedrock control-plane calls a batch makes. The SDK crates for S3 and
//! Bedrock would add minutes to every clean build for five operations.

use std::time::{Duration, SystemTime};

use aws_credential_types::provider::{ProvideCredentials, SharedCredentialsProvider};
use aws_sigv4::http_request::{
    sign, PayloadChecksumKind, PercentEncodingMode, SignableBody, SignableRequest, SigningSettings,
    UriPathNormalizationMode,
};
use reqwest::Method;

use crate::error::{is_token, said, ProviderError};
use crate::profiles::ModelProfile;
use crate::wire::{parse_retry_after, read_bounded, snippet, transport_error};

/// What Bedrock batch inference needs besides the profile: the role's credentials and region,
/// the bucket the lines and results go through (`AITASK_BATCH_BUCKET`), and the service role
/// Bedrock assumes to read and write it (`AITASK_BATCH_ROLE_ARN`). The endpoints default to
/// the region's; a test (or a VPC endpoint) names its own.
#[derive(Debug, Clone)]
pub struct BatchAws {
    pub credentials: SharedCredentialsProvider,
    pub region: String,
    pub bucket: String,
    pub role_arn: String,
    /// `AWS_ENDPOINT_URL_S3`: S3 path-style at this URL, else `https://{bucket}.s3.{region}.amazonaws.com`.
    pub s3_endpoint: Option<String>,
    /// `AWS_ENDPOINT_URL_BEDROCK`, else `https://bedrock.{region}.amazonaws.com`.
    pub bedrock_endpoint: Option<String>,
}

impl BatchAws {
    /// From the function's SDK configuration (credentials and region) and the stack's bucket and
    /// role; the endpoints from `AWS_ENDPOINT_URL_S3` / `AWS_ENDPOINT_URL_BEDROCK` through
    /// `lookup`, else the configuration's own endpoint override, else the region's. `None`
    /// without credentials or a region.
    pub fn from_sdk_config(
        config: &aws_types::SdkConfig,
        bucket: impl Into<String>,
        role_arn: impl Into<String>,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Option<BatchAws> {
        let general = config.endpoint_url().map(str::to_owned);
        Some(BatchAws {
            credentials: config.credentials_provider()?,
            region: config.region()?.to_string(),
            bucket: bucket.into(),
            role_arn: role_arn.into(),
            s3_endpoint: lookup("AWS_ENDPOINT_URL_S3").or_else(|| general.clone()),
            bedrock_endpoint: lookup("AWS_ENDPOINT_URL_BEDROCK").or(general),
        })
    }

    /// The URL of an object of the bucket.
    pub(super) fn object_url(&self, key: &str) -> String {
        let key = encode_key(key);
        match &self.s3_endpoint {
            Some(endpoint) => format!("{}/{}/{key}", endpoint.trim_end_matches('/'), self.bucket),
            None => format!("https://{}.s3.{}.amazonaws.com/{key}", self.bucket, self.region),
        }
    }

    /// The URL of the bucket itself (for a listing).
    pub(super) fn bucket_url(&self) -> String {
        match &self.s3_endpoint {
            Some(endpoint) => format!("{}/{}", endpoint.trim_end_matches('/'), self.bucket),
            None => format!("https://{}.s3.{}.amazonaws.com", self.bucket, self.region),
        }
    }

    /// The Bedrock control plane's URL for `path` (which starts with `/`).
    pub(super) fn bedrock_url(&self, path: &str) -> String {
        match &self.bedrock_endpoint {
            Some(endpoint) => format!("{}{path}", endpoint.trim_end_matches('/')),
            None => format!("https://bedrock.{}.amazonaws.com{path}", self.region),
        }
    }
}

/// An S3 key percent-encoded segment by segment (the slashes stay).
fn encode_key(key: &str) -> String {
    key.split('/').map(encode).collect::<Vec<_>>().join("/")
}

/// RFC 3986 unreserved characters kept, every other byte percent-encoded.
pub(super) fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The parts of a signed call that do not change between the calls of a batch.
pub(super) struct AwsCall<'a> {
    pub(super) http: &'a reqwest::Client,
    pub(super) aws: &'a BatchAws,
    pub(super) profile: &'a ModelProfile,
    pub(super) timeout: Duration,
}

impl AwsCall<'_> {
    /// One signed AWS call: `service` is `s3` or `bedrock`; the body of a 2xx, at most `limit`
    /// bytes, or the error in our classes.
    pub(super) async fn send(
        &self,
        method: Method,
        url: &str,
        service: &str,
        body: Vec<u8>,
        limit: usize,
    ) -> Result<String, ProviderError> {
        let request = self.signed(method, url, service, body).await?.timeout(self.timeout);
        let response = request.send().await.map_err(|e| transport_error(e, self.timeout, self.profile))?;
        let status = response.status().as_u16();
        let failure = (!(200..300).contains(&status)).then(|| Failure::of(&response));
        let text = read_bounded(response, limit, self.timeout, self.profile).await?;
        match failure {
            None => Ok(text),
            Some(failure) => Err(failure.error(status, &text)),
        }
    }

    /// A signed S3 GetObject whose 2xx response is handed back for its body to be read as it
    /// arrives (a result file of any size): the timeout bounds the sending and the answer's
    /// head; the reader bounds each chunk.
    pub(super) async fn open(&self, url: &str) -> Result<reqwest::Response, ProviderError> {
        let request = self.signed(Method::GET, url, "s3", Vec::new()).await?;
        let response = match tokio::time::timeout(self.timeout, request.send()).await {
            Ok(sent) => sent.map_err(|e| transport_error(e, self.timeout, self.profile))?,
            Err(_) => return Err(ProviderError::Timeout(self.timeout)),
        };
        let status = response.status().as_u16();
        if (200..300).contains(&status) {
            return Ok(response);
        }
        let failure = Failure::of(&response);
        let text = read_bounded(response, MAX_ERROR_BYTES, self.timeout, self.profile).await?;
        Err(failure.error(status, &text))
    }

    /// The request, signed with the role's credentials (no timeout set: the caller's).
    async fn signed(
        &self,
        method: Method,
        url: &str,
        service: &str,
        body: Vec<u8>,
    ) -> Result<reqwest::RequestBuilder, ProviderError> {
        let (http, aws) = (self.http, self.aws);
        let credentials = aws.credentials.provide_credentials().await.map_err(|e| {
            ProviderError::Connection(format!(
                "no AWS credentials for the batch call: {}",
                said(None, "error", &e.to_string())
            ))
        })?;
        let mut settings = SigningSettings::default();
        let mut headers = vec![("content-type".to_owned(), "application/json".to_owned())];
        if service == "s3" {
            settings.payload_checksum_kind = PayloadChecksumKind::XAmzSha256;
            settings.percent_encoding_mode = PercentEncodingMode::Single;
            settings.uri_path_normalization_mode = UriPathNormalizationMode::Disabled;
            headers[0].1 = "application/octet-stream".to_owned();
        }
        let identity = credentials.into();
        let params = aws_sigv4::sign::v4::SigningParams::builder()
            .identity(&identity)
            .region(&aws.region)
            .name(service)
            .time(SystemTime::now())
            .settings(settings)
            .build()
            .map_err(|e| ProviderError::Connection(format!("cannot sign the AWS request: {e}")))?;
        let signable = SignableRequest::new(
            method.as_str(),
            url,
            headers.iter().map(|(k, v)| (k.as_str(), v.as_str())),
            SignableBody::Bytes(&body),
        )
        .map_err(|e| ProviderError::Connection(format!("cannot sign the AWS request: {e}")))?;
        let (instructions, _) = sign(signable, &params.into())
            .map_err(|e| ProviderError::Connection(format!("cannot sign the AWS request: {e}")))?
            .into_parts();
        let mut request = http.request(method, url);
        for (name, value) in &headers {
            request = request.header(name, value);
        }
        for header in instructions.into_parts().0 {
            let mut value = reqwest::header::HeaderValue::from_str(header.value())
                .map_err(|e| ProviderError::Connection(format!("cannot sign the AWS request: {e}")))?;
            value.set_sensitive(header.sensitive());
            request = request.header(header.name(), value);
        }
        Ok(request.body(body))
    }
}

/// The most of an error answer that is read.
const MAX_ERROR_BYTES: usize = 64 * 1024;

/// What an AWS error answer's headers say, kept while its body is read.
struct Failure {
    retry_after: Option<Duration>,
    error_type: Option<String>,
}

impl Failure {
    fn of(response: &reqwest::Response) -> Failure {
        let header =
            |name: &str| response.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
        Failure {
            retry_after: header("retry-after").as_deref().and_then(parse_retry_after),
            error_type: header("x-amzn-errortype"),
        }
    }

    fn error(self, status: u16, text: &str) -> ProviderError {
        tracing::debug!(status, body = %snippet(text), "AWS's error answer");
        aws_error(status, self.retry_after, self.error_type.as_deref(), text)
    }
}

/// AWS's errors in our classes, named by the service's code (the `x-amzn-errortype` header,
/// a JSON `__type` or `code`, or S3's XML `<Code>`) and the body's size and hash.
pub(super) fn aws_error(
    status: u16,
    retry_after: Option<Duration>,
    error_type: Option<&str>,
    text: &str,
) -> ProviderError {
    let from_json = || {
        let body: serde_json::Value = serde_json::from_str(text).ok()?;
        ["__type", "code", "Code"].iter().find_map(|key| body[*key].as_str().map(str::to_owned))
    };
    let from_xml = || xml_value(text, "Code");
    let code = error_type
        .map(str::to_owned)
        .or_else(from_json)
        .or_else(from_xml)
        .map(|code| {
            code.split(':').next().unwrap_or_default().rsplit('#').next().unwrap_or_default().to_owned()
        })
        .filter(|code| is_token(code));
    let message = said(code.as_deref(), "body", text);
    match (code.as_deref(), status) {
        (Some("ThrottlingException" | "SlowDown" | "TooManyRequestsException"), _) | (_, 429) => {
            ProviderError::RateLimited { retry_after, message }
        }
        (
            Some(
                "AccessDeniedException"
                | "UnrecognizedClientException"
                | "InvalidSignatureException"
                | "SignatureDoesNotMatch"
                | "AccessDenied"
                | "InvalidAccessKeyId",
            ),
            _,
        )
        | (_, 401 | 403) => ProviderError::Auth { status: if status == 401 { 401 } else { 403 } },
        (_, 408) => ProviderError::Server { status: 408, message },
        (_, status) if status >= 500 => ProviderError::Server { status, message },
        (_, status) => ProviderError::Rejected { status, message },
    }
}

/// The text of the first `<tag>` of an XML document (S3's answers), entities decoded.
pub(super) fn xml_value(text: &str, tag: &str) -> Option<String> {
    xml_values(text, tag).into_iter().next()
}

/// The text of every `<tag>` of an XML document, entities decoded.
pub(super) fn xml_values(text: &str, tag: &str) -> Vec<String> {
    let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(&open) {
        let after = &rest[start + open.len()..];
        let Some(end) = after.find(&close) else { break };
        out.push(
            after[..end]
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&quot;", "\"")
                .replace("&apos;", "'")
                .replace("&amp;", "&"),
        );
        rest = &after[end + close.len()..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aws_errors_map_to_our_classes_and_xml_is_read() {
        assert!(matches!(
            aws_error(400, None, Some("ThrottlingException:http://x"), ""),
            ProviderError::RateLimited { .. }
        ));
        assert!(matches!(
            aws_error(403, None, None, "<Error><Code>SignatureDoesNotMatch</Code></Error>"),
            ProviderError::Auth { status: 403 }
        ));
        assert!(matches!(
            aws_error(400, None, None, r#"{"__type": "ValidationException"}"#),
            ProviderError::Rejected { status: 400, .. }
        ));
        assert!(matches!(aws_error(503, None, None, "busy"), ProviderError::Server { status: 503, .. }));
        let listing = "<ListBucketResult><Contents><Key>a/b&amp;c.out</Key></Contents><Contents><Key>d</Key></Contents></ListBucketResult>";
        assert_eq!(xml_values(listing, "Key"), vec!["a/b&c.out".to_owned(), "d".to_owned()]);
        assert_eq!(encode_key("aitasks/x y/input.jsonl"), "aitasks/x%20y/input.jsonl");
    }

    #[test]
    fn the_sdk_configuration_gives_credentials_region_and_endpoints() {
        let config = aws_types::SdkConfig::builder()
            .region(aws_types::region::Region::new("eu-west-1"))
            .credentials_provider(SharedCredentialsProvider::new(aws_credential_types::Credentials::new(
                "a", "s", None, None, "t",
            )))
            .build();
        let aws = BatchAws::from_sdk_config(&config, "b", "arn:role", |name| {
            (name == "AWS_ENDPOINT_URL_S3").then(|| "http://127.0.0.1:9/".to_owned())
        })
        .unwrap();
        assert_eq!(aws.object_url("aitasks/x/input.jsonl"), "http://127.0.0.1:9/b/aitasks/x/input.jsonl");
        assert_eq!(
            aws.bedrock_url("/model-invocation-job"),
            "https://bedrock.eu-west-1.amazonaws.com/model-invocation-job"
        );
        let bare = aws_types::SdkConfig::builder().build();
        assert!(BatchAws::from_sdk_config(&bare, "b", "r", |_| None).is_none(), "no credentials, no region");
    }
}
