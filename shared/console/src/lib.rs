//! The aitasks web console: static files (HTML, CSS, plain ES modules; no build step) compiled
//! into the binary, answered by path under [`PREFIX`] with their content type, an `ETag` and
//! the security headers ([`SECURITY_HEADERS`]: a strict Content-Security-Policy among them).
//!
//! The console calls only the public HTTP API, on the same origin, with the token its user
//! enters (kept in the tab's `sessionStorage`), so it sees exactly what that tenant may see.
//! The dev server answers `/console` with [`answer`]; deployed, the optional `console` function
//! does (template parameter `Console`).

mod assets;
mod headers;

pub use assets::{Asset, ASSETS};
pub use headers::{CACHE_CONTROL, CONTENT_SECURITY_POLICY, SECURITY_HEADERS};

/// Where the console lives: `/console` (its page) and `/console/<file>` (its files).
pub const PREFIX: &str = "/console";

/// An answer: status, headers (name, value) and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: &'static [u8],
}

/// Whether `path` is the console's (`/console` or under `/console/`).
pub fn is_console_path(path: &str) -> bool {
    path == PREFIX || path.strip_prefix(PREFIX).is_some_and(|rest| rest.starts_with('/'))
}

/// The answer to `method path` (`if_none_match`: the request's `If-None-Match`), or `None`
/// when the path is not the console's. `GET` and `HEAD` only (405 with `Allow` otherwise);
/// a file that does not exist is a 404; a matching `ETag` a 304. `HEAD` answers no body.
pub fn answer(method: &str, path: &str, if_none_match: Option<&str>) -> Option<Answer> {
    if !is_console_path(path) {
        return None;
    }
    let mut headers: Vec<(&'static str, String)> =
        SECURITY_HEADERS.iter().map(|(name, value)| (*name, (*value).to_owned())).collect();
    if method != "GET" && method != "HEAD" {
        headers.push(("allow", "GET, HEAD".to_owned()));
        headers.push(("content-type", "text/plain; charset=utf-8".to_owned()));
        return Some(Answer { status: 405, headers, body: b"method not allowed\n" });
    }
    let name = path.strip_prefix(PREFIX).unwrap_or_default().trim_start_matches('/');
    let name = if name.is_empty() { "index.html" } else { name };
    let Some(asset) = assets::find(name) else {
        headers.push(("content-type", "text/plain; charset=utf-8".to_owned()));
        headers.push(("cache-control", "no-store".to_owned()));
        return Some(Answer { status: 404, headers, body: b"no such console file\n" });
    };
    let etag = asset.etag();
    headers.push(("cache-control", CACHE_CONTROL.to_owned()));
    headers.push(("etag", etag.clone()));
    if if_none_match.is_some_and(|tags| tags.split(',').any(|tag| tag.trim() == etag || tag.trim() == "*")) {
        return Some(Answer { status: 304, headers, body: b"" });
    }
    headers.push(("content-type", asset.content_type.to_owned()));
    let body = if method == "HEAD" { &b""[..] } else { asset.body };
    Some(Answer { status: 200, headers, body })
}

#[cfg(test)]
mod tests;
