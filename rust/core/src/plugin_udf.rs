//! Scalar SQL functions implemented outside the core: a `struct SluiceScalarUdf` of the plugin
//! ABI (`plugins-api/include/sluice_plugin.h`), from a native plugin or made by the JVM around
//! a Java function (an FFM upcall stub). DataFusion calls them inside the plan, once per batch,
//! through the function pointer: a native plugin's UDF never enters the JVM.
//!
//! A [`Functions`] set is built once per pipeline (`sluice_functions_*`) and handed to every
//! transform it plans; each transform registers the functions in its own session.

use std::ffi::{c_char, c_void, CStr};
use std::hash::{Hash, Hasher};
use std::ptr::NonNull;
use std::sync::Arc;

use arrow::array::ArrayData;
use arrow::array::{make_array, Array, ArrayRef};
use arrow::buffer::{BooleanBuffer, Buffer, NullBuffer};
use arrow::datatypes::DataType;
use arrow::ffi::{from_ffi_and_data_type, FFI_ArrowArray, FFI_ArrowSchema};
use datafusion::common::{exec_err, Result as DfResult};
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility};
use datafusion::prelude::SessionContext;
use sluice_plugin_sys::{
    ArrowArray, SluiceScalarUdf, SLUICE_PLUGIN_OK, SLUICE_VOLATILITY_IMMUTABLE, SLUICE_VOLATILITY_STABLE, SLUICE_VOLATILITY_VOLATILE,
};

use crate::dynamic_tables::{DynamicContains, DynamicTable, DynamicTableProvider};
use crate::error::{CoreError, Result};

/// Releases a string the function's owner allocated (the plugin descriptor's `free_string`).
pub type FreeString = unsafe extern "C" fn(*mut c_char);

/// What a pipeline adds to every transform's SQL: plugin functions, and its dynamic tables
/// (with `dynamic_contains` over them), shared by all its transforms.
#[derive(Default, Clone)]
pub struct Functions {
    udfs: Vec<Arc<ScalarUDF>>,
    tables: Vec<Arc<DynamicTable>>,
}

impl Functions {
    /// Adds a function under `name`; a second function of the same name is a config error.
    ///
    /// # Safety
    /// `udf` points to a `SluiceScalarUdf` whose strings, arrays and `state` stay valid and whose
    /// `invoke` may be called from any thread for as long as any transform using this set lives
    /// (the host keeps the library loaded, or the upcall stub alive). `free_string` releases the
    /// error messages `invoke` allocates.
    pub unsafe fn add(&mut self, name: &str, udf: *const SluiceScalarUdf, free_string: Option<FreeString>) -> Result<()> {
        if self.udfs.iter().any(|f| f.name() == name) {
            return Err(CoreError::config(format!("two plugin functions are named '{name}'")));
        }
        // SAFETY: valid for the set's lifetime (this function's contract).
        let plugin = unsafe { PluginFunction::new(name, udf, free_string) }?;
        self.udfs.push(Arc::new(ScalarUDF::new_from_impl(plugin)));
        Ok(())
    }

    /// Adds a dynamic table; a second table of the same name is a config error.
    pub fn add_table(&mut self, table: Arc<DynamicTable>) -> Result<()> {
        if self.tables.iter().any(|t| t.name() == table.name()) {
            return Err(CoreError::config(format!("two dynamic tables are named '{}'", table.name())));
        }
        self.tables.push(table);
        Ok(())
    }

    /// The dynamic tables' names.
    pub fn table_names(&self) -> impl Iterator<Item = &str> {
        self.tables.iter().map(|t| t.name())
    }

    /// Registers every function and dynamic table in `ctx`; a plugin function may shadow a
    /// built-in one.
    pub fn register(&self, ctx: &SessionContext) -> Result<()> {
        for udf in &self.udfs {
            ctx.register_udf(udf.as_ref().clone());
        }
        for table in &self.tables {
            ctx.register_table(table.name(), Arc::new(DynamicTableProvider(Arc::clone(table))))?;
        }
        if !self.tables.is_empty() {
            ctx.register_udf(ScalarUDF::new_from_impl(DynamicContains::new(&self.tables)));
        }
        Ok(())
    }
}

