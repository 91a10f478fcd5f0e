//! The client: a base URL, a token, a retry policy, and the one place requests are sent,
//! retried and their answers read.

use std::time::Duration;

use reqwest::header::{HeaderMap, LOCATION, RETRY_AFTER};
use reqwest::Method;
use serde::de::DeserializeOwned;
use serde::Deserialize;

use aitasks_contracts::Problem;

use crate::answers::{Created, Outcome};
use crate::auth::{Auth, TokenProvider};
use crate::error::{ApiError, Error};
use crate::retry::{parse_retry_after, retryable_status, retryable_transport, RetryPolicy};

/// The headers a gateway names its request id with (API Gateway's HTTP API: `apigw-requestid`).
const REQUEST_ID_HEADERS: [&str; 3] = ["apigw-requestid", "x-amzn-requestid", "x-request-id"];

/// The largest answer read: the API's answers stay under Lambda's 6 MB response limit, so
/// anything larger is not the API's (and is not read into memory).
pub const MAX_ANSWER_BYTES: usize = 8 * 1024 * 1024;

/// How long a request may take, besides a long poll's own wait.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// A client of one aitasks API. Cheap to clone (the connection pool is shared).
#[derive(Debug, Clone)]
pub struct Client {
    http: reqwest::Client,
    base: String,
    auth: Auth,
    retry: RetryPolicy,
    timeout: Duration,
}

/// Builds a [`Client`].
#[derive(Debug)]
pub struct ClientBuilder {
    base: String,
    auth: Option<Auth>,
    retry: RetryPolicy,
    timeout: Duration,
}

impl ClientBuilder {
    /// A token sent with every request.
    pub fn token(mut self, token: impl Into<String>) -> ClientBuilder {
        self.auth = Some(Auth::Static(token.into()));
        self
    }

    /// A provider asked for the token before every request.
    pub fn token_provider(mut self, provider: std::sync::Arc<dyn TokenProvider>) -> ClientBuilder {
        self.auth = Some(Auth::Provider(provider));
        self
    }

    pub fn retry(mut self, policy: RetryPolicy) -> ClientBuilder {
        self.retry = policy;
        self
    }

    /// How long one try may take (a long poll gets its wait on top).
    pub fn timeout(mut self, timeout: Duration) -> ClientBuilder {
        self.timeout = timeout;
        self
    }

