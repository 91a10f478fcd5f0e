//! The dev server signs nothing itself, but it trusts any token signed with
//! `AITASK_DEV_JWT_SECRET`, whose default is in the README. Anyone who can reach it with that
//! default can act as any tenant, so it listens beyond loopback only with a secret of its own.

use std::net::SocketAddr;

/// The secret used when `AITASK_DEV_JWT_SECRET` is not set.
pub(crate) const DEFAULT_SECRET: &str = "dev-secret";

/// `Ok` when `address` may be listened on with `secret`: every address it resolves to is
/// loopback, or the secret is not the default.
pub(crate) async fn check(address: &str, secret: &str) -> Result<(), String> {
    if secret != DEFAULT_SECRET {
        return Ok(());
    }
    let resolved: Vec<SocketAddr> = tokio::net::lookup_host(address)
        .await
        .map_err(|e| format!("AITASK_LOCAL_ADDR {address} does not resolve: {e}"))?
        .collect();
    if !resolved.is_empty() && resolved.iter().all(|a| a.ip().is_loopback()) {
        return Ok(());
    }
    Err(format!(
        "refusing to listen on {address}: it is reachable from other machines and tokens are checked \
         with the default secret, which anyone can sign with. Set AITASK_DEV_JWT_SECRET to a secret \
         of your own, or listen on 127.0.0.1"
    ))
}
