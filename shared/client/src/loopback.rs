//! Whether a URL names this machine's loopback: the one place plain HTTP carries a token without
//! crossing a network (the CLI refuses plain HTTP elsewhere unless told), and where no proxy is
//! ever used: `HTTP_PROXY` would otherwise carry the token in clear text to the proxy.

/// 127.0.0.0/8, `[::1]` (or an IPv4-mapped loopback), `localhost` exactly (a name with a
/// trailing dot, `localhost.`, may be resolved through DNS: not loopback).
pub fn is_loopback(url: &reqwest::Url) -> bool {
    let Some(host) = url.host_str() else { return false };
    // An IPv6 address is written in brackets in a URL.
    match host.trim_start_matches('[').trim_end_matches(']').parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(ip)) => ip.is_loopback(),
        Ok(std::net::IpAddr::V6(ip)) => {
            ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
        Err(_) => host.eq_ignore_ascii_case("localhost"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_127_slash_8_ipv6_one_and_localhost_only() {
        for url in [
            "http://127.0.0.1:9000",
            "http://127.8.9.10",
            "http://[::1]:9000",
            "http://[::ffff:127.0.0.1]/",
            "http://localhost:9000",
            "http://LOCALHOST",
        ] {
            assert!(is_loopback(&reqwest::Url::parse(url).unwrap()), "{url}");
        }
        for url in [
            "http://10.0.0.1",
            "http://0.0.0.0:9000",
            "http://[::]:9000",
            "http://localhost.",
            "http://localhost.example.com",
            "http://api.localhost",
            "http://127.0.0.1.nip.io",
            "http://example.com",
        ] {
            assert!(!is_loopback(&reqwest::Url::parse(url).unwrap()), "{url}");
        }
    }
}
