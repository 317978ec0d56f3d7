//! Arrow over the C Data Interface, with arrow-rs's `arrow::ffi`. The structs of
//! `sluice-plugin-sys` have the layout of `FFI_ArrowSchema` and `FFI_ArrowArray`, so pointers
//! are cast. A record batch crosses as a struct array (format "+s") whose children are its
//! columns.
//!
//! Everything imported from the host is untrusted: its structure is checked before arrow-rs
//! reads it (arrow-rs asserts on a wrong number of buffers or children) and the data is then
//! validated in full (`ArrayData::validate_full`).

use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use arrow::array::{layout, make_array, Array, ArrayData, ArrayRef, MutableArrayData, RecordBatch, RecordBatchOptions, StructArray};
use arrow::buffer::{BooleanBuffer, Buffer, NullBuffer};
use arrow::datatypes::{DataType, Schema, SchemaRef};
use arrow::ffi::{from_ffi_and_data_type, FFI_ArrowArray, FFI_ArrowSchema};
use sluice_plugin_sys as sys;

use crate::error::{Error, Result};

/// Writes `schema` as a "+s" struct schema to `out` (which the caller then owns).
///
/// # Safety
/// `out` must be valid for writes of one `ArrowSchema`; its previous contents are not dropped.
pub unsafe fn export_schema(schema: &Schema, out: *mut sys::ArrowSchema) -> Result<()> {
    if out.is_null() {
        return Err(Error::new("the host passed a NULL ArrowSchema to fill"));
    }
    let ffi = FFI_ArrowSchema::try_from(schema).map_err(|e| Error::new(format!("cannot export the schema: {e}")))?;
    unsafe { ptr::write(out.cast::<FFI_ArrowSchema>(), ffi) };
    Ok(())
}

/// Reads a borrowed record-batch schema ("+s") the host passed.
///
/// # Safety
/// `schema` must be NULL or point to a valid `ArrowSchema` for the call.
pub unsafe fn import_schema(schema: *const sys::ArrowSchema) -> Result<SchemaRef> {
    let Some(schema) = (unsafe { schema.as_ref() }) else {
        return Err(Error::new("the host passed a NULL schema"));
    };
    if schema.release.is_none() {
        return Err(Error::new("the host passed a released schema"));
    }
    unsafe { check_schema(schema, 0)? };
    let ffi = unsafe { &*(schema as *const sys::ArrowSchema).cast::<FFI_ArrowSchema>() };
    if ffi.format() != "+s" {
        return Err(Error::new(format!("a batch schema must be a struct (\"+s\"), got format \"{}\"", ffi.format())));
    }
    Schema::try_from(ffi).map(Arc::new).map_err(|e| Error::new(format!("cannot import the schema: {e}")))
}

unsafe fn check_schema(schema: &sys::ArrowSchema, depth: usize) -> Result<()> {
    if depth > 64 {
        return Err(Error::new("schema nested too deeply"));
    }
    if schema.format.is_null() {
        return Err(Error::new("schema without a format string"));
    }
    if schema.n_children < 0 || (schema.n_children > 0 && schema.children.is_null()) {
        return Err(Error::new("schema with an invalid children array"));
    }
    for i in 0..schema.n_children as usize {
        let child = unsafe { *schema.children.add(i) };
        let Some(child) = (unsafe { child.as_ref() }) else { return Err(Error::new("schema with a NULL child")) };
        unsafe { check_schema(child, depth + 1)? };
    }
    if let Some(dictionary) = unsafe { schema.dictionary.as_ref() } {
        unsafe { check_schema(dictionary, depth + 1)? };
    }
    Ok(())
}

/// Writes `batch` to `out` as a struct array (moved out: the caller releases it).
///
/// # Safety
/// `out` must be valid for writes of one `ArrowArray`; its previous contents are not dropped.
pub unsafe fn export_batch(batch: &RecordBatch, out: *mut sys::ArrowArray) -> Result<()> {
    if out.is_null() {
        return Err(Error::new("the host passed a NULL ArrowArray to fill"));
    }
    let data = StructArray::from(batch.clone()).into_data();
    unsafe { ptr::write(out.cast::<FFI_ArrowArray>(), FFI_ArrowArray::new(&data)) };
    Ok(())
}

/// Writes `array` to `out` (moved out).
///
/// # Safety
/// As [`export_batch`].
pub unsafe fn export_array(array: &dyn Array, out: *mut sys::ArrowArray) -> Result<()> {
    if out.is_null() {
        return Err(Error::new("the host passed a NULL ArrowArray to fill"));
    }
    unsafe { ptr::write(out.cast::<FFI_ArrowArray>(), FFI_ArrowArray::new(&array.to_data())) };
    Ok(())
}

