//! One error model for the whole core: every failure is a [`CoreError`] with a [`ErrorKind`]
//! chosen by cause. The C ABI turns the kind into the status code and keeps the message for
//! `sluice_last_error`; the Java side maps the status to an exception class.

use std::fmt;

use arrow::error::ArrowError;
use datafusion::error::DataFusionError;

use crate::abi;

/// Why a call failed. Each kind *is* its ABI status code: the discriminants are the
/// `abi::SLUICE_ERR_*` constants, the only place the numbers are written (cbindgen copies
/// only literal numbers into `include/sluice.h`, so the literals stay in abi.rs; the Java
/// table `NativeException.Status` is checked against the header by StatusTableMatchesHeaderTest).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum ErrorKind {
    /// A NULL handle, a bad index, a malformed options message: a bug in the caller.
    InvalidArgument = abi::SLUICE_ERR_INVALID_ARGUMENT,
    /// A configuration value that cannot work (unknown format, bad CSV delimiter, …).
    Config = abi::SLUICE_ERR_CONFIG,
    /// The SQL cannot be planned: syntax, unknown table or column, type error, stateful SQL.
    Plan = abi::SLUICE_ERR_PLAN,
    /// Running the plan failed on a batch (e.g. a cast of a bad value).
    Execution = abi::SLUICE_ERR_EXECUTION,
    /// Input data that does not match its declared schema or format.
    Data = abi::SLUICE_ERR_DATA,
    /// A file could not be opened, read or written.
    Io = abi::SLUICE_ERR_IO,
    /// A Rust panic caught at the boundary.
    Panic = abi::SLUICE_ERR_PANIC,
}

impl ErrorKind {
    pub const fn status(self) -> i32 {
        self as i32
    }
}

#[derive(Debug)]
pub struct CoreError {
    pub kind: ErrorKind,
    pub message: String,
}

pub type Result<T, E = CoreError> = std::result::Result<T, E>;

impl CoreError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        CoreError { kind, message: message.into() }
    }
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidArgument, message)
    }
    pub fn config(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Config, message)
    }
    pub fn plan(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Plan, message)
    }
    pub fn data(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Data, message)
    }
    pub fn io(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Io, message)
    }
    /// Prefixes the message with where it happened ("reading data/in.csv: …").
    pub fn context(mut self, context: impl fmt::Display) -> Self {
        self.message = format!("{context}: {}", self.message);
        self
    }
}

impl fmt::Display for CoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CoreError {}

impl From<ArrowError> for CoreError {
    fn from(e: ArrowError) -> Self {
        CoreError::new(arrow_kind(&e), e.to_string())
    }
}

fn arrow_kind(e: &ArrowError) -> ErrorKind {
    match e {
        ArrowError::IoError(..) => ErrorKind::Io,
        ArrowError::ParseError(_)
        | ArrowError::JsonError(_)
        | ArrowError::CsvError(_)
        | ArrowError::CastError(_)
        | ArrowError::InvalidArgumentError(_) => ErrorKind::Data,
        _ => ErrorKind::Execution,
    }
}

impl From<DataFusionError> for CoreError {
    fn from(e: DataFusionError) -> Self {
        // Classify by the root cause, not the wrapper DataFusion put around it.
        let kind = match e.find_root() {
            DataFusionError::SQL(..) | DataFusionError::Plan(_) | DataFusionError::SchemaError(..) | DataFusionError::NotImplemented(_) => {
                ErrorKind::Plan
            }
            DataFusionError::IoError(_) => ErrorKind::Io,
            DataFusionError::ArrowError(ae, _) => arrow_kind(ae),
            _ => ErrorKind::Execution,
        };
        CoreError::new(kind, strip_datafusion_noise(&e.to_string()))
    }
}

impl From<std::io::Error> for CoreError {
    fn from(e: std::io::Error) -> Self {
        CoreError::io(e.to_string())
    }
}

impl From<parquet::errors::ParquetError> for CoreError {
    fn from(e: parquet::errors::ParquetError) -> Self {
        CoreError::new(ErrorKind::Data, format!("parquet: {e}"))
    }
}

/// DataFusion nests context ("Error during planning: …", "Arrow error: …"); users want the cause.
fn strip_datafusion_noise(message: &str) -> String {
    let mut m = message.trim();
    for prefix in ["Error during planning: ", "Schema error: ", "SQL error: ", "Arrow error: ", "This feature is not implemented: "] {
        if let Some(rest) = m.strip_prefix(prefix) {
            m = rest;
        }
    }
    m.to_string()
}
