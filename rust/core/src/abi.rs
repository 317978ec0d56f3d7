//! The C ABI (`include/sluice.h`, generated from this file by cbindgen).
//!
//! Conventions, the same for every function:
//! - the return value is a status: `SLUICE_OK` or one of `SLUICE_ERR_*`; results go through
//!   out-pointers; the message of the last failure on this thread is `sluice_last_error`;
//! - every body runs inside [`guard`], which turns errors and panics into a status, so a Rust
//!   panic never unwinds into the JVM;
//! - handles are opaque, created by `*_create`/`*_open`/`*_import` and freed exactly once by the
//!   matching `*_free` (NULL is accepted and ignored); `sluice_live_handles` counts them;
//! - `struct ArrowArray` / `struct ArrowSchema` passed *in* are moved: the callee releases them
//!   exactly once, also when it fails, and leaves `release == NULL` in the caller's copy; those
//!   passed *out* are written into caller memory and then owned by the caller;
//! - threads: any function may be called from any thread, but a handle passed as `*mut` must not
//!   be used by two threads at once, nor freed while another thread uses it.
//!
//! Each function's `# Safety` section (copied into the header) names what its caller must
//! guarantee; inside, each unsafe operation relies on exactly that, as its `SAFETY` comment says.

use std::cell::RefCell;
use std::ffi::{c_char, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Once};

use arrow::array::{ArrayRef, RecordBatch};
use arrow::datatypes::SchemaRef;
use arrow::ffi::{FFI_ArrowArray, FFI_ArrowSchema};
use serde::Deserialize;

use crate::cdata::{build_schema, export_batch, export_schema, import_batch, import_schema, SchemaDescription};
use crate::decode::{split_records, DecoderOptions, RecordDecoder};
use crate::dynamic_tables::{DynamicTable, TableOptions};
use crate::encode::{encode_records, parse_options, Encoded};
use crate::error::{CoreError, ErrorKind, Result};
use crate::file_io::{FileReader, FileWriter, ReaderOptions, WriterOptions};
use crate::nexmark::{Entity, GeneratorConfig, NexmarkGenerator};
use crate::plugin_udf::{free_string_of, take_message, Functions};
use crate::side_tables::SideTable;
use crate::transform::{plan_count, run_bounded_query_with, table_references, SqlTransform};

/// Version of this ABI; the host refuses a library whose version differs.
pub const SLUICE_ABI_VERSION: i32 = 2;

pub const SLUICE_OK: i32 = 0;
// The failure statuses are the discriminants of `ErrorKind` (error.rs), so a kind and its
// status cannot drift apart; the Java copy is checked by StatusTableMatchesHeaderTest.
/// A NULL handle, a bad index or malformed options: a bug in the caller.
pub const SLUICE_ERR_INVALID_ARGUMENT: i32 = 1;
/// A configuration value that cannot work.
pub const SLUICE_ERR_CONFIG: i32 = 2;
/// SQL that cannot be planned: syntax, unknown table or column, types, stateful SQL.
pub const SLUICE_ERR_PLAN: i32 = 3;
/// Running a plan on a batch failed.
pub const SLUICE_ERR_EXECUTION: i32 = 4;
/// Input data that does not match its schema or format.
pub const SLUICE_ERR_DATA: i32 = 5;
/// A file could not be opened, read or written.
pub const SLUICE_ERR_IO: i32 = 6;
/// A panic inside the core, caught at the boundary.
pub const SLUICE_ERR_PANIC: i32 = 7;

/// A record batch owned by the core.
pub struct SluiceBatch {
    batch: RecordBatch,
}

/// Bytes produced by the core (encoded records, JSON answers), with optional per-record
/// offsets and keys.
pub struct SluiceBuffer {
    encoded: Encoded,
}

/// Extra SQL functions (plugin UDFs) a pipeline's transforms may call.
pub struct SluiceFunctions {
    functions: Functions,
}

/// A dynamic table: keyed rows that transforms look up while changes are applied to it.
pub struct SluiceDynamicTable {
    table: Arc<DynamicTable>,
}

/// A SQL transform, planned once.
pub struct SluiceTransform {
    transform: SqlTransform,
}

/// What `sluice_transform_create` plans a transform over. A struct rather than three arguments:
/// the JVM links each downcall shape (argument count) once, ~5 ms at a pipeline's start, and with
/// it the call has three arguments, a shape every pipeline links anyway.
#[repr(C)]
pub struct SluiceTransformInputs {
    /// `n_schemas` consecutive schemas, in the order of the options' `inputs`, moved into the
    /// core; NULL when `n_schemas` is 0.
    pub schemas: *mut FFI_ArrowSchema,
    pub n_schemas: usize,
    /// Plugin functions the SQL may call (borrowed for the call), or NULL for none.
    pub functions: *const SluiceFunctions,
}

/// Decodes record slabs (JSON, CSV) of one schema.
pub struct SluiceDecoder {
    decoder: RecordDecoder,
}

/// Reads a JSON-lines, CSV or Parquet file batch by batch.
pub struct SluiceFileReader {
    reader: FileReader,
}

/// Writes batches to a JSON-lines, CSV or Parquet file.
pub struct SluiceFileWriter {
    writer: FileWriter,
}

/// The Nexmark event generator.
pub struct SluiceGenerator {
    generator: NexmarkGenerator,
}

// ---------------------------------------------------------------------------------------------
// The guard, errors and handles

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
    static PANIC_LOCATION: RefCell<Option<String>> = const { RefCell::new(None) };
}

static LIVE_HANDLES: AtomicI64 = AtomicI64::new(0);

/// Runs `body`, turning its error or panic into a status and the thread's last error.
fn guard(body: impl FnOnce() -> Result<()>) -> i32 {
    install_panic_hook();
    let error = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => return SLUICE_OK,
        Ok(Err(error)) => error,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            let location = PANIC_LOCATION.with(|l| l.borrow_mut().take()).unwrap_or_default();
            CoreError::new(ErrorKind::Panic, format!("panic in the native core at {location}: {what}"))
        }
    };
    let message = CString::new(error.message.replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|last| *last.borrow_mut() = message);
    error.kind.status()
}

/// Records where a panic happened for the error message instead of printing to stderr
/// (the JVM's stderr belongs to the host). `SLUICE_NATIVE_BACKTRACE=1` keeps Rust's report.
fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default_hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let location = info.location().map(|l| format!("{}:{}", l.file(), l.line()));
            PANIC_LOCATION.with(|l| *l.borrow_mut() = location);
            if std::env::var_os("SLUICE_NATIVE_BACKTRACE").is_some() {
                default_hook(info);
            }
        }));
    });
}

fn new_handle<T>(value: T) -> *mut T {
    LIVE_HANDLES.fetch_add(1, Ordering::Relaxed);
    Box::into_raw(Box::new(value))
}

/// # Safety
/// `handle` is NULL or came from [`new_handle`] with this `T` and was not freed before.
unsafe fn free_handle<T>(handle: *mut T) {
    if !handle.is_null() {
        LIVE_HANDLES.fetch_sub(1, Ordering::Relaxed);
        // SAFETY: a Box leaked by new_handle, freed only here and only once (caller's contract).
        drop(unsafe { Box::from_raw(handle) });
    }
}

/// # Safety
/// `handle` is NULL or a live handle of type `T` that nobody mutates while `'a` lasts.
unsafe fn borrow<'a, T>(handle: *const T, what: &str) -> Result<&'a T> {
    // SAFETY: NULL (checked by as_ref) or live, by the caller's contract.
    unsafe { handle.as_ref() }.ok_or_else(|| CoreError::invalid(format!("{what} handle is NULL")))
}

/// # Safety
/// `handle` is NULL or a live handle of type `T` that nobody else uses while `'a` lasts.
unsafe fn borrow_mut<'a, T>(handle: *mut T, what: &str) -> Result<&'a mut T> {
    // SAFETY: NULL (checked by as_mut) or live and not aliased, by the caller's contract.
    unsafe { handle.as_mut() }.ok_or_else(|| CoreError::invalid(format!("{what} handle is NULL")))
}

/// # Safety
/// `out` is NULL or valid for writing one `T` (whose old value is not dropped).
unsafe fn write_out<T>(out: *mut T, value: T) -> Result<()> {
    if out.is_null() {
        return Err(CoreError::invalid("output pointer is NULL"));
    }
    // SAFETY: non-NULL and writable, by the caller's contract.
    unsafe { out.write(value) };
    Ok(())
}

/// # Safety
/// `s` is NULL or a NUL-terminated string that stays unchanged while `'a` lasts.
unsafe fn c_str<'a>(s: *const c_char, what: &str) -> Result<&'a str> {
    if s.is_null() {
        return Err(CoreError::invalid(format!("{what} is NULL")));
    }
    // SAFETY: non-NULL and NUL-terminated, by the caller's contract.
    unsafe { CStr::from_ptr(s) }.to_str().map_err(|_| CoreError::invalid(format!("{what} is not UTF-8")))
}

