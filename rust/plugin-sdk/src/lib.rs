//! A safe Rust wrapper of Sluice's native plugin ABI (`plugins-api/include/sluice_plugin.h`,
//! mirrored raw by `sluice-plugin-sys`). A plugin implements one trait per component and
//! exports them with [`export_plugin!`]:
//!
//! ```ignore
//! use sluice_plugin_sdk::{export_plugin, Source, Transform, ScalarUdf, /* ... */};
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
//! - hands snapshots to the host as `Box<[u8]>` (freed by `free_bytes`).

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
pub use component::{Poll, Preprocessor, ScalarUdf, Sink, Source, Transform, Volatility};
pub use error::{Error, ErrorKind, Result};
pub use options::{InstanceInfo, OptionSpec, OptionType, Options};
pub use plugin::PluginBuilder;

/// Exports `sluice_plugin_entry`, returning a descriptor built once (with
/// [`PluginBuilder`]) from the listed component types. `udfs` are types implementing
/// [`ScalarUdf`] (one `Default` value of each serves every call); the others are types
/// implementing [`Source`], [`Transform`], [`Sink`] and [`Preprocessor`].
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
                    .build()
            });
            plugin
        }
    };
}

#[cfg(test)]
mod tests;
