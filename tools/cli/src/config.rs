//! The base URL and the token: from the flags, else the environment (clap reads both), else the
//! config file.

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
        let file = match (&global.config, default_path()) {
            (Some(path), _) => read(path, true)?,
            (None, Some(path)) if global.url.is_none() || global.token.is_none() => read(&path, false)?,
            _ => File::default(),
        };
        let url = global.url.clone().or(file.url).unwrap_or_else(|| DEFAULT_URL.to_owned());
        let token =
            global.token.clone().or(file.token).filter(|t| !t.trim().is_empty()).ok_or_else(|| {
                Failure::Input(
                    "no token: give --token, set AITASKS_TOKEN, or put `token` in the config file".into(),
                )
            })?;
        Ok(Settings { url, token: token.trim().to_owned() })
    }
}
