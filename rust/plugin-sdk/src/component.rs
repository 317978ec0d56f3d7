//! The traits a plugin implements, one per component kind.

use std::time::Duration;

use arrow::array::{ArrayRef, RecordBatch};
use arrow::datatypes::{DataType, SchemaRef};
use sluice_plugin_sys as sys;

use crate::error::Result;
use crate::options::{InstanceInfo, OptionSpec, Options};

/// What a source's [`poll`](Source::poll) produced.
#[derive(Debug, Clone)]
pub enum Poll {
    /// A batch of the schema from `open`, with at most `max_rows` rows. An empty batch is
    /// reported to the host as [`Poll::NoneYet`].
    Batch(RecordBatch),
    /// Nothing arrived within the timeout.
    NoneYet,
    /// Bounded input is exhausted; `poll` is not called again.
    Finished,
}

/// Volatility of a scalar UDF, as SQL engines define it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Volatility {
    /// Same arguments, same result, always (the engine may fold constant calls).
    Immutable,
    /// Same arguments, same result within one query.
    Stable,
    /// May differ on every call.
    Volatile,
}

impl Volatility {
    pub fn code(self) -> i32 {
        match self {
            Volatility::Immutable => sys::SLUICE_VOLATILITY_IMMUTABLE,
            Volatility::Stable => sys::SLUICE_VOLATILITY_STABLE,
            Volatility::Volatile => sys::SLUICE_VOLATILITY_VOLATILE,
        }
    }
}

/// A source of batches. The SDK calls, in order: `open`, then `restore` (only when a previous
/// run finalized a snapshot), then `poll`, `snapshot` and `commit` in any order; the state is
/// dropped at `close`. Successive calls may come from different threads (hence `Send`), never
/// two at once.
pub trait Source: Sized + Send + 'static {
    /// The name a pipeline selects it by: lowercase letters, digits and '_'.
    const NAME: &'static str;
    /// One paragraph for `sluice plugin inspect`.
    const DESCRIPTION: &'static str = "";
    /// The options it takes. When not empty, the SDK rejects (InvalidOptions) unknown option
    /// names, missing required ones and values of the wrong JSON type before calling `open`.
    const OPTIONS: &'static [OptionSpec] = &[];

    /// Prepares the source and returns the schema of every batch it will emit. Must have no
    /// effect outside the process (`sluice validate` stops here): connect on the first poll.
    fn open(options: &Options, instance: &InstanceInfo) -> Result<(Self, SchemaRef)>;

    /// Returns to the position of a snapshot a previous run finalized.
    fn restore(&mut self, _snapshot: &[u8]) -> Result<()> {
        Ok(())
    }

    /// Emits at most `max_rows` rows, waiting at most `timeout` for them.
    fn poll(&mut self, max_rows: usize, timeout: Duration) -> Result<Poll>;

    /// The position after the last batch polled (None, or empty, for no position).
    fn snapshot(&mut self, _epoch: i64) -> Result<Option<Vec<u8>>> {
        Ok(None)
    }

    /// Checkpoint `epoch` is durable in every sink: acknowledge input up to its snapshot.
    fn commit(&mut self, _epoch: i64) -> Result<()> {
        Ok(())
    }
}

/// A transform of one input. Batches it returns are queued and handed to the host in order;
/// empty ones are dropped, and each must have exactly the output schema from `open`.
pub trait Transform: Sized + Send + 'static {
    const NAME: &'static str;
    const DESCRIPTION: &'static str = "";
    const OPTIONS: &'static [OptionSpec] = &[];

    /// Prepares the transform for batches of `input` and returns the output schema.
    fn open(options: &Options, instance: &InstanceInfo, input: SchemaRef) -> Result<(Self, SchemaRef)>;

    /// Processes one input batch (owned: it may be kept).
    fn process(&mut self, batch: RecordBatch) -> Result<Vec<RecordBatch>>;

    /// The barrier of checkpoint `epoch` follows the batches processed so far: return anything
    /// held back for them.
    fn barrier(&mut self, _epoch: i64) -> Result<Vec<RecordBatch>> {
        Ok(Vec::new())
    }
}

