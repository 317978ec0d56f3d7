//! TEST-ONLY exports, linked with the whole native core into `libsluice_debug_exports.so`, the
//! library the engine's tests load (as `libsluice_core.so`) instead of the production one.
//! The production library, which is what `sluice.jar` ships, does not export them.
//!
//! Each function only forwards to sluice-core (a Rust function there, not a C export), so what
//! it exercises — the guard, the thread's last error — is the production code. The crate's
//! `debug-exports` feature (always on) makes cbindgen declare them in `include/sluice.h` inside
//! `#if defined(SLUICE_DEBUG_EXPORTS)`.

#![deny(unsafe_op_in_unsafe_fn)]

#[cfg(feature = "debug-exports")]
mod exports {
    use std::ffi::c_char;

    use jni_sys::{jbyte, jbyteArray, jclass, jint, JNIEnv};

    /// Panics inside the core on purpose, to test that panics surface as errors
    /// (`SLUICE_ERR_PANIC`, with the message and the place in `sluice_last_error`). Only in the
    /// test library, never in the production one.
    ///
    /// # Safety
    /// `message` is NULL or a NUL-terminated string, borrowed for the call. Any thread.
    #[no_mangle]
    pub unsafe extern "C" fn sluice_debug_panic(message: *const c_char) -> i32 {
        // SAFETY: the caller's contract is debug_panic's.
        unsafe { sluice_core::abi::debug_panic(message) }
    }

    /// The JNI twin of `sluice_debug_panic`, for `JniCoreBridge.sluiceDebugPanic(byte[])`: the
    /// message arrives as UTF-8 bytes (a Java null becomes NULL, an invalid argument).
    ///
    /// # Safety
    /// Called by the JVM, on the thread that owns `env`.
    #[no_mangle]
    pub unsafe extern "system" fn Java_dev_sluice_bridge_JniCoreBridge_sluiceDebugPanic(env: *mut JNIEnv, _: jclass, message: jbyteArray) -> jint {
        if message.is_null() {
            // SAFETY: NULL is allowed.
            return unsafe { sluice_debug_panic(std::ptr::null()) };
        }
        // SAFETY: the JVM passes a valid JNIEnv for this thread; its function table outlives the call.
        let jni = unsafe { &(**env).v1_2 };
        // SAFETY: `message` is a live byte[] reference of this call.
        let len = unsafe { (jni.GetArrayLength)(env, message) }.max(0);
        let mut text = vec![0u8; len as usize + 1]; // the last byte stays NUL
                                                    // SAFETY: `text` holds `len` bytes (plus the NUL) and `message` has `len` elements.
        unsafe { (jni.GetByteArrayRegion)(env, message, 0, len, text.as_mut_ptr().cast::<jbyte>()) };
        // SAFETY: NUL-terminated and alive for the call.
        unsafe { sluice_debug_panic(text.as_ptr().cast()) }
    }
}
