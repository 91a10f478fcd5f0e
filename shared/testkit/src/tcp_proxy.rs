//! A TCP forwarder on loopback that a test can cut: a database outage for one stack, while the
//! shared cluster and every other test's connections carry on.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

pub struct TcpProxy {
    /// `127.0.0.1:port`: where to connect instead of the target.
    pub address: String,
    cut: Arc<AtomicBool>,
    cut_now: watch::Sender<u64>,
}

impl TcpProxy {
    /// Forward a free loopback port to `target` (`host:port`).
    pub async fn start(target: &str) -> TcpProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind the proxy");
        let address = listener.local_addr().expect("proxy address").to_string();
        let cut = Arc::new(AtomicBool::new(false));
        let (cut_now, cuts) = watch::channel(0u64);
        let (target, is_cut) = (target.to_owned(), cut.clone());
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                if is_cut.load(Ordering::SeqCst) {
                    // Accepted and dropped at once: the client sees its connection closed.
                    continue;
                }
                let (target, mut cuts) = (target.clone(), cuts.clone());
                // Only a cut after this connection began ends it.
                cuts.mark_unchanged();
                tokio::spawn(async move {
                    let Ok(mut outbound) = TcpStream::connect(&target).await else { return };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                        _ = cuts.changed() => {}
                    }
                });
            }
        });
        TcpProxy { address, cut, cut_now }
    }

    /// Close every forwarded connection and refuse new ones until [`TcpProxy::restore`].
    pub fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
        self.cut_now.send_modify(|n| *n += 1);
    }

    pub fn restore(&self) {
        self.cut.store(false, Ordering::SeqCst);
    }
}

/// `url` with its `host:port` replaced by `address`; and the `host:port` it had.
pub fn via(url: &str, address: &str) -> (String, String) {
    let (scheme_and_credentials, rest) = url.split_once('@').expect("a URL with credentials");
    let (server, path) = rest.split_once('/').expect("a URL with a database");
    (format!("{scheme_and_credentials}@{address}/{path}"), server.to_owned())
}
