//! The JNI twin of the C ABI: one `Java_dev_sluice_bridge_JniCoreBridge_*` function per
//! `sluice_*` function, for `dev.sluice.bridge.JniCoreBridge` (chosen with `--bridge=jni`).
//!
//! Each function only translates JNI types and calls the `sluice_*` function of `abi.rs`, so
//! behaviour, status codes, the thread's last error and panic safety are those of the C ABI:
//! - handles and C struct pointers arrive as `jlong` addresses, exactly as over FFM;
//! - the status is the return value; outputs go into the caller's `long[]` (`out`, which
//!   `JniCoreBridge` always passes, long enough) and are written only when the call succeeded;
//! - strings (SQL, options JSON) arrive as UTF-8 `byte[]` and are passed on NUL-terminated; a
//!   Java null becomes a C NULL, which the core reports as an invalid argument;
//! - the glue itself runs under `catch_unwind` too, so no panic can unwind into the JVM.
//!
//! `extern "system"` keeps these functions out of `include/sluice.h` (cbindgen exports only
//! `extern "C"`).

use std::cell::RefCell;
use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::{null, null_mut};

use jni_sys::{jbyte, jbyteArray, jclass, jint, jlong, jlongArray, jsize, JNIEnv};

use crate::abi::*;

type Env = *mut JNIEnv;

thread_local! {
    /// The message of a panic in this glue (not in the core), until `sluiceLastError` reads it.
    static GLUE_PANIC: RefCell<(bool, CString)> = RefCell::new((false, CString::default()));
}

/// Runs one JNI function's body; a panic in the glue becomes `SLUICE_ERR_PANIC` with a
/// message, as the core's own guard does (core calls never panic: they are guarded).
fn glue(body: impl FnOnce() -> jint) -> jint {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(status) => status,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            let message = CString::new(format!("panic in the native core's JNI glue: {what}").replace('\0', " ")).unwrap_or_default();
            GLUE_PANIC.with(|p| *p.borrow_mut() = (true, message));
            SLUICE_ERR_PANIC
        }
    }
}

fn ptr<T>(address: jlong) -> *mut T {
    address as usize as *mut T
}

/// A Java `byte[]` (UTF-8) copied into a NUL-terminated buffer; None for a Java null.
struct CText(Option<Vec<u8>>);

impl CText {
    unsafe fn from_java(env: Env, bytes: jbyteArray) -> CText {
        if bytes.is_null() {
            return CText(None);
        }
        let jni = &(**env).v1_2;
        let len = (jni.GetArrayLength)(env, bytes).max(0);
        let mut buffer = vec![0u8; len as usize + 1];
        (jni.GetByteArrayRegion)(env, bytes, 0, len, buffer.as_mut_ptr().cast::<jbyte>());
        CText(Some(buffer))
    }

    fn as_ptr(&self) -> *const c_char {
        self.0.as_ref().map_or(null(), |b| b.as_ptr().cast())
    }
}

/// Copies `values` into the caller's `long[] out` when `status` is OK; returns `status`.
unsafe fn outputs(env: Env, out: jlongArray, status: jint, values: &[i64]) -> jint {
    if status == SLUICE_OK && !out.is_null() {
        ((**env).v1_2.SetLongArrayRegion)(env, out, 0, values.len() as jsize, values.as_ptr());
    }
    status
}

/// One output: a handle, a count or an address.
unsafe fn output(env: Env, out: jlongArray, status: jint, value: i64) -> jint {
    outputs(env, out, status, &[value])
}

// ---------------------------------------------------------------------------------------------
// Library

#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceAbiVersion(env: Env, _: jclass, out: jlongArray) -> jint {
    glue(|| {
        let mut version = 0;
        let status = sluice_abi_version(&mut version);
        output(env, out, status, version as i64)
    })
}

/// Writes the address of the thread's last error message (a C string) to `out[0]`.
#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceLastError(env: Env, _: jclass, out: jlongArray) -> jint {
    glue(|| {
        let glue_panic = GLUE_PANIC.with(|p| {
            let mut p = p.borrow_mut();
            std::mem::replace(&mut p.0, false).then(|| p.1.as_ptr())
        });
        let mut message = null();
        let status = match glue_panic {
            Some(text) => {
                message = text;
                SLUICE_OK
            }
            None => sluice_last_error(&mut message),
        };
        output(env, out, status, message as i64)
    })
}

