//! Which workspace configs the user trusts (like direnv's `allow` or mise's `trust`): the
//! settings of a `rubricate.yaml` that can run programs or send a secret somewhere —
//! `allow_commands`, a provider that names an `api_key_env`, a provider whose `base_url`
//! is not this machine — are honoured only from a config the user trusted with
//! `rubricate trust DIR`. A trust records the workspace's own path of the file and the
//! SHA-256 of its bytes in the user's config folder (`trusted.json`); a changed file needs
//! trusting again. A config found by walking up from the current folder — a downloaded
//! project, a parent folder someone else wrote — is never trusted silently.
//!
//! Trust belongs to the folder, not to the bytes a path leads to: a `rubricate.yaml` that is
//! a symbolic link is never trusted (git stores links, so a cloned project could point its
//! config at one the user trusted elsewhere and have its own rubrics run with that config's
//! powers), and a hard link is another path, so it is not trusted either. The folders
//! above the file are resolved (`/tmp` and `/private/tmp` are one place): a workspace
//! reached through a linked folder holds the very same files, rubrics included.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::StoreError;
use crate::core::atomic::AtomicFile;

/// One trusted config: its real path and the hash of the bytes that were trusted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Trusted {
    path: PathBuf,
    sha256: String,
}

/// Where trusts are kept: `$XDG_CONFIG_HOME/rubricate/trusted.json` (or the platform's
/// config folder); `None` when the platform has none.
fn trust_file() -> Option<PathBuf> {
    crate::core::dirs::config_dir().map(|d| d.join("trusted.json"))
}

fn read_all(file: &Path) -> Vec<Trusted> {
    std::fs::read(file)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// Where `config` leads when it is a symbolic link (what it names, as written); `None` for a
/// file of its own (or one that cannot be read).
pub fn link_target(config: &Path) -> Option<PathBuf> {
    std::fs::symlink_metadata(config)
        .ok()
        .filter(|m| m.file_type().is_symlink())
        .map(|_| std::fs::read_link(config).unwrap_or_default())
}

/// The path a trust is bound to: the file's own name in its resolved folder (never where a
/// link leads). `None` for a link or a file whose folder cannot be resolved.
fn own_path(config: &Path) -> Option<PathBuf> {
    if link_target(config).is_some() {
        return None;
    }
    let name = config.file_name()?;
    let dir = match config.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::canonicalize(dir).ok().map(|d| d.join(name))
}

/// Whether the config at `config`, holding `text`, is trusted as it is now (a symbolic link
/// never is).
pub fn is_trusted(config: &Path, text: &str) -> bool {
    let (Some(file), Some(own)) = (trust_file(), own_path(config)) else {
        return false;
    };
    let hash = crate::core::hash::sha256_hex(text);
    read_all(&file)
        .iter()
        .any(|t| t.path == own && t.sha256 == hash)
}

/// Trusts the config at `config` as its bytes are now (an older trust of the same file is
/// replaced). Returns the file the trust was recorded in. A symbolic link is refused.
pub fn trust(config: &Path) -> Result<PathBuf, StoreError> {
    let file = trust_file().ok_or_else(|| {
        StoreError::Refused("this system has no user config folder to record trust in".into())
    })?;
    if let Some(target) = link_target(config) {
        return Err(StoreError::Refused(format!(
            "{} is a symbolic link (to {}), and a link is never trusted: trust belongs to a workspace's own file, not to the file a link leads to. If this folder should have its settings, {}",
            config.display(),
            target.display(),
            copy_instead(config)
        )));
    }
    let real = own_path(config).ok_or_else(|| {
        StoreError::Refused(format!("{}: cannot resolve its folder", config.display()))
    })?;
    let text = std::fs::read_to_string(&real).map_err(StoreError::at(&real))?;
    let mut all = read_all(&file);
    all.retain(|t| t.path != real);
    all.push(Trusted {
        path: real,
        sha256: crate::core::hash::sha256_hex(&text),
    });
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(StoreError::at(dir))?;
    }
    let text = serde_json::to_string_pretty(&all).map_err(|e| StoreError::at(&file)(e.into()))?;
    AtomicFile::write_whole(&file, text.as_bytes()).map_err(StoreError::at(&file))?;
    Ok(file)
}

/// What to do about a linked config, as an instruction: put a copy of the file in its place
/// (after reading it) and trust that.
pub fn copy_instead(config: &Path) -> String {
    // The link's target resolved, so the command works from any folder.
    let target = std::fs::canonicalize(config).unwrap_or_else(|_| config.to_path_buf());
    format!(
        "replace the link with a copy (`cp --remove-destination {} {}`), read it, then run `rubricate trust {}`",
        target.display(),
        config.display(),
        config.parent().unwrap_or(config).display()
    )
}

/// Whether a `base_url` points at this machine (`localhost`, `127.x.x.x`, `[::1]`): a
/// local server sees nothing that leaves the machine.
pub fn is_loopback(base_url: &str) -> bool {
    let rest = base_url.split_once("://").map_or(base_url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    // Credentials before `@` are not the host.
    let host_port = authority.rsplit('@').next().unwrap_or_default();
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        v6.split(']').next().unwrap_or_default()
    } else {
        host_port.split(':').next().unwrap_or_default()
    };
    let host = host.to_ascii_lowercase();
    host == "localhost"
        || host == "::1"
        || host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::is_loopback;

    #[test]
    fn only_this_machine_is_loopback() {
        for url in [
            "http://127.0.0.1:8080/v1",
            "http://localhost/v1",
            "http://LOCALHOST:1",
            "http://[::1]:9/v1",
            "http://127.9.9.9",
        ] {
            assert!(is_loopback(url), "{url}");
        }
        for url in [
            "https://api.example.com/v1",
            "http://127.0.0.1.evil.com/",
            "http://localhost@evil.com/",
            "http://10.0.0.1/",
            "http://[::2]/",
            "evil.com",
        ] {
            assert!(!is_loopback(url), "{url}");
        }
    }
}
