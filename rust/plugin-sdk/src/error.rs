//! The error type of plugin code and its mapping to the ABI's status codes.

use std::fmt;

use arrow::error::ArrowError;
use sluice_plugin_sys as sys;

/// Which status code an [`Error`] is reported with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// `SLUICE_PLUGIN_ERROR`: the call failed.
    Error,
    /// `SLUICE_PLUGIN_INVALID_OPTIONS`: `open` (or a preprocessor) rejected the options; the
    /// message names the option.
    InvalidOptions,
    /// `SLUICE_PLUGIN_BAD_DATA`: a record the call received cannot be processed.
    BadData,
}

impl ErrorKind {
    /// The `SLUICE_PLUGIN_*` status code of this kind.
    pub fn status(self) -> i32 {
        match self {
            ErrorKind::Error => sys::SLUICE_PLUGIN_ERROR,
            ErrorKind::InvalidOptions => sys::SLUICE_PLUGIN_INVALID_OPTIONS,
            ErrorKind::BadData => sys::SLUICE_PLUGIN_BAD_DATA,
        }
    }
}

/// An error of plugin code: a kind (the status code) and a message for the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

/// The result type of every plugin call.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// `SLUICE_PLUGIN_ERROR` with `message`.
    pub fn new(message: impl Into<String>) -> Self {
        Error { kind: ErrorKind::Error, message: message.into() }
    }

    /// `SLUICE_PLUGIN_INVALID_OPTIONS` with `message` (which should name the option).
    pub fn invalid_options(message: impl Into<String>) -> Self {
        Error { kind: ErrorKind::InvalidOptions, message: message.into() }
    }

    /// `SLUICE_PLUGIN_BAD_DATA` with `message` (which should say which value is at fault).
    pub fn bad_data(message: impl Into<String>) -> Self {
        Error { kind: ErrorKind::BadData, message: message.into() }
    }

    pub fn with_kind(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error { kind, message: message.into() }
    }

    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    /// The same error with `prefix: ` put before its message.
    pub fn context(self, prefix: impl fmt::Display) -> Self {
        Error { kind: self.kind, message: format!("{prefix}: {}", self.message) }
    }

    /// The status code this error is reported with.
    pub fn status(&self) -> i32 {
        self.kind.status()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl From<ArrowError> for Error {
    fn from(e: ArrowError) -> Self {
        Error::new(e.to_string())
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::new(e.to_string())
    }
}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Self {
        Error::new(e.to_string())
    }
}

impl From<String> for Error {
    fn from(message: String) -> Self {
        Error::new(message)
    }
}

impl From<&str> for Error {
    fn from(message: &str) -> Self {
        Error::new(message)
    }
}