    pub fn build(self) -> Result<Client, Error> {
        let base = self.base.trim_end_matches('/').to_owned();
        let parsed =
            reqwest::Url::parse(&base).map_err(|e| Error::Config(format!("base URL {base:?}: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.query().is_some() {
            return Err(Error::Config(format!("base URL {base:?}: must be http(s) without a query")));
        }
        let auth =
            self.auth.ok_or_else(|| Error::Config("no token: give one, or a token provider".into()))?;
        if self.retry.max_tries == 0 {
            return Err(Error::Config("the retry policy must allow at least one try".into()));
        }
        let mut http = reqwest::Client::builder();
        if crate::is_loopback(&parsed) {
            // A proxy (HTTP_PROXY, ALL_PROXY) would carry the token off this machine, over
            // plain HTTP at that.
            http = http.no_proxy();
        }
        let http = http
            .user_agent(concat!("aitasks-client/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(Duration::from_secs(10))
            // The API never redirects: a 3xx is an error, and nothing (the token, the body) is
            // sent to the address it names.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| Error::Config(format!("the HTTP client: {e}")))?;
        Ok(Client { http, base, auth, retry: self.retry, timeout: self.timeout })
    }
}

/// One request, before it is sent.
pub(crate) struct Call {
    pub(crate) method: Method,
    /// The path and query, starting with `/`.
    pub(crate) target: String,
    pub(crate) body: Option<Vec<u8>>,
    /// Headers of this call besides the token's (a run create's `Idempotency-Key`), the same on
    /// every try.
    pub(crate) headers: Vec<(&'static str, String)>,
    /// A long poll's wait, added to the timeout.
    pub(crate) extra_time: Duration,
}

impl Call {
    pub(crate) fn new(method: Method, target: String) -> Call {
        Call { method, target, body: None, headers: Vec::new(), extra_time: Duration::ZERO }
    }

    pub(crate) fn json(mut self, body: &impl serde::Serialize) -> Result<Call, Error> {
        let bytes = serde_json::to_vec(body).map_err(|e| Error::Config(format!("the body: {e}")))?;
        self.body = Some(bytes);
        Ok(self)
    }
}

/// A success answer: its status and body.
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) body: Vec<u8>,
    pub(crate) request_id: Option<String>,
}

impl Reply {
    pub(crate) fn decode<T: DeserializeOwned>(&self) -> Result<T, Error> {
        serde_json::from_slice(&self.body).map_err(|e| Error::UnexpectedAnswer {
            status: self.status,
            reason: e.to_string(),
            request_id: self.request_id.clone(),
        })
    }

    /// A create's answer (201 a new task, 200 its effect key's task) as [`Created`].
    pub(crate) fn created(&self) -> Result<Created, Error> {
        let outcome =
            Outcome::of_status(self.status).ok_or_else(|| self.unexpected("a create answers 200 or 201"))?;
        Ok(Created { outcome, task: self.decode()? })
    }

    /// An answer of a status the route does not answer.
    pub(crate) fn unexpected(&self, reason: &str) -> Error {
        Error::UnexpectedAnswer {
            status: self.status,
            reason: reason.to_owned(),
            request_id: self.request_id.clone(),
        }
    }
}

#[derive(Deserialize)]
struct ErrorEnvelope {
    error: ErrorBody,
}

/// The `error` object of an error answer (and of a refused batch item).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ErrorBody {
    code: String,
    #[serde(default)]
    message: String,
    #[serde(default)]
    details: Vec<Problem>,
    #[serde(default)]
    more_problems: Option<u64>,
    #[serde(default)]
    retry_after: Option<u64>,
}

impl ErrorBody {
    pub(crate) fn into_api_error(
        self,
        status: u16,
        retry_after: Option<u64>,
        request_id: Option<String>,
    ) -> ApiError {
        ApiError {
            status,
            code: self.code,
            message: self.message,
            details: self.details,
            more_problems: self.more_problems,
            retry_after: retry_after.or(self.retry_after),
            request_id,
        }
    }
}

fn request_id(headers: &HeaderMap) -> Option<String> {
    REQUEST_ID_HEADERS
        .iter()
        .find_map(|name| headers.get(*name).and_then(|value| value.to_str().ok()))
        .map(str::to_owned)
}

impl Client {
    /// A client of the API at `base_url` (such as `http://127.0.0.1:9000`); set a token or a
    /// token provider before [`ClientBuilder::build`].
    pub fn builder(base_url: impl Into<String>) -> ClientBuilder {
        ClientBuilder {
            base: base_url.into(),
            auth: None,
            retry: RetryPolicy::default(),
            timeout: DEFAULT_TIMEOUT,
        }
    }

    /// A client with a fixed token and the default retry policy.
    pub fn new(base_url: impl Into<String>, token: impl Into<String>) -> Result<Client, Error> {
        Client::builder(base_url).token(token).build()
    }

    /// The base URL, without a trailing `/`.
    pub fn base_url(&self) -> &str {
        &self.base
    }

    pub fn retry_policy(&self) -> &RetryPolicy {
        &self.retry
    }

    /// Send a call, trying again as the policy allows; a 2xx answer, or the last error.
    pub(crate) async fn send(&self, call: &Call) -> Result<Reply, Error> {
        let url = format!("{}{}", self.base, call.target);
        let mut tries = 0;
        loop {
            tries += 1;
            let last_try = tries >= self.retry.max_tries;
            let token = self.auth.token().await.map_err(Error::Token)?;
            let mut request = self
                .http
                .request(call.method.clone(), &url)
                .bearer_auth(token)
                .timeout(self.timeout + call.extra_time);
            for (name, value) in &call.headers {
                request = request.header(*name, value);
            }
            if let Some(body) = &call.body {
                request = request.header("content-type", "application/json").body(body.clone());
            }
            let response = match request.send().await {
                Ok(response) => response,
                Err(source) => {
                    if last_try || !retryable_transport(&source) {
                        return Err(Error::Transport { url, source });
                    }
                    if let Some(pause) = self.retry.delay(tries, None) {
                        tokio::time::sleep(pause).await;
                    }
                    continue;
                }
            };
            let status = response.status().as_u16();
            let headers = response.headers().clone();
            let request_id = request_id(&headers);
            if (300..400).contains(&status) {
                let location = headers.get(LOCATION).and_then(|v| v.to_str().ok()).map(str::to_owned);
                return Err(Error::Redirect { status, location, request_id });
            }
            let body = match read_body(response).await {
                Ok(Some(body)) => body,
                Ok(None) => {
                    return Err(Error::UnexpectedAnswer {
                        status,
                        reason: format!("a body over {MAX_ANSWER_BYTES} bytes"),
                        request_id,
                    })
                }
                Err(source) => {
                    // The answer was cut off: the request may have had its effect, and every
                    // call is safe to send again.
                    if last_try {
                        return Err(Error::Transport { url, source });
                    }
                    if let Some(pause) = self.retry.delay(tries, None) {
                        tokio::time::sleep(pause).await;
                    }
                    continue;
                }
            };
            if (200..300).contains(&status) {
                return Ok(Reply { status, body, request_id });
            }
            let retry_after =
                headers.get(RETRY_AFTER).and_then(|v| v.to_str().ok()).and_then(parse_retry_after);
            if !last_try && retryable_status(status) {
                if let Some(pause) = self.retry.delay(tries, retry_after.map(Duration::from_secs)) {
                    tokio::time::sleep(pause).await;
                    continue;
                }
            }
            return Err(match serde_json::from_slice::<ErrorEnvelope>(&body) {
                Ok(envelope) => {
                    Error::Api(Box::new(envelope.error.into_api_error(status, retry_after, request_id)))
                }
                Err(_) => Error::UnexpectedAnswer {
                    status,
                    reason: format!("not an error body ({} bytes)", body.len()),
                    request_id,
                },
            });
        }
    }
}

/// The body of an answer, or `None` past [`MAX_ANSWER_BYTES`] (read no further).
async fn read_body(mut response: reqwest::Response) -> Result<Option<Vec<u8>>, reqwest::Error> {
    if response.content_length().is_some_and(|length| length > MAX_ANSWER_BYTES as u64) {
        return Ok(None);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        if body.len() + chunk.len() > MAX_ANSWER_BYTES {
            return Ok(None);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Some(body))
}

/// A path segment with everything but unreserved characters percent-encoded.
pub(crate) fn segment(text: &str) -> String {
    const SET: &percent_encoding::AsciiSet =
        &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');
    percent_encoding::utf8_percent_encode(text, SET).to_string()
}

/// `?k=v&...` of the pairs given (values encoded), or nothing.
pub(crate) fn query(pairs: &[(&str, Option<String>)]) -> String {
    let mut out = String::new();
    for (key, value) in pairs {
        if let Some(value) = value {
            out.push(if out.is_empty() { '?' } else { '&' });
            out.push_str(key);
            out.push('=');
            out.push_str(&segment(value));
        }
    }
    out
}