/// Takes a batch the host moved in: the struct at `batch` is left released and the returned
/// batch owns its contents (released when the last of its buffers is dropped). The batch must
/// be a struct array of `schema`'s fields; it is validated in full.
///
/// # Safety
/// `batch` must be NULL or point to an `ArrowArray` the callee owns (moved in), whose buffers
/// are as long as the C Data Interface says for its declared lengths.
pub unsafe fn import_batch(batch: *mut sys::ArrowArray, schema: &SchemaRef) -> Result<RecordBatch> {
    if batch.is_null() {
        return Err(Error::new("the host passed a NULL batch"));
    }
    // Take ownership first, so the batch is released whatever happens next.
    let owned = unsafe { FFI_ArrowArray::from_raw(batch.cast::<FFI_ArrowArray>()) };
    if owned.is_released() {
        return Err(Error::new("the host passed a released batch"));
    }
    let data_type = DataType::Struct(schema.fields().clone());
    unsafe { check_array((&owned as *const FFI_ArrowArray).cast::<sys::ArrowArray>(), &data_type, 0)? };
    let data = unsafe { from_ffi_and_data_type(owned, data_type) }.map_err(|e| Error::new(format!("cannot import the batch: {e}")))?;
    batch_from_struct_data(data, schema)
}

fn batch_from_struct_data(data: ArrayData, schema: &SchemaRef) -> Result<RecordBatch> {
    data.validate_full().map_err(|e| Error::new(format!("invalid batch from the host: {e}")))?;
    let rows = data.len();
    let (_, columns, nulls) = StructArray::from(data).into_parts();
    if nulls.is_some_and(|n| n.null_count() > 0) {
        return Err(Error::new("invalid batch from the host: the struct array of a batch has null rows"));
    }
    RecordBatch::try_new_with_options(schema.clone(), columns, &RecordBatchOptions::new().with_row_count(Some(rows)))
        .map_err(|e| Error::new(format!("invalid batch from the host: {e}")))
}

/// Checks the structure of a C array against `data_type` before arrow-rs reads it: lengths,
/// numbers of buffers and children, non-NULL pointers where they are required.
unsafe fn check_array(array: *const sys::ArrowArray, data_type: &DataType, depth: usize) -> Result<()> {
    let Some(a) = (unsafe { array.as_ref() }) else { return Err(Error::new("invalid array: a NULL child")) };
    let bad = |what: String| Err(Error::new(format!("invalid array of type {data_type}: {what}")));
    if depth > 64 {
        return bad("nested too deeply".into());
    }
    if a.release.is_none() {
        return bad("released".into());
    }
    if a.length < 0 || a.offset < 0 || a.null_count < -1 || a.length.checked_add(a.offset).is_none() {
        return bad(format!("length {}, offset {}, null_count {}", a.length, a.offset, a.null_count));
    }
    let lay = layout(data_type);
    let min_buffers = lay.buffers.len() + usize::from(lay.can_contain_null_mask) + usize::from(lay.variadic);
    let n_buffers = usize::try_from(a.n_buffers).unwrap_or(usize::MAX);
    if a.n_buffers < 0 || n_buffers < min_buffers || (!lay.variadic && n_buffers != min_buffers) {
        return bad(format!("{} buffers, expected {min_buffers}", a.n_buffers));
    }
    if n_buffers > 0 && a.buffers.is_null() {
        return bad("NULL buffers array".into());
    }
    let children: Vec<&DataType> = match data_type {
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::FixedSizeList(f, _)
        | DataType::ListView(f)
        | DataType::LargeListView(f)
        | DataType::Map(f, _) => {
            vec![f.data_type()]
        }
        DataType::Struct(fields) => fields.iter().map(|f| f.data_type()).collect(),
        DataType::Union(fields, _) => fields.iter().map(|(_, f)| f.data_type()).collect(),
        DataType::RunEndEncoded(run_ends, values) => vec![run_ends.data_type(), values.data_type()],
        _ => vec![],
    };
    if a.n_children != children.len() as i64 {
        return bad(format!("{} children, expected {}", a.n_children, children.len()));
    }
    if !children.is_empty() && a.children.is_null() {
        return bad("NULL children array".into());
    }
    for (i, child_type) in children.into_iter().enumerate() {
        unsafe { check_array(*a.children.add(i), child_type, depth + 1)? };
    }
    match data_type {
        DataType::Dictionary(_, values) => {
            if a.dictionary.is_null() {
                return bad("no dictionary".into());
            }
            unsafe { check_array(a.dictionary, values, depth + 1)? };
        }
        _ if !a.dictionary.is_null() => return bad("a dictionary on a non-dictionary type".into()),
        _ => {}
    }
    Ok(())
}

/// Arrays borrowed from the host for one call (a UDF's arguments). They are imported without
/// copying; each copy of a C struct gets a release callback that only counts, so that after the
/// call the SDK can tell whether plugin code still holds a buffer of them.
pub(crate) struct Borrowed {
    live: Arc<AtomicUsize>,
}

unsafe extern "C" fn release_borrowed(array: *mut sys::ArrowArray) {
    // Only the SDK's own copy of the host's struct gets here: count it and mark it released. The
    // host's buffers and children stay the host's.
    let Some(array) = (unsafe { array.as_mut() }) else { return };
    if !array.private_data.is_null() {
        let live = unsafe { Arc::from_raw(array.private_data as *const AtomicUsize) };
        live.fetch_sub(1, Ordering::AcqRel);
    }
    array.private_data = ptr::null_mut();
    array.release = None;
}

