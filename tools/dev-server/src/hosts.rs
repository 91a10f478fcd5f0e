//! Which `Host` the dev server answers. A page on another site can reach a server on the user's
//! loopback through DNS rebinding: its name is made to resolve to 127.0.0.1, so the browser
//! treats the dev server as that site, and the page could sign tokens with the public default
//! secret and act as any tenant. Its requests carry its own name in `Host`, so only loopback
//! names are answered (`localhost`, `127.0.0.0/8`, `[::1]`, with any port), and the names
//! `AITASK_LOCAL_HOSTS` lists for a dev server reached from other machines (which needs a
//! secret of its own: exposure.rs). Anything else, a missing `Host` too, is a 421.

use std::net::IpAddr;

use axum::body::Body;
use axum::response::Response;

/// The names answered besides loopback (`AITASK_LOCAL_HOSTS`), lowercase, without a port.
#[derive(Debug, Default)]
pub(crate) struct Hosts {
    extra: Vec<String>,
}

impl Hosts {
    /// `AITASK_LOCAL_HOSTS`: comma-separated host names or addresses (an IPv6 one in brackets),
    /// without a port.
    pub(crate) fn parse(list: &str) -> Result<Hosts, String> {
        let mut extra = Vec::new();
        for name in list.split(',').map(str::trim).filter(|name| !name.is_empty()) {
            if host_part(name) != Some(name) {
                return Err(format!(
                    "AITASK_LOCAL_HOSTS: {name:?} is not a host name or address without a port"
                ));
            }
            extra.push(name.trim_end_matches('.').to_ascii_lowercase());
        }
        Ok(Hosts { extra })
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.extra.is_empty()
    }

    /// Whether a request whose `Host` is `value` is answered.
    pub(crate) fn allows(&self, value: Option<&str>) -> bool {
        let Some(host) = value.and_then(host_part) else { return false };
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        is_loopback(&host) || self.extra.contains(&host)
    }

    /// A request's `Host` (HTTP/2's `:authority`).
    pub(crate) fn of(parts: &http::request::Parts) -> Option<&str> {
        match parts.headers.get(http::header::HOST) {
            Some(value) => value.to_str().ok(),
            None => parts.uri.authority().map(|authority| authority.as_str()),
        }
    }
}

/// The host of a `Host` value: without its port, an IPv6 address with its brackets; `None`
/// when it is not one.
fn host_part(value: &str) -> Option<&str> {
    let host = if value.starts_with('[') {
        let end = value.find(']')?;
        let (host, rest) = value.split_at(end + 1);
        (rest.is_empty() || rest.strip_prefix(':').is_some_and(is_port)).then_some(host)?
    } else {
        match value.rsplit_once(':') {
            Some((host, port)) if is_port(port) => host,
            Some(_) => return None,
            None => value,
        }
    };
    let plain = host.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._[]:".contains(&b));
    (!host.is_empty() && plain).then_some(host)
}

fn is_port(text: &str) -> bool {
    !text.is_empty() && text.len() <= 5 && text.bytes().all(|b| b.is_ascii_digit())
}

/// `localhost`, an address in 127.0.0.0/8, or `[::1]` (lowercase, without a port).
fn is_loopback(host: &str) -> bool {
    if host == "localhost" {
        return true;
    }
    let address = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    match address.parse::<IpAddr>() {
        Ok(IpAddr::V4(ip)) => ip.is_loopback(),
        // Only in brackets: a bare IPv6 address is not a Host value.
        Ok(IpAddr::V6(ip)) => host.starts_with('[') && ip.is_loopback(),
        Err(_) => false,
    }
}

/// The answer to a request for another host: 421 Misdirected Request.
pub(crate) fn refused() -> Response {
    let body = serde_json::json!({"error": {
        "code": "HOST_NOT_ALLOWED",
        "message": "the dev server answers only requests to a loopback name (localhost, 127.0.0.1, [::1]) \
                    or a name AITASK_LOCAL_HOSTS lists",
    }});
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = http::StatusCode::MISDIRECTED_REQUEST;
    response
        .headers_mut()
        .insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_names_with_any_port_and_the_listed_names_only() {
        let none = Hosts::default();
        for host in [
            "localhost",
            "localhost:9000",
            "LOCALHOST:1",
            "localhost.",
            "127.0.0.1:9000",
            "127.1.2.3",
            "[::1]:9000",
            "[::1]",
        ] {
            assert!(none.allows(Some(host)), "{host}");
        }
        for host in [
            "attacker.example:9000",
            "localhost.attacker.example",
            "127.0.0.1.nip.io:9000",
            "10.0.0.1:9000",
            "[::]:9000",
            "::1",
            "localhost:x",
            "localhost:9000:1",
            "",
            "local host",
        ] {
            assert!(!none.allows(Some(host)), "{host}");
        }
        assert!(!none.allows(None));
        let listed = Hosts::parse(" devbox.test , 10.1.2.3,[fd00::1]").unwrap();
        for host in ["devbox.test:9000", "DEVBOX.TEST", "10.1.2.3", "[fd00::1]:9000", "localhost"] {
            assert!(listed.allows(Some(host)), "{host}");
        }
        assert!(!listed.allows(Some("other.test")));
        for bad in ["devbox.test:9000", "a b", "fd00::1"] {
            assert!(Hosts::parse(bad).is_err(), "{bad}");
        }
    }
}