/// # Safety
/// As [`c_str`].
unsafe fn options<'a, T: Deserialize<'a>>(json: *const c_char, what: &str) -> Result<T> {
    // SAFETY: the caller's contract is c_str's.
    let text = unsafe { c_str(json, what) }?;
    serde_json::from_str(text).map_err(|e| CoreError::invalid(format!("{what}: {e}")))
}

/// Takes an array the caller passed in, so it is released even if the call fails early.
///
/// # Safety
/// `array` is NULL or a valid, unreleased `ArrowArray` whose ownership moves to the core.
unsafe fn take_array(array: *mut FFI_ArrowArray) -> Option<OwnedArray> {
    // SAFETY: non-NULL (checked), valid and moved in, by the caller's contract; from_raw leaves
    // the caller's copy released, as the crossing rule says.
    (!array.is_null()).then(|| OwnedArray(unsafe { FFI_ArrowArray::from_raw(array) }))
}

/// A C array moved into the core; dropping it releases it.
struct OwnedArray(FFI_ArrowArray);

impl OwnedArray {
    /// # Safety
    /// The array holds one struct column of `schema`'s type (the ABI's caller promised it).
    unsafe fn import(mut self, schema: &SchemaRef) -> Result<RecordBatch> {
        // SAFETY: owned by us, unreleased (moved in by take_array) and of `schema`'s type.
        unsafe { import_batch(&mut self.0, schema) }
    }
}

/// The records of a slab passed as `data` plus `n_records + 1` Arrow-style offsets.
///
/// # Safety
/// `offsets` is NULL or points to `n_records + 1` values, and `data` to at least the last
/// offset's bytes; both stay unchanged while `'a` lasts.
unsafe fn records_of<'a>(data: *const u8, offsets: *const i64, n_records: usize) -> Result<Vec<&'a [u8]>> {
    if offsets.is_null() {
        return Err(CoreError::invalid("offsets pointer is NULL"));
    }
    // SAFETY: non-NULL and `n_records + 1` values long, by the caller's contract.
    let offsets = unsafe { std::slice::from_raw_parts(offsets, n_records + 1) };
    let len = offsets.last().copied().unwrap_or(0).max(0) as usize;
    // SAFETY: `data` holds at least the last offset's bytes, by the caller's contract.
    let data = if len == 0 { &[][..] } else { unsafe { std::slice::from_raw_parts(data, len) } };
    split_records(data, offsets)
}

fn batch_handle(batch: RecordBatch) -> *mut SluiceBatch {
    new_handle(SluiceBatch { batch })
}

// ---------------------------------------------------------------------------------------------
// Library

/// Writes `SLUICE_ABI_VERSION` of the loaded library.
///
/// # Safety
/// `out_version` is NULL or writable for one `int32_t`. Any thread.
#[no_mangle]
pub unsafe extern "C" fn sluice_abi_version(out_version: *mut i32) -> i32 {
    // SAFETY: out_version is NULL or writable (this function's contract).
    guard(|| unsafe { write_out(out_version, SLUICE_ABI_VERSION) })
}

/// Points `out_message` at the message of the last failed call on this thread (UTF-8, valid
/// until the next failing call on this thread; empty if none failed).
///
/// # Safety
/// `out_message` is NULL or writable for one pointer. The message belongs to the core: do not
/// free it, and read it on this thread before its next failing call.
#[no_mangle]
pub unsafe extern "C" fn sluice_last_error(out_message: *mut *const c_char) -> i32 {
    if out_message.is_null() {
        return SLUICE_ERR_INVALID_ARGUMENT;
    }
    // SAFETY: non-NULL and writable (this function's contract).
    LAST_ERROR.with(|last| unsafe { out_message.write(last.borrow().as_ptr()) });
    SLUICE_OK
}

/// Number of native handles created and not yet freed, over all handle types.
///
/// # Safety
/// `out_count` is NULL or writable for one `int64_t`. Any thread.
#[no_mangle]
pub unsafe extern "C" fn sluice_live_handles(out_count: *mut i64) -> i32 {
    // SAFETY: out_count is NULL or writable (this function's contract).
    guard(|| unsafe { write_out(out_count, LIVE_HANDLES.load(Ordering::Relaxed)) })
}

/// Number of SQL plans built by this process (a transform plans once, at create).
///
/// # Safety
/// `out_count` is NULL or writable for one `int64_t`. Any thread.
#[no_mangle]
pub unsafe extern "C" fn sluice_plan_count(out_count: *mut i64) -> i32 {
    // SAFETY: out_count is NULL or writable (this function's contract).
    guard(|| unsafe { write_out(out_count, plan_count()) })
}

/// Number of calls made through the JNI bridge (`jni_bridge.rs`) by this process: lets a test
/// prove that a run meant to use JNI really crossed JNI (an FFM call does not count).
///
/// # Safety
/// `out_count` is NULL or writable for one `int64_t`. Any thread.
#[no_mangle]
pub unsafe extern "C" fn sluice_jni_calls(out_count: *mut i64) -> i32 {
    // SAFETY: out_count is NULL or writable (this function's contract).
    guard(|| unsafe { write_out(out_count, crate::jni_glue::calls() as i64) })
}

/// Panics inside the core's guard on purpose, to test that panics surface as errors. Not a C
/// export: the test-only library (rust/debug-exports) exports it as `sluice_debug_panic`, so
/// the production library cannot be made to panic on request.
///
/// # Safety
/// `message` is NULL or a NUL-terminated string, borrowed for the call. Any thread.
#[doc(hidden)]
pub unsafe fn debug_panic(message: *const c_char) -> i32 {
    guard(|| {
        // SAFETY: NULL or NUL-terminated (this function's contract).
        let message = unsafe { c_str(message, "message") }?.to_string();
        panic!("{message}");
    })
}

