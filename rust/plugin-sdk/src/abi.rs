//! The `extern "C"` functions of the vtables: every one converts pointers, catches panics at
//! the ABI edge and maps errors to status codes and messages.

use std::any::Any;
use std::collections::VecDeque;
use std::ffi::{c_char, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::ptr;
use std::time::Duration;

use arrow::array::{ArrayRef, RecordBatch};
use arrow::datatypes::{DataType, SchemaRef};
use sluice_plugin_sys as sys;

use crate::arrow_ffi::{self, Borrowed};
use crate::component::{Poll, Preprocessor, ScalarUdf, SideOutput, Sink, Source, Transform};
use crate::error::{Error, Result};
use crate::options::{InstanceInfo, Options};

/// A string the host frees with the descriptor's `free_string`: NUL bytes of `text` become
/// U+FFFD so a message is never cut or lost.
pub(crate) fn to_c_string(text: String) -> CString {
    match CString::new(text) {
        Ok(s) => s,
        Err(e) => {
            let text = String::from_utf8_lossy(&e.into_vec()).replace('\0', "\u{fffd}");
            CString::new(text).unwrap_or_default()
        }
    }
}

/// The descriptor's `free_string`: releases a string made by `CString::into_raw`.
///
/// # Safety
/// `text` must be NULL or a string this SDK handed out, not yet freed.
pub unsafe extern "C" fn free_string(text: *mut c_char) {
    if !text.is_null() {
        drop(unsafe { CString::from_raw(text) });
    }
}

/// The descriptor's `free_bytes`: releases bytes made by `Box::<[u8]>::into_raw`.
///
/// # Safety
/// `data` and `len` must be NULL or a snapshot this SDK handed out (with its length), not yet
/// freed.
pub unsafe extern "C" fn free_bytes(data: *mut u8, len: usize) {
    if !data.is_null() {
        drop(unsafe { Box::from_raw(ptr::slice_from_raw_parts_mut(data, len)) });
    }
}

unsafe fn set_error(out_error: *mut *mut c_char, message: String) {
    if !out_error.is_null() {
        unsafe { *out_error = to_c_string(message).into_raw() };
    }
}

/// The text of a panic payload (what `panic!` was given).
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(a panic payload that is not a string)".to_owned()
    }
}

/// Runs `f` at the ABI edge: OK, or the error's status with its message, or
/// SLUICE_PLUGIN_PANIC with the panic's text when plugin code panicked.
pub(crate) unsafe fn guard(component: &str, call: &str, out_error: *mut *mut c_char, f: impl FnOnce() -> Result<()>) -> i32 {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => sys::SLUICE_PLUGIN_OK,
        Ok(Err(e)) => {
            let status = e.status();
            unsafe { set_error(out_error, e.message().to_owned()) };
            status
        }
        Err(payload) => {
            let message = format!("{component}: panicked in {call}: {}", panic_message(&*payload));
            // Dropping a payload can itself panic; never let that unwind into the host.
            let _ = catch_unwind(AssertUnwindSafe(move || drop(payload)));
            unsafe { set_error(out_error, message) };
            sys::SLUICE_PLUGIN_PANIC
        }
    }
}

/// Drops a state at `close`, catching any panic (close cannot report one).
unsafe extern "C" fn drop_state<T>(state: *mut c_void) {
    if !state.is_null() {
        let _ = catch_unwind(AssertUnwindSafe(|| drop(unsafe { Box::from_raw(state.cast::<T>()) })));
    }
}

unsafe fn state_mut<'a, T>(state: *mut c_void) -> Result<&'a mut T> {
    unsafe { state.cast::<T>().as_mut() }.ok_or_else(|| Error::new("the host passed a NULL state"))
}

unsafe fn str_arg<'a>(text: *const c_char, what: &str) -> Result<&'a str> {
    if text.is_null() {
        return Err(Error::new(format!("the host passed a NULL {what}")));
    }
    unsafe { CStr::from_ptr(text) }.to_str().map_err(|_| Error::new(format!("the {what} is not valid UTF-8")))
}

unsafe fn options_arg(json: *const c_char, specs: &[crate::OptionSpec]) -> Result<Options> {
    let options = if json.is_null() { Options::parse("{}")? } else { Options::parse(unsafe { str_arg(json, "options")? })? };
    if !specs.is_empty() {
        options.check(specs)?;
    }
    Ok(options)
}