/// One plugin function as DataFusion sees it.
#[derive(Debug)]
struct PluginFunction {
    name: String,
    arg_types: Vec<DataType>,
    return_type: DataType,
    signature: Signature,
    vtable: VTable,
}

/// The plugin's descriptor and its `free_string`. The header allows `invoke` on several threads
/// at once, so sharing the pointers between threads is the plugin's promise, not ours to check.
#[derive(Debug, Clone, Copy)]
struct VTable {
    udf: *const SluiceScalarUdf,
    free_string: Option<FreeString>,
}

// SAFETY: the ABI makes `invoke` callable concurrently from any thread with the same state.
unsafe impl Send for VTable {}
// SAFETY: as for Send; the descriptor is immutable while loaded.
unsafe impl Sync for VTable {}

impl PartialEq for PluginFunction {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && std::ptr::eq(self.vtable.udf, other.vtable.udf)
    }
}

impl Eq for PluginFunction {}

impl Hash for PluginFunction {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.name.hash(state);
        (self.vtable.udf as usize).hash(state);
    }
}

impl PluginFunction {
    /// # Safety
    /// As [`Functions::add`].
    unsafe fn new(name: &str, udf: *const SluiceScalarUdf, free_string: Option<FreeString>) -> Result<PluginFunction> {
        // SAFETY: NULL or a valid descriptor (the caller's contract).
        let desc = unsafe { udf.as_ref() }.ok_or_else(|| CoreError::invalid(format!("function '{name}': descriptor is NULL")))?;
        if desc.invoke.is_none() {
            return Err(CoreError::config(format!("function '{name}': the plugin gives no invoke function")));
        }
        if desc.n_args < 0 || (desc.n_args > 0 && desc.arg_types.is_null()) {
            return Err(CoreError::config(format!("function '{name}': argument types are missing")));
        }
        let mut arg_types = Vec::with_capacity(desc.n_args as usize);
        for i in 0..desc.n_args as usize {
            // SAFETY: arg_types holds n_args strings (checked non-NULL above; the ABI's contract).
            let format = unsafe { *desc.arg_types.add(i) };
            // SAFETY: a NUL-terminated string or NULL (the ABI's contract).
            arg_types.push(unsafe { data_type(format) }.map_err(|e| CoreError::config(format!("function '{name}': argument {}: {e}", i + 1)))?);
        }
        // SAFETY: as above.
        let return_type = unsafe { data_type(desc.return_type) }.map_err(|e| CoreError::config(format!("function '{name}': return type: {e}")))?;
        let volatility = match desc.volatility {
            SLUICE_VOLATILITY_IMMUTABLE => Volatility::Immutable,
            SLUICE_VOLATILITY_STABLE => Volatility::Stable,
            SLUICE_VOLATILITY_VOLATILE => Volatility::Volatile,
            other => return Err(CoreError::config(format!("function '{name}': unknown volatility {other}"))),
        };
        let signature = Signature::exact(arg_types.clone(), volatility);
        Ok(PluginFunction { name: name.to_string(), arg_types, return_type, signature, vtable: VTable { udf, free_string } })
    }
}

/// The Arrow type of a C Data Interface format string ("l", "u", "tsu:UTC", ...).
///
/// # Safety
/// `format` is NULL or a NUL-terminated string.
unsafe fn data_type(format: *const c_char) -> std::result::Result<DataType, String> {
    if format.is_null() {
        return Err("format string is NULL".into());
    }
    // SAFETY: non-NULL and NUL-terminated (the caller's contract).
    let text = unsafe { CStr::from_ptr(format) }.to_str().map_err(|_| "format string is not UTF-8".to_string())?;
    // A childless schema of that format: enough for every leaf type a function takes.
    let probe = FFI_ArrowSchema::try_new(text, vec![], None).map_err(|e| format!("'{text}': {e}"))?;
    DataType::try_from(&probe).map_err(|e| format!("'{text}' is not an Arrow type this engine reads: {e}"))
}