/// The tables a SQL query reads, as a JSON array of names, in a new buffer.
///
/// # Safety
/// `sql` is NULL or a NUL-terminated string, borrowed for the call; `out_json` is NULL or
/// writable for one pointer. The caller owns the new buffer and frees it once with
/// `sluice_buffer_free`. Any thread.
#[no_mangle]
pub unsafe extern "C" fn sluice_sql_table_references(sql: *const c_char, out_json: *mut *mut SluiceBuffer) -> i32 {
    guard(|| {
        // SAFETY: NULL or NUL-terminated (this function's contract).
        let names = table_references(unsafe { c_str(sql, "sql") }?)?;
        let bytes = serde_json::to_vec(&names).map_err(|e| CoreError::invalid(e.to_string()))?;
        let buffer = new_handle(SluiceBuffer { encoded: Encoded { bytes, ..Encoded::default() } });
        // SAFETY: out_json is NULL or writable (this function's contract).
        unsafe { write_out(out_json, buffer) }
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct QueryOptions {
    sql: String,
    /// The name the SQL uses for the batch.
    table: String,
    /// Statements that write or define (COPY, INSERT, CREATE, SET) run only when true.
    #[serde(default)]
    allow_writes: bool,
}

/// Runs a bounded query (any SQL, aggregations included) once over one batch, given as a C
/// struct array and schema (both moved in), registered as table `table`. `options_json` is
/// `{"sql": "...", "table": "name", "allow_writes": false}`; the result is one batch. Read-only
/// unless `allow_writes` is true (default false). For small data (the state DB).
///
/// # Safety
/// `options_json` is NULL or a NUL-terminated string, borrowed for the call. `array` and
/// `schema` are NULL or valid, unreleased C Data structs (`array` of the struct type `schema`
/// describes), moved into the core: the caller must not release them again, also when the call
/// fails. `out_batch` is NULL or writable for one pointer; the caller owns the new batch and
/// frees it once with `sluice_batch_free`. Any thread.
#[no_mangle]
pub unsafe extern "C" fn sluice_sql_query(
    options_json: *const c_char,
    array: *mut FFI_ArrowArray,
    schema: *mut FFI_ArrowSchema,
    out_batch: *mut *mut SluiceBatch,
) -> i32 {
    guard(|| {
        // SAFETY (this block): array and schema are NULL or valid, unreleased and moved in,
        // array of schema's struct type (this function's contract).
        let batch = unsafe {
            let owned = take_array(array);
            let schema = import_schema(schema)?;
            owned.ok_or_else(|| CoreError::invalid("ArrowArray pointer is NULL"))?.import(&schema)?
        };
        // SAFETY: options_json is NULL or NUL-terminated (this function's contract).
        let options: QueryOptions = unsafe { options(options_json, "query options") }?;
        let result = run_bounded_query_with(&options.sql, &options.table, batch, options.allow_writes)?;
        // SAFETY: out_batch is NULL or writable (this function's contract).
        unsafe { write_out(out_batch, batch_handle(result)) }
    })
}

// ---------------------------------------------------------------------------------------------
// Schemas

/// Writes the C schema of a schema of flat columns described as JSON:
/// `{"fields": [{"name": "id", "format": "l", "nullable": false, "metadata": {..}}, ..],
/// "metadata": {..}}` (formats as in the C Data Interface; metadata optional). With
/// `sluice_schema_release` it lets the host hand schemas over and take them back by reading and
/// writing memory alone, without a release callback of its own.
///
/// # Safety
/// `description_json` is NULL or a NUL-terminated string, borrowed for the call; `out_schema` is
/// NULL or points to a writable `ArrowSchema`, overwritten without releasing what was there,
/// which the caller then owns and releases once. Any thread.
#[no_mangle]
pub unsafe extern "C" fn sluice_schema_build(description_json: *const c_char, out_schema: *mut FFI_ArrowSchema) -> i32 {
    guard(|| {
        // SAFETY: description_json is NULL or NUL-terminated (this function's contract).
        let description: SchemaDescription = unsafe { options(description_json, "schema description") }?;
        let schema = build_schema(&description)?;
        // SAFETY: out_schema is NULL or writable (this function's contract); export_schema checks NULL.
        unsafe { export_schema(&schema, out_schema) }
    })
}

/// Releases the C schema at `schema`: calls its `release` unless it is NULL (already released
/// or moved), for a host that read a schema the core wrote and cannot call a C function pointer.
///
/// # Safety
/// `schema` is NULL (an invalid-argument error) or points to a valid `ArrowSchema`, released or
/// not, which no one else releases. Any thread.
#[no_mangle]
pub unsafe extern "C" fn sluice_schema_release(schema: *mut FFI_ArrowSchema) -> i32 {
    guard(|| {
        if schema.is_null() {
            return Err(CoreError::invalid("ArrowSchema pointer is NULL"));
        }
        // SAFETY: non-NULL and valid (this function's contract); from_raw moves it out and
        // leaves the caller's copy released; dropping it calls its release once, if set.
        drop(unsafe { FFI_ArrowSchema::from_raw(schema) });
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------------
// Batches

/// Imports a batch (a struct array and its schema); both are moved into the core, zero-copy.
///
/// # Safety
/// `array` and `schema` are NULL or valid, unreleased C Data structs (`array` of the struct
/// type `schema` describes), moved into the core: the caller must not release them again, also
/// when the call fails; the array's buffers stay valid until the core releases it.
/// `out_batch` is NULL or writable for one pointer; the caller owns the new batch and frees it
/// once with `sluice_batch_free`. Any thread.
#[no_mangle]
pub unsafe extern "C" fn sluice_batch_import(array: *mut FFI_ArrowArray, schema: *mut FFI_ArrowSchema, out_batch: *mut *mut SluiceBatch) -> i32 {
    guard(|| {
        // SAFETY (this block): array and schema are NULL or valid, unreleased and moved in,
        // array of schema's struct type (this function's contract).
        let batch = unsafe {
            let owned = take_array(array);
            let schema = import_schema(schema)?;
            owned.ok_or_else(|| CoreError::invalid("ArrowArray pointer is NULL"))?.import(&schema)?
        };
        // SAFETY: out_batch is NULL or writable (this function's contract).
        unsafe { write_out(out_batch, batch_handle(batch)) }
    })
}

/// Exports a batch as a struct array (and, if `out_schema` is not NULL, its schema). The batch
/// handle stays valid; the exported structs share its buffers.
///
/// # Safety
/// `batch` is NULL or a live batch handle, borrowed for the call. `out_array` is NULL or points
/// to a writable `ArrowArray`, and `out_schema` is NULL or points to a writable `ArrowSchema`;
/// both are overwritten without releasing what was there, and the caller owns what is written
/// and releases it once. Any thread, if no other thread frees `batch`.
#[no_mangle]
pub unsafe extern "C" fn sluice_batch_export(batch: *const SluiceBatch, out_array: *mut FFI_ArrowArray, out_schema: *mut FFI_ArrowSchema) -> i32 {
    guard(|| {
        // SAFETY: batch is NULL or live (this function's contract).
        let batch = &unsafe { borrow(batch, "batch") }?.batch;
        if !out_schema.is_null() {
            // SAFETY: non-NULL and writable (this function's contract).
            unsafe { export_schema(batch.schema().as_ref(), out_schema) }?;
        }
        // SAFETY: out_array is NULL or writable (this function's contract); export_batch checks NULL.
        unsafe { export_batch(batch, out_array) }
    })
}

/// Writes the number of rows of a batch.
///
/// # Safety
/// `batch` is NULL or a live batch handle; `out_rows` is NULL or writable for one `int64_t`.
#[no_mangle]
pub unsafe extern "C" fn sluice_batch_num_rows(batch: *const SluiceBatch, out_rows: *mut i64) -> i32 {
    // SAFETY: batch is NULL or live, out_rows NULL or writable (this function's contract).
    guard(|| unsafe { write_out(out_rows, borrow(batch, "batch")?.batch.num_rows() as i64) })
}

/// A new batch of rows `offset .. offset + length` of `batch`, zero-copy (it shares the
/// buffers): the engine narrows a batch that failed down to the rows that fail.
///
/// # Safety
/// `batch` is NULL or a live batch handle, borrowed for the call; `out_batch` is NULL or writable
/// for one pointer; the caller owns the new batch and frees it once with `sluice_batch_free`.
/// Any thread, if no other thread frees `batch`.
#[no_mangle]
pub unsafe extern "C" fn sluice_batch_slice(batch: *const SluiceBatch, offset: i64, length: i64, out_batch: *mut *mut SluiceBatch) -> i32 {
    guard(|| {
        // SAFETY: batch is NULL or live (this function's contract).
        let batch = &unsafe { borrow(batch, "batch") }?.batch;
        let rows = batch.num_rows() as i64;
        if offset < 0 || length < 0 || offset.checked_add(length).is_none_or(|end| end > rows) {
            return Err(CoreError::invalid(format!("rows {offset} + {length} are outside a batch of {rows}")));
        }
        let slice = batch.slice(offset as usize, length as usize);
        // SAFETY: out_batch is NULL or writable (this function's contract).
        unsafe { write_out(out_batch, batch_handle(slice)) }
    })
}

/// Address of buffer `buffer` (validity bitmap excluded) of column `column`: lets tests prove
/// that an import shared the producer's memory instead of copying it.
///
/// # Safety
/// `batch` is NULL or a live batch handle; `out_address` is NULL or writable for one `size_t`.
#[no_mangle]
pub unsafe extern "C" fn sluice_batch_buffer_address(batch: *const SluiceBatch, column: usize, buffer: usize, out_address: *mut usize) -> i32 {
    guard(|| {
        // SAFETY: batch is NULL or live (this function's contract).
        let batch = &unsafe { borrow(batch, "batch") }?.batch;
        let array = batch.columns().get(column).ok_or_else(|| CoreError::invalid(format!("no column {column}")))?;
        let data = array.to_data();
        let buf = data.buffers().get(buffer).ok_or_else(|| CoreError::invalid(format!("column {column} has no buffer {buffer}")))?;
        // SAFETY: out_address is NULL or writable (this function's contract).
        unsafe { write_out(out_address, buf.as_ptr() as usize) }
    })
}

/// Frees a batch (NULL is ignored).
///
/// # Safety
/// `batch` is NULL or a batch handle from this library that was not freed before and that no
/// other thread is using; it is invalid afterwards (free it exactly once).
#[no_mangle]
pub unsafe extern "C" fn sluice_batch_free(batch: *mut SluiceBatch) -> i32 {
    guard(|| {
        // SAFETY: NULL or a live handle freed only here (this function's contract).
        unsafe { free_handle(batch) };
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------------
// SQL transforms

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TransformOptions {
    sql: String,
    /// Names of the inputs, in the order of `input_schemas`, as the SQL refers to them.
    inputs: Vec<String>,
    /// Static side tables (`side_tables::SideTable`), optional, loaded once here.
    #[serde(default)]
    tables: Vec<SideTable>,
}

/// Creates an empty set of plugin functions, for `sluice_transform_create`.
///
/// # Safety
/// `out_functions` is NULL or writable for one pointer; the caller owns the new set and frees
/// it once with `sluice_functions_free`. Any thread.
#[no_mangle]
pub unsafe extern "C" fn sluice_functions_create(out_functions: *mut *mut SluiceFunctions) -> i32 {
    guard(|| {
        // SAFETY: out_functions is NULL or writable (this function's contract).
        unsafe { write_out(out_functions, new_handle(SluiceFunctions { functions: Functions::default() })) }
    })
}

/// Adds a scalar SQL function named `name` to `functions`: `udf` points to a
/// `struct SluiceScalarUdf` of the plugin ABI (`sluice_plugin.h`) and `free_string` is the
/// function that releases the error messages its `invoke` allocates (a plugin's
/// `SluicePlugin.free_string`), or NULL to leak them. SQL calls it inside the plan, on the
/// thread that pushes the batch.
///
/// # Safety
/// `functions` is NULL or a live set no other thread uses; `name` NULL or NUL-terminated,
/// borrowed. `udf` is NULL or points to a `SluiceScalarUdf` that, with every string and the
/// state it points to, stays valid, and whose `invoke` stays callable from any thread, until
/// every transform created with this set and the set itself are freed. `free_string` is NULL or
/// a `void (*)(char*)` that frees what `invoke` puts in `*out_error`.
#[no_mangle]
pub unsafe extern "C" fn sluice_functions_add_scalar(
    functions: *mut SluiceFunctions,
    name: *const c_char,
    udf: *const c_void,
    free_string: *const c_void,
) -> i32 {
    guard(|| {
        // SAFETY: functions is NULL or live and unshared (this function's contract).
        let set = unsafe { borrow_mut(functions, "functions") }?;
        // SAFETY: name is NULL or NUL-terminated (this function's contract).
        let name = unsafe { c_str(name, "function name") }?;
        // SAFETY: free_string is NULL or a function of this signature (this function's contract).
        let free_string = unsafe { free_string_of(free_string) };
        // SAFETY: udf stays valid while transforms may call it (this function's contract).
        unsafe { set.functions.add(name, udf.cast(), free_string) }
    })
}

/// Adds a dynamic table to `functions`: every transform planned with the set may join it by
/// name and call `dynamic_contains('name', value)`.
///
/// # Safety
/// `functions` is NULL or a live set no other thread uses; `table` NULL or a live table,
/// borrowed (the set keeps its own reference). Any thread.
#[no_mangle]
pub unsafe extern "C" fn sluice_functions_add_table(functions: *mut SluiceFunctions, table: *const SluiceDynamicTable) -> i32 {
    guard(|| {
        // SAFETY: table is NULL or live (this function's contract).
        let table = Arc::clone(&unsafe { borrow(table, "dynamic table") }?.table);
        // SAFETY: functions is NULL or live and unshared (this function's contract).
        unsafe { borrow_mut(functions, "functions") }?.functions.add_table(table)
    })
}

/// Creates an empty dynamic table from `{"name": "...", "columns": [{"name": "id", "type":
/// "Int64", "nullable": false}, ...], "key": ["id"], "max_rows": n, "max_bytes": n}` (limits
/// optional).
///
/// # Safety
/// `options_json` is NULL or a NUL-terminated string, borrowed for the call. `out_table` is NULL
/// or writable for one pointer; the caller owns the new table and frees it once with
/// `sluice_dynamic_table_free`. Any thread.
#[no_mangle]
pub unsafe extern "C" fn sluice_dynamic_table_create(options_json: *const c_char, out_table: *mut *mut SluiceDynamicTable) -> i32 {
    guard(|| {
        // SAFETY: options_json is NULL or NUL-terminated (this function's contract).
        let options: TableOptions = unsafe { options(options_json, "dynamic table options") }?;
        let table = Arc::new(DynamicTable::new(options)?);
        // SAFETY: out_table is NULL or writable (this function's contract).
        unsafe { write_out(out_table, new_handle(SluiceDynamicTable { table })) }
    })
}

/// Applies a batch of changes (borrowed; the caller still frees it): its columns named like the
/// table's, cast to their types, plus an optional `_op` (`d` deletes the row's key; `i`, `u`,
/// `c`, `r` or NULL upsert it). A batch that cannot apply leaves the table unchanged; exceeding
/// a limit fails after applying.
///
/// # Safety
/// `table` is NULL or a live table; `batch` NULL or a live batch, borrowed. Any thread (the
/// table locks itself; transforms may read it meanwhile).
#[no_mangle]
pub unsafe extern "C" fn sluice_dynamic_table_apply(table: *const SluiceDynamicTable, batch: *const SluiceBatch) -> i32 {
    guard(|| {
        // SAFETY: batch is NULL or live (this function's contract).
        let batch = &unsafe { borrow(batch, "batch") }?.batch;
        // SAFETY: table is NULL or live (this function's contract).
        unsafe { borrow(table, "dynamic table") }?.table.apply(batch)
    })
}

/// Writes every live row of the table as one batch (what a checkpoint stores; applying it to an
/// empty table restores it). The caller owns the batch and frees it once.
///
/// # Safety
/// `table` is NULL or a live table; `out_batch` NULL or writable for one pointer. Any thread.
#[no_mangle]
pub unsafe extern "C" fn sluice_dynamic_table_snapshot(table: *const SluiceDynamicTable, out_batch: *mut *mut SluiceBatch) -> i32 {
    guard(|| {
        // SAFETY: table is NULL or live (this function's contract).
        let batch = unsafe { borrow(table, "dynamic table") }?.table.snapshot()?;
        // SAFETY: out_batch is NULL or writable (this function's contract).
        unsafe { write_out(out_batch, batch_handle(batch)) }
    })
}

/// Writes the table's live rows, the bytes its batches hold, its version (bumped by every
/// change), and for a lookup table the keys found held (`hits`, present or known absent), the
/// keys loaded (`misses`) and the loader calls (`loads`) so far.
///
/// # Safety
/// `table` is NULL or a live table; each out pointer NULL or writable for one `int64_t`. Any thread.
#[no_mangle]
pub unsafe extern "C" fn sluice_dynamic_table_stats(
    table: *const SluiceDynamicTable,
    out_rows: *mut i64,
    out_bytes: *mut i64,
    out_version: *mut i64,
    out_hits: *mut i64,
    out_misses: *mut i64,
    out_loads: *mut i64,
) -> i32 {
    guard(|| {
        // SAFETY: table is NULL or live (this function's contract).
        let stats = unsafe { borrow(table, "dynamic table") }?.table.stats();
        // SAFETY: the out pointers are NULL or writable (this function's contract).
        unsafe {
            write_out(out_rows, stats.rows as i64)?;
            write_out(out_bytes, stats.bytes as i64)?;
            write_out(out_version, stats.version as i64)?;
            write_out(out_hits, stats.hits as i64)?;
            write_out(out_misses, stats.misses as i64)?;
            write_out(out_loads, stats.loads as i64)
        }
    })
}

/// The loader of a lookup table, as `sluice_dynamic_table_set_loader` takes it.
type TableLoad =
    unsafe extern "C" fn(state: *mut c_void, keys: *mut SluiceBatch, out_rows: *mut *mut SluiceBatch, out_error: *mut *mut c_char) -> i32;

/// Makes the table a lookup table: a bounded cache (`max_rows`, `max_bytes`: the oldest keys are
/// evicted) of a backend that `load` reads. Lookup joins then ask the table for each probe
/// batch's keys, and it calls `load` once per batch for the keys it does not hold:
///
/// `int32_t load(void *state, SluiceBatch *keys, SluiceBatch **out_rows, char **out_error)`
///
/// `keys` is a new batch of distinct keys (the key columns, the table's types) that `load` owns
/// and frees with `sluice_batch_free`. It writes into `*out_rows` a new batch, which the core then
/// owns, of the table's rows for the keys that exist (the table's columns by name, at most one
/// row per key, any order), or leaves it NULL when none does. It returns `SLUICE_OK`, or another
/// status with a message in `*out_error` that the core frees with `free_string`. It is called on
/// the thread running the transform (possibly several at once), without the table's lock.
/// Only before any transform reading the table is planned, and on a table never changed.
///
/// # Safety
/// `table` is NULL or a live table. `load` is NULL or a function of the signature above that
/// stays callable, with `state`, while any transform planned with the table lives; `free_string`
/// is NULL or an `extern "C" fn(char*)`. Any thread.
#[no_mangle]
pub unsafe extern "C" fn sluice_dynamic_table_set_loader(
    table: *const SluiceDynamicTable,
    load: *const c_void,
    state: *mut c_void,
    free_string: *const c_void,
) -> i32 {
    guard(|| {
        // SAFETY: table is NULL or live (this function's contract).
        let table = unsafe { borrow(table, "dynamic table") }?;
        if load.is_null() {
            return Err(CoreError::invalid("load function is NULL"));
        }
        // SAFETY: a function of TableLoad's signature (this function's contract).
        let load = unsafe { std::mem::transmute::<*const c_void, TableLoad>(load) };
        // SAFETY: NULL or a function of this signature (this function's contract).
        let free_string = unsafe { free_string_of(free_string) };
        // The pointer moves into the closure as an address: the loader's contract makes it
        // usable from any thread.
        let state = state as usize;
        table.table.set_loader(Box::new(move |keys: RecordBatch| {
            let mut rows: *mut SluiceBatch = std::ptr::null_mut();
            let mut message: *mut c_char = std::ptr::null_mut();
            // SAFETY: load's contract (above); it takes the keys handle over.
            let status = unsafe { load(state as *mut c_void, batch_handle(keys), &mut rows, &mut message) };
            // SAFETY: NULL or a message `free_string` frees (the loader's contract).
            let message = unsafe { take_message(message, free_string) };
            // SAFETY: NULL or a batch handle from this library, now ours (the loader's contract).
            let rows = (!rows.is_null()).then(|| unsafe { Box::from_raw(rows) });
            if rows.is_some() {
                LIVE_HANDLES.fetch_sub(1, Ordering::Relaxed);
            }
            if status != SLUICE_OK {
                let kind = match status {
                    SLUICE_ERR_IO => ErrorKind::Io,
                    SLUICE_ERR_DATA => ErrorKind::Data,
                    SLUICE_ERR_CONFIG => ErrorKind::Config,
                    _ => ErrorKind::Execution,
                };
                return Err(CoreError::new(kind, message.unwrap_or_else(|| format!("the loader failed with status {status}"))));
            }
            // No batch: none of the keys exists.
            Ok(rows.map(|r| r.batch))
        }))
    })
}

/// Lookup mode: drops the cached rows of the keys in `keys_json`, a JSON array of the keys: for
/// a single key column the values as strings (`["42", "43"]`), for a key of several columns one
/// array per key with a string per column, in the key's order (`[["eu", "42"]]`); each value is
/// cast to its column's type. NULL drops every key. The next batch needing them loads them
/// again; a load running meanwhile does not cache what it read.
///
/// # Safety
/// `table` is NULL or a live table; `keys_json` NULL or a NUL-terminated string, borrowed. Any thread.
#[no_mangle]
pub unsafe extern "C" fn sluice_dynamic_table_forget(table: *const SluiceDynamicTable, keys_json: *const c_char) -> i32 {
    /// The two shapes `keys_json` may take.
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Keys {
        Values(Vec<String>),
        Rows(Vec<Vec<String>>),
    }
    guard(|| {
        // SAFETY: table is NULL or live (this function's contract).
        let table = &unsafe { borrow(table, "dynamic table") }?.table;
        if keys_json.is_null() {
            return table.forget(None);
        }
        // SAFETY: NUL-terminated (this function's contract).
        let keys: Keys = unsafe { options(keys_json, "keys") }?;
        let columns: Vec<ArrayRef> = match keys {
            Keys::Values(values) => vec![Arc::new(arrow::array::StringArray::from(values))],
            Keys::Rows(rows) => {
                let width = rows.first().map_or(0, Vec::len);
                if rows.iter().any(|r| r.len() != width) {
                    return Err(CoreError::invalid("keys: every key needs one value per key column"));
                }
                (0..width).map(|c| Arc::new(rows.iter().map(|r| Some(r[c].as_str())).collect::<arrow::array::StringArray>()) as ArrayRef).collect()
            }
        };
        if columns.first().is_none_or(|c| c.is_empty()) {
            return Ok(()); // no keys
        }
        table.forget(Some(&columns))
    })
}

/// Frees a dynamic table (NULL is ignored). Transforms planned with a set holding it keep the
/// table alive until they are freed.
///
/// # Safety
/// `table` is NULL or a table handle from this library that was not freed before; it is invalid
/// afterwards.
#[no_mangle]
pub unsafe extern "C" fn sluice_dynamic_table_free(table: *mut SluiceDynamicTable) -> i32 {
    guard(|| {
        // SAFETY: NULL or a live handle freed only here (this function's contract).
        unsafe { free_handle(table) };
        Ok(())
    })
}

/// Frees a set of functions. Transforms created with it keep their own references.
///
/// # Safety
/// `functions` is NULL or a live set that no other thread is using; it is invalid afterwards.
#[no_mangle]
pub unsafe extern "C" fn sluice_functions_free(functions: *mut SluiceFunctions) -> i32 {
    guard(|| {
        // SAFETY: NULL or a live handle freed only here (this function's contract).
        unsafe { free_handle(functions) };
        Ok(())
    })
}

/// Plans a SQL transform. `options_json` is `{"sql": "...", "inputs": ["name", ...]}`; `inputs`
/// holds one schema per input name (moved into the core) and the plugin functions the SQL may
/// call (NULL `inputs`: no inputs, no functions).
///
/// # Safety
/// `options_json` is NULL or a NUL-terminated string, borrowed for the call. `inputs` is NULL or
/// points to a readable `SluiceTransformInputs` whose `schemas` is NULL or points to `n_schemas`
/// consecutive valid, unreleased `ArrowSchema`s, all moved into the core (the caller must not
/// release them again, also when the call fails), and whose `functions` is NULL or a live set,
/// borrowed for the call. `out_transform` is NULL or writable for one pointer; the caller owns
/// the new transform and frees it once with `sluice_transform_free`. Any thread.
#[no_mangle]
pub unsafe extern "C" fn sluice_transform_create(
    options_json: *const c_char,
    inputs: *const SluiceTransformInputs,
    out_transform: *mut *mut SluiceTransform,
) -> i32 {
    guard(|| {
        // SAFETY: inputs is NULL or readable (this function's contract).
        let (input_schemas, n_inputs, functions) = match unsafe { inputs.as_ref() } {
            Some(inputs) => (inputs.schemas, inputs.n_schemas, inputs.functions),
            None => (std::ptr::null_mut(), 0, std::ptr::null()),
        };
        // Take every schema first, so all are released whatever fails below.
        let schemas: Vec<Result<SchemaRef>> = if input_schemas.is_null() {
            Vec::new()
        } else {
            // SAFETY: input_schemas holds n_inputs valid schemas, moved in (this function's contract).
            (0..n_inputs).map(|i| unsafe { import_schema(input_schemas.add(i)) }).collect()
        };
        // SAFETY: options_json is NULL or NUL-terminated (this function's contract).
        let options: TransformOptions = unsafe { options(options_json, "transform options") }?;
        if options.inputs.len() != n_inputs || schemas.len() != n_inputs {
            return Err(CoreError::invalid(format!("{} input names but {n_inputs} schemas", options.inputs.len())));
        }
        let inputs = options.inputs.into_iter().zip(schemas).map(|(name, schema)| Ok((name, schema?))).collect::<Result<Vec<_>>>()?;
        let none = Functions::default();
        let functions = if functions.is_null() {
            &none
        } else {
            // SAFETY: functions is live (this function's contract).
            unsafe { &borrow(functions, "functions")?.functions }
        };
        let transform = SqlTransform::with_functions(&options.sql, inputs, &options.tables, functions)?;
        // SAFETY: out_transform is NULL or writable (this function's contract).
        unsafe { write_out(out_transform, new_handle(SluiceTransform { transform })) }
    })
}

/// Writes the schema of the transform's output batches to `out_schema`.
///
/// # Safety
/// `transform` is NULL or a live transform handle that no other thread is pushing to, draining
/// or freeing; `out_schema` is NULL or points to a writable
/// `ArrowSchema`, which the caller then owns and releases once.
#[no_mangle]
pub unsafe extern "C" fn sluice_transform_output_schema(transform: *const SluiceTransform, out_schema: *mut FFI_ArrowSchema) -> i32 {
    // SAFETY: transform is NULL or live, out_schema NULL or writable (this function's contract).
    guard(|| unsafe { export_schema(borrow(transform, "transform")?.transform.output_schema().as_ref(), out_schema) })
}

/// Pushes a batch (a struct array of the input's schema, moved into the core) into input
/// `input` and runs the plan until it would block; take the output with `sluice_transform_drain`.
///
/// # Safety
/// `transform` is NULL or a live transform handle that no other thread is using. `array` is NULL
/// or a valid, unreleased `ArrowArray` of input `input`'s struct type, moved into the core (the
/// caller must not release it again, also when the call fails).
#[no_mangle]
pub unsafe extern "C" fn sluice_transform_push(transform: *mut SluiceTransform, input: usize, array: *mut FFI_ArrowArray) -> i32 {
    guard(|| {
        // SAFETY: array is NULL or valid and moved in (this function's contract).
        let owned = unsafe { take_array(array) }.ok_or_else(|| CoreError::invalid("ArrowArray pointer is NULL"))?;
        // SAFETY: transform is NULL or live and used by this thread only (this function's contract).
        let transform = &mut unsafe { borrow_mut(transform, "transform") }?.transform;
        // SAFETY: the array is of input `input`'s type (this function's contract).
        let batch = unsafe { owned.import(transform.input_schema(input)?) }?;
        transform.push(input, batch)
    })
}

/// Pushes a native batch (borrowed; the caller still frees it) into input `input`.
///
/// # Safety
/// `transform` is NULL or a live transform handle that no other thread is using; `batch` is
/// NULL or a live batch handle, borrowed for the call.
#[no_mangle]
pub unsafe extern "C" fn sluice_transform_push_batch(transform: *mut SluiceTransform, input: usize, batch: *const SluiceBatch) -> i32 {
    guard(|| {
        // SAFETY: batch is NULL or live (this function's contract).
        let batch = unsafe { borrow(batch, "batch") }?.batch.clone();
        // SAFETY: transform is NULL or live and used by this thread only (this function's contract).
        unsafe { borrow_mut(transform, "transform") }?.transform.push(input, batch)
    })
}

/// Takes the next output batch into `out_batch`, or writes NULL when the pushed input is used up.
///
/// # Safety
/// `transform` is NULL or a live transform handle that no other thread is using; `out_batch` is
/// NULL or writable for one pointer. The caller owns a batch written there and frees it once.
#[no_mangle]
pub unsafe extern "C" fn sluice_transform_drain(transform: *mut SluiceTransform, out_batch: *mut *mut SluiceBatch) -> i32 {
    guard(|| {
        // SAFETY: transform is NULL or live and used by this thread only (this function's contract).
        let next = unsafe { borrow_mut(transform, "transform") }?.transform.next_output();
        // SAFETY: out_batch is NULL or writable (this function's contract).
        unsafe { write_out(out_batch, next.map_or(std::ptr::null_mut(), batch_handle)) }
    })
}

/// Frees a transform (NULL is ignored).
///
/// # Safety
/// `transform` is NULL or a transform handle from this library that was not freed before and
/// that no other thread is using; it is invalid afterwards (free it exactly once).
#[no_mangle]
pub unsafe extern "C" fn sluice_transform_free(transform: *mut SluiceTransform) -> i32 {
    guard(|| {
        // SAFETY: NULL or a live handle freed only here (this function's contract).
        unsafe { free_handle(transform) };
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------------
// Codecs

/// A decoder for `{"format": "json"|"csv"|"raw"|"debezium"|"avro", "delimiter": ",",
/// "avro_schema": "…", "avro_framing": "none"|"confluent", "avro_schema_id": n}` records of
/// `schema` (moved in; for raw and avro, NULL: raw rows are one Binary column `value`, avro rows
/// follow the Avro schema — decode zero records to learn it; for debezium, the row's columns —
/// the output adds `_op`).
///
/// # Safety
/// `options_json` is NULL or a NUL-terminated string, borrowed for the call. `schema` is NULL
/// or a valid, unreleased `ArrowSchema`, moved into the core (the caller must not release it
/// again, also when the call fails). `out_decoder` is NULL or writable for one pointer; the
/// caller owns the new decoder and frees it once with `sluice_decoder_free`. Any thread.
#[no_mangle]
pub unsafe extern "C" fn sluice_decoder_create(
    options_json: *const c_char,
    schema: *mut FFI_ArrowSchema,
    out_decoder: *mut *mut SluiceDecoder,
) -> i32 {
    guard(|| {
        // SAFETY: schema is valid and moved in when not NULL (this function's contract).
        let schema = if schema.is_null() { None } else { Some(unsafe { import_schema(schema) }?) };
        // SAFETY: options_json is NULL or NUL-terminated (this function's contract).
        let options: DecoderOptions = unsafe { options(options_json, "decoder options") }?;
        let decoder = RecordDecoder::new(&options, schema)?;
        // SAFETY: out_decoder is NULL or writable (this function's contract).
        unsafe { write_out(out_decoder, new_handle(SluiceDecoder { decoder })) }
    })
}

/// Decodes `n_records` records laid out as `data` plus `n_records + 1` offsets. Writes the rows
/// of the good records to `out_batch`, and the malformed ones (`index`, `record`, `error`) to
/// `out_errors`, or NULL when all decoded. `extra_array`/`extra_schema` (moved in; both NULL
/// for none) hold one row per record — e.g. Kafka partition and offset — appended as columns
/// to the rows of the good records.
///
/// # Safety
/// `decoder` is NULL or a live decoder handle that no other thread is using. `offsets` is NULL or points to `n_records + 1`
/// `int64_t`s and `data` to at least the last offset's bytes, both borrowed for the call.
/// `extra_array` and `extra_schema` are NULL or valid, unreleased C Data structs (the array of
/// the schema's struct type), moved into the core (not to be released again, also when the
/// call fails). `out_batch` and `out_errors` are NULL or writable for one pointer each; the
/// caller owns the batches written there and frees each once.
#[no_mangle]
pub unsafe extern "C" fn sluice_decoder_decode(
    decoder: *mut SluiceDecoder,
    data: *const u8,
    offsets: *const i64,
    n_records: usize,
    extra_array: *mut FFI_ArrowArray,
    extra_schema: *mut FFI_ArrowSchema,
    out_batch: *mut *mut SluiceBatch,
    out_errors: *mut *mut SluiceBatch,
) -> i32 {
    guard(|| {
        // SAFETY: extra_array is NULL or valid and moved in (this function's contract).
        let extra_owned = unsafe { take_array(extra_array) };
        let extra = match (extra_owned, extra_schema.is_null()) {
            // SAFETY: both valid and moved in, the array of the schema's type (this function's contract).
            (Some(owned), false) => Some(unsafe { owned.import(&import_schema(extra_schema)?) }?),
            (None, true) => None,
            _ => return Err(CoreError::invalid("extra columns need both an array and a schema")),
        };
        // SAFETY: decoder is NULL or live (this function's contract).
        let decoder = &unsafe { borrow(decoder, "decoder") }?.decoder;
        // SAFETY: data and offsets are laid out as records_of requires (this function's contract).
        let decoded = decoder.decode_with(&unsafe { records_of(data, offsets, n_records) }?, extra)?;
        // SAFETY (this block): out_errors and out_batch are NULL or writable (this function's contract).
        unsafe {
            write_out(out_errors, decoded.errors.map_or(std::ptr::null_mut(), batch_handle))?;
            write_out(out_batch, batch_handle(decoded.batch))
        }
    })
}

/// Infers the schema of JSON records (`data` + `n_records + 1` offsets; records that are not
/// JSON objects are left out) and writes it to `out_schema`.
///
/// # Safety
/// `offsets` is NULL or points to `n_records + 1` `int64_t`s and `data` to at least the last
/// offset's bytes, both borrowed for the call. `out_schema` is NULL or points to a writable
/// `ArrowSchema`, which the caller then owns and releases once. Any thread.
#[no_mangle]
pub unsafe extern "C" fn sluice_infer_json_schema(data: *const u8, offsets: *const i64, n_records: usize, out_schema: *mut FFI_ArrowSchema) -> i32 {
    guard(|| {
        // SAFETY: data and offsets are laid out as records_of requires (this function's contract).
        let schema = crate::decode::infer_json_schema(&unsafe { records_of(data, offsets, n_records) }?)?;
        // SAFETY: out_schema is NULL or writable (this function's contract).
        unsafe { export_schema(&schema, out_schema) }
    })
}

/// Frees a decoder (NULL is ignored).
///
/// # Safety
/// `decoder` is NULL or a decoder handle from this library that was not freed before and that
/// no other thread is using; it is invalid afterwards (free it exactly once).
#[no_mangle]
pub unsafe extern "C" fn sluice_decoder_free(decoder: *mut SluiceDecoder) -> i32 {
    guard(|| {
        // SAFETY: NULL or a live handle freed only here (this function's contract).
        unsafe { free_handle(decoder) };
        Ok(())
    })
}

/// Encodes a batch into a new buffer. Options: `{"format": "json"|"jsonarray"|"csv",
/// "header": false, "record_offsets": false, "key_columns": []}`; see `sluice_buffer_offsets`
/// and `sluice_buffer_keys` for the optional parts.
///
/// # Safety
/// `batch` is NULL or a live batch handle and `options_json` NULL or a NUL-terminated string,
/// both borrowed for the call. `out_buffer` is NULL or writable for one pointer; the caller
/// owns the new buffer and frees it once with `sluice_buffer_free`. Any thread.
#[no_mangle]
pub unsafe extern "C" fn sluice_encode(batch: *const SluiceBatch, options_json: *const c_char, out_buffer: *mut *mut SluiceBuffer) -> i32 {
    guard(|| {
        // SAFETY: batch is NULL or live (this function's contract).
        let batch = &unsafe { borrow(batch, "batch") }?.batch;
        // SAFETY: options_json is NULL or NUL-terminated (this function's contract).
        let options = parse_options(unsafe { c_str(options_json, "encoder options") }?)?;
        let encoded = encode_records(batch, &options)?;
        // SAFETY: out_buffer is NULL or writable (this function's contract).
        unsafe { write_out(out_buffer, new_handle(SluiceBuffer { encoded })) }
    })
}

/// Points `out_data` at the buffer's bytes (valid until the buffer is freed).
///
/// # Safety
/// `buffer` is NULL or a live buffer handle; `out_data` and `out_len` are NULL or writable for
/// one pointer / one `size_t`. The bytes belong to the buffer: read them only until it is freed.
#[no_mangle]
pub unsafe extern "C" fn sluice_buffer_data(buffer: *const SluiceBuffer, out_data: *mut *const u8, out_len: *mut usize) -> i32 {
    guard(|| {
        // SAFETY: buffer is NULL or live (this function's contract).
        let bytes = &unsafe { borrow(buffer, "buffer") }?.encoded.bytes;
        // SAFETY (this block): out_data and out_len are NULL or writable (this function's contract).
        unsafe {
            write_out(out_data, bytes.as_ptr())?;
            write_out(out_len, bytes.len())
        }
    })
}

/// Points `out_offsets` at `rows + 1` record offsets (0 of them unless `record_offsets` was
/// asked, always there for raw and avro). JSON and CSV: record i is `data[o[i] .. o[i+1] - 1]`,
/// each record being followed by a newline; raw and avro: `data[o[i] .. o[i+1]]`.
///
/// # Safety
/// `buffer` is NULL or a live buffer handle; `out_offsets` and `out_count` are NULL or writable
/// for one pointer / one `size_t`. The offsets belong to the buffer: read them only until it is
/// freed.
#[no_mangle]
pub unsafe extern "C" fn sluice_buffer_offsets(buffer: *const SluiceBuffer, out_offsets: *mut *const i64, out_count: *mut usize) -> i32 {
    guard(|| {
        // SAFETY: buffer is NULL or live (this function's contract).
        let offsets = &unsafe { borrow(buffer, "buffer") }?.encoded.offsets;
        // SAFETY (this block): out_offsets and out_count are NULL or writable (this function's contract).
        unsafe {
            write_out(out_offsets, offsets.as_ptr())?;
            write_out(out_count, offsets.len())
        }
    })
}

/// Points at the encoded keys and their `rows + 1` offsets (same layout as the records, but a
/// NULL key takes no bytes, not even the newline; none unless `key_columns` was given).
///
/// # Safety
/// `buffer` is NULL or a live buffer handle; `out_data`, `out_offsets` and `out_count` are NULL
/// or writable for one pointer, one pointer and one `size_t`. The keys and offsets belong to the
/// buffer: read them only until it is freed.
#[no_mangle]
pub unsafe extern "C" fn sluice_buffer_keys(
    buffer: *const SluiceBuffer,
    out_data: *mut *const u8,
    out_offsets: *mut *const i64,
    out_count: *mut usize,
) -> i32 {
    guard(|| {
        // SAFETY: buffer is NULL or live (this function's contract).
        let encoded = &unsafe { borrow(buffer, "buffer") }?.encoded;
        // SAFETY (this block): the out-pointers are NULL or writable (this function's contract).
        unsafe {
            write_out(out_data, encoded.keys.as_ptr())?;
            write_out(out_offsets, encoded.key_offsets.as_ptr())?;
            write_out(out_count, encoded.key_offsets.len())
        }
    })
}

/// Frees a buffer (NULL is ignored).
///
/// # Safety
/// `buffer` is NULL or a buffer handle from this library that was not freed before and that no
/// other thread is using; it and the pointers read from it are invalid afterwards (free it
/// exactly once).
#[no_mangle]
pub unsafe extern "C" fn sluice_buffer_free(buffer: *mut SluiceBuffer) -> i32 {
    guard(|| {
        // SAFETY: NULL or a live handle freed only here (this function's contract).
        unsafe { free_handle(buffer) };
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------------
// Files

/// Opens a file for reading: `{"path", "format": "json"|"csv"|"parquet", "batch_size",
/// "header", "delimiter", "infer_rows"}`. `schema` (moved in) may be NULL to infer it.
///
/// # Safety
/// `options_json` is NULL or a NUL-terminated string, borrowed for the call. `schema` is NULL
/// or a valid, unreleased `ArrowSchema`, moved into the core (not to be released again, also
/// when the call fails). `out_reader` is NULL or writable for one pointer; the caller owns the
/// new reader and frees it once with `sluice_file_reader_free`. Any thread.
#[no_mangle]
pub unsafe extern "C" fn sluice_file_reader_open(
    options_json: *const c_char,
    schema: *mut FFI_ArrowSchema,
    out_reader: *mut *mut SluiceFileReader,
) -> i32 {
    guard(|| {
        // SAFETY: schema is valid and moved in when not NULL (this function's contract).
        let schema = if schema.is_null() { None } else { Some(unsafe { import_schema(schema) }?) };
        // SAFETY: options_json is NULL or NUL-terminated (this function's contract).
        let options: ReaderOptions = unsafe { options(options_json, "file reader options") }?;
        let reader = FileReader::open(options, schema)?;
        // SAFETY: out_reader is NULL or writable (this function's contract).
        unsafe { write_out(out_reader, new_handle(SluiceFileReader { reader })) }
    })
}

/// Writes the schema of the batches the reader returns to `out_schema`.
///
/// # Safety
/// `reader` is NULL or a live file reader handle that no other thread is reading or freeing;
/// `out_schema` is NULL or points to a writable
/// `ArrowSchema`, which the caller then owns and releases once.
#[no_mangle]
pub unsafe extern "C" fn sluice_file_reader_schema(reader: *const SluiceFileReader, out_schema: *mut FFI_ArrowSchema) -> i32 {
    // SAFETY: reader is NULL or live, out_schema NULL or writable (this function's contract).
    guard(|| unsafe { export_schema(borrow(reader, "file reader")?.reader.schema().as_ref(), out_schema) })
}

/// Reads the next batch. At the end of the file writes NULL to `out_batch`. Malformed lines
/// come in `out_errors` (`line`, `record`, `error`), or NULL when there were none.
///
/// # Safety
/// `reader` is NULL or a live file reader handle that no other thread is using; `out_batch` and
/// `out_errors` are NULL or writable for one pointer each. The caller owns the batches written
/// there and frees each once.
#[no_mangle]
pub unsafe extern "C" fn sluice_file_reader_next(
    reader: *mut SluiceFileReader,
    out_batch: *mut *mut SluiceBatch,
    out_errors: *mut *mut SluiceBatch,
) -> i32 {
    guard(|| {
        // SAFETY: reader is NULL or live and used by this thread only (this function's contract).
        let next = unsafe { borrow_mut(reader, "file reader") }?.reader.next_batch()?;
        let (batch, errors) = match next {
            Some(read) => (batch_handle(read.batch), read.errors.map_or(std::ptr::null_mut(), batch_handle)),
            None => (std::ptr::null_mut(), std::ptr::null_mut()),
        };
        // SAFETY (this block): out_errors and out_batch are NULL or writable (this function's contract).
        unsafe {
            write_out(out_errors, errors)?;
            write_out(out_batch, batch)
        }
    })
}

/// Frees a file reader (NULL is ignored).
///
/// # Safety
/// `reader` is NULL or a file reader handle from this library that was not freed before and
/// that no other thread is using; it is invalid afterwards (free it exactly once).
#[no_mangle]
pub unsafe extern "C" fn sluice_file_reader_free(reader: *mut SluiceFileReader) -> i32 {
    guard(|| {
        // SAFETY: NULL or a live handle freed only here (this function's contract).
        unsafe { free_handle(reader) };
        Ok(())
    })
}

/// Opens a file for writing: `{"path", "format": "json"|"csv"|"parquet", "header"}`.
///
/// # Safety
/// `options_json` is NULL or a NUL-terminated string, borrowed for the call; `out_writer` is
/// NULL or writable for one pointer. The caller owns the new writer and frees it once with
/// `sluice_file_writer_free`. Any thread.
#[no_mangle]
pub unsafe extern "C" fn sluice_file_writer_open(options_json: *const c_char, out_writer: *mut *mut SluiceFileWriter) -> i32 {
    guard(|| {
        // SAFETY: options_json is NULL or NUL-terminated (this function's contract).
        let options: WriterOptions = unsafe { options(options_json, "file writer options") }?;
        let writer = FileWriter::open(options)?;
        // SAFETY: out_writer is NULL or writable (this function's contract).
        unsafe { write_out(out_writer, new_handle(SluiceFileWriter { writer })) }
    })
}

/// Appends a batch to the file.
///
/// # Safety
/// `writer` is NULL or a live file writer handle that no other thread is using; `batch` is NULL
/// or a live batch handle, borrowed for the call.
#[no_mangle]
pub unsafe extern "C" fn sluice_file_writer_write(writer: *mut SluiceFileWriter, batch: *const SluiceBatch) -> i32 {
    guard(|| {
        // SAFETY: batch is NULL or live (this function's contract).
        let batch = &unsafe { borrow(batch, "batch") }?.batch;
        // SAFETY: writer is NULL or live and used by this thread only (this function's contract).
        unsafe { borrow_mut(writer, "file writer") }?.writer.write(batch)
    })
}

/// Makes what was written durable (see `FileWriter::flush` for Parquet).
///
/// # Safety
/// `writer` is NULL or a live file writer handle that no other thread is using.
#[no_mangle]
pub unsafe extern "C" fn sluice_file_writer_flush(writer: *mut SluiceFileWriter) -> i32 {
    // SAFETY: writer is NULL or live and used by this thread only (this function's contract).
    guard(|| unsafe { borrow_mut(writer, "file writer") }?.writer.flush())
}

/// Completes the file (Parquet footer) and syncs it; further writes fail.
///
/// # Safety
/// `writer` is NULL or a live file writer handle that no other thread is using.
#[no_mangle]
pub unsafe extern "C" fn sluice_file_writer_finish(writer: *mut SluiceFileWriter) -> i32 {
    // SAFETY: writer is NULL or live and used by this thread only (this function's contract).
    guard(|| unsafe { borrow_mut(writer, "file writer") }?.writer.finish())
}

/// Frees the writer; an unfinished file is finished first (errors are then lost: call finish).
///
/// # Safety
/// `writer` is NULL or a file writer handle from this library that was not freed before and
/// that no other thread is using; it is invalid afterwards (free it exactly once).
#[no_mangle]
pub unsafe extern "C" fn sluice_file_writer_free(writer: *mut SluiceFileWriter) -> i32 {
    guard(|| {
        // SAFETY: NULL or live and used by this thread only (this function's contract).
        if let Some(w) = unsafe { writer.as_mut() } {
            let _ = w.writer.finish();
        }
        // SAFETY: NULL or a live handle freed only here (this function's contract).
        unsafe { free_handle(writer) };
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------------
// Nexmark generator

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GeneratorOptions {
    entity: String,
    #[serde(default)]
    seed: u64,
    /// Events in the whole sequence (all kinds); absent = unbounded.
    #[serde(default)]
    count: Option<u64>,
    #[serde(default)]
    first_event: u64,
    #[serde(default)]
    base_time_ms: Option<i64>,
    #[serde(default)]
    events_per_second: Option<u64>,
}

/// A Nexmark generator: `{"entity": "bid"|"auction"|"person", "seed", "count", "first_event",
/// "base_time_ms", "events_per_second"}`.
///
/// # Safety
/// `options_json` is NULL or a NUL-terminated string, borrowed for the call; `out_generator` is
/// NULL or writable for one pointer. The caller owns the new generator and frees it once with
/// `sluice_generator_free`. Any thread.
#[no_mangle]
pub unsafe extern "C" fn sluice_generator_create(options_json: *const c_char, out_generator: *mut *mut SluiceGenerator) -> i32 {
    guard(|| {
        // SAFETY: options_json is NULL or NUL-terminated (this function's contract).
        let options: GeneratorOptions = unsafe { options(options_json, "generator options") }?;
        let defaults = GeneratorConfig::default();
        let config = GeneratorConfig {
            seed: options.seed,
            entity: Entity::parse(&options.entity).map_err(CoreError::config)?,
            event_count: options.count,
            first_event: options.first_event,
            base_time_ms: options.base_time_ms.unwrap_or(defaults.base_time_ms),
            events_per_second: options.events_per_second.unwrap_or(defaults.events_per_second),
        };
        if config.events_per_second == 0 {
            return Err(CoreError::config("events_per_second must be positive"));
        }
        // SAFETY: out_generator is NULL or writable (this function's contract).
        unsafe { write_out(out_generator, new_handle(SluiceGenerator { generator: NexmarkGenerator::new(config) })) }
    })
}

/// Writes the schema of the generator's batches to `out_schema`.
///
/// # Safety
/// `generator` is NULL or a live generator handle that no other thread is advancing or freeing;
/// `out_schema` is NULL or points to a writable
/// `ArrowSchema`, which the caller then owns and releases once.
#[no_mangle]
pub unsafe extern "C" fn sluice_generator_schema(generator: *const SluiceGenerator, out_schema: *mut FFI_ArrowSchema) -> i32 {
    // SAFETY: generator is NULL or live, out_schema NULL or writable (this function's contract).
    guard(|| unsafe { export_schema(borrow(generator, "generator")?.generator.output_schema().as_ref(), out_schema) })
}

/// Generates up to `max_rows` rows into `out_batch`, or writes NULL when the sequence ended.
///
/// # Safety
/// `generator` is NULL or a live generator handle that no other thread is using; `out_batch` is
/// NULL or writable for one pointer. The caller owns a batch written there and frees it once.
#[no_mangle]
pub unsafe extern "C" fn sluice_generator_next(generator: *mut SluiceGenerator, max_rows: i64, out_batch: *mut *mut SluiceBatch) -> i32 {
    guard(|| {
        if max_rows <= 0 {
            return Err(CoreError::invalid("max_rows must be positive"));
        }
        // SAFETY: generator is NULL or live and used by this thread only (this function's contract).
        let next = unsafe { borrow_mut(generator, "generator") }?.generator.next_batch(max_rows as usize);
        // SAFETY: out_batch is NULL or writable (this function's contract).
        unsafe { write_out(out_batch, next.map_or(std::ptr::null_mut(), batch_handle)) }
    })
}

/// The event number the generator will examine next (its resume position).
///
/// # Safety
/// `generator` is NULL or a live generator handle that no other thread is advancing or freeing;
/// `out_next_event` is NULL or writable for one
/// `int64_t`.
#[no_mangle]
pub unsafe extern "C" fn sluice_generator_position(generator: *const SluiceGenerator, out_next_event: *mut i64) -> i32 {
    // SAFETY: generator is NULL or live, out_next_event NULL or writable (this function's contract).
    guard(|| unsafe { write_out(out_next_event, borrow(generator, "generator")?.generator.position() as i64) })
}

/// Frees a generator (NULL is ignored).
///
/// # Safety
/// `generator` is NULL or a generator handle from this library that was not freed before and
/// that no other thread is using; it is invalid afterwards (free it exactly once).
#[no_mangle]
pub unsafe extern "C" fn sluice_generator_free(generator: *mut SluiceGenerator) -> i32 {
    guard(|| {
        // SAFETY: NULL or a live handle freed only here (this function's contract).
        unsafe { free_handle(generator) };
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn last_error() -> String {
        let mut message: *const c_char = std::ptr::null();
        unsafe {
            assert_eq!(sluice_last_error(&mut message), SLUICE_OK);
            CStr::from_ptr(message).to_string_lossy().into_owned()
        }
    }

    #[test]
    fn panics_become_a_status_and_a_message() {
        let message = CString::new("boom").unwrap();
        let status = unsafe { debug_panic(message.as_ptr()) };
        assert_eq!(status, SLUICE_ERR_PANIC);
        let text = last_error();
        assert!(text.contains("boom") && text.contains("abi.rs"), "{text}");
        // The library still works after a panic.
        let mut version = 0;
        assert_eq!(unsafe { sluice_abi_version(&mut version) }, SLUICE_OK);
        assert_eq!(version, SLUICE_ABI_VERSION);
    }

    #[test]
    fn null_handles_are_invalid_arguments() {
        let mut rows = 0;
        assert_eq!(unsafe { sluice_batch_num_rows(std::ptr::null(), &mut rows) }, SLUICE_ERR_INVALID_ARGUMENT);
        assert!(last_error().contains("batch handle is NULL"));
        assert_eq!(unsafe { sluice_batch_free(std::ptr::null_mut()) }, SLUICE_OK);
    }

    #[test]
    fn sql_errors_are_plan_errors() {
        let sql = CString::new("SELEC nonsense").unwrap();
        let mut out = std::ptr::null_mut();
        assert_eq!(unsafe { sluice_sql_table_references(sql.as_ptr(), &mut out) }, SLUICE_ERR_PLAN);
    }

    #[test]
    fn transform_inputs_are_counted_against_the_input_names() {
        let schema = arrow::datatypes::Schema::new(vec![arrow::datatypes::Field::new("x", arrow::datatypes::DataType::Int64, false)]);
        let create = |options: &str, inputs: *const SluiceTransformInputs| {
            let options = CString::new(options).unwrap();
            let mut transform = std::ptr::null_mut();
            let status = unsafe { sluice_transform_create(options.as_ptr(), inputs, &mut transform) };
            unsafe { sluice_transform_free(transform) };
            status
        };
        // NULL inputs: no schemas and no functions.
        assert_eq!(create(r#"{"sql": "SELECT x FROM s", "inputs": ["s"]}"#, std::ptr::null()), SLUICE_ERR_INVALID_ARGUMENT);
        assert!(last_error().contains("1 input names but 0 schemas"), "{}", last_error());
        // One schema for two names: refused (the core takes and releases the schema all the same).
        let mut one = FFI_ArrowSchema::try_from(&schema).unwrap();
        let inputs = SluiceTransformInputs { schemas: &mut one, n_schemas: 1, functions: std::ptr::null() };
        assert_eq!(create(r#"{"sql": "SELECT x FROM s", "inputs": ["s", "t"]}"#, &inputs), SLUICE_ERR_INVALID_ARGUMENT);
        assert!(last_error().contains("2 input names but 1 schemas"), "{}", last_error());
        let mut one = FFI_ArrowSchema::try_from(&schema).unwrap();
        let inputs = SluiceTransformInputs { schemas: &mut one, n_schemas: 1, functions: std::ptr::null() };
        assert_eq!(create(r#"{"sql": "SELECT x + 1 AS y FROM s", "inputs": ["s"]}"#, &inputs), SLUICE_OK);
    }
}