unsafe fn instance_arg(instance: *const sys::SluiceInstanceInfo) -> InstanceInfo {
    let Some(info) = (unsafe { instance.as_ref() }) else { return InstanceInfo::default() };
    let text = |p: *const c_char| if p.is_null() { String::new() } else { unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned() };
    InstanceInfo {
        pipeline: text(info.pipeline),
        node: text(info.node),
        pipeline_dir: PathBuf::from(text(info.pipeline_dir)),
        lane: info.lane,
        lanes: info.lanes,
    }
}

unsafe fn clear_out_state(out_state: *mut *mut c_void) -> Result<()> {
    if out_state.is_null() {
        return Err(Error::new("the host passed a NULL out_state"));
    }
    unsafe { *out_state = ptr::null_mut() };
    Ok(())
}

/// An error unless `batch` has exactly the fields of `schema` (names, types, nullability).
fn check_batch_schema(component: &str, call: &str, schema: &SchemaRef, batch: &RecordBatch) -> Result<()> {
    if batch.schema().fields() == schema.fields() {
        return Ok(());
    }
    Err(Error::new(format!(
        "{component}: {call} produced a batch whose schema differs from the one open declared: got {:?}, declared {:?}",
        batch.schema().fields(),
        schema.fields()
    )))
}

// ---- sources ---------------------------------------------------------------------------------

struct SourceState<S> {
    inner: S,
    schema: SchemaRef,
}

pub(crate) fn source_vtable<S: Source>() -> sys::SluiceSource {
    sys::SluiceSource {
        open: Some(source_open::<S>),
        restore: Some(source_restore::<S>),
        poll: Some(source_poll::<S>),
        snapshot: Some(source_snapshot::<S>),
        commit: Some(source_commit::<S>),
        close: Some(drop_state::<SourceState<S>>),
    }
}

unsafe extern "C" fn source_open<S: Source>(
    options: *const c_char,
    instance: *const sys::SluiceInstanceInfo,
    out_state: *mut *mut c_void,
    out_schema: *mut sys::ArrowSchema,
    out_error: *mut *mut c_char,
) -> i32 {
    unsafe {
        guard(S::NAME, "open", out_error, || {
            clear_out_state(out_state)?;
            let options = options_arg(options, S::OPTIONS)?;
            let (inner, schema) = S::open(&options, &instance_arg(instance))?;
            arrow_ffi::export_schema(&schema, out_schema)?;
            *out_state = Box::into_raw(Box::new(SourceState { inner, schema })).cast();
            Ok(())
        })
    }
}

unsafe extern "C" fn source_restore<S: Source>(state: *mut c_void, data: *const u8, len: usize, out_error: *mut *mut c_char) -> i32 {
    unsafe {
        guard(S::NAME, "restore", out_error, || {
            let st = state_mut::<SourceState<S>>(state)?;
            let bytes = if data.is_null() || len == 0 { &[][..] } else { std::slice::from_raw_parts(data, len) };
            st.inner.restore(bytes)
        })
    }
}

unsafe extern "C" fn source_poll<S: Source>(
    state: *mut c_void,
    max_rows: i64,
    timeout_millis: i64,
    out_result: *mut i32,
    out_batch: *mut sys::ArrowArray,
    out_error: *mut *mut c_char,
) -> i32 {
    unsafe {
        guard(S::NAME, "poll", out_error, || {
            let st = state_mut::<SourceState<S>>(state)?;
            if out_result.is_null() {
                return Err(Error::new("the host passed a NULL out_result"));
            }
            if max_rows <= 0 {
                return Err(Error::new(format!("{}: poll with max_rows {max_rows}", S::NAME)));
            }
            let max = usize::try_from(max_rows).unwrap_or(usize::MAX);
            let timeout = Duration::from_millis(u64::try_from(timeout_millis).unwrap_or(0));
            let result = match st.inner.poll(max, timeout)? {
                Poll::Batch(batch) if batch.num_rows() == 0 => sys::SLUICE_POLL_NONE_YET,
                Poll::Batch(batch) => {
                    check_batch_schema(S::NAME, "poll", &st.schema, &batch)?;
                    if batch.num_rows() > max {
                        return Err(Error::new(format!("{}: poll returned {} rows, more than max_rows {max}", S::NAME, batch.num_rows())));
                    }
                    arrow_ffi::export_batch(&batch, out_batch)?;
                    sys::SLUICE_POLL_BATCH
                }
                Poll::NoneYet => sys::SLUICE_POLL_NONE_YET,
                Poll::Finished => sys::SLUICE_POLL_FINISHED,
            };
            *out_result = result;
            Ok(())
        })
    }
}

