//! The connection pool. Built once per process (a Lambda cold start) and reused. Migrations:
//! `crate::migrations`.

use std::str::FromStr;
use std::time::Duration;

use std::sync::Arc;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use rustls::pki_types::{pem::PemObject, CertificateDer};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::error::{StoreError, StoreResult};

/// Any pool-backed client or transaction the store functions can run on.
pub use deadpool_postgres::GenericClient;
pub use deadpool_postgres::{Client, Pool as StorePool};

/// Settings for [`connect`]. A Lambda instance handles one event at a time, so a few
/// connections are plenty; RDS Proxy multiplexes them across instances.
#[derive(Debug, Clone)]
pub struct PoolSettings {
    pub url: String,
    pub max_size: usize,
    pub connect_timeout: Duration,
    pub wait_timeout: Duration,
    /// Extra trusted certificates (PEM) for TLS to Postgres; `AITASK_DB_CA_FILE` when `None`.
    pub ca_file: Option<std::path::PathBuf>,
}

impl PoolSettings {
    pub fn new(url: impl Into<String>) -> Self {
        PoolSettings {
            url: url.into(),
            max_size: 4,
            connect_timeout: Duration::from_secs(5),
            wait_timeout: Duration::from_secs(10),
            ca_file: None,
        }
    }
}

/// The TLS connector for Postgres: Mozilla's roots (RDS Proxy's certificates chain to Amazon's
/// public roots) plus the certificates of a PEM bundle, `ca_file` or else `AITASK_DB_CA_FILE`
/// (for a direct connection to an RDS instance, whose certificates come from the RDS CA, or the
/// local cluster's own CA). Whether TLS is used follows the URL's `sslmode` (`prefer` by
/// default, `require` to insist).
pub fn tls_connector(ca_file: Option<&std::path::Path>) -> StoreResult<MakeRustlsConnect> {
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    let from_env =
        std::env::var_os("AITASK_DB_CA_FILE").filter(|p| !p.is_empty()).map(std::path::PathBuf::from);
    if let Some(path) = ca_file.map(std::path::Path::to_path_buf).or(from_env) {
        let pem = std::fs::read(&path)
            .map_err(|e| StoreError::Config(format!("AITASK_DB_CA_FILE {}: {e}", path.to_string_lossy())))?;
        for certificate in CertificateDer::pem_slice_iter(&pem) {
            let certificate =
                certificate.map_err(|e| StoreError::Config(format!("AITASK_DB_CA_FILE: {e}")))?;
            roots.add(certificate).map_err(|e| StoreError::Config(format!("AITASK_DB_CA_FILE: {e}")))?;
        }
    }
    // An explicit provider: the process may link more than one, and then none is the default.
    let config =
        rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(|e| StoreError::Config(format!("TLS for the database: {e}")))?
            .with_root_certificates(roots)
            .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

/// How every connection is opened: the URL, a connect timeout, and TCP keepalives, so that a
/// peer that vanished (a failover, a dropped NAT mapping) is noticed within about 25 s instead
/// of the kernel's two hours. Statement timeouts are the login's role settings (migrations/V9).
pub(crate) fn connection_config(settings: &PoolSettings) -> StoreResult<tokio_postgres::Config> {
    let mut config = tokio_postgres::Config::from_str(&settings.url)
        .map_err(|e| StoreError::Config(format!("invalid DATABASE_URL: {}", redact(&e.to_string()))))?;
    config
        .connect_timeout(settings.connect_timeout)
        .application_name("aitasks")
        .keepalives(true)
        .keepalives_idle(Duration::from_secs(10))
        .keepalives_interval(Duration::from_secs(5))
        .keepalives_retries(3);
    Ok(config)
}

/// Build a pool. No connection is opened until the first query.
pub fn connect(settings: &PoolSettings) -> StoreResult<Pool> {
    let config = connection_config(settings)?;
    let manager = Manager::from_config(
        config,
        tls_connector(settings.ca_file.as_deref())?,
        // Fast: a broken connection surfaces as an error on use and is dropped then; a
        // liveness query per checkout would add a round trip to every operation.
        ManagerConfig { recycling_method: RecyclingMethod::Fast },
    );
    Pool::builder(manager)
        .max_size(settings.max_size.max(1))
        .runtime(Runtime::Tokio1)
        .wait_timeout(Some(settings.wait_timeout))
        .create_timeout(Some(settings.connect_timeout))
        .build()
        .map_err(|e| StoreError::Config(format!("the connection pool: {e}")))
}

/// Take a client from the pool.
pub async fn client(pool: &Pool) -> StoreResult<Client> {
    Ok(pool.get().await?)
}

/// Text fit for a log or an error body: a connection string's password masked, and Postgres's
/// `DETAIL` lines dropped, since they quote rows (a check violation's "Failing row contains
/// (…)" holds the whole task, its prompt and input with it). The message, the constraint's name
/// and the SQLSTATE stay.
pub fn redact(text: &str) -> String {
    let mut text = text.to_owned();
    while let Some(start) = text.find("\nDETAIL: ") {
        // The detail runs to the hint the driver writes after it, or to the end.
        let end = text[start + 1..].find("\nHINT: ").map_or(text.len(), |hint| start + 1 + hint);
        text.replace_range(start..end, "");
    }
    let mut out = String::with_capacity(text.len());
    for token in text.split_inclusive(char::is_whitespace) {
        match (token.find("://"), token.rfind('@')) {
            (Some(scheme), Some(at)) if at > scheme => {
                let userinfo = &token[scheme + 3..at];
                let user = userinfo.split(':').next().unwrap_or_default();
                out.push_str(&token[..scheme + 3]);
                out.push_str(user);
                if userinfo.contains(':') {
                    out.push_str(":***");
                }
                out.push_str(&token[at..]);
            }
            _ => out.push_str(token),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redact_hides_the_password_only() {
        assert_eq!(redact("postgres://app:s3cret@db:5432/x failed"), "postgres://app:***@db:5432/x failed");
        assert_eq!(redact("postgres://app@db/x"), "postgres://app@db/x");
        assert_eq!(redact("no url here"), "no url here");
    }

    #[test]
    fn redact_drops_postgres_details_which_quote_rows() {
        assert_eq!(
            redact("ERROR: violates check constraint \"c\"\nDETAIL: Failing row contains (1, {\"prompt\": \"hi\"})."),
            "ERROR: violates check constraint \"c\""
        );
        assert_eq!(
            redact("ERROR: x\nDETAIL: Key (k)=(secret) exists.\nHINT: try y"),
            "ERROR: x\nHINT: try y"
        );
    }

    #[test]
    fn every_connection_has_keepalives_and_a_connect_timeout() {
        let config = connection_config(&PoolSettings::new("postgres://u@127.0.0.1/db")).unwrap();
        assert!(config.get_keepalives());
        assert_eq!(config.get_keepalives_idle(), Duration::from_secs(10));
        assert_eq!(config.get_keepalives_interval(), Some(Duration::from_secs(5)));
        assert_eq!(config.get_keepalives_retries(), Some(3));
        assert_eq!(config.get_connect_timeout(), Some(&Duration::from_secs(5)));
    }
}
