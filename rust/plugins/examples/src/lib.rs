//! Example native plugins of Sluice, built with `sluice-plugin-sdk` into
//! `libsluice_examples.so`:
//!
//! - source `sequence`: ids `start..start+count` with labels, restartable from a snapshot;
//! - transform `uppercase`: upper-cases Utf8 columns;
//! - sink `jsonl`: one JSON object per row, fsynced at every checkpoint;
//! - UDFs `keccak256`, `hex_encode`, `hex_decode`, `base58_encode`, `base58_decode`,
//!   `json_path`, `geohash`;
//! - preprocessor `template`: replaces `{{NAME}}` in the pipeline file;
//! - side output `audit`: one JSON line of row counts per checkpoint, fsynced.

pub mod audit;
pub mod jsonl;
pub mod sequence;
pub mod template;
pub mod udfs;
pub mod uppercase;

sluice_plugin_sdk::export_plugin! {
    name: "sluice-examples",
    version: env!("CARGO_PKG_VERSION"),
    sources: [sequence::Sequence],
    transforms: [uppercase::Uppercase],
    sinks: [jsonl::Jsonl],
    udfs: [udfs::Keccak256, udfs::HexEncode, udfs::HexDecode, udfs::Base58Encode, udfs::Base58Decode, udfs::JsonPath, udfs::Geohash],
    preprocessors: [template::Template],
    side_outputs: [audit::Audit],
}

#[cfg(test)]
mod tests {
    use std::ffi::{c_char, CStr, CString};
    use std::ptr;
    use std::sync::Arc;

    use arrow::array::{Array, AsArray, Int64Array, RecordBatch, StringArray, StructArray};
    use arrow::datatypes::{DataType, Int64Type, Schema};
    use arrow::ffi::{from_ffi_and_data_type, FFI_ArrowArray, FFI_ArrowSchema};
    use sluice_plugin_sdk::sys;

