//! Arrow C Data Interface crossings. Ownership rule at every crossing: the receiver of a
//! `struct ArrowArray` / `struct ArrowSchema` moves it out of the caller's memory (leaving the
//! caller's copy with `release == NULL`) and calls `release` exactly once, also on error.

// Each unsafe operation is in its own block with its justification (issue 11; the rest of the
// crate follows as its modules are annotated).
#![deny(unsafe_op_in_unsafe_fn)]

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, RecordBatch, RecordBatchOptions, StructArray};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow::ffi::{from_ffi_and_data_type, FFI_ArrowArray, FFI_ArrowSchema};
use serde::Deserialize;

use crate::error::{CoreError, Result};

/// The C Data Interface layout of `struct ArrowSchema`, to check `release` before taking it
/// (arrow-rs keeps the fields private).
#[repr(C)]
struct RawSchemaHead {
    format: *const std::ffi::c_char,
    name: *const std::ffi::c_char,
    metadata: *const std::ffi::c_char,
    flags: i64,
    n_children: i64,
    children: *mut *mut FFI_ArrowSchema,
    dictionary: *mut FFI_ArrowSchema,
    release: Option<unsafe extern "C" fn(*mut FFI_ArrowSchema)>,
    private_data: *mut std::ffi::c_void,
}

/// Takes ownership of a C schema and converts it to an Arrow schema (the C struct is released).
///
/// # Safety
/// `schema` must point to a valid, unreleased `ArrowSchema` describing a struct.
pub unsafe fn import_schema(schema: *mut FFI_ArrowSchema) -> Result<SchemaRef> {
    if schema.is_null() {
        return Err(CoreError::invalid("ArrowSchema pointer is NULL"));
    }
    // SAFETY: non-NULL and, by the caller's contract, a valid ArrowSchema, whose C layout
    // RawSchemaHead mirrors.
    if unsafe { (*schema.cast::<RawSchemaHead>()).release.is_none() } {
        return Err(CoreError::invalid("ArrowSchema was already released"));
    }
    // SAFETY: valid and unreleased (checked above); from_raw moves it out and leaves the
    // caller's copy released, as the crossing rule says.
    let owned = unsafe { FFI_ArrowSchema::from_raw(schema) };
    let schema = Schema::try_from(&owned).map_err(|e| CoreError::invalid(format!("unsupported Arrow schema: {e}")))?;
    Ok(Arc::new(schema))
}

/// Takes ownership of a C array holding one struct column per field of `schema` and returns it
/// as a record batch. Buffers are shared with the producer (zero-copy) unless misaligned.
///
/// # Safety
/// `array` must point to a valid, unreleased `ArrowArray` of the struct type of `schema`.
pub unsafe fn import_batch(array: *mut FFI_ArrowArray, schema: &SchemaRef) -> Result<RecordBatch> {
    if array.is_null() {
        return Err(CoreError::invalid("ArrowArray pointer is NULL"));
    }
    // SAFETY: non-NULL and, by the caller's contract, a valid ArrowArray; from_raw moves it out
    // and leaves the caller's copy released (a released one is refused just below).
    let owned = unsafe { FFI_ArrowArray::from_raw(array) };
    if owned.is_released() {
        return Err(CoreError::invalid("ArrowArray was already released"));
    }
    let struct_type = DataType::Struct(schema.fields().clone());
    // SAFETY: the caller promises the array is of the struct type of `schema`.
    let data = unsafe { from_ffi_and_data_type(owned, struct_type) }?;
    // Everything, children too: offsets that go backwards, text that is not UTF-8 and a null
    // count that disagrees with the bitmap come from foreign code (a plugin's source or
    // transform) as easily as anything else, and with only structural checks the first crashed
    // the engine (a memcpy past the buffer) and the second was written out as it was.
    data.validate_full()?;
    let rows = data.len();
    let columns: Vec<ArrayRef> = data.child_data().iter().map(|child| arrow::array::make_array(child.slice(data.offset(), rows))).collect();
    let options = RecordBatchOptions::new().with_row_count(Some(rows));
    Ok(RecordBatch::try_new_with_options(schema.clone(), columns, &options)?)
}

/// Writes `batch` as a C struct array into caller-allocated memory; the caller owns it after.
///
/// # Safety
/// `out` is NULL (an invalid-argument error) or points to writable memory of
/// `sizeof(struct ArrowArray)`, which is overwritten without releasing what was there.
pub unsafe fn export_batch(batch: &RecordBatch, out: *mut FFI_ArrowArray) -> Result<()> {
    if out.is_null() {
        return Err(CoreError::invalid("output ArrowArray pointer is NULL"));
    }
    let struct_array = StructArray::from(batch.clone());
    // SAFETY: non-NULL and, by the caller's contract, writable for one ArrowArray; write does not
    // drop what was there (caller memory, not ours).
    unsafe { std::ptr::write(out, FFI_ArrowArray::new(&struct_array.to_data())) };
    Ok(())
}

