//! The dev server signs nothing itself, but it trusts any token signed with
//! `AITASK_DEV_JWT_SECRET`, whose default is in docs/configuration.md. Anyone who can reach it with
//! that default can act as any tenant, so it listens beyond loopback, or answers names beyond
//! loopback (`AITASK_LOCAL_HOSTS`, hosts.rs), only with a secret of its own.

use std::net::SocketAddr;

use crate::hosts::Hosts;

/// The secret used when `AITASK_DEV_JWT_SECRET` is not set.
pub(crate) const DEFAULT_SECRET: &str = "dev-secret";

/// `Ok` when `address` may be listened on, and `hosts` answered, with `secret`: every address
/// it resolves to is loopback and no other name is answered, or the secret is not the default.
pub(crate) async fn check(address: &str, secret: &str, hosts: &Hosts) -> Result<(), String> {
    if secret != DEFAULT_SECRET {
        return Ok(());
    }
    if !hosts.is_empty() {
        return Err("refusing to answer the names AITASK_LOCAL_HOSTS lists while tokens are checked with \
                    the default secret, which anyone can sign with: set AITASK_DEV_JWT_SECRET to a \
                    secret of your own"
            .to_owned());
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