unsafe extern "C" fn source_snapshot<S: Source>(
    state: *mut c_void,
    epoch: i64,
    out_data: *mut *mut u8,
    out_len: *mut usize,
    out_error: *mut *mut c_char,
) -> i32 {
    unsafe {
        guard(S::NAME, "snapshot", out_error, || {
            let st = state_mut::<SourceState<S>>(state)?;
            if out_data.is_null() || out_len.is_null() {
                return Err(Error::new("the host passed a NULL out_data or out_len"));
            }
            let bytes = st.inner.snapshot(epoch)?.unwrap_or_default();
            if bytes.is_empty() {
                *out_data = ptr::null_mut();
                *out_len = 0;
            } else {
                let len = bytes.len();
                *out_data = Box::into_raw(bytes.into_boxed_slice()).cast::<u8>();
                *out_len = len;
            }
            Ok(())
        })
    }
}

unsafe extern "C" fn source_commit<S: Source>(state: *mut c_void, epoch: i64, out_error: *mut *mut c_char) -> i32 {
    unsafe { guard(S::NAME, "commit", out_error, || state_mut::<SourceState<S>>(state)?.inner.commit(epoch)) }
}

// ---- transforms ------------------------------------------------------------------------------

struct TransformState<T> {
    inner: T,
    input: SchemaRef,
    output: SchemaRef,
    queue: VecDeque<RecordBatch>,
}

impl<T: Transform> TransformState<T> {
    fn enqueue(&mut self, call: &str, batches: Vec<RecordBatch>) -> Result<()> {
        for batch in &batches {
            check_batch_schema(T::NAME, call, &self.output, batch)?;
        }
        self.queue.extend(batches.into_iter().filter(|b| b.num_rows() > 0));
        Ok(())
    }
}

pub(crate) fn transform_vtable<T: Transform>() -> sys::SluiceTransform {
    sys::SluiceTransform {
        open: Some(transform_open::<T>),
        process: Some(transform_process::<T>),
        next_output: Some(transform_next_output::<T>),
        barrier: Some(transform_barrier::<T>),
        close: Some(drop_state::<TransformState<T>>),
    }
}

unsafe extern "C" fn transform_open<T: Transform>(
    options: *const c_char,
    instance: *const sys::SluiceInstanceInfo,
    input_schema: *const sys::ArrowSchema,
    out_state: *mut *mut c_void,
    out_schema: *mut sys::ArrowSchema,
    out_error: *mut *mut c_char,
) -> i32 {
    unsafe {
        guard(T::NAME, "open", out_error, || {
            clear_out_state(out_state)?;
            let options = options_arg(options, T::OPTIONS)?;
            let input = arrow_ffi::import_schema(input_schema)?;
            let (inner, output) = T::open(&options, &instance_arg(instance), input.clone())?;
            arrow_ffi::export_schema(&output, out_schema)?;
            *out_state = Box::into_raw(Box::new(TransformState { inner, input, output, queue: VecDeque::new() })).cast();
            Ok(())
        })
    }
}

unsafe extern "C" fn transform_process<T: Transform>(state: *mut c_void, batch: *mut sys::ArrowArray, out_error: *mut *mut c_char) -> i32 {
    unsafe {
        guard(T::NAME, "process", out_error, || {
            // Take the batch (and so release it) even if the state is NULL.
            let st = state.cast::<TransformState<T>>().as_mut();
            let Some(st) = st else {
                if !batch.is_null() {
                    drop(arrow::ffi::FFI_ArrowArray::from_raw(batch.cast()));
                }
                return Err(Error::new("the host passed a NULL state"));
            };
            let input = arrow_ffi::import_batch(batch, &st.input)?;
            let output = st.inner.process(input)?;
            st.enqueue("process", output)
        })
    }
}

unsafe extern "C" fn transform_next_output<T: Transform>(
    state: *mut c_void,
    out_has_batch: *mut i32,
    out_batch: *mut sys::ArrowArray,
    out_error: *mut *mut c_char,
) -> i32 {
    unsafe {
        guard(T::NAME, "next_output", out_error, || {
            let st = state_mut::<TransformState<T>>(state)?;
            if out_has_batch.is_null() {
                return Err(Error::new("the host passed a NULL out_has_batch"));
            }
            match st.queue.front() {
                None => *out_has_batch = 0,
                Some(batch) => {
                    arrow_ffi::export_batch(batch, out_batch)?;
                    st.queue.pop_front();
                    *out_has_batch = 1;
                }
            }
            Ok(())
        })
    }
}

