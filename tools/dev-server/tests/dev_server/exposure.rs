//! The dev server's tokens are signed with a secret everyone knows unless one is set: it must not
//! listen beyond this machine with it, nor answer names beyond loopback (`AITASK_LOCAL_HOSTS`,
//! hosts.rs). Nothing is started: the refusal comes before any service.

use std::process::Command;

fn start(addr: &str, secret: Option<&str>) -> (bool, String) {
    start_with(addr, secret, &[])
}

fn start_with(addr: &str, secret: Option<&str>, env: &[(&str, &str)]) -> (bool, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_aitasks-dev-server"));
    command
        .env_remove("DATABASE_URL")
        .env_remove("AITASK_MIGRATE_DATABASE_URL")
        .env_remove("AITASK_DEV_JWT_SECRET")
        .env("AITASK_ENV_FILE", "/nonexistent")
        .env("AITASK_LOCAL_ADDR", addr)
        .envs(env.iter().copied());
    if let Some(secret) = secret {
        command.env("AITASK_DEV_JWT_SECRET", secret);
    }
    let output = command.output().expect("run the dev server");
    (output.status.success(), String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn a_non_loopback_address_with_the_default_secret_is_refused() {
    for addr in ["0.0.0.0:0", "[::]:0", "192.0.2.1:9000"] {
        let (ok, stderr) = start(addr, None);
        assert!(!ok, "{addr}: refused");
        assert!(stderr.contains("AITASK_DEV_JWT_SECRET"), "{addr}: names the variable to set: {stderr}");
        let (ok, stderr) = start(addr, Some("dev-secret"));
        assert!(
            !ok && stderr.contains("AITASK_DEV_JWT_SECRET"),
            "{addr}: the default set explicitly: {stderr}"
        );
    }
}

#[test]
fn loopback_or_an_own_secret_gets_past_the_check() {
    // Past the check, the next thing the server needs is the database: that is the error it
    // stops at here.
    for (addr, secret) in [
        ("127.0.0.1:0", None),
        ("[::1]:0", None),
        ("localhost:0", None),
        ("0.0.0.0:0", Some("a-secret-of-our-own-0123456789")),
    ] {
        let (ok, stderr) = start(addr, secret);
        assert!(!ok);
        assert!(stderr.contains("DATABASE_URL"), "{addr}: {stderr}");
        assert!(!stderr.contains("AITASK_DEV_JWT_SECRET"), "{addr}: {stderr}");
    }
}

/// Naming hosts beyond loopback (`AITASK_LOCAL_HOSTS`) is for a dev server reached from other
/// machines: refused with the default secret, as listening beyond loopback is.
#[test]
fn other_host_names_with_the_default_secret_are_refused() {
    let hosts = [("AITASK_LOCAL_HOSTS", "devbox.test")];
    let (ok, stderr) = start_with("127.0.0.1:0", None, &hosts);
    assert!(!ok);
    assert!(stderr.contains("AITASK_LOCAL_HOSTS") && stderr.contains("AITASK_DEV_JWT_SECRET"), "{stderr}");
    let (ok, stderr) = start_with("127.0.0.1:0", Some("a-secret-of-our-own-0123456789"), &hosts);
    assert!(!ok && stderr.contains("DATABASE_URL") && !stderr.contains("AITASK_LOCAL_HOSTS"), "{stderr}");
}