impl Borrowed {
    pub(crate) fn new() -> Self {
        Borrowed { live: Arc::new(AtomicUsize::new(0)) }
    }

    /// Imports a borrowed array of `data_type`, validated in full.
    ///
    /// # Safety
    /// `array` must be NULL or point to a valid `ArrowArray` that stays valid until every
    /// buffer imported from it is dropped.
    pub(crate) unsafe fn import(&self, array: *const sys::ArrowArray, data_type: &DataType) -> Result<ArrayRef> {
        if array.is_null() {
            return Err(Error::new("the host passed a NULL argument array"));
        }
        let data = unsafe { self.borrow(array, data_type, "an argument")? };
        data.validate_full().map_err(|e| Error::new(format!("invalid argument from the host: {e}")))?;
        Ok(make_array(data))
    }

    /// The structure of `array` checked, imported without copying and NOT validated: the
    /// caller validates it (or a copy of it) in full before any other use.
    ///
    /// # Safety
    /// `array` must point to a valid `ArrowArray` that stays valid until every buffer of the
    /// result is dropped.
    unsafe fn borrow(&self, array: *const sys::ArrowArray, data_type: &DataType, what: &str) -> Result<ArrayData> {
        unsafe { check_array(array, data_type, 0)? };
        // A bitwise copy of the host's struct, with a release of our own: the host's struct is
        // only read, and the buffers imported from it never release anything of the host's.
        let mut copy = unsafe { ptr::read(array) };
        copy.release = Some(release_borrowed);
        self.live.fetch_add(1, Ordering::AcqRel);
        copy.private_data = Arc::into_raw(self.live.clone()) as *mut c_void;
        // Same layout; the FFI_ArrowArray now owns the copy and calls release_borrowed on drop.
        let ffi = unsafe { ptr::read((&copy as *const sys::ArrowArray).cast::<FFI_ArrowArray>()) };
        unsafe { from_ffi_and_data_type(ffi, data_type.clone()) }.map_err(|e| Error::new(format!("cannot import {what}: {e}")))
    }

    /// Whether any buffer imported by [`import`](Self::import) is still referenced.
    pub(crate) fn in_use(&self) -> bool {
        self.live.load(Ordering::Acquire) != 0
    }
}

/// Copies a batch the host lent for the call (a side output's `observe`): the host's struct
/// is neither released nor modified, and the returned batch shares no memory with it, so it
/// may outlive the call. The batch must be a struct array of `schema`'s fields; the copy is
/// validated in full.
///
/// # Safety
/// `batch` must be NULL or point to an `ArrowArray` valid for the call, whose buffers are as
/// long as the C Data Interface says for its declared lengths.
pub unsafe fn copy_borrowed_batch(batch: *const sys::ArrowArray, schema: &SchemaRef) -> Result<RecordBatch> {
    let Some(host) = (unsafe { batch.as_ref() }) else {
        return Err(Error::new("the host passed a NULL batch"));
    };
    if host.release.is_none() {
        return Err(Error::new("the host passed a released batch"));
    }
    let borrowed = Borrowed::new();
    let data_type = DataType::Struct(schema.fields().clone());
    let copy = copy_data(&unsafe { borrowed.borrow(batch, &data_type, "the batch")? });
    // Every buffer imported from the host's struct is dropped now; the copy owns its memory.
    if borrowed.in_use() {
        return Err(Error::new("the copy of a borrowed batch still refers to the host's memory"));
    }
    batch_from_struct_data(copy, schema)
}

/// A byte-for-byte copy of `data`, down to its children and dictionary (every buffer copied,
/// the offsets kept), that shares no memory with it. Unlike [`deep_copy`] it copies also the
/// dictionary values and the data buffers of view arrays, which `MutableArrayData` shares.
/// Not validated: the result is as valid as `data`.
fn copy_data(data: &ArrayData) -> ArrayData {
    let copy_buffer = |buffer: &Buffer| Buffer::from_slice_ref(buffer.as_slice());
    let nulls = data.nulls().map(|nulls| {
        let bits = nulls.inner();
        NullBuffer::new(BooleanBuffer::new(copy_buffer(bits.inner()), bits.offset(), bits.len()))
    });
    let builder = ArrayData::builder(data.data_type().clone())
        .len(data.len())
        .offset(data.offset())
        .buffers(data.buffers().iter().map(copy_buffer).collect())
        .child_data(data.child_data().iter().map(copy_data).collect())
        .nulls(nulls);
    // SAFETY: the same type, lengths, offsets and bytes as `data`; the caller validates the
    // copy (copy_borrowed_batch does, in full) before it is used.
    unsafe { builder.build_unchecked() }
}

/// A copy of `array` that shares no buffer with it.
pub(crate) fn deep_copy(array: &dyn Array) -> Result<ArrayRef> {
    let data = array.to_data();
    let mut copy = MutableArrayData::new(vec![&data], false, data.len());
    copy.try_extend(0, 0, data.len())?;
    Ok(make_array(copy.freeze()))
}