unsafe extern "C" fn transform_barrier<T: Transform>(state: *mut c_void, epoch: i64, out_error: *mut *mut c_char) -> i32 {
    unsafe {
        guard(T::NAME, "barrier", out_error, || {
            let st = state_mut::<TransformState<T>>(state)?;
            let output = st.inner.barrier(epoch)?;
            st.enqueue("barrier", output)
        })
    }
}

// ---- sinks -----------------------------------------------------------------------------------

struct SinkState<K> {
    inner: K,
    schema: SchemaRef,
}

pub(crate) fn sink_vtable<K: Sink>() -> sys::SluiceSink {
    sys::SluiceSink {
        open: Some(sink_open::<K>),
        start: Some(sink_start::<K>),
        write: Some(sink_write::<K>),
        flush: Some(sink_flush::<K>),
        commit: Some(sink_commit::<K>),
        close: Some(drop_state::<SinkState<K>>),
    }
}

unsafe extern "C" fn sink_open<K: Sink>(
    options: *const c_char,
    instance: *const sys::SluiceInstanceInfo,
    schema: *const sys::ArrowSchema,
    out_state: *mut *mut c_void,
    out_error: *mut *mut c_char,
) -> i32 {
    unsafe {
        guard(K::NAME, "open", out_error, || {
            clear_out_state(out_state)?;
            let options = options_arg(options, K::OPTIONS)?;
            let schema = arrow_ffi::import_schema(schema)?;
            let inner = K::open(&options, &instance_arg(instance), schema.clone())?;
            *out_state = Box::into_raw(Box::new(SinkState { inner, schema })).cast();
            Ok(())
        })
    }
}

unsafe extern "C" fn sink_start<K: Sink>(state: *mut c_void, out_error: *mut *mut c_char) -> i32 {
    unsafe { guard(K::NAME, "start", out_error, || state_mut::<SinkState<K>>(state)?.inner.start()) }
}

unsafe extern "C" fn sink_write<K: Sink>(state: *mut c_void, batch: *mut sys::ArrowArray, out_error: *mut *mut c_char) -> i32 {
    unsafe {
        guard(K::NAME, "write", out_error, || {
            let Some(st) = state.cast::<SinkState<K>>().as_mut() else {
                if !batch.is_null() {
                    drop(arrow::ffi::FFI_ArrowArray::from_raw(batch.cast()));
                }
                return Err(Error::new("the host passed a NULL state"));
            };
            let batch = arrow_ffi::import_batch(batch, &st.schema)?;
            st.inner.write(batch)
        })
    }
}

unsafe extern "C" fn sink_flush<K: Sink>(state: *mut c_void, epoch: i64, out_error: *mut *mut c_char) -> i32 {
    unsafe { guard(K::NAME, "flush", out_error, || state_mut::<SinkState<K>>(state)?.inner.flush(epoch)) }
}

unsafe extern "C" fn sink_commit<K: Sink>(state: *mut c_void, epoch: i64, out_error: *mut *mut c_char) -> i32 {
    unsafe { guard(K::NAME, "commit", out_error, || state_mut::<SinkState<K>>(state)?.inner.commit(epoch)) }
}

// ---- scalar UDFs -----------------------------------------------------------------------------

pub(crate) struct UdfState<U> {
    pub(crate) udf: U,
    pub(crate) arg_types: Vec<DataType>,
    pub(crate) return_type: DataType,
}

pub(crate) unsafe extern "C" fn udf_invoke<U: ScalarUdf>(
    state: *mut c_void,
    args: *mut *mut sys::ArrowArray,
    n_rows: i64,
    out_result: *mut sys::ArrowArray,
    out_error: *mut *mut c_char,
) -> i32 {
    unsafe {
        guard(U::NAME, "invoke", out_error, || {
            let st = state.cast::<UdfState<U>>().as_ref().ok_or_else(|| Error::new("the host passed a NULL state"))?;
            let rows = usize::try_from(n_rows).map_err(|_| Error::new(format!("{}: invoke with n_rows {n_rows}", U::NAME)))?;
            if !st.arg_types.is_empty() && args.is_null() {
                return Err(Error::new("the host passed NULL args"));
            }
            let borrowed = Borrowed::new();
            let result = udf_call(st, &borrowed, args, rows);
            // Every argument array is dropped now: a buffer still referenced is shared by the
            // result (copy it, the host's arrays die after the call) or kept by the UDF.
            let result = match result {
                Ok(r) if borrowed.in_use() => {
                    let copy = arrow_ffi::deep_copy(r.as_ref());
                    drop(r);
                    copy
                }
                other => other,
            };
            if borrowed.in_use() {
                return Err(Error::new(format!("{}: the UDF kept its borrowed argument arrays beyond invoke", U::NAME)));
            }
            arrow_ffi::export_array(result?.as_ref(), out_result)
        })
    }
}

