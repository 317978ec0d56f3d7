//! BENCHMARK-ONLY entry points, for `CallShapeBenchmark` (benchmarks module): the cost of the
//! call itself, FFM against JNI, with nothing else in the way. Nothing in the engine calls them.
//!
//! Each shape exists twice: a `sluice_bench_*` C function (in `include/sluice.h`, called over
//! FFM) and its JNI twin `Java_dev_sluice_benchmarks_CallShapeBenchmark_00024Jni_*` (for the
//! nested class `CallShapeBenchmark.Jni`). They run no guard: none of them can panic, and the
//! guard is not what they measure.

use std::ffi::c_void;
use std::sync::atomic::{AtomicPtr, Ordering};

use jni_sys::{jclass, jint, jlong, jmethodID, jvalue, JNIEnv};

use crate::abi::{SLUICE_ERR_EXECUTION, SLUICE_ERR_INVALID_ARGUMENT, SLUICE_OK};

/// Benchmark only: does nothing, the cost of a downcall without arguments or result.
#[no_mangle]
pub extern "C" fn sluice_bench_noop() {}

/// Benchmark only: the shape of most ABI calls, two pointers in and a status out. Writes
/// `*input + 1` to `*output`.
///
/// # Safety
/// `input` and `output` are NULL or point to an `int64_t`.
#[no_mangle]
pub unsafe extern "C" fn sluice_bench_two_pointers(input: *const i64, output: *mut i64) -> i32 {
    if input.is_null() || output.is_null() {
        return SLUICE_ERR_INVALID_ARGUMENT;
    }
    output.write(input.read().wrapping_add(1));
    SLUICE_OK
}

/// Benchmark only: calls `callback(i)` for i in 0..times. `callback` is a `void (*)(int64_t)` (an FFM upcall
/// stub), typed `void *` because the bindings generator takes function pointers only as
/// struct fields.
///
/// # Safety
/// `callback` is NULL or a function of that type.
#[no_mangle]
pub unsafe extern "C" fn sluice_bench_upcall(callback: *const c_void, times: i64) -> i32 {
    if callback.is_null() {
        return SLUICE_ERR_INVALID_ARGUMENT;
    }
    let callback: extern "C" fn(i64) = std::mem::transmute(callback);
    for i in 0..times {
        callback(i);
    }
    SLUICE_OK
}

// ---------------------------------------------------------------------------------------------
// JNI twins (class dev.sluice.benchmarks.CallShapeBenchmark$Jni)

#[no_mangle]
pub extern "system" fn Java_dev_sluice_benchmarks_CallShapeBenchmark_00024Jni_noop(_: *mut JNIEnv, _: jclass) {}

/// # Safety
/// Called by the JVM; `input` and `output` are addresses as for `sluice_bench_two_pointers`.
#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_benchmarks_CallShapeBenchmark_00024Jni_twoPointers(
    _: *mut JNIEnv,
    _: jclass,
    input: jlong,
    output: jlong,
) -> jint {
    sluice_bench_two_pointers(input as usize as *const i64, output as usize as *mut i64)
}

/// `Jni.onCall(long)`'s method ID, looked up once (valid while the class is loaded; a
/// benchmark fork loads it once).
static ON_CALL: AtomicPtr<jni_sys::_jmethodID> = AtomicPtr::new(std::ptr::null_mut());

/// Calls the static Java method `Jni.onCall(long)` `times` times through
/// `CallStaticVoidMethodA`, the JNI way of calling back into Java. Stops at a Java exception
/// (left pending, so the JVM rethrows it) with `SLUICE_ERR_EXECUTION`.
///
/// # Safety
/// Called by the JVM with its `env` and the `Jni` class.
#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_benchmarks_CallShapeBenchmark_00024Jni_upcall(
    env: *mut JNIEnv,
    class: jclass,
    times: jlong,
) -> jint {
    let jni = &(**env).v1_2;
    let mut method: jmethodID = ON_CALL.load(Ordering::Acquire);
    if method.is_null() {
        method = (jni.GetStaticMethodID)(env, class, c"onCall".as_ptr(), c"(J)V".as_ptr());
        if method.is_null() {
            return SLUICE_ERR_INVALID_ARGUMENT; // NoSuchMethodError is pending
        }
        ON_CALL.store(method, Ordering::Release);
    }
    for i in 0..times {
        let argument = jvalue { j: i };
        (jni.CallStaticVoidMethodA)(env, class, method, &argument);
        if (jni.ExceptionCheck)(env) {
            return SLUICE_ERR_EXECUTION;
        }
    }
    SLUICE_OK
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicI64;

    static CALLS: AtomicI64 = AtomicI64::new(0);

    extern "C" fn count(i: i64) {
        CALLS.fetch_add(i + 1, Ordering::Relaxed);
    }

    #[test]
    fn the_shapes_do_what_they_say() {
        sluice_bench_noop();
        let (input, mut output) = (41_i64, 0_i64);
        assert_eq!(unsafe { sluice_bench_two_pointers(&input, &mut output) }, SLUICE_OK);
        assert_eq!(output, 42);
        assert_eq!(unsafe { sluice_bench_two_pointers(std::ptr::null(), &mut output) }, SLUICE_ERR_INVALID_ARGUMENT);
        assert_eq!(unsafe { sluice_bench_upcall(count as *const c_void, 3) }, SLUICE_OK);
        assert_eq!(CALLS.load(Ordering::Relaxed), 1 + 2 + 3);
        assert_eq!(unsafe { sluice_bench_upcall(std::ptr::null(), 3) }, SLUICE_ERR_INVALID_ARGUMENT);
    }
}
