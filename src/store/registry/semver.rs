//! Semantic versions as the registry orders them: `MAJOR.MINOR.PATCH`, an optional
//! `-PRERELEASE` and an ignored `+BUILD`, compared by semver precedence (1.10.0 > 1.9.0,
//! 1.0.0-rc.1 < 1.0.0, numeric prerelease identifiers below alphanumeric ones).

use std::cmp::Ordering;
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    major: u64,
    minor: u64,
    patch: u64,
    pre: Vec<Ident>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Ident {
    Num(u64),
    Alpha(String),
}

/// Which part of a version goes up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bump {
    Patch,
    Minor,
    Major,
}

impl Version {
    pub fn new(major: u64, minor: u64, patch: u64) -> Version {
        Version {
            major,
            minor,
            patch,
            pre: Vec::new(),
        }
    }

    /// The next version: `1.2.3` → patch `1.2.4`, minor `1.3.0`, major `2.0.0` (a
    /// prerelease is dropped).
    #[must_use]
    pub fn bumped(&self, part: Bump) -> Version {
        let (major, minor, patch) = match part {
            Bump::Patch => (self.major, self.minor, self.patch + 1),
            Bump::Minor => (self.major, self.minor + 1, 0),
            Bump::Major => (self.major + 1, 0, 0),
        };
        Version {
            major,
            minor,
            patch,
            pre: Vec::new(),
        }
    }

    /// Parses a version; the error says what is wrong with it.
    pub fn parse(text: &str) -> Result<Version, String> {
        let (rest, build) = match text.split_once('+') {
            Some((r, b)) => (r, Some(b)),
            None => (text, None),
        };
        if let Some(build) = build {
            for part in build.split('.') {
                check_ident(part, "build metadata")?;
            }
        }
        let (core, pre) = match rest.split_once('-') {
            Some((c, p)) => (c, Some(p)),
            None => (rest, None),
        };
        let parts: Vec<&str> = core.split('.').collect();
        let [major, minor, patch] = parts.as_slice() else {
            return Err("it needs three numbers, MAJOR.MINOR.PATCH".into());
        };
        let mut version = Version {
            major: number(major)?,
            minor: number(minor)?,
            patch: number(patch)?,
            pre: Vec::new(),
        };
        if let Some(pre) = pre {
            for part in pre.split('.') {
                check_ident(part, "prerelease")?;
                version
                    .pre
                    .push(if part.bytes().all(|b| b.is_ascii_digit()) {
                        Ident::Num(number(part)?)
                    } else {
                        Ident::Alpha(part.to_owned())
                    });
            }
        }
        Ok(version)
    }
}

fn number(part: &str) -> Result<u64, String> {
    if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("'{part}' is not a number"));
    }
    if part.len() > 1 && part.starts_with('0') {
        return Err(format!("'{part}' has a leading zero"));
    }
    part.parse()
        .map_err(|_| format!("'{part}' is too large a number"))
}

fn check_ident(part: &str, what: &str) -> Result<(), String> {
    if part.is_empty() {
        return Err(format!("its {what} has an empty identifier"));
    }
    if !part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
        return Err(format!(
            "its {what} identifier '{part}' may hold only letters, digits and '-'"
        ));
    }
    Ok(())
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.major, self.minor, self.patch)
            .cmp(&(other.major, other.minor, other.patch))
            .then_with(|| match (self.pre.is_empty(), other.pre.is_empty()) {
                (true, true) => Ordering::Equal,
                // A release ranks above every prerelease of it.
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => self.pre.cmp(&other.pre),
            })
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ident {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Ident::Num(a), Ident::Num(b)) => a.cmp(b),
            (Ident::Num(_), Ident::Alpha(_)) => Ordering::Less,
            (Ident::Alpha(_), Ident::Num(_)) => Ordering::Greater,
            (Ident::Alpha(a), Ident::Alpha(b)) => a.cmp(b),
        }
    }
}

impl PartialOrd for Ident {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        for (i, p) in self.pre.iter().enumerate() {
            f.write_str(if i == 0 { "-" } else { "." })?;
            match p {
                Ident::Num(n) => write!(f, "{n}")?,
                Ident::Alpha(s) => f.write_str(s)?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_bump_by_part() {
        let x = v("1.2.3-rc.1");
        assert_eq!(x.bumped(Bump::Patch).to_string(), "1.2.4");
        assert_eq!(x.bumped(Bump::Minor).to_string(), "1.3.0");
        assert_eq!(x.bumped(Bump::Major).to_string(), "2.0.0");
    }

    fn v(s: &str) -> Version {
        Version::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn precedence_follows_semver() {
        let ordered = [
            "1.0.0-alpha",
            "1.0.0-alpha.1",
            "1.0.0-alpha.beta",
            "1.0.0-beta",
            "1.0.0-beta.2",
            "1.0.0-beta.11",
            "1.0.0-rc.1",
            "1.0.0",
            "1.2.0",
            "1.9.0",
            "1.10.0",
            "2.0.0",
        ];
        for pair in ordered.windows(2) {
            assert!(v(pair[0]) < v(pair[1]), "{} < {}", pair[0], pair[1]);
        }
        assert_eq!(v("1.0.0+build.5"), v("1.0.0"));
        assert_eq!(v("1.0.0-rc.1").to_string(), "1.0.0-rc.1");
    }

    #[test]
    fn rejects_what_is_not_semver() {
        for bad in [
            "1",
            "1.0",
            "1.0.0.0",
            "v1.0.0",
            "1.01.0",
            "1.0.0-",
            "1.0.0-a..b",
            "1.0.0+",
            "1.x.0",
            "1.0.0-rc_1",
            "",
        ] {
            assert!(Version::parse(bad).is_err(), "{bad} should be refused");
        }
    }
}
