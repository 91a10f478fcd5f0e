//! The base URL and the token: from the flags, else the environment (clap reads both), else the
//! config file. A token is sent only where it was meant to go: the config file's token to the
//! file's own URL (the user aimed a flag's or the environment's token themselves), and no token
//! over plain HTTP beyond this machine's loopback unless `--allow-insecure-http` says so.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::args::Global;
use crate::failure::Failure;

/// The dev server's address (`AITASK_LOCAL_ADDR`'s default).
pub(crate) const DEFAULT_URL: &str = "http://127.0.0.1:9000";

/// `config.toml`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    url: Option<String>,
    token: Option<String>,
}

/// Where to send requests, and as whom.
#[derive(Debug)]
pub(crate) struct Settings {
    pub(crate) url: String,
    pub(crate) token: String,
}

/// The default config file: `$XDG_CONFIG_HOME/aitasks/config.toml`, else
/// `$HOME/.config/aitasks/config.toml`.
fn default_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))?;
    Some(base.join("aitasks").join("config.toml"))
}

fn read(path: &Path, required: bool) -> Result<File, Failure> {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let file: File = toml::from_str(&text)
                .map_err(|e| Failure::Input(format!("config file {}: {}", path.display(), e.message())))?;
            if file.token.is_some() && readable_by_others(path) {
                eprintln!("warning: {} holds a token and others can read it: chmod 600 it", path.display());
            }
            Ok(file)
        }
        Err(e) if !required && e.kind() == std::io::ErrorKind::NotFound => Ok(File::default()),
        Err(e) => Err(Failure::Input(format!("config file {}: {e}", path.display()))),
    }
}

/// Whether the file's group or other users may read it.
fn readable_by_others(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|meta| meta.permissions().mode() & 0o044 != 0)
}

impl Settings {
    /// Flags and environment first, then the file, then the default URL. A token is required.
    pub(crate) fn resolve(global: &Global) -> Result<Settings, Failure> {
        let (file, path) = match (&global.config, default_path()) {
            (Some(path), _) => (read(path, true)?, Some(path.clone())),
            (None, Some(path)) if global.url.is_none() || global.token.is_none() => {
                (read(&path, false)?, Some(path))
            }
            _ => (File::default(), None),
        };
        let url = global.url.clone().or_else(|| file.url.clone()).unwrap_or_else(|| DEFAULT_URL.to_owned());
        let target = parse_url(&url)?;
        let token = match (global.token.clone(), file.token) {
            (Some(token), _) => token,
            (None, Some(token)) => {
                // The file's token belongs to the file's URL, or to the default one.
                let home = file.url.as_deref().unwrap_or(DEFAULT_URL);
                if parse_url(home)?.origin() != target.origin() {
                    let file = path.as_deref().map(|p| p.display().to_string()).unwrap_or_default();
                    let whose =
                        if home == DEFAULT_URL { "the default URL, as it names none" } else { "its own url" };
                    return Err(Failure::Input(format!(
                        "the token in {file} is sent only to {home} ({whose}), and --url or AITASKS_URL \
                         names {url}: give the token for it with --token or AITASKS_TOKEN"
                    )));
                }
                token
            }
            (None, None) => String::new(),
        };
        let token = token.trim();
        if token.is_empty() {
            return Err(Failure::Input(
                "no token: give --token, set AITASKS_TOKEN, or put `token` in the config file".into(),
            ));
        }
        if !global.allow_insecure_http && target.scheme() == "http" && !aitasks_client::is_loopback(&target) {
            return Err(Failure::Input(format!(
                "refusing to send the token over plain HTTP to {url}: http:// is for this machine's \
                 loopback only (127.0.0.1, [::1], localhost). Use https://, or --allow-insecure-http \
                 (AITASKS_ALLOW_INSECURE_HTTP=1) on a network you trust"
            )));
        }
        Ok(Settings { url, token: token.to_owned() })
    }
}

fn parse_url(url: &str) -> Result<reqwest::Url, Failure> {
    reqwest::Url::parse(url).map_err(|e| Failure::Input(format!("the URL {url:?}: {e}")))
}