#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceLiveHandles(env: Env, _: jclass, out: jlongArray) -> jint {
    glue(|| {
        let mut count = 0;
        let status = sluice_live_handles(&mut count);
        output(env, out, status, count)
    })
}

#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluicePlanCount(env: Env, _: jclass, out: jlongArray) -> jint {
    glue(|| {
        let mut count = 0;
        let status = sluice_plan_count(&mut count);
        output(env, out, status, count)
    })
}

#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceDebugPanic(env: Env, _: jclass, message: jbyteArray) -> jint {
    glue(|| sluice_debug_panic(CText::from_java(env, message).as_ptr()))
}

#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceSqlTableReferences(
    env: Env,
    _: jclass,
    sql: jbyteArray,
    out: jlongArray,
) -> jint {
    glue(|| {
        let mut buffer = null_mut();
        let status = sluice_sql_table_references(CText::from_java(env, sql).as_ptr(), &mut buffer);
        output(env, out, status, buffer as i64)
    })
}

#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceSqlQuery(
    env: Env,
    _: jclass,
    options: jbyteArray,
    array: jlong,
    schema: jlong,
    out: jlongArray,
) -> jint {
    glue(|| {
        let mut batch = null_mut();
        let status = sluice_sql_query(CText::from_java(env, options).as_ptr(), ptr(array), ptr(schema), &mut batch);
        output(env, out, status, batch as i64)
    })
}

// ---------------------------------------------------------------------------------------------
// Batches

#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceBatchImport(
    env: Env,
    _: jclass,
    array: jlong,
    schema: jlong,
    out: jlongArray,
) -> jint {
    glue(|| {
        let mut batch = null_mut();
        let status = sluice_batch_import(ptr(array), ptr(schema), &mut batch);
        output(env, out, status, batch as i64)
    })
}

#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceBatchExport(
    _: Env,
    _: jclass,
    batch: jlong,
    array: jlong,
    schema: jlong,
) -> jint {
    glue(|| sluice_batch_export(ptr(batch), ptr(array), ptr(schema)))
}

#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceBatchNumRows(env: Env, _: jclass, batch: jlong, out: jlongArray) -> jint {
    glue(|| {
        let mut rows = 0;
        let status = sluice_batch_num_rows(ptr(batch), &mut rows);
        output(env, out, status, rows)
    })
}

#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceBatchBufferAddress(
    env: Env,
    _: jclass,
    batch: jlong,
    column: jlong,
    buffer: jlong,
    out: jlongArray,
) -> jint {
    glue(|| {
        let mut address = 0;
        let status = sluice_batch_buffer_address(ptr(batch), column as usize, buffer as usize, &mut address);
        output(env, out, status, address as i64)
    })
}

#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceBatchFree(_: Env, _: jclass, batch: jlong) -> jint {
    glue(|| sluice_batch_free(ptr(batch)))
}

// ---------------------------------------------------------------------------------------------
// SQL transforms

#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceTransformCreate(
    env: Env,
    _: jclass,
    options: jbyteArray,
    schemas: jlong,
    count: jlong,
    out: jlongArray,
) -> jint {
    glue(|| {
        let mut transform = null_mut();
        let status = sluice_transform_create(CText::from_java(env, options).as_ptr(), ptr(schemas), count as usize, &mut transform);
        output(env, out, status, transform as i64)
    })
}

#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceTransformOutputSchema(
    _: Env,
    _: jclass,
    transform: jlong,
    schema: jlong,
) -> jint {
    glue(|| sluice_transform_output_schema(ptr(transform), ptr(schema)))
}

#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceTransformPush(
    _: Env,
    _: jclass,
    transform: jlong,
    input: jlong,
    array: jlong,
) -> jint {
    glue(|| sluice_transform_push(ptr(transform), input as usize, ptr(array)))
}

