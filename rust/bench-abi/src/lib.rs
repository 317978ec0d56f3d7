//! BENCHMARK-ONLY entry points, for `CallShapeBenchmark` (benchmarks module): the cost of the
//! call itself, FFM against JNI, with nothing else in the way. A library of its own,
//! `libsluice_bench.so`, so the production core (`libsluice_core.so`) does not export them and
//! this builds in seconds; nothing in the engine calls them.
//!
//! Each shape exists twice: a `sluice_bench_*` C function (called over FFM; CallShapeBenchmark
//! declares its descriptor) and its JNI twin `Java_dev_sluice_benchmarks_CallShapeBenchmark_00024Jni_*`
//! (for the nested class `CallShapeBenchmark.Jni`). The statuses are the core's (`SLUICE_OK`,
//! `SLUICE_ERR_INVALID_ARGUMENT`, `SLUICE_ERR_EXECUTION`), so the shapes look like ABI calls.
//!
//! For `UdfBenchmark`, `sluice_bench_jni_udf_invoke` is a `SluiceScalarUdf.invoke` (the plugin
//! ABI's UDF entry, which the core calls as a C function pointer) that reaches the Java function
//! through a JNI callback instead of an FFM upcall stub: the JNI variant of a Java UDF.

#![deny(unsafe_op_in_unsafe_fn)]

use std::ffi::c_void;
use std::sync::atomic::{AtomicPtr, Ordering};

use jni_sys::{jclass, jint, jlong, jmethodID, jvalue, JNIEnv, JavaVM, JNI_EDETACHED, JNI_OK, JNI_VERSION_1_8};

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

// ---------------------------------------------------------------------------------------------
// A Java UDF through a JNI callback (class dev.sluice.benchmarks.UdfBenchmark$Jni)

/// The plugin ABI's `SLUICE_PLUGIN_OK` and `SLUICE_PLUGIN_ERROR` (plugins-api/include/sluice_plugin.h).
pub const SLUICE_PLUGIN_OK: i32 = 0;
/// See [`SLUICE_PLUGIN_OK`].
pub const SLUICE_PLUGIN_ERROR: i32 = 1;

/// The JVM, `UdfBenchmark.Jni` (a global reference) and its `static int invoke(long, long, long,
/// long, long)`, stored by `Jni.register()` before any UDF call.
static UDF_VM: AtomicPtr<JavaVM> = AtomicPtr::new(std::ptr::null_mut());
static UDF_CLASS: AtomicPtr<jni_sys::_jobject> = AtomicPtr::new(std::ptr::null_mut());
static UDF_METHOD: AtomicPtr<jni_sys::_jmethodID> = AtomicPtr::new(std::ptr::null_mut());

/// `UdfBenchmark.Jni.register()`: remembers the JVM, the class and its `invoke` method for
/// [`sluice_bench_jni_udf_invoke`]. Returns `SLUICE_OK`, or `SLUICE_ERR_INVALID_ARGUMENT` with a
/// Java exception pending.
///
/// # Safety
/// Called by the JVM, on the thread that owns `env`, with the `Jni` class.
#[no_mangle]
pub unsafe extern "system" fn Java_dev_sluice_benchmarks_UdfBenchmark_00024Jni_register(env: *mut JNIEnv, class: jclass) -> jint {
    // SAFETY: the JVM passes a valid JNIEnv for this thread; its function table outlives the call.
    let jni = unsafe { &(**env).v1_2 };
    // SAFETY: env and class come from the JVM; the names are NUL-terminated literals.
    let method = unsafe { (jni.GetStaticMethodID)(env, class, c"invoke".as_ptr(), c"(JJJJJ)I".as_ptr()) };
    if method.is_null() {
        return SLUICE_ERR_INVALID_ARGUMENT; // NoSuchMethodError is pending
    }
    let mut vm: *mut JavaVM = std::ptr::null_mut();
    // SAFETY: a JNI call on this thread's env; `vm` is writable.
    if unsafe { (jni.GetJavaVM)(env, &mut vm) } != JNI_OK {
        return SLUICE_ERR_INVALID_ARGUMENT;
    }
    // SAFETY: class is a live local reference; the global one is kept for the process (a
    // benchmark fork registers once).
    let global = unsafe { (jni.NewGlobalRef)(env, class) };
    if global.is_null() {
        return SLUICE_ERR_INVALID_ARGUMENT;
    }
    UDF_METHOD.store(method, Ordering::Release);
    UDF_CLASS.store(global, Ordering::Release);
    UDF_VM.store(vm, Ordering::Release);
    SLUICE_OK
}