unsafe fn udf_call<U: ScalarUdf>(st: &UdfState<U>, borrowed: &Borrowed, args: *mut *mut sys::ArrowArray, rows: usize) -> Result<ArrayRef> {
    let mut arrays = Vec::with_capacity(st.arg_types.len());
    for (i, data_type) in st.arg_types.iter().enumerate() {
        let array = unsafe { borrowed.import(*args.add(i), data_type)? };
        if array.len() != rows {
            return Err(Error::new(format!("{}: argument {} has {} rows, expected {rows}", U::NAME, i + 1, array.len())));
        }
        arrays.push(array);
    }
    let result = st.udf.invoke(&arrays, rows)?;
    if result.len() != rows {
        return Err(Error::new(format!("{}: returned {} rows, expected {rows}", U::NAME, result.len())));
    }
    if result.data_type() != &st.return_type {
        return Err(Error::new(format!("{}: returned {}, declared {}", U::NAME, result.data_type(), st.return_type)));
    }
    Ok(result)
}

// ---- preprocessors ---------------------------------------------------------------------------

pub(crate) fn preprocessor_vtable<P: Preprocessor>() -> sys::SluicePreprocessor {
    sys::SluicePreprocessor { rewrite: Some(preprocessor_rewrite::<P>) }
}

unsafe extern "C" fn preprocessor_rewrite<P: Preprocessor>(
    options: *const c_char,
    pipeline_path: *const c_char,
    yaml: *const c_char,
    out_yaml: *mut *mut c_char,
    out_error: *mut *mut c_char,
) -> i32 {
    unsafe {
        guard(P::NAME, "rewrite", out_error, || {
            if out_yaml.is_null() {
                return Err(Error::new("the host passed a NULL out_yaml"));
            }
            let options = options_arg(options, P::OPTIONS)?;
            let path = if pipeline_path.is_null() { "" } else { str_arg(pipeline_path, "pipeline path")? };
            let text = P::rewrite(&options, path, str_arg(yaml, "pipeline text")?)?;
            let text = CString::new(text).map_err(|_| Error::new(format!("{}: the rewritten text contains a NUL byte", P::NAME)))?;
            *out_yaml = text.into_raw();
            Ok(())
        })
    }
}

// ---- side outputs ----------------------------------------------------------------------------

struct SideOutputState<O> {
    inner: O,
    schema: SchemaRef,
}

pub(crate) fn side_output_vtable<O: SideOutput>() -> sys::SluiceSideOutput {
    sys::SluiceSideOutput {
        open: Some(side_output_open::<O>),
        observe: Some(side_output_observe::<O>),
        barrier: Some(side_output_barrier::<O>),
        close: Some(drop_state::<SideOutputState<O>>),
    }
}

unsafe extern "C" fn side_output_open<O: SideOutput>(
    options: *const c_char,
    instance: *const sys::SluiceInstanceInfo,
    observed_node: *const c_char,
    schema: *const sys::ArrowSchema,
    out_state: *mut *mut c_void,
    out_error: *mut *mut c_char,
) -> i32 {
    unsafe {
        guard(O::NAME, "open", out_error, || {
            clear_out_state(out_state)?;
            let options = options_arg(options, O::OPTIONS)?;
            let observed = str_arg(observed_node, "observed node name")?;
            let schema = arrow_ffi::import_schema(schema)?;
            let inner = O::open(&options, &instance_arg(instance), observed, schema.clone())?;
            *out_state = Box::into_raw(Box::new(SideOutputState { inner, schema })).cast();
            Ok(())
        })
    }
}

unsafe extern "C" fn side_output_observe<O: SideOutput>(state: *mut c_void, batch: *const sys::ArrowArray, out_error: *mut *mut c_char) -> i32 {
    unsafe {
        guard(O::NAME, "observe", out_error, || {
            let st = state_mut::<SideOutputState<O>>(state)?;
            // The batch is borrowed: copied, never released nor kept (see SideOutput::observe).
            let batch = arrow_ffi::copy_borrowed_batch(batch, &st.schema)?;
            st.inner.observe(&batch)
        })
    }
}

unsafe extern "C" fn side_output_barrier<O: SideOutput>(state: *mut c_void, epoch: i64, out_error: *mut *mut c_char) -> i32 {
    unsafe { guard(O::NAME, "barrier", out_error, || state_mut::<SideOutputState<O>>(state)?.inner.barrier(epoch)) }
}