/// The end of a pipeline. `open` must leave the destination untouched; `start`, `write`,
/// `flush` and `commit` are called only when the pipeline runs.
pub trait Sink: Sized + Send + 'static {
    const NAME: &'static str;
    const DESCRIPTION: &'static str = "";
    const OPTIONS: &'static [OptionSpec] = &[];

    fn open(options: &Options, instance: &InstanceInfo, schema: SchemaRef) -> Result<Self>;

    /// Opens the destination (creates the file, connects).
    fn start(&mut self) -> Result<()> {
        Ok(())
    }

    /// Writes one batch (of the schema from `open`, already validated). May buffer.
    fn write(&mut self, batch: RecordBatch) -> Result<()>;

    /// Returns only when everything written before the barrier of `epoch` is durable.
    fn flush(&mut self, epoch: i64) -> Result<()>;

    /// Checkpoint `epoch` is finalized.
    fn commit(&mut self, _epoch: i64) -> Result<()> {
        Ok(())
    }
}

/// A scalar SQL function. One value (made with `Default`) serves every call, possibly from
/// several threads at once (hence `Sync`).
pub trait ScalarUdf: Default + Send + Sync + 'static {
    /// The SQL function name: lowercase letters, digits and '_'.
    const NAME: &'static str;
    const DESCRIPTION: &'static str = "";
    const VOLATILITY: Volatility = Volatility::Immutable;

    /// The argument types; SQL arguments are cast to them before the call.
    fn arg_types() -> Vec<DataType>;

    /// The result type.
    fn return_type() -> DataType;

    /// Computes `n_rows` results. `args` has one array per declared argument, each of its
    /// declared type and of length `n_rows` (it may be a slice: use the array API, which
    /// honours offsets). The arrays are borrowed from the host for the call: the result may
    /// share their buffers (the SDK then copies it), but they must not be kept beyond it.
    /// The result must be of `return_type()` and of length `n_rows`.
    fn invoke(&self, args: &[ArrayRef], n_rows: usize) -> Result<ArrayRef>;
}

/// Rewrites the pipeline file before it is validated.
pub trait Preprocessor: 'static {
    const NAME: &'static str;
    const DESCRIPTION: &'static str = "";
    const OPTIONS: &'static [OptionSpec] = &[];

    /// Returns the rewritten text of the pipeline file at `pipeline_path`.
    fn rewrite(options: &Options, pipeline_path: &str, yaml: &str) -> Result<String>;
}

/// Sees every batch one node emits, read-only (mirroring, auditing): it cannot change or drop
/// them, and its errors fail the run. The SDK calls `open`, then `observe` and `barrier` in
/// any order; the state is dropped at `close`. Successive calls may come from different
/// threads (hence `Send`), never two at once.
pub trait SideOutput: Sized + Send + 'static {
    const NAME: &'static str;
    const DESCRIPTION: &'static str = "";
    const OPTIONS: &'static [OptionSpec] = &[];

    /// Prepares the side output for the batches of `observed_node`, of `schema`. Must have no
    /// effect outside the process (`sluice validate` stops here): create files on the first
    /// `observe` or `barrier`.
    fn open(options: &Options, instance: &InstanceInfo, observed_node: &str, schema: SchemaRef) -> Result<Self>;

    /// Observes one batch of the schema from `open`, validated. The host only lends its batch
    /// for the call; the SDK hands over a deep copy in memory of its own (the host's struct is
    /// neither released nor referenced after the call), so cloning `batch` to keep it is safe.
    fn observe(&mut self, batch: &RecordBatch) -> Result<()>;

    /// Returns only when everything observed before the barrier of checkpoint `epoch` is
    /// durable; returning Ok acknowledges the epoch.
    fn barrier(&mut self, _epoch: i64) -> Result<()> {
        Ok(())
    }
}