impl ScalarUDFImpl for PluginFunction {
    fn name(&self) -> &str {
        &self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> DfResult<DataType> {
        Ok(self.return_type.clone())
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let rows = args.number_rows;
        // DataFusion has coerced the arguments to the signature's exact types; a constant arrives
        // repeated, as the ABI says.
        let arrays = args.args.iter().map(|a| a.to_array(rows)).collect::<DfResult<Vec<ArrayRef>>>()?;
        for (i, (array, wanted)) in arrays.iter().zip(&self.arg_types).enumerate() {
            if array.data_type() != wanted {
                return exec_err!("{}: argument {} is {} but the function takes {}", self.name, i + 1, array.data_type(), wanted);
            }
        }
        // Borrowed by the plugin for the call; dropping them afterwards releases them.
        let mut exported = Exported(arrays.iter().map(export_argument).collect());
        let mut pointers: Vec<*mut ArrowArray> = exported.0.iter_mut().map(|a| a as *mut ArrowArray).collect();
        let mut out = FFI_ArrowArray::empty();
        let mut error: *mut c_char = std::ptr::null_mut();
        // SAFETY: the descriptor is valid while any transform using it lives (Functions::add's
        // contract); `invoke` was checked non-NULL in `new`.
        let desc = unsafe { &*self.vtable.udf };
        let invoke = desc.invoke.expect("checked in PluginFunction::new");
        // SAFETY: `pointers` holds n_args borrowed arrays of the declared types and `rows` rows;
        // `out` is an empty struct the plugin fills (moved out to us); FFI_ArrowArray has the
        // layout of the C Data Interface struct that plugin-sys declares.
        let status =
            unsafe { invoke(desc.state, pointers.as_mut_ptr(), rows as i64, (&mut out as *mut FFI_ArrowArray).cast::<ArrowArray>(), &mut error) };
        drop(pointers);
        drop(exported);
        if status != SLUICE_PLUGIN_OK {
            // SAFETY: NULL or a message the plugin allocated for us, freed with its free_string.
            let message = unsafe { take_message(error, self.vtable.free_string) };
            return exec_err!("{}: {}", self.name, message.unwrap_or_else(|| format!("failed with status {status} and no message")));
        }
        // SAFETY: as above; a message on success is the plugin's mistake, but still ours to free.
        drop(unsafe { take_message(error, self.vtable.free_string) });
        if out.is_released() {
            return exec_err!("{}: returned no result array", self.name);
        }
        let out = match self.return_type.primitive_width() {
            // SAFETY: `out` was filled by the plugin as an array of the declared return type.
            Some(width) => match unsafe { import_fixed_width(out, &self.return_type, width, rows) } {
                Ok(result) => {
                    return result.map(ColumnarValue::Array).map_err(|e| datafusion::error::DataFusionError::Execution(format!("{}: {e}", self.name)))
                }
                Err(other) => other,
            },
            None => out,
        };
        // SAFETY: `out` was filled by the plugin as an array of the declared return type.
        let data = unsafe { from_ffi_and_data_type(out, self.return_type.clone()) }
            .map_err(|e| datafusion::error::DataFusionError::Execution(format!("{}: {e}", self.name)))?;
        // Plugin output is untrusted: check buffers and offsets before DataFusion reads them.
        data.validate_full().map_err(|e| datafusion::error::DataFusionError::Execution(format!("{}: invalid result array: {e}", self.name)))?;
        let result = make_array(data);
        if result.len() != rows {
            return exec_err!("{}: returned {} values for {rows} rows", self.name, result.len());
        }
        Ok(ColumnarValue::Array(result))
    }
}

/// The argument structs of one call; dropping them releases those the plugin did not move out.
struct Exported(Vec<ArrowArray>);

impl Drop for Exported {
    fn drop(&mut self) {
        for array in &mut self.0 {
            if let Some(release) = array.release {
                // SAFETY: an unreleased struct this module exported (export_argument), released once.
                unsafe { release(array) };
            }
        }
    }
}

/// What a directly exported argument's struct keeps alive until its release.
struct ArgumentBuffers {
    _array: ArrayRef,
    pointers: [*const c_void; 2],
}

/// The `release` of an argument exported by [`export_argument`]'s direct path.
///
/// # Safety
/// `array` is a struct written by that path (or moved from one), released at most once.
unsafe extern "C" fn release_argument(array: *mut ArrowArray) {
    // SAFETY: a valid struct (this function's contract).
    let array = unsafe { &mut *array };
    if array.release.is_some() {
        // SAFETY: private_data is the Box export_argument leaked for this struct, freed once here.
        drop(unsafe { Box::from_raw(array.private_data.cast::<ArgumentBuffers>()) });
        array.release = None;
        array.private_data = std::ptr::null_mut();
    }
}

/// An argument as a C struct for the call. A fixed-width primitive array (not empty, its
/// validity bitmap, if it has nulls, starting on a byte) is written directly: its buffers are
/// the array's own, kept alive by one boxed `ArrayRef` until the struct's release, which may
/// come after the call when the plugin moves the struct out (an identity). arrow-rs's
/// `to_data` + `FFI_ArrowArray::new` clone the array data and allocate four times per argument
/// (~1 600 instructions a call, callgrind). Everything else goes through arrow-rs.
fn export_argument(array: &ArrayRef) -> ArrowArray {
    let values: &dyn Array = array.as_ref();
    let direct: Option<*const u8> = arrow::array::downcast_primitive_array!(
        values => Some(values.values().inner().as_ptr()),
        _ => None
    );
    let nulls = array.nulls().filter(|n| n.null_count() > 0);
    match (direct, nulls) {
        (Some(values), nulls) if !array.is_empty() && nulls.is_none_or(|n| n.offset() % 8 == 0) => {
            let (validity, null_count) = match nulls {
                // SAFETY: the bitmap holds offset + len bits; a whole number of bytes in is inside it.
                Some(n) => (unsafe { n.buffer().as_ptr().add(n.offset() / 8) }, n.null_count()),
                None => (std::ptr::null(), 0),
            };
            let mut keep = Box::new(ArgumentBuffers { _array: array.clone(), pointers: [validity.cast(), values.cast()] });
            let buffers = keep.pointers.as_mut_ptr();
            ArrowArray {
                length: array.len() as i64,
                null_count: null_count as i64,
                offset: 0,
                n_buffers: 2,
                n_children: 0,
                buffers,
                children: std::ptr::null_mut(),
                dictionary: std::ptr::null_mut(),
                release: Some(release_argument),
                private_data: Box::into_raw(keep).cast(),
            }
        }
        _ => {
            let exported = FFI_ArrowArray::new(&array.to_data());
            // SAFETY: FFI_ArrowArray is the C Data Interface struct, which ArrowArray mirrors
            // field for field; its release takes the struct by pointer either way.
            unsafe { std::mem::transmute::<FFI_ArrowArray, ArrowArray>(exported) }
        }
    }
}

/// Imports a result of a fixed-width primitive type (integers, floats, decimals, dates, times,
/// timestamps, durations, intervals: `width` bytes a value) straight from its C struct, the
/// common case, without arrow-rs's general importer: per call that importer computes the type's
/// layout three times (an allocation each), builds the array data generically and validates it
/// again (callgrind: ~2 300 instructions of the ~5 400 a call cost the core, against ~900
/// here). The result is untrusted all the same and checked as `validate_full` checks such an
/// array: the struct's shape (two buffers, no children, no dictionary), length = `rows`, offset
/// arithmetic, a values buffer, and a null count that matches the validity bitmap (counted here,
/// as `validate_full` counts it). Buffer sizes cannot be checked through the C Data Interface
/// by anyone; both paths derive them from length and offset.
///
/// `Err(out)` gives the struct back untouched when the fast path does not apply (a misaligned
/// values buffer, which arrow-rs copies; an empty array; another shape, which the general path
/// then refuses with arrow-rs's own message).
///
/// # Safety
/// `out` is an unreleased array the plugin filled for a `data_type` result: its buffers, if the
/// struct says it has them, are readable for `offset + length` values.
unsafe fn import_fixed_width(
    out: FFI_ArrowArray,
    data_type: &DataType,
    width: usize,
    rows: usize,
) -> std::result::Result<std::result::Result<ArrayRef, String>, FFI_ArrowArray> {
    // SAFETY: FFI_ArrowArray has the C Data Interface layout, which plugin-sys's ArrowArray mirrors.
    let raw = unsafe { &*(&out as *const FFI_ArrowArray).cast::<ArrowArray>() };
    if raw.n_buffers != 2 || raw.n_children != 0 || !raw.dictionary.is_null() || raw.buffers.is_null() || rows == 0 {
        return Err(out);
    }
    if raw.length != rows as i64 {
        return Ok(Err(format!("returned {} values for {rows} rows", raw.length)));
    }
    let (Ok(offset), Some(null_count)) = (usize::try_from(raw.offset), if raw.null_count >= -1 { Some(raw.null_count) } else { None }) else {
        return Ok(Err(format!("invalid result array: offset {} and null_count {}", raw.offset, raw.null_count)));
    };
    let Some(end) = offset.checked_add(rows).filter(|end| end.checked_mul(width).is_some_and(|bytes| bytes <= isize::MAX as usize)) else {
        return Ok(Err(format!("invalid result array: offset {offset} and length {rows} overflow")));
    };
    // SAFETY: `buffers` is non-NULL and holds n_buffers = 2 pointers (the C Data Interface).
    let (validity, values) = unsafe { (*raw.buffers.cast::<*const u8>(), *raw.buffers.cast::<*const u8>().add(1)) };
    let Some(values) = NonNull::new(values.cast_mut()) else {
        return Ok(Err(format!("invalid result array: no values buffer for {rows} values")));
    };
    // SAFETY: values is readable for `end` values (this function's contract), so the address
    // `offset` values in is inside that memory.
    let first = unsafe { values.add(offset * width) };
    if !(first.as_ptr() as usize).is_multiple_of(width.min(16)) {
        return Err(out); // arrow-rs copies misaligned buffers; let it
    }
    if validity.is_null() && null_count > 0 {
        return Ok(Err(format!("invalid result array: null_count {null_count} without a validity buffer")));
    }
    // Owns the struct: its release runs when the last buffer over its memory is dropped.
    let owner = Arc::new(out);
    // SAFETY: readable for `rows` values from `first` (this function's contract); `owner` keeps
    // the memory until the buffer is dropped.
    let values = unsafe { Buffer::from_custom_allocation(first, rows * width, owner.clone()) };
    let nulls = match NonNull::new(validity.cast_mut()) {
        None => None,
        Some(bits) => {
            // SAFETY: the validity bitmap covers `end` bits (this function's contract).
            let bitmap = unsafe { Buffer::from_custom_allocation(bits, end.div_ceil(8), owner) };
            let nulls = NullBuffer::new(BooleanBuffer::new(bitmap, offset, rows));
            if null_count >= 0 && nulls.null_count() != null_count as usize {
                return Ok(Err(format!("invalid result array: null_count {null_count} but {} nulls in the validity bitmap", nulls.null_count())));
            }
            Some(nulls).filter(|n| n.null_count() > 0)
        }
    };
    // SAFETY: one aligned values buffer of `rows` values of the type and a validity bitmap of
    // `rows` bits with its exact null count: what validate_full checks of a fixed-width array.
    let data = unsafe { ArrayData::builder(data_type.clone()).len(rows).add_buffer(values).nulls(nulls).build_unchecked() };
    Ok(Ok(make_array(data)))
}

/// Takes a plugin-allocated error message and frees it with the plugin's `free_string`.
///
/// # Safety
/// `message` is NULL or a NUL-terminated string that `free_string` may free, not used after.
pub(crate) unsafe fn take_message(message: *mut c_char, free_string: Option<FreeString>) -> Option<String> {
    if message.is_null() {
        return None;
    }
    // SAFETY: non-NULL and NUL-terminated (the caller's contract).
    let text = unsafe { CStr::from_ptr(message) }.to_string_lossy().into_owned();
    if let Some(free) = free_string {
        // SAFETY: allocated by the plugin for us; freed once, here.
        unsafe { free(message) };
    }
    Some(text)
}

/// The `free_string` argument of `sluice_functions_add_scalar` as a function pointer.
///
/// # Safety
/// `address` is NULL or the address of an `extern "C" fn(char*)`.
pub unsafe fn free_string_of(address: *const c_void) -> Option<FreeString> {
    // SAFETY: NULL maps to None; otherwise a function of this signature (the caller's contract).
    unsafe { std::mem::transmute::<*const c_void, Option<FreeString>>(address) }
}

#[cfg(test)]
mod tests {
    use std::ffi::CString;