#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceTransformPushBatch(
    _: Env,
    _: jclass,
    transform: jlong,
    input: jlong,
    batch: jlong,
) -> jint {
    glue(|| sluice_transform_push_batch(ptr(transform), input as usize, ptr(batch)))
}

#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceTransformDrain(env: Env, _: jclass, transform: jlong, out: jlongArray) -> jint {
    glue(|| {
        let mut batch = null_mut();
        let status = sluice_transform_drain(ptr(transform), &mut batch);
        output(env, out, status, batch as i64)
    })
}

#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceTransformFree(_: Env, _: jclass, transform: jlong) -> jint {
    glue(|| sluice_transform_free(ptr(transform)))
}

// ---------------------------------------------------------------------------------------------
// Codecs

#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceDecoderCreate(
    env: Env,
    _: jclass,
    options: jbyteArray,
    schema: jlong,
    out: jlongArray,
) -> jint {
    glue(|| {
        let mut decoder = null_mut();
        let status = sluice_decoder_create(CText::from_java(env, options).as_ptr(), ptr(schema), &mut decoder);
        output(env, out, status, decoder as i64)
    })
}

/// Writes {batch, errors-or-0} to `out`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceDecoderDecode(
    env: Env,
    _: jclass,
    decoder: jlong,
    data: jlong,
    offsets: jlong,
    records: jlong,
    extra_array: jlong,
    extra_schema: jlong,
    out: jlongArray,
) -> jint {
    glue(|| {
        let (mut batch, mut errors) = (null_mut(), null_mut());
        let status = sluice_decoder_decode(
            ptr(decoder),
            ptr(data),
            ptr(offsets),
            records as usize,
            ptr(extra_array),
            ptr(extra_schema),
            &mut batch,
            &mut errors,
        );
        outputs(env, out, status, &[batch as i64, errors as i64])
    })
}

#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceInferJsonSchema(
    _: Env,
    _: jclass,
    data: jlong,
    offsets: jlong,
    records: jlong,
    schema: jlong,
) -> jint {
    glue(|| sluice_infer_json_schema(ptr(data), ptr(offsets), records as usize, ptr(schema)))
}

#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceDecoderFree(_: Env, _: jclass, decoder: jlong) -> jint {
    glue(|| sluice_decoder_free(ptr(decoder)))
}

#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceEncode(
    env: Env,
    _: jclass,
    batch: jlong,
    options: jbyteArray,
    out: jlongArray,
) -> jint {
    glue(|| {
        let mut buffer = null_mut();
        let status = sluice_encode(ptr(batch), CText::from_java(env, options).as_ptr(), &mut buffer);
        output(env, out, status, buffer as i64)
    })
}

/// Writes {address, length} to `out`.
#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceBufferData(env: Env, _: jclass, buffer: jlong, out: jlongArray) -> jint {
    glue(|| {
        let (mut data, mut len) = (null(), 0);
        let status = sluice_buffer_data(ptr(buffer), &mut data, &mut len);
        outputs(env, out, status, &[data as i64, len as i64])
    })
}

/// Writes {address, count} to `out`.
#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceBufferOffsets(env: Env, _: jclass, buffer: jlong, out: jlongArray) -> jint {
    glue(|| {
        let (mut offsets, mut count) = (null(), 0);
        let status = sluice_buffer_offsets(ptr(buffer), &mut offsets, &mut count);
        outputs(env, out, status, &[offsets as i64, count as i64])
    })
}

/// Writes {keys address, offsets address, offsets count} to `out`.
#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceBufferKeys(env: Env, _: jclass, buffer: jlong, out: jlongArray) -> jint {
    glue(|| {
        let (mut keys, mut offsets, mut count) = (null(), null(), 0);
        let status = sluice_buffer_keys(ptr(buffer), &mut keys, &mut offsets, &mut count);
        outputs(env, out, status, &[keys as i64, offsets as i64, count as i64])
    })
}

#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceBufferFree(_: Env, _: jclass, buffer: jlong) -> jint {
    glue(|| sluice_buffer_free(ptr(buffer)))
}

// ---------------------------------------------------------------------------------------------
// Files

