//! Semantic versions as the registry orders them: `MAJOR.MINOR.PATCH`, an optional
//! `-PRERELEASE` and an ignored `+BUILD`, compared by semver precedence (1.10.0 > 1.9.0,
//! 1.0.0-rc.1 < 1.0.0, numeric prerelease identifiers below alphanumeric ones) — the
//! `semver` crate's parsing and precedence, with build metadata dropped so that it neither
//! orders nor distinguishes versions.

use std::fmt;

/// A rubric version, ordered by semver precedence (build metadata dropped).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version(semver::Version);

/// Which part of a version goes up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bump {
    /// 1.2.3 → 1.2.4.
    Patch,
    /// 1.2.3 → 1.3.0.
    Minor,
    /// 1.2.3 → 2.0.0.
    Major,
}

impl Version {
    /// `major.minor.patch`, without prerelease.
    pub fn new(major: u64, minor: u64, patch: u64) -> Version {
        Version(semver::Version::new(major, minor, patch))
    }

    /// The next version: `1.2.3` → patch `1.2.4`, minor `1.3.0`, major `2.0.0` (a
    /// prerelease is dropped).
    #[must_use]
    pub fn bumped(&self, part: Bump) -> Version {
        let v = &self.0;
        match part {
            Bump::Patch => Version::new(v.major, v.minor, v.patch + 1),
            Bump::Minor => Version::new(v.major, v.minor + 1, 0),
            Bump::Major => Version::new(v.major + 1, 0, 0),
        }
    }

    /// Parses a version; the error says what is wrong with it.
    pub fn parse(text: &str) -> Result<Version, semver::Error> {
        let mut v = semver::Version::parse(text)?;
        v.build = semver::BuildMetadata::EMPTY;
        Ok(Version(v))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
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