    use arrow::array::{AsArray, Int64Array, RecordBatch};
    use arrow::datatypes::{Field, Int64Type, Schema};
    use arrow::ffi::from_ffi;

    use super::*;
    use crate::transform::SqlTransform;

    /// `twice(x)`: 2x, failing on 13 with a message allocated as a plugin would.
    unsafe extern "C" fn twice(_state: *mut c_void, args: *mut *mut ArrowArray, n_rows: i64, out: *mut ArrowArray, error: *mut *mut c_char) -> i32 {
        // SAFETY: one borrowed Int64 argument, as declared; FFI_ArrowArray has its layout.
        let input = unsafe { FFI_ArrowArray::from_raw((*args).cast::<FFI_ArrowArray>()) };
        let schema = FFI_ArrowSchema::try_from(&DataType::Int64).unwrap();
        // SAFETY: `input` is an Int64 array (the signature); borrowed, so it is read only.
        let data = unsafe { from_ffi(input, &schema) }.unwrap();
        let values = make_array(data);
        let values = values.as_primitive::<Int64Type>();
        assert_eq!(values.len() as i64, n_rows);
        if values.iter().flatten().any(|v| v == 13) {
            // SAFETY: the host frees it with free_message below.
            unsafe { *error = CString::new("13 is unlucky").unwrap().into_raw() };
            return 1;
        }
        let doubled: Int64Array = values.iter().map(|v| v.map(|v| v * 2)).collect();
        // SAFETY: out is writable (the ABI); the host owns the moved-out array.
        unsafe { std::ptr::write(out.cast::<FFI_ArrowArray>(), FFI_ArrowArray::new(&doubled.to_data())) };
        0
    }

