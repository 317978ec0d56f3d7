//! A safe Rust wrapper of Sluice's native plugin ABI (`plugins-api/include/sluice_plugin.h`,
//! mirrored raw by `sluice-plugin-sys`). A plugin implements one trait per component and
//! exports them with [`export_plugin!`]:
//!
//! ```ignore
//! use sluice_plugin_sdk::{export_plugin, Source, Transform, ScalarUdf, SideOutput, /* ... */};
//!
//! struct Ticks { /* ... */ }
//! impl Source for Ticks { const NAME: &'static str = "ticks"; /* open, poll, ... */ }
//!
//! export_plugin! {
//!     name: "my-plugin",
//!     version: env!("CARGO_PKG_VERSION"),
//!     sources: [Ticks],
//!     transforms: [],
//!     sinks: [],
//!     udfs: [],
//!     preprocessors: [],
//!     side_outputs: [],
//! }
//! ```
//!
//! Every list is optional, but those given must come in this order. The crate must be built
//! as a `cdylib` with `panic = "unwind"` (the default): the SDK catches panics at the ABI
//! edge and reports them as `SLUICE_PLUGIN_PANIC` with the panic's message.
//!
//! What the SDK does for every component:
//! - parses the options JSON into [`Options`] and, when the component declares `OPTIONS`,
//!   rejects unknown names, missing required options and values of the wrong type with
//!   `SLUICE_PLUGIN_INVALID_OPTIONS`; `OPTIONS` is also the descriptor's `options_schema`;
//! - maps an [`Error`]'s [`ErrorKind`] to the status code and hands its message to the host
//!   (allocated with `CString::into_raw`, freed by the descriptor's `free_string`);
//! - imports batches and UDF arguments from the host over the C Data Interface and validates
//!   them in full (they are untrusted), exports batches as struct arrays ("+s"), and checks
//!   that every batch a component emits has exactly the schema it declared in `open`;
//! - takes a moved-in batch (transform, sink) without copying, and deep-copies a borrowed one
//!   (a side output's `observe`) without releasing it, so plugin code never holds the host's
//!   memory beyond the call;
//! - hands snapshots to the host as `Box<[u8]>` (freed by `free_bytes`).
//!
//! A whole plugin with one UDF (the README's example):
//!
//! ```
//! use std::sync::Arc;
//! use sluice_plugin_sdk::arrow::array::{ArrayRef, AsArray, Int64Array};
//! use sluice_plugin_sdk::arrow::datatypes::{DataType, Int64Type};
//! use sluice_plugin_sdk::{export_plugin, Result, ScalarUdf};
//!
//! #[derive(Default)]
//! struct Double;
//!
//! impl ScalarUdf for Double {
//!     const NAME: &'static str = "double_it";
//!     fn arg_types() -> Vec<DataType> { vec![DataType::Int64] }
//!     fn return_type() -> DataType { DataType::Int64 }
//!     fn invoke(&self, args: &[ArrayRef], _rows: usize) -> Result<ArrayRef> {
//!         let x = args[0].as_primitive::<Int64Type>();
//!         Ok(Arc::new(x.iter().map(|v| v.map(|v| v * 2)).collect::<Int64Array>()))
//!     }
//! }
//!
//! export_plugin! { name: "my-plugin", version: "0.1.0", udfs: [Double] }
//!
//! // The host's view: one component, the UDF, under its SQL name.
//! let plugin = unsafe { &*sluice_plugin_entry() };
//! assert_eq!(plugin.n_components, 1);
//! ```

mod abi;
pub mod arrow_ffi;
mod component;
mod error;
mod options;
mod plugin;

pub use arrow;
pub use serde_json;
pub use sluice_plugin_sys as sys;

pub use abi::{free_bytes, free_string, panic_message};
pub use component::{Poll, Preprocessor, ScalarUdf, SideOutput, Sink, Source, Transform, Volatility};
pub use error::{Error, ErrorKind, Result};
pub use options::{InstanceInfo, OptionSpec, OptionType, Options};
pub use plugin::PluginBuilder;

/// Exports `sluice_plugin_entry`, returning a descriptor built once (with
/// [`PluginBuilder`]) from the listed component types. `udfs` are types implementing
/// [`ScalarUdf`] (one `Default` value of each serves every call); the others are types
/// implementing [`Source`], [`Transform`], [`Sink`], [`Preprocessor`] and [`SideOutput`].
#[macro_export]
macro_rules! export_plugin {
    (
        name: $name:expr,
        version: $version:expr
        $(, sources: [$($source:ty),* $(,)?])?
        $(, transforms: [$($transform:ty),* $(,)?])?
        $(, sinks: [$($sink:ty),* $(,)?])?
        $(, udfs: [$($udf:ty),* $(,)?])?
        $(, preprocessors: [$($preprocessor:ty),* $(,)?])?
        $(, side_outputs: [$($side_output:ty),* $(,)?])?
        $(,)?
    ) => {
        /// The plugin's descriptor: the one symbol of Sluice's native plugin ABI.
        #[unsafe(no_mangle)]
        pub extern "C" fn sluice_plugin_entry() -> *const $crate::sys::SluicePlugin {
            static PLUGIN: ::std::sync::OnceLock<&'static $crate::sys::SluicePlugin> = ::std::sync::OnceLock::new();
            let plugin: &'static $crate::sys::SluicePlugin = PLUGIN.get_or_init(|| {
                $crate::PluginBuilder::new($name, $version)
                    $($(.source::<$source>())*)?
                    $($(.transform::<$transform>())*)?
                    $($(.sink::<$sink>())*)?
                    $($(.udf::<$udf>())*)?
                    $($(.preprocessor::<$preprocessor>())*)?
                    $($(.side_output::<$side_output>())*)?
                    .build()
            });
            plugin
        }
    };
}

#[cfg(test)]
mod tests;