    fn component(kind: i32, name: &str) -> &'static sys::SluiceComponent {
        let plugin = unsafe { &*super::sluice_plugin_entry() };
        let components = unsafe { std::slice::from_raw_parts(plugin.components, plugin.n_components as usize) };
        components.iter().find(|c| c.kind == kind && unsafe { CStr::from_ptr(c.name) }.to_str() == Ok(name)).unwrap()
    }

    /// The message of a failed call, freed with the plugin's free_string.
    fn take_error(error: *mut c_char) -> Option<String> {
        if error.is_null() {
            return None;
        }
        let message = unsafe { CStr::from_ptr(error) }.to_str().unwrap().to_owned();
        unsafe { ((*super::sluice_plugin_entry()).free_string.unwrap())(error) };
        Some(message)
    }

    /// The sequence source through its raw vtable, as the host drives it.
    #[test]
    fn sequence_through_the_abi() {
        let vt = unsafe { &*(component(sys::SLUICE_COMPONENT_SOURCE, "sequence").vtable as *const sys::SluiceSource) };
        let options = CString::new(r#"{"start": 10, "count": 5, "panic_at": 13}"#).unwrap();
        let (mut state, mut error) = (ptr::null_mut(), ptr::null_mut());
        let mut schema = FFI_ArrowSchema::empty();
        let status =
            unsafe { (vt.open.unwrap())(options.as_ptr(), ptr::null(), &mut state, (&mut schema as *mut FFI_ArrowSchema).cast(), &mut error) };
        assert_eq!((status, take_error(error)), (sys::SLUICE_PLUGIN_OK, None));
        let schema = Schema::try_from(&schema).unwrap();
        assert_eq!(schema, *super::sequence::schema());

        let mut result = -1;
        let mut batch = FFI_ArrowArray::empty();
        let status = unsafe { (vt.poll.unwrap())(state, 100, 10, &mut result, (&mut batch as *mut FFI_ArrowArray).cast(), &mut error) };
        assert_eq!((status, result), (sys::SLUICE_PLUGIN_OK, sys::SLUICE_POLL_BATCH));
        let data = unsafe { from_ffi_and_data_type(batch, DataType::Struct(schema.fields().clone())) }.unwrap();
        data.validate_full().unwrap();
        let batch = StructArray::from(data);
        assert_eq!(batch.column(0).as_primitive::<Int64Type>().values().to_vec(), vec![10, 11, 12]);
        assert_eq!(batch.column(1).as_string::<i32>().value(2), "seq-12");

        let (mut data, mut len) = (ptr::null_mut(), 0);
        let status = unsafe { (vt.snapshot.unwrap())(state, 1, &mut data, &mut len, &mut error) };
        assert_eq!(status, sys::SLUICE_PLUGIN_OK);
        assert_eq!(unsafe { std::slice::from_raw_parts(data, len) }, 13i64.to_le_bytes());
        unsafe { ((*super::sluice_plugin_entry()).free_bytes.unwrap())(data, len) };

        let mut batch = FFI_ArrowArray::empty();
        let status = unsafe { (vt.poll.unwrap())(state, 100, 10, &mut result, (&mut batch as *mut FFI_ArrowArray).cast(), &mut error) };
        assert_eq!(status, sys::SLUICE_PLUGIN_PANIC);
        assert_eq!(take_error(error).as_deref(), Some("sequence: panicked in poll: sequence: panic requested at 13"));
        unsafe { (vt.close.unwrap())(state) };

        let options = CString::new(r#"{"count": 5, "rows": 1}"#).unwrap();
        let mut error = ptr::null_mut();
        let mut schema = FFI_ArrowSchema::empty();
        let status =
            unsafe { (vt.open.unwrap())(options.as_ptr(), ptr::null(), &mut state, (&mut schema as *mut FFI_ArrowSchema).cast(), &mut error) };
        assert_eq!(status, sys::SLUICE_PLUGIN_INVALID_OPTIONS);
        assert!(take_error(error).unwrap().starts_with("unknown option 'rows' (options: start, count, rows_per_poll,"));
    }

    /// The audit side output through its raw vtable: open creates nothing, the batch stays the
    /// host's, each barrier appends a line.
    #[test]
    fn audit_through_the_abi() {
        let vt = unsafe { &*(component(sys::SLUICE_COMPONENT_SIDE_OUTPUT, "audit").vtable as *const sys::SluiceSideOutput) };
        let dir = tempfile::tempdir().unwrap();
        let schema = super::sequence::schema();
        let ffi_schema = FFI_ArrowSchema::try_from(schema.as_ref()).unwrap();
        let strings: Vec<CString> = ["p", "sink", dir.path().to_str().unwrap()].iter().map(|s| CString::new(*s).unwrap()).collect();
        let info = sys::SluiceInstanceInfo {
            pipeline: strings[0].as_ptr(),
            node: strings[1].as_ptr(),
            pipeline_dir: strings[2].as_ptr(),
            lane: 0,
            lanes: 1,
        };
        let (options, observed) = (CString::new(r#"{"path": "audit.jsonl"}"#).unwrap(), CString::new("numbers").unwrap());
        let (mut state, mut error) = (ptr::null_mut(), ptr::null_mut());
        let status = unsafe {
            (vt.open.unwrap())(options.as_ptr(), &info, observed.as_ptr(), (&ffi_schema as *const FFI_ArrowSchema).cast(), &mut state, &mut error)
        };
        assert_eq!((status, take_error(error)), (sys::SLUICE_PLUGIN_OK, None));
        let path = dir.path().join("audit.jsonl");
        assert!(!path.exists(), "open must not create the file");

        let ids = Int64Array::from(vec![1, 2, 3]);
        let labels = StringArray::from(vec!["a", "b", "c"]);
        let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(ids), Arc::new(labels)]).unwrap();
        let host = FFI_ArrowArray::new(&StructArray::from(batch).into_data());
        let status = unsafe { (vt.observe.unwrap())(state, (&host as *const FFI_ArrowArray).cast(), &mut error) };
        assert_eq!((status, take_error(error)), (sys::SLUICE_PLUGIN_OK, None));
        assert!(!host.is_released(), "the batch is borrowed");
        drop(host);
        let status = unsafe { (vt.barrier.unwrap())(state, 1, &mut error) };
        assert_eq!((status, take_error(error)), (sys::SLUICE_PLUGIN_OK, None));
        unsafe { (vt.close.unwrap())(state) };
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"node\": \"numbers\", \"epoch\": 1, \"rows\": 3, \"total\": 3}\n");

        let options = CString::new("{}").unwrap();
        let status = unsafe {
            (vt.open.unwrap())(options.as_ptr(), &info, observed.as_ptr(), (&ffi_schema as *const FFI_ArrowSchema).cast(), &mut state, &mut error)
        };
        assert_eq!((status, take_error(error).as_deref()), (sys::SLUICE_PLUGIN_INVALID_OPTIONS, Some("option 'path' is required")));
    }

    #[test]
    fn descriptor() {
        let plugin = unsafe { &*super::sluice_plugin_entry() };
        assert_eq!(plugin.abi_major, sys::SLUICE_PLUGIN_ABI_MAJOR);
        let components = unsafe { std::slice::from_raw_parts(plugin.components, plugin.n_components as usize) };
        let names: Vec<(i32, &str)> = components.iter().map(|c| (c.kind, unsafe { CStr::from_ptr(c.name) }.to_str().unwrap())).collect();
        assert_eq!(
            names,
            vec![
                (sys::SLUICE_COMPONENT_SOURCE, "sequence"),
                (sys::SLUICE_COMPONENT_TRANSFORM, "uppercase"),
                (sys::SLUICE_COMPONENT_SINK, "jsonl"),
                (sys::SLUICE_COMPONENT_SCALAR_UDF, "keccak256"),
                (sys::SLUICE_COMPONENT_SCALAR_UDF, "hex_encode"),
                (sys::SLUICE_COMPONENT_SCALAR_UDF, "hex_decode"),
                (sys::SLUICE_COMPONENT_SCALAR_UDF, "base58_encode"),
                (sys::SLUICE_COMPONENT_SCALAR_UDF, "base58_decode"),
                (sys::SLUICE_COMPONENT_SCALAR_UDF, "json_path"),
                (sys::SLUICE_COMPONENT_SCALAR_UDF, "geohash"),
                (sys::SLUICE_COMPONENT_PREPROCESSOR, "template"),
                (sys::SLUICE_COMPONENT_SIDE_OUTPUT, "audit"),
            ]
        );
        for c in components {
            assert!(!c.description.is_null());
            if !c.options_schema.is_null() {
                let schema = unsafe { CStr::from_ptr(c.options_schema) }.to_str().unwrap();
                assert!(serde_json::from_str::<serde_json::Value>(schema).unwrap().is_array());
            }
        }
        let geohash = unsafe { &*(components[9].vtable as *const sys::SluiceScalarUdf) };
        let formats: Vec<&str> =
            (0..geohash.n_args as usize).map(|i| unsafe { CStr::from_ptr(*geohash.arg_types.add(i)) }.to_str().unwrap()).collect();
        assert_eq!(formats, vec!["g", "g", "l"]);
        assert_eq!(unsafe { CStr::from_ptr(geohash.return_type) }.to_str().unwrap(), "u");
    }
}
