//! The run engine's error: a message that names what to fix (the front end adds the exit
//! code or shows it where the user is).

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub message: String,
}

impl Error {
    pub fn input(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl From<crate::formats::Diagnostics> for Error {
    fn from(d: crate::formats::Diagnostics) -> Self {
        Self::input(d.to_string())
    }
}

impl From<crate::formats::Diagnostic> for Error {
    fn from(d: crate::formats::Diagnostic) -> Self {
        Self::input(d.to_string())
    }
}

impl From<crate::store::StoreError> for Error {
    fn from(e: crate::store::StoreError) -> Self {
        Self::input(e.to_string())
    }
}