    unsafe extern "C" fn free_message(message: *mut c_char) {
        // SAFETY: made by CString::into_raw in `twice`.
        drop(unsafe { CString::from_raw(message) });
    }

    struct Descriptor {
        _formats: Vec<CString>,
        _pointers: Box<[*const c_char; 1]>,
        udf: Box<SluiceScalarUdf>,
        _ret: CString,
    }

    fn descriptor() -> Descriptor {
        let formats = vec![CString::new("l").unwrap()];
        let pointers = Box::new([formats[0].as_ptr()]);
        let ret = CString::new("l").unwrap();
        let udf = Box::new(SluiceScalarUdf {
            n_args: 1,
            arg_types: pointers.as_ptr(),
            return_type: ret.as_ptr(),
            volatility: SLUICE_VOLATILITY_IMMUTABLE,
            state: std::ptr::null_mut(),
            invoke: Some(twice),
        });
        Descriptor { _formats: formats, _pointers: pointers, udf, _ret: ret }
    }

    #[test]
    fn sql_calls_a_plugin_function_by_name_and_surfaces_its_error() {
        let d = descriptor();
        let mut functions = Functions::default();
        // SAFETY: the descriptor outlives the transform below.
        unsafe { functions.add("twice", &*d.udf, Some(free_message)) }.unwrap();
        let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, true)]));
        let mut t =
            SqlTransform::with_functions("SELECT twice(x) AS y FROM s WHERE x > 0", vec![("s".into(), schema.clone())], &[], &functions).unwrap();
        let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from(vec![Some(1), None, Some(5), Some(-1)]))]).unwrap();
        // Arrays with an offset reach the plugin as such.
        t.push(0, batch.slice(0, 3)).unwrap();
        let out = t.next_output().unwrap();
        assert_eq!(out.column(0).as_primitive::<Int64Type>().iter().collect::<Vec<_>>(), vec![Some(2), Some(10)]);
        // Nulls at a bit offset that is not a whole byte (arrow-rs's export) and at one that is
        // (the direct export moves the bitmap pointer).
        let long: Int64Array = (0..20).map(|v| if v % 3 == 0 { None } else { Some(100 + v) }).collect();
        let long = RecordBatch::try_new(schema.clone(), vec![Arc::new(long)]).unwrap();
        // No WHERE here: a filter would copy the rows and drop the nulls before the call.
        let mut all = SqlTransform::with_functions("SELECT twice(x) AS y FROM s", vec![("s".into(), schema.clone())], &[], &functions).unwrap();
        for start in [1, 8] {
            all.push(0, long.slice(start, 12)).unwrap();
            let out = all.next_output().unwrap();
            assert_eq!(out.column(0).null_count(), 4, "slice at {start}");
            let expected: Vec<Option<i64>> = (start as i64..start as i64 + 12).map(|v| if v % 3 == 0 { None } else { Some(2 * (100 + v)) }).collect();
            assert_eq!(out.column(0).as_primitive::<Int64Type>().iter().collect::<Vec<_>>(), expected, "slice at {start}");
        }
        let bad = RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from(vec![13]))]).unwrap();
        let error = t.push(0, bad).unwrap_err();
        assert!(error.message.contains("twice: 13 is unlucky"), "{}", error.message);
    }

    /// `crafted(x)`: a result struct chosen by the first argument, for the fixed-width importer:
    /// 1 → 4 values at offset 3 with two nulls, 2 → the same with a wrong null count, 3 → one
    /// value too many, 4 → nulls but no validity buffer, 5 → an unknown null count (-1).
    unsafe extern "C" fn crafted(
        _state: *mut c_void,
        args: *mut *mut ArrowArray,
        n_rows: i64,
        out: *mut ArrowArray,
        _error: *mut *mut c_char,
    ) -> i32 {
        // SAFETY: one borrowed Int64 argument, as declared.
        let input = unsafe { FFI_ArrowArray::from_raw((*args).cast::<FFI_ArrowArray>()) };
        let schema = FFI_ArrowSchema::try_from(&DataType::Int64).unwrap();
        // SAFETY: an Int64 array (the signature).
        let data = unsafe { from_ffi(input, &schema) }.unwrap();
        let case = make_array(data).as_primitive::<Int64Type>().value(0);
        let rows = n_rows as usize + usize::from(case == 3);
        // values 0..offset+rows, every third of those shown null; the array starts at offset 3
        let values: Vec<i64> = (0..rows as i64 + 3).map(|v| v * 10).collect();
        let valid: Vec<bool> = (0..rows + 3).map(|i| i % 3 != 1).collect();
        let mut builder = ArrayData::builder(DataType::Int64).len(rows).offset(3).add_buffer(Buffer::from_vec(values));
        if case != 4 {
            builder = builder.null_bit_buffer(Some(BooleanBuffer::from(valid).into_inner()));
        }
        // SAFETY: a consistent Int64 array of `rows` values at offset 3 (without its bitmap in case 4).
        let data = unsafe { builder.build_unchecked() };
        let mut exported = FFI_ArrowArray::new(&data);
        match case {
            // SAFETY: only the declared count changes; the struct stays otherwise valid.
            2 => unsafe { exported.set_null_count(0) },
            // SAFETY: as above.
            4 => unsafe { exported.set_null_count(1) },
            // SAFETY: as above; -1 means "not computed".
            5 => unsafe { exported.set_null_count(-1) },
            _ => {}
        }
        // SAFETY: out is writable (the ABI); the host owns the moved-out array.
        unsafe { std::ptr::write(out.cast::<FFI_ArrowArray>(), exported) };
        0
    }

    #[test]
    fn fixed_width_results_are_read_at_their_offset_and_checked() {
        let formats = [CString::new("l").unwrap()];
        let pointers = [formats[0].as_ptr()];
        let udf = SluiceScalarUdf {
            n_args: 1,
            arg_types: pointers.as_ptr(),
            return_type: formats[0].as_ptr(),
            volatility: SLUICE_VOLATILITY_VOLATILE,
            state: std::ptr::null_mut(),
            invoke: Some(crafted),
        };
        let mut functions = Functions::default();
        // SAFETY: the descriptor outlives the transform below.
        unsafe { functions.add("crafted", &udf, None) }.unwrap();
        let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, true)]));
        let mut t = SqlTransform::with_functions("SELECT crafted(x) AS y FROM s", vec![("s".into(), schema.clone())], &[], &functions).unwrap();
        let batch = |case: i64| RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from(vec![case, 0, 0, 0]))]).unwrap();
        // rows 3..7 of the crafted data: 30, 40 (null: 4 % 3 == 1), 50, 60, with 70 (7 % 3 == 1) past the end
        let expected = vec![Some(30), None, Some(50), Some(60)];
        for case in [1, 5] {
            t.push(0, batch(case)).unwrap();
            let out = t.next_output().unwrap();
            assert_eq!(out.column(0).as_primitive::<Int64Type>().iter().collect::<Vec<_>>(), expected, "case {case}");
            assert_eq!(out.column(0).null_count(), 1);
        }
        for (case, message) in [(2, "null_count 0 but 1 nulls"), (3, "returned 5 values for 4 rows"), (4, "null_count 1 without a validity buffer")] {
            let error = t.push(0, batch(case)).unwrap_err();
            assert!(error.message.contains(message), "case {case}: {}", error.message);
        }
    }

    /// `echo(x)`: hands its argument back zero-copy, moving the struct out as the JVM's identity
    /// does (the borrow's buffers outlive the call), so only the core's side of a call remains.
    unsafe extern "C" fn echo(_state: *mut c_void, args: *mut *mut ArrowArray, _n_rows: i64, out: *mut ArrowArray, _error: *mut *mut c_char) -> i32 {
        // SAFETY: one borrowed argument (moved out: its release moves with it) and a writable out.
        unsafe { std::ptr::write(out.cast::<FFI_ArrowArray>(), FFI_ArrowArray::from_raw((*args).cast::<FFI_ArrowArray>())) };
        0
    }

    /// Pushes `batch` `times` times through `sql` and drains: the loop a profiler looks at.
    #[inline(never)]
    fn profile_drive(t: &mut SqlTransform, batch: &RecordBatch, times: usize) -> usize {
        let mut rows = 0;
        for _ in 0..times {
            t.push(0, batch.clone()).unwrap();
            while let Some(out) = t.next_output() {
                rows += out.num_rows();
            }
        }
        rows
    }

    /// For profiling the core's side of a UDF call (not run by default):
    /// `SLUICE_PROFILE_SQL='SELECT echo(x) AS y FROM s' valgrind --tool=callgrind
    /// --toggle-collect='*profile_drive*' <test binary> profile_udf_calls --ignored`, against
    /// `SELECT x AS y FROM s`. Rows per batch from SLUICE_PROFILE_ROWS (1024), batches from
    /// SLUICE_PROFILE_BATCHES (10 000).
    #[test]
    #[ignore]
    fn profile_udf_calls() {
        let formats = [CString::new("g").unwrap()];
        let pointers = [formats[0].as_ptr()];
        let udf = SluiceScalarUdf {
            n_args: 1,
            arg_types: pointers.as_ptr(),
            return_type: formats[0].as_ptr(),
            volatility: SLUICE_VOLATILITY_VOLATILE,
            state: std::ptr::null_mut(),
            invoke: Some(echo),
        };
        let mut functions = Functions::default();
        // SAFETY: the descriptor outlives the transform below.
        unsafe { functions.add("echo", &udf, None) }.unwrap();
        let env = |name: &str, default: usize| std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default);
        let rows = env("SLUICE_PROFILE_ROWS", 1024);
        let batches = env("SLUICE_PROFILE_BATCHES", 10_000);
        let sql = std::env::var("SLUICE_PROFILE_SQL").unwrap_or_else(|_| "SELECT echo(x) AS y FROM s".into());
        let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Float64, true)]));
        let mut t = SqlTransform::with_functions(&sql, vec![("s".into(), schema.clone())], &[], &functions).unwrap();
        let x: arrow::array::Float64Array = (0..rows).map(|i| (i % 1000) as f64 / 1000.0).collect();
        let batch = RecordBatch::try_new(schema, vec![Arc::new(x)]).unwrap();
        assert_eq!(profile_drive(&mut t, &batch, batches), rows * batches);
    }

    #[test]
    fn wrong_argument_types_fail_at_planning() {
        let d = descriptor();
        let mut functions = Functions::default();
        // SAFETY: the descriptor outlives the transform below.
        unsafe { functions.add("twice", &*d.udf, Some(free_message)) }.unwrap();
        // SAFETY: as above.
        assert!(unsafe { functions.add("twice", &*d.udf, Some(free_message)) }.is_err(), "duplicate names are refused");
        let schema = Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, true)]));
        let result = SqlTransform::with_functions("SELECT twice(s, s) FROM t", vec![("t".into(), schema)], &[], &functions);
        assert!(result.is_err());
    }
}