/// Benchmark only: a `SluiceScalarUdf.invoke` that calls the static Java method
/// `UdfBenchmark.Jni.invoke(state, args, n_rows, out, error)` through JNI, every pointer passed as
/// a `long`, and returns its status. The calling thread is attached to the JVM if it is not yet
/// (as a daemon; the engine's threads are Java threads already, so this is `GetEnv` in practice).
/// A Java exception escaping the method is cleared and reported as `SLUICE_PLUGIN_ERROR`
/// without a message.
///
/// # Safety
/// As any `SluiceScalarUdf.invoke` (plugins-api/include/sluice_plugin.h), after
/// `UdfBenchmark.Jni.register()` has run; the Java method keeps the ABI's rules for `args`, `out`
/// and `error`.
#[no_mangle]
pub unsafe extern "C" fn sluice_bench_jni_udf_invoke(
    state: *mut c_void,
    args: *mut *mut c_void,
    n_rows: i64,
    out: *mut c_void,
    error: *mut *mut std::ffi::c_char,
) -> i32 {
    let vm = UDF_VM.load(Ordering::Acquire);
    let class = UDF_CLASS.load(Ordering::Acquire);
    let method = UDF_METHOD.load(Ordering::Acquire);
    if vm.is_null() || class.is_null() || method.is_null() {
        return SLUICE_PLUGIN_ERROR;
    }
    // SAFETY: vm is the JVM's invocation interface (stored by register), valid for the process.
    let invocation = unsafe { &(**vm).v1_4 };
    let mut env: *mut c_void = std::ptr::null_mut();
    // SAFETY: a JNI invocation call; `env` is writable.
    let mut status = unsafe { (invocation.GetEnv)(vm, &mut env, JNI_VERSION_1_8) };
    if status == JNI_EDETACHED {
        // SAFETY: as above; attaching a native thread with no arguments (a default name and group).
        status = unsafe { (invocation.AttachCurrentThreadAsDaemon)(vm, &mut env, std::ptr::null_mut()) };
    }
    if status != JNI_OK || env.is_null() {
        return SLUICE_PLUGIN_ERROR;
    }
    let env = env.cast::<JNIEnv>();
    // SAFETY: env is this thread's JNIEnv (GetEnv or the attach above).
    let jni = unsafe { &(**env).v1_2 };
    let arguments = [
        jvalue { j: state as usize as jlong },
        jvalue { j: args as usize as jlong },
        jvalue { j: n_rows },
        jvalue { j: out as usize as jlong },
        jvalue { j: error as usize as jlong },
    ];
    // SAFETY: method is `static int invoke(long, long, long, long, long)` of class (register),
    // `arguments` five jlongs for it; no exception is pending on entry (one is cleared below).
    let result = unsafe { (jni.CallStaticIntMethodA)(env, class, method, arguments.as_ptr()) };
    // SAFETY: a JNI call on this thread's env.
    if unsafe { (jni.ExceptionCheck)(env) } {
        // SAFETY: as above; an exception must not stay pending in the core's native frames.
        unsafe { (jni.ExceptionClear)(env) };
        return SLUICE_PLUGIN_ERROR;
    }
    result
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

    #[test]
    fn the_jni_udf_refuses_calls_before_registration() {
        let mut error: *mut std::ffi::c_char = std::ptr::null_mut();
        let status = unsafe { sluice_bench_jni_udf_invoke(std::ptr::null_mut(), std::ptr::null_mut(), 0, std::ptr::null_mut(), &mut error) };
        assert_eq!(status, SLUICE_PLUGIN_ERROR);
        assert!(error.is_null());
    }
}
