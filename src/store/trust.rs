//! Which workspace configs the user trusts (like direnv's `allow` or mise's `trust`): the
//! settings of a `rubricate.yaml` that can run programs or send a secret somewhere —
//! `allow_commands`, a provider that names an `api_key_env`, a provider whose `base_url`
//! is not this machine — are honoured only from a config the user trusted with
//! `rubricate trust DIR`. A trust records the file's real path and the SHA-256 of its
//! bytes in the user's config folder (`trusted.json`); a changed file needs trusting again.
//! A config found by walking up from the current folder — a downloaded project, a parent
//! folder someone else wrote — is never trusted silently.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{AtomicFile, FileError};

/// One trusted config: its real path and the hash of the bytes that were trusted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Trusted {
    path: PathBuf,
    sha256: String,
}

/// Where trusts are kept: `$XDG_CONFIG_HOME/rubricate/trusted.json` (or the platform's
/// config folder); `None` when the platform has none.
pub fn trust_file() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "rubricate").map(|d| d.config_dir().join("trusted.json"))
}

fn read_all(file: &Path) -> Vec<Trusted> {
    std::fs::read(file)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// Whether the config at `config`, holding `text`, is trusted as it is now.
pub fn is_trusted(config: &Path, text: &str) -> bool {
    let (Some(file), Ok(real)) = (trust_file(), std::fs::canonicalize(config)) else {
        return false;
    };
    let hash = super::runs::text_hash(text);
    read_all(&file)
        .iter()
        .any(|t| t.path == real && t.sha256 == hash)
}

/// Trusts the config at `config` as its bytes are now (an older trust of the same file is
/// replaced). Returns the file the trust was recorded in.
pub fn trust(config: &Path) -> Result<PathBuf, FileError> {
    let file = trust_file().ok_or_else(|| {
        FileError::Refused("this system has no user config folder to record trust in".into())
    })?;
    let real = std::fs::canonicalize(config).map_err(FileError::at(config))?;
    let text = std::fs::read_to_string(&real).map_err(FileError::at(&real))?;
    let mut all = read_all(&file);
    all.retain(|t| t.path != real);
    all.push(Trusted {
        path: real,
        sha256: super::runs::text_hash(&text),
    });
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(FileError::at(dir))?;
    }
    let text = serde_json::to_string_pretty(&all).map_err(|e| FileError::at(&file)(e.into()))?;
    AtomicFile::write_whole(&file, text.as_bytes()).map_err(FileError::at(&file))?;
    Ok(file)
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