#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceFileReaderOpen(
    env: Env,
    _: jclass,
    options: jbyteArray,
    schema: jlong,
    out: jlongArray,
) -> jint {
    glue(|| {
        let mut reader = null_mut();
        let status = sluice_file_reader_open(CText::from_java(env, options).as_ptr(), ptr(schema), &mut reader);
        output(env, out, status, reader as i64)
    })
}

#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceFileReaderSchema(_: Env, _: jclass, reader: jlong, schema: jlong) -> jint {
    glue(|| sluice_file_reader_schema(ptr(reader), ptr(schema)))
}

/// Writes {batch-or-0 at the end, errors-or-0} to `out`.
#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceFileReaderNext(env: Env, _: jclass, reader: jlong, out: jlongArray) -> jint {
    glue(|| {
        let (mut batch, mut errors) = (null_mut(), null_mut());
        let status = sluice_file_reader_next(ptr(reader), &mut batch, &mut errors);
        outputs(env, out, status, &[batch as i64, errors as i64])
    })
}

#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceFileReaderFree(_: Env, _: jclass, reader: jlong) -> jint {
    glue(|| sluice_file_reader_free(ptr(reader)))
}

#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceFileWriterOpen(
    env: Env,
    _: jclass,
    options: jbyteArray,
    out: jlongArray,
) -> jint {
    glue(|| {
        let mut writer = null_mut();
        let status = sluice_file_writer_open(CText::from_java(env, options).as_ptr(), &mut writer);
        output(env, out, status, writer as i64)
    })
}

#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceFileWriterWrite(_: Env, _: jclass, writer: jlong, batch: jlong) -> jint {
    glue(|| sluice_file_writer_write(ptr(writer), ptr(batch)))
}

#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceFileWriterFlush(_: Env, _: jclass, writer: jlong) -> jint {
    glue(|| sluice_file_writer_flush(ptr(writer)))
}

#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceFileWriterFinish(_: Env, _: jclass, writer: jlong) -> jint {
    glue(|| sluice_file_writer_finish(ptr(writer)))
}

#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceFileWriterFree(_: Env, _: jclass, writer: jlong) -> jint {
    glue(|| sluice_file_writer_free(ptr(writer)))
}

// ---------------------------------------------------------------------------------------------
// Nexmark generator

#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceGeneratorCreate(
    env: Env,
    _: jclass,
    options: jbyteArray,
    out: jlongArray,
) -> jint {
    glue(|| {
        let mut generator = null_mut();
        let status = sluice_generator_create(CText::from_java(env, options).as_ptr(), &mut generator);
        output(env, out, status, generator as i64)
    })
}

#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceGeneratorSchema(_: Env, _: jclass, generator: jlong, schema: jlong) -> jint {
    glue(|| sluice_generator_schema(ptr(generator), ptr(schema)))
}

#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceGeneratorNext(
    env: Env,
    _: jclass,
    generator: jlong,
    max_rows: jlong,
    out: jlongArray,
) -> jint {
    glue(|| {
        let mut batch = null_mut();
        let status = sluice_generator_next(ptr(generator), max_rows, &mut batch);
        output(env, out, status, batch as i64)
    })
}

#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceGeneratorPosition(env: Env, _: jclass, generator: jlong, out: jlongArray) -> jint {
    glue(|| {
        let mut position = 0;
        let status = sluice_generator_position(ptr(generator), &mut position);
        output(env, out, status, position)
    })
}

#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceGeneratorFree(_: Env, _: jclass, generator: jlong) -> jint {
    glue(|| sluice_generator_free(ptr(generator)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_in_the_glue_becomes_a_status_and_a_message() {
        let status = glue(|| panic!("glue broke"));
        assert_eq!(status, SLUICE_ERR_PANIC);
        let message = GLUE_PANIC.with(|p| p.borrow().1.to_string_lossy().into_owned());
        assert!(message.contains("glue broke"), "{message}");
    }

    #[test]
    fn addresses_round_trip_through_jlong() {
        let value = 42_i64;
        let address = &value as *const i64 as jlong;
        assert_eq!(unsafe { *ptr::<i64>(address) }, 42);
        assert!(ptr::<i64>(0).is_null());
    }
}
