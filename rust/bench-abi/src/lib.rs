//! BENCHMARK-ONLY entry points, for `CallShapeBenchmark` (benchmarks module): the cost of the
//! call itself, FFM against JNI, with nothing else in the way. A library of its own,
//! `libsluice_bench.so`, so the production core (`libsluice_core.so`) does not export them and
//! this builds in seconds; nothing in the engine calls them.
//!
//! Each shape exists twice: a `sluice_bench_*` C function (called over FFM; CallShapeBenchmark
//! declares its descriptor) and its JNI twin `Java_dev_sluice_benchmarks_CallShapeBenchmark_00024Jni_*`
//! (for the nested class `CallShapeBenchmark.Jni`). The statuses are the core's (`SLUICE_OK`,
//! `SLUICE_ERR_INVALID_ARGUMENT`, `SLUICE_ERR_EXECUTION`), so the shapes look like ABI calls.

#![deny(unsafe_op_in_unsafe_fn)]

use std::ffi::c_void;
use std::sync::atomic::{AtomicPtr, Ordering};

use jni_sys::{jclass, jint, jlong, jmethodID, jvalue, JNIEnv};

/// The core's `SLUICE_OK` (include/sluice.h).
pub const SLUICE_OK: i32 = 0;
/// The core's `SLUICE_ERR_INVALID_ARGUMENT`.
pub const SLUICE_ERR_INVALID_ARGUMENT: i32 = 1;
/// The core's `SLUICE_ERR_EXECUTION`.
pub const SLUICE_ERR_EXECUTION: i32 = 4;

/// Benchmark only: does nothing, the cost of a downcall without arguments or result.
#[no_mangle]
pub extern "C" fn sluice_bench_noop() {}

/// Benchmark only: the shape of most ABI calls, two pointers in and a status out. Writes
/// `*input + 1` to `*output`.
///
/// # Safety
/// `input` is NULL or points to a readable `int64_t`, `output` is NULL or points to a writable
/// `int64_t`; both are only borrowed for the call. Any thread.
#[no_mangle]
pub unsafe extern "C" fn sluice_bench_two_pointers(input: *const i64, output: *mut i64) -> i32 {
    if input.is_null() || output.is_null() {
        return SLUICE_ERR_INVALID_ARGUMENT;
    }
    // SAFETY: both are non-NULL and, by the caller's contract, valid for a read and a write.
    unsafe { output.write(input.read().wrapping_add(1)) };
    SLUICE_OK
}

/// Benchmark only: calls `callback(i)` for i in 0..times. `callback` is a `void (*)(int64_t)` (an
/// FFM upcall stub), typed `void *` like the core's ABI, whose bindings generator takes function
/// pointers only as struct fields.
///
/// # Safety
/// `callback` is NULL or a function of that type, callable from this thread for the whole call.
#[no_mangle]
pub unsafe extern "C" fn sluice_bench_upcall(callback: *const c_void, times: i64) -> i32 {
    if callback.is_null() {
        return SLUICE_ERR_INVALID_ARGUMENT;
    }
    // SAFETY: non-NULL, and by the caller's contract a `void (*)(int64_t)`; function and data
    // pointers have the same size on every platform Sluice builds for.
    let callback: extern "C" fn(i64) = unsafe { std::mem::transmute::<*const c_void, extern "C" fn(i64)>(callback) };
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
    // SAFETY: the caller's contract is sluice_bench_two_pointers's, for these addresses.
    unsafe { sluice_bench_two_pointers(input as usize as *const i64, output as usize as *mut i64) }
}

/// `Jni.onCall(long)`'s method ID, looked up once (valid while the class is loaded; a
/// benchmark fork loads it once).
static ON_CALL: AtomicPtr<jni_sys::_jmethodID> = AtomicPtr::new(std::ptr::null_mut());

/// Calls the static Java method `Jni.onCall(long)` `times` times through
/// `CallStaticVoidMethodA`, the JNI way of calling back into Java. Stops at a Java exception
/// (left pending, so the JVM rethrows it) with `SLUICE_ERR_EXECUTION`.
///
/// # Safety
/// Called by the JVM, on the thread that owns `env`, with the `Jni` class.
#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_benchmarks_CallShapeBenchmark_00024Jni_upcall(env: *mut JNIEnv, class: jclass, times: jlong) -> jint {
    // SAFETY: the JVM passes a valid JNIEnv for this thread; its function table outlives the call.
    let jni = unsafe { &(**env).v1_2 };
    let mut method: jmethodID = ON_CALL.load(Ordering::Acquire);
    if method.is_null() {
        // SAFETY: env and class come from the JVM; the names are NUL-terminated literals.
        method = unsafe { (jni.GetStaticMethodID)(env, class, c"onCall".as_ptr(), c"(J)V".as_ptr()) };
        if method.is_null() {
            return SLUICE_ERR_INVALID_ARGUMENT; // NoSuchMethodError is pending
        }
        ON_CALL.store(method, Ordering::Release);
    }
    for i in 0..times {
        let argument = jvalue { j: i };
        // SAFETY: method is `static void onCall(long)` of `class`, and `argument` one jlong for it;
        // no exception is pending (checked after every call).
        unsafe { (jni.CallStaticVoidMethodA)(env, class, method, &argument) };
        // SAFETY: as above, a JNI call on the JVM's env of this thread.
        if unsafe { (jni.ExceptionCheck)(env) } {
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
