//! Raw declarations of `plugins-api/include/sluice_plugin.h`, the native plugin ABI, field for
//! field. The header is the contract and documents every pointer's ownership, lifetime and
//! thread; this crate only mirrors it (the `layout` test holds the two together). Plugin authors
//! use `sluice-plugin-sdk`, which wraps these safely; the core uses them to call plugin UDFs.
//!
//! The Arrow structs are declared here too (repr(C), as the C Data Interface defines them), so
//! the crate has no dependencies; they have the layout of arrow-rs's `FFI_ArrowSchema` and
//! `FFI_ArrowArray`, and a pointer to one may be cast to the other.

#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_void};

pub const SLUICE_PLUGIN_ABI_MAJOR: i32 = 1;
pub const SLUICE_PLUGIN_ABI_MINOR: i32 = 0;

pub const SLUICE_PLUGIN_OK: i32 = 0;
pub const SLUICE_PLUGIN_ERROR: i32 = 1;
pub const SLUICE_PLUGIN_INVALID_OPTIONS: i32 = 2;
pub const SLUICE_PLUGIN_BAD_DATA: i32 = 3;
pub const SLUICE_PLUGIN_PANIC: i32 = 4;

pub const SLUICE_COMPONENT_SOURCE: i32 = 1;
pub const SLUICE_COMPONENT_TRANSFORM: i32 = 2;
pub const SLUICE_COMPONENT_SINK: i32 = 3;
pub const SLUICE_COMPONENT_SCALAR_UDF: i32 = 4;
pub const SLUICE_COMPONENT_PREPROCESSOR: i32 = 5;
pub const SLUICE_COMPONENT_SIDE_OUTPUT: i32 = 6;

pub const SLUICE_POLL_BATCH: i32 = 0;
pub const SLUICE_POLL_NONE_YET: i32 = 1;
pub const SLUICE_POLL_FINISHED: i32 = 2;

pub const SLUICE_VOLATILITY_IMMUTABLE: i32 = 0;
pub const SLUICE_VOLATILITY_STABLE: i32 = 1;
pub const SLUICE_VOLATILITY_VOLATILE: i32 = 2;

/// The name of the one symbol a plugin exports.
pub const ENTRY_SYMBOL: &str = "sluice_plugin_entry";

#[repr(C)]
#[derive(Debug)]
pub struct ArrowSchema {
    pub format: *const c_char,
    pub name: *const c_char,
    pub metadata: *const c_char,
    pub flags: i64,
    pub n_children: i64,
    pub children: *mut *mut ArrowSchema,
    pub dictionary: *mut ArrowSchema,
    pub release: Option<unsafe extern "C" fn(*mut ArrowSchema)>,
    pub private_data: *mut c_void,
}

#[repr(C)]
#[derive(Debug)]
pub struct ArrowArray {
    pub length: i64,
    pub null_count: i64,
    pub offset: i64,
    pub n_buffers: i64,
    pub n_children: i64,
    pub buffers: *mut *const c_void,
    pub children: *mut *mut ArrowArray,
    pub dictionary: *mut ArrowArray,
    pub release: Option<unsafe extern "C" fn(*mut ArrowArray)>,
    pub private_data: *mut c_void,
}

#[repr(C)]
#[derive(Debug)]
pub struct SluiceInstanceInfo {
    pub pipeline: *const c_char,
    pub node: *const c_char,
    pub pipeline_dir: *const c_char,
    pub lane: i32,
    pub lanes: i32,
}

pub type ErrorOut = *mut *mut c_char;

#[repr(C)]
pub struct SluiceSource {
    pub open: Option<unsafe extern "C" fn(*const c_char, *const SluiceInstanceInfo, *mut *mut c_void, *mut ArrowSchema, ErrorOut) -> i32>,
    pub restore: Option<unsafe extern "C" fn(*mut c_void, *const u8, usize, ErrorOut) -> i32>,
    pub poll: Option<unsafe extern "C" fn(*mut c_void, i64, i64, *mut i32, *mut ArrowArray, ErrorOut) -> i32>,
    pub snapshot: Option<unsafe extern "C" fn(*mut c_void, i64, *mut *mut u8, *mut usize, ErrorOut) -> i32>,
    pub commit: Option<unsafe extern "C" fn(*mut c_void, i64, ErrorOut) -> i32>,
    pub close: Option<unsafe extern "C" fn(*mut c_void)>,
}

