//! Where the bearer token comes from: a fixed string, or a provider asked before every request
//! (an identity provider's short-lived tokens, refreshed as it sees fit).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// A future of a token, as a [`TokenProvider`] returns it.
pub type TokenFuture<'a> = Pin<Box<dyn Future<Output = Result<String, String>> + Send + 'a>>;

/// Gives the token for the next request. Called once per try (a retry asks again, so a token
/// that expired while waiting is replaced); caching is the provider's business.
pub trait TokenProvider: Send + Sync {
    /// The token, or why there is none.
    fn token(&self) -> TokenFuture<'_>;
}

/// How requests are authenticated.
#[derive(Clone)]
pub enum Auth {
    /// One token for every request.
    Static(String),
    /// A provider asked before each request.
    Provider(Arc<dyn TokenProvider>),
}

impl Auth {
    pub(crate) async fn token(&self) -> Result<String, String> {
        match self {
            Auth::Static(token) => Ok(token.clone()),
            Auth::Provider(provider) => provider.token().await,
        }
    }
}

impl fmt::Debug for Auth {
    /// Never the token itself.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Auth::Static(_) => f.write_str("Auth::Static(<redacted>)"),
            Auth::Provider(_) => f.write_str("Auth::Provider(..)"),
        }
    }
}
