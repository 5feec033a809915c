//! Closed sets of named choices (a judge strategy, an ensemble rule, an artifact status):
//! one canonical `snake_case` name each, read back leniently (`one-shot`, `One_Shot`). The
//! command line adapts these in `cli` (no clap below it); config files and manifests use
//! the same names.
//!
//! Not strum's `EnumString` (used for the TUI's action names, which are exact): these are
//! typed by people on command lines and in files, so `-`/`_` and case must not matter, and
//! a wrong name must list the right ones — strum's parse error says neither.

/// An enum whose values have one canonical name each.
pub trait Choice: Sized + Copy + Send + Sync + 'static {
    /// Every value, in the order help lists them.
    const ALL: &'static [Self];
    /// What kind of thing this is, for messages (`strategy`).
    const WHAT: &'static str;

    /// The canonical name (`snake_case`).
    fn name(self) -> &'static str;

    /// Reads a name: case, `-` and `_` do not matter; anything else is an error listing
    /// the choices.
    fn parse_choice(s: &str) -> Result<Self, UnknownChoice> {
        let wanted = normalize(s);
        Self::ALL
            .iter()
            .copied()
            .find(|v| normalize(v.name()) == wanted)
            .ok_or_else(|| UnknownChoice::of::<Self>(s))
    }
}

/// A name that is none of a set's choices; the message lists them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{given}' is not a {what}; use one of: {}", .choices.join(", "))]
pub struct UnknownChoice {
    /// The name as it was written.
    pub given: String,
    /// What kind of name was expected (`format`, `scale`), for the message.
    pub what: &'static str,
    /// The names that would have been accepted.
    pub choices: Vec<&'static str>,
}

impl UnknownChoice {
    /// The error for `given`, which is none of `T`'s choices.
    pub fn of<T: Choice>(given: &str) -> Self {
        Self {
            given: given.to_owned(),
            what: T::WHAT,
            choices: T::ALL.iter().map(|v| v.name()).collect(),
        }
    }
}

fn normalize(s: &str) -> String {
    s.trim()
        .chars()
        .map(|c| {
            if c == '-' {
                '_'
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect()
}

/// Implements `Choice`, `FromStr` and `Display` for a fieldless enum from its names.
#[macro_export]
macro_rules! choice_enum {
    ($ty:ty, $what:literal, { $($variant:path => $name:literal),+ $(,)? }) => {
        impl $crate::core::choice::Choice for $ty {
            const ALL: &'static [Self] = &[$($variant),+];
            const WHAT: &'static str = $what;
            fn name(self) -> &'static str {
                match self {
                    $($variant => $name),+
                }
            }
        }
        impl ::std::str::FromStr for $ty {
            type Err = $crate::core::choice::UnknownChoice;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                <$ty as $crate::core::choice::Choice>::parse_choice(s)
            }
        }
        impl ::std::fmt::Display for $ty {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str($crate::core::choice::Choice::name(*self))
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::Choice;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Colour {
        DarkRed,
        Blue,
    }
    crate::choice_enum!(Colour, "colour", { Colour::DarkRed => "dark_red", Colour::Blue => "blue" });

    #[test]
    fn names_read_back_leniently_and_errors_list_the_choices() {
        assert_eq!("dark-red".parse::<Colour>(), Ok(Colour::DarkRed));
        assert_eq!(" Dark_Red ".parse::<Colour>(), Ok(Colour::DarkRed));
        assert_eq!(Colour::Blue.to_string(), "blue");
        assert_eq!(
            Colour::parse_choice("green").map_err(|e| e.to_string()),
            Err("'green' is not a colour; use one of: dark_red, blue".to_owned())
        );
    }
}
