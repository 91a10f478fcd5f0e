//! Statement sequences run by `pgbench` with a custom script: the floor (three plain
//! statements on our table) and the reference implementation's sequence (on its table shape).
//! One pgbench transaction is one task.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::Failure;

pub(crate) const FLOOR: &str = include_str!("../sql/floor.sql");
pub(crate) const REFERENCE_SETUP: &str = include_str!("../sql/reference_setup.sql");
pub(crate) const REFERENCE: &str = include_str!("../sql/reference.sql");

/// Write a script where pgbench can read it.
pub(crate) fn script_file(dir: &Path, name: &str, text: &str) -> Result<std::path::PathBuf, Failure> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join(name);
    std::fs::write(&path, text)?;
    Ok(path)
}

/// The server's own pgbench (it comes with the server package that `scripts/postgres.sh`
/// installs; `/usr/bin/pgbench` may be missing or a wrapper that needs a cluster registered).
/// `PGBENCH` names another.
fn pgbench() -> std::path::PathBuf {
    if let Some(path) = std::env::var_os("PGBENCH") {
        return path.into();
    }
    let mut found: Vec<std::path::PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|version| version.path().join("bin/pgbench"))
        .filter(|path| path.exists())
        .collect();
    found.sort();
    found.pop().unwrap_or_else(|| "pgbench".into())
}

/// [`run`] on a thread of its own (it waits for pgbench), so the runtime's tasks (the wait
/// sampler) keep running meanwhile.
pub(crate) async fn run_async(
    url: &str,
    script: &Path,
    clients: usize,
    limit: Limit,
) -> Result<f64, Failure> {
    let (url, script) = (url.to_owned(), script.to_owned());
    tokio::task::spawn_blocking(move || run(&url, &script, clients, limit)).await?
}

/// Run `script` with `clients` for `duration` (or `transactions` per client); tasks per second.
pub(crate) fn run(url: &str, script: &Path, clients: usize, limit: Limit) -> Result<f64, Failure> {
    let mut command = Command::new(pgbench());
    command
        .args(["-n", "-M", "prepared", "-c", &clients.to_string(), "-j", &clients.min(4).to_string()])
        .arg("-f")
        .arg(script);
    match limit {
        Limit::Duration(duration) => command.args(["-T", &duration.as_secs().max(1).to_string()]),
        Limit::Transactions(n) => command.args(["-t", &n.to_string()]),
    };
    let output = command.arg(url).output()?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(format!("pgbench failed: {}{}", stdout, String::from_utf8_lossy(&output.stderr)).into());
    }
    let tps = stdout
        .lines()
        .find_map(|line| line.strip_prefix("tps = "))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse::<f64>().ok())
        .ok_or_else(|| format!("no tps in pgbench output: {stdout}"))?;
    Ok(tps)
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum Limit {
    Duration(Duration),
    Transactions(u64),
}