#[repr(C)]
pub struct SluiceTransform {
    pub open: Option<
        unsafe extern "C" fn(*const c_char, *const SluiceInstanceInfo, *const ArrowSchema, *mut *mut c_void, *mut ArrowSchema, ErrorOut) -> i32,
    >,
    pub process: Option<unsafe extern "C" fn(*mut c_void, *mut ArrowArray, ErrorOut) -> i32>,
    pub next_output: Option<unsafe extern "C" fn(*mut c_void, *mut i32, *mut ArrowArray, ErrorOut) -> i32>,
    pub barrier: Option<unsafe extern "C" fn(*mut c_void, i64, ErrorOut) -> i32>,
    pub close: Option<unsafe extern "C" fn(*mut c_void)>,
}

#[repr(C)]
pub struct SluiceSink {
    pub open: Option<unsafe extern "C" fn(*const c_char, *const SluiceInstanceInfo, *const ArrowSchema, *mut *mut c_void, ErrorOut) -> i32>,
    pub start: Option<unsafe extern "C" fn(*mut c_void, ErrorOut) -> i32>,
    pub write: Option<unsafe extern "C" fn(*mut c_void, *mut ArrowArray, ErrorOut) -> i32>,
    pub flush: Option<unsafe extern "C" fn(*mut c_void, i64, ErrorOut) -> i32>,
    pub commit: Option<unsafe extern "C" fn(*mut c_void, i64, ErrorOut) -> i32>,
    pub close: Option<unsafe extern "C" fn(*mut c_void)>,
}

#[repr(C)]
pub struct SluiceScalarUdf {
    pub n_args: i64,
    pub arg_types: *const *const c_char,
    pub return_type: *const c_char,
    pub volatility: i32,
    pub state: *mut c_void,
    pub invoke: Option<unsafe extern "C" fn(*mut c_void, *mut *mut ArrowArray, i64, *mut ArrowArray, ErrorOut) -> i32>,
}

#[repr(C)]
pub struct SluicePreprocessor {
    pub rewrite: Option<unsafe extern "C" fn(*const c_char, *const c_char, *const c_char, *mut *mut c_char, ErrorOut) -> i32>,
}

#[repr(C)]
pub struct SluiceSideOutput {
    pub open:
        Option<unsafe extern "C" fn(*const c_char, *const SluiceInstanceInfo, *const c_char, *const ArrowSchema, *mut *mut c_void, ErrorOut) -> i32>,
    pub observe: Option<unsafe extern "C" fn(*mut c_void, *const ArrowArray, ErrorOut) -> i32>,
    pub barrier: Option<unsafe extern "C" fn(*mut c_void, i64, ErrorOut) -> i32>,
    pub close: Option<unsafe extern "C" fn(*mut c_void)>,
}

#[repr(C)]
pub struct SluiceComponent {
    pub kind: i32,
    pub name: *const c_char,
    pub description: *const c_char,
    pub options_schema: *const c_char,
    pub vtable: *const c_void,
}

#[repr(C)]
pub struct SluicePlugin {
    pub abi_major: i32,
    pub abi_minor: i32,
    pub name: *const c_char,
    pub version: *const c_char,
    pub n_components: i64,
    pub components: *const SluiceComponent,
    pub free_string: Option<unsafe extern "C" fn(*mut c_char)>,
    pub free_bytes: Option<unsafe extern "C" fn(*mut u8, usize)>,
}

// Descriptors are static, immutable tables of pointers to static data and functions: sharing
// them between threads is what the header's lifetime and thread rules promise.
unsafe impl Sync for SluiceComponent {}
unsafe impl Sync for SluicePlugin {}
unsafe impl Sync for SluiceScalarUdf {}

/// The signature of `sluice_plugin_entry`.
pub type EntryFn = unsafe extern "C" fn() -> *const SluicePlugin;
