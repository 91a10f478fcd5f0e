//! The systems of the peers section, each installed (or said why not) and started the same way:
//! a worker process of `workers` concurrent workers and a producer process, given the database
//! (`DATABASE_URL`), `ROLE`, `WORKERS`, `RATE`, `SECONDS` and `SEQ_BASE`. This system's roles are
//! this binary itself (`BENCH_PEER_ROLE`, [`super::aitasks`]); the peers' are the scripts of
//! `harness/bench/<peer>/`, installed by `scripts/peer.sh` from their lockfiles.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

/// How a system's roles start.
#[derive(Debug, Clone)]
pub(crate) enum Launch {
    /// This binary, `BENCH_PEER_ROLE=<prefix>-<role>`.
    OwnBinary(&'static str),
    /// `node peers.mjs` in the installed folder.
    Node(PathBuf),
    /// `venv/bin/python peers.py` in the installed folder.
    Python(PathBuf),
}

#[derive(Debug, Clone)]
pub(crate) struct System {
    pub(crate) name: &'static str,
    pub(crate) version: String,
    pub(crate) launch: Launch,
    /// Which rows of `pg_stat_user_tables` are this system's tables (a SQL condition); `None` for
    /// the SQS hop, which has none.
    pub(crate) tables: Option<&'static str>,
    /// Whether its database is migrated with this system's schema (else created empty).
    pub(crate) migrated: bool,
    /// The chaos cells apply (not to the SQS hop alone, which is no job system).
    pub(crate) chaos: bool,
    /// Variables every role of it gets (the SQS endpoint, for this system).
    pub(crate) env: Vec<(String, String)>,
}

impl System {
    pub(crate) fn command(&self, role: &str, url: &str) -> Command {
        let mut command = match &self.launch {
            Launch::OwnBinary(prefix) => {
                let mut c = Command::new(std::env::current_exe().unwrap_or_else(|_| "aitasks-bench".into()));
                c.env("BENCH_PEER_ROLE", format!("{prefix}-{role}"));
                c
            }
            Launch::Node(dir) => {
                let mut c = Command::new("node");
                c.arg("peers.mjs").current_dir(dir);
                c
            }
            Launch::Python(dir) => {
                let mut c = Command::new(dir.join("venv/bin/python"));
                c.arg("peers.py").current_dir(dir);
                c
            }
        };
        command.env("DATABASE_URL", url).env("ROLE", role);
        command.envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        command
    }
}

/// `scripts/peer.sh install <peer>`: the installed folder, or why not.
fn install(peer: &str) -> Result<PathBuf, String> {
    let script = aitasks_testkit::workspace_root().join("scripts/peer.sh");
    let output = Command::new(&script).args(["install", peer]).output().map_err(|e| e.to_string())?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(format!("scripts/peer.sh install {peer} failed: {}", stderr.trim()));
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().into())
}

fn npm_version(dir: &std::path::Path, package: &str) -> String {
    std::fs::read_to_string(dir.join("node_modules").join(package).join("package.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .and_then(|p| p["version"].as_str().map(str::to_owned))
        .unwrap_or_else(|| "unknown".into())
}

fn pip_version(dir: &std::path::Path, package: &str) -> String {
    std::fs::read_to_string(dir.join("requirements.txt"))
        .ok()
        .and_then(|text| {
            text.lines().find_map(|l| l.strip_prefix(&format!("{package}==")).map(str::to_owned))
        })
        .unwrap_or_else(|| "unknown".into())
}

/// Where a peer installs from.
#[derive(Clone, Copy)]
enum Registry {
    Npm,
    PyPi,
}

/// The npm and PyPI peers `wanted` by name, each installed or the reason it is not.
pub(crate) fn peers(wanted: impl Fn(&str) -> bool) -> Vec<Result<System, (&'static str, String)>> {
    // One peer from its registry: npm's read their version from `node_modules` and run under
    // Node, PyPI's from `requirements.txt` and run under Python.
    let peer = |registry: Registry, name: &'static str, peer: &str, package: &str, tables: &'static str| {
        wanted(name).then(|| {
            install(peer).map_err(|why| (name, why)).map(|dir| {
                let (version, launch) = match registry {
                    Registry::Npm => (npm_version(&dir, package), Launch::Node(dir)),
                    Registry::PyPi => (pip_version(&dir, package), Launch::Python(dir)),
                };
                System {
                    name,
                    version,
                    launch,
                    tables: Some(tables),
                    migrated: false,
                    chaos: true,
                    env: Vec::new(),
                }
            })
        })
    };
    let npm = |name, dir, package, tables| peer(Registry::Npm, name, dir, package, tables);
    let pip = |name, dir, package, tables| peer(Registry::PyPi, name, dir, package, tables);
    [
        npm("graphile-worker", "graphile", "graphile-worker", "schemaname = 'graphile_worker'"),
        npm("pg-boss", "pgboss", "pg-boss", "schemaname = 'pgboss'"),
        pip("procrastinate", "procrastinate", "procrastinate", "relname LIKE 'procrastinate%'"),
        // awa's tables, its queue storage's included, are all in its schema `awa`.
        pip("awa", "awa", "awa-pg", "schemaname = 'awa'"),
        // absurd's tables, its queues' included, are all in its schema `absurd`.
        pip("absurd", "absurd", "absurd-sdk", "schemaname = 'absurd'"),
    ]
    .into_iter()
    .flatten()
    .collect()
}