/// Writes `schema` as a C schema into caller-allocated memory; the caller owns it after.
///
/// # Safety
/// `out` is NULL (an invalid-argument error) or points to writable memory of
/// `sizeof(struct ArrowSchema)`, which is overwritten without releasing what was there.
pub unsafe fn export_schema(schema: &Schema, out: *mut FFI_ArrowSchema) -> Result<()> {
    if out.is_null() {
        return Err(CoreError::invalid("output ArrowSchema pointer is NULL"));
    }
    let ffi = FFI_ArrowSchema::try_from(schema)?;
    // SAFETY: non-NULL and, by the caller's contract, writable for one ArrowSchema; write does not
    // drop what was there (caller memory, not ours).
    unsafe { std::ptr::write(out, ffi) };
    Ok(())
}

/// Re-labels `batch` with `schema` when the types match but names, nullability or metadata
/// differ, so a batch produced elsewhere can enter a table registered with `schema`.
pub fn conform(batch: &RecordBatch, schema: &SchemaRef) -> Result<RecordBatch> {
    if Arc::ptr_eq(&batch.schema(), schema) || batch.schema().as_ref() == schema.as_ref() {
        return Ok(batch.clone());
    }
    if batch.num_columns() != schema.fields().len() {
        return Err(CoreError::data(format!("batch has {} columns, the input expects {}: {}", batch.num_columns(), schema.fields().len(), schema)));
    }
    for (column, field) in batch.columns().iter().zip(schema.fields()) {
        if column.data_type() != field.data_type() {
            return Err(CoreError::data(format!(
                "column '{}' has type {}, the input expects {}",
                field.name(),
                column.data_type(),
                field.data_type()
            )));
        }
    }
    let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    Ok(RecordBatch::try_new_with_options(schema.clone(), batch.columns().to_vec(), &options)?)
}

/// A schema of flat columns as the host describes it (`sluice_schema_build`), so that the core
/// writes its C struct: the host then needs neither a C release callback of its own nor Arrow
/// Java's JNI library to hand a schema over.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchemaDescription {
    fields: Vec<FieldDescription>,
    #[serde(default)]
    metadata: HashMap<String, String>,
}

/// One column: its name, C Data Interface format string (`l`, `u`, `tsm:UTC`, `d:10,2`, ...),
/// nullability and metadata.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FieldDescription {
    name: String,
    format: String,
    nullable: bool,
    #[serde(default)]
    metadata: HashMap<String, String>,
}

/// The Arrow schema a description stands for; a format arrow-rs does not read is an error
/// naming the column.
pub fn build_schema(description: &SchemaDescription) -> Result<Schema> {
    let mut fields = Vec::with_capacity(description.fields.len());
    for field in &description.fields {
        let unsupported = |e: String| CoreError::invalid(format!("column '{}': format '{}': {e}", field.name, field.format));
        if field.format.contains('\0') {
            return Err(unsupported("contains a NUL byte".into()));
        }
        if field.format.starts_with('+') {
            // Nested formats need children; arrow-rs would index the missing ones.
            return Err(unsupported("not a flat type".into()));
        }
        // arrow-rs reads format strings only from a C struct: one without children, name or flags.
        let c_type = FFI_ArrowSchema::try_new(&field.format, vec![], None).map_err(|e| unsupported(e.to_string()))?;
        let data_type = DataType::try_from(&c_type).map_err(|e| unsupported(e.to_string()))?;
        if data_type.is_nested() || matches!(data_type, DataType::Dictionary(..)) {
            return Err(unsupported("not a flat type".into()));
        }
        fields.push(Field::new(&field.name, data_type, field.nullable).with_metadata(field.metadata.clone()));
    }
    Ok(Schema::new_with_metadata(fields, description.metadata.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Array, StringArray, StructArray};
    use arrow::buffer::{Buffer, OffsetBuffer, ScalarBuffer};
    use arrow::datatypes::{Field, Schema};

    /// A one-column struct of `strings` built without checks, imported as a plugin's batch is.
    fn import_strings(offsets: Vec<i32>, values: &[u8]) -> Result<RecordBatch> {
        // SAFETY (test): deliberately invalid, to see the import refuse it.
        let strings = unsafe { StringArray::new_unchecked(OffsetBuffer::new_unchecked(ScalarBuffer::from(offsets)), Buffer::from(values), None) };
        let field = Field::new("u", arrow::datatypes::DataType::Utf8, true);
        // SAFETY (test): one child of the field's type and length.
        let column = unsafe { StructArray::new_unchecked(vec![field.clone()].into(), vec![Arc::new(strings)], None) };
        let mut ffi = FFI_ArrowArray::new(&column.to_data());
        let schema: SchemaRef = Arc::new(Schema::new(vec![field]));
        // SAFETY: a valid, unreleased array of the schema's struct type.
        unsafe { import_batch(&mut ffi, &schema) }
    }

    #[test]
    fn foreign_batches_are_validated_in_full() {
        assert_eq!(import_strings(vec![0, 2, 4], b"okok").unwrap().num_rows(), 2);
        let not_utf8 = import_strings(vec![0, 2, 5], b"ok\xff\xfeA").unwrap_err();
        assert!(not_utf8.message.contains("Invalid UTF8"), "{}", not_utf8.message);
        let backwards = import_strings(vec![0, 6, 2, 9], b"okokokoko").unwrap_err();
        assert!(backwards.message.contains("offset"), "{}", backwards.message);
    }
}
