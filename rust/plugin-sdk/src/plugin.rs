//! The plugin descriptor: built once, leaked, and returned by `sluice_plugin_entry`.

use std::collections::HashSet;
use std::ffi::{c_char, c_void, CString};

use arrow::ffi::FFI_ArrowSchema;
use sluice_plugin_sys as sys;

use crate::abi::{self, UdfState};
use crate::component::{Preprocessor, ScalarUdf, SideOutput, Sink, Source, Transform};
use crate::options::{options_schema_json, OptionSpec};

struct ComponentEntry {
    kind: i32,
    name: &'static str,
    description: &'static str,
    options_schema: Option<String>,
    vtable: *const c_void,
}

/// Collects a plugin's components and builds its `'static` descriptor. `export_plugin!` uses
/// it; call it directly to build a descriptor in a test.
pub struct PluginBuilder {
    name: String,
    version: String,
    components: Vec<ComponentEntry>,
}

fn leak<T>(value: T) -> *const c_void {
    Box::leak(Box::new(value)) as *const T as *const c_void
}

fn leak_str(text: &str) -> *const c_char {
    CString::new(text).unwrap_or_else(|_| panic!("sluice plugin descriptor: {text:?} contains a NUL byte")).into_raw()
}

impl PluginBuilder {
    pub fn new(name: &str, version: &str) -> Self {
        PluginBuilder { name: name.to_owned(), version: version.to_owned(), components: Vec::new() }
    }

    fn push(mut self, kind: i32, name: &'static str, description: &'static str, options: &[OptionSpec], vtable: *const c_void) -> Self {
        self.components.push(ComponentEntry { kind, name, description, options_schema: options_schema_json(options), vtable });
        self
    }

    pub fn source<S: Source>(self) -> Self {
        self.push(sys::SLUICE_COMPONENT_SOURCE, S::NAME, S::DESCRIPTION, S::OPTIONS, leak(abi::source_vtable::<S>()))
    }

    pub fn transform<T: Transform>(self) -> Self {
        self.push(sys::SLUICE_COMPONENT_TRANSFORM, T::NAME, T::DESCRIPTION, T::OPTIONS, leak(abi::transform_vtable::<T>()))
    }

    pub fn sink<K: Sink>(self) -> Self {
        self.push(sys::SLUICE_COMPONENT_SINK, K::NAME, K::DESCRIPTION, K::OPTIONS, leak(abi::sink_vtable::<K>()))
    }

    pub fn udf<U: ScalarUdf>(self) -> Self {
        let arg_types = U::arg_types();
        let return_type = U::return_type();
        let format = |t: &arrow::datatypes::DataType| match FFI_ArrowSchema::try_from(t) {
            Ok(schema) => leak_str(schema.format()),
            Err(e) => panic!("sluice plugin descriptor: UDF {}: type {t} has no C Data Interface format: {e}", U::NAME),
        };
        let formats: Vec<*const c_char> = arg_types.iter().map(format).collect();
        let n_args = formats.len() as i64;
        let arg_formats = Box::leak(formats.into_boxed_slice()).as_ptr();
        let return_format = format(&return_type);
        let state = Box::into_raw(Box::new(UdfState { udf: U::default(), arg_types, return_type })) as *mut c_void;
        let vtable = sys::SluiceScalarUdf {
            n_args,
            arg_types: arg_formats,
            return_type: return_format,
            volatility: U::VOLATILITY.code(),
            state,
            invoke: Some(abi::udf_invoke::<U>),
        };
        self.push(sys::SLUICE_COMPONENT_SCALAR_UDF, U::NAME, U::DESCRIPTION, &[], leak(vtable))
    }

    pub fn preprocessor<P: Preprocessor>(self) -> Self {
        self.push(sys::SLUICE_COMPONENT_PREPROCESSOR, P::NAME, P::DESCRIPTION, P::OPTIONS, leak(abi::preprocessor_vtable::<P>()))
    }

    pub fn side_output<O: SideOutput>(self) -> Self {
        self.push(sys::SLUICE_COMPONENT_SIDE_OUTPUT, O::NAME, O::DESCRIPTION, O::OPTIONS, leak(abi::side_output_vtable::<O>()))
    }

    /// Problems that make the descriptor invalid: a component name that is not lowercase
    /// letters, digits and '_', or a name used twice within one kind.
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let mut seen = HashSet::new();
        for c in &self.components {
            let valid = !c.name.is_empty() && c.name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
            if !valid {
                problems.push(format!("component name {:?} must be lowercase letters, digits and '_'", c.name));
            }
            if !seen.insert((c.kind, c.name)) {
                problems.push(format!("component name {:?} is used twice for one kind", c.name));
            }
        }
        problems
    }

    /// Leaks the descriptor and everything it points to (it must live while the library is
    /// loaded). Panics on [`problems`](Self::problems): called from `sluice_plugin_entry`, that
    /// aborts the host on the first load, so test the descriptor (see the SDK's docs).
    pub fn build(self) -> &'static sys::SluicePlugin {
        let problems = self.problems();
        assert!(problems.is_empty(), "sluice plugin {}: {}", self.name, problems.join("; "));
        let components: Vec<sys::SluiceComponent> = self
            .components
            .iter()
            .map(|c| sys::SluiceComponent {
                kind: c.kind,
                name: leak_str(c.name),
                description: if c.description.is_empty() { std::ptr::null() } else { leak_str(c.description) },
                options_schema: c.options_schema.as_deref().map_or(std::ptr::null(), leak_str),
                vtable: c.vtable,
            })
            .collect();
        let n_components = components.len() as i64;
        let components = Box::leak(components.into_boxed_slice()).as_ptr();
        Box::leak(Box::new(sys::SluicePlugin {
            abi_major: sys::SLUICE_PLUGIN_ABI_MAJOR,
            abi_minor: sys::SLUICE_PLUGIN_ABI_MINOR,
            name: leak_str(&self.name),
            version: leak_str(&self.version),
            n_components,
            components,
            free_string: Some(abi::free_string),
            free_bytes: Some(abi::free_bytes),
        }))
    }
}
