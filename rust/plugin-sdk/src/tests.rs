//! Drives components through their raw vtables, as the host does.

use std::ffi::{c_char, c_void, CStr, CString};
use std::mem::MaybeUninit;
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arrow::array::{make_array, Array, ArrayData, ArrayRef, AsArray, DictionaryArray, Int64Array, RecordBatch, StringArray, StringViewArray};
use arrow::buffer::Buffer;
use arrow::datatypes::{DataType, Field, Int32Type, Int64Type, Schema, SchemaRef};
use arrow::ffi::{from_ffi_and_data_type, FFI_ArrowArray, FFI_ArrowSchema};
use serde_json::json;

use crate::sys;
use crate::*;
use crate::{abi, arrow_ffi};

// ---- components under test -------------------------------------------------------------------

fn counter_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![Field::new("n", DataType::Int64, false)]))
}

struct Counter {
    next: i64,
    end: i64,
    fail_at: Option<i64>,
    panic_at: Option<i64>,
    wrong_schema: bool,
}

impl Source for Counter {
    const NAME: &'static str = "counter";
    const DESCRIPTION: &'static str = "Counts from 0.";
    const OPTIONS: &'static [OptionSpec] = &[
        OptionSpec::new("count", OptionType::Integer, "How many").required(),
        OptionSpec::new("fail_at", OptionType::Integer, "Fail there"),
        OptionSpec::new("panic_at", OptionType::Integer, "Panic there"),
        OptionSpec::new("wrong_schema", OptionType::Boolean, "Emit a batch of another schema").default_json("false"),
    ];

    fn open(options: &Options, _instance: &InstanceInfo) -> Result<(Self, SchemaRef)> {
        let counter = Counter {
            next: 0,
            end: options.require_as("count")?,
            fail_at: options.get_as("fail_at")?,
            panic_at: options.get_as("panic_at")?,
            wrong_schema: options.get_as("wrong_schema")?.unwrap_or(false),
        };
        Ok((counter, counter_schema()))
    }

    fn restore(&mut self, snapshot: &[u8]) -> Result<()> {
        let bytes: [u8; 8] = snapshot.try_into().map_err(|_| Error::new("bad snapshot"))?;
        self.next = i64::from_le_bytes(bytes);
        Ok(())
    }

    fn poll(&mut self, max_rows: usize, _timeout: Duration) -> Result<Poll> {
        if Some(self.next) == self.fail_at {
            return Err(Error::new(format!("counter: failure requested at {}", self.next)));
        }
        if Some(self.next) == self.panic_at {
            panic!("counter: panic requested at {}", self.next);
        }
        if self.next >= self.end {
            return Ok(Poll::Finished);
        }
        let end = self.end.min(self.next + max_rows as i64);
        let values = Int64Array::from_iter_values(self.next..end);
        self.next = end;
        let schema = if self.wrong_schema { Arc::new(Schema::new(vec![Field::new("n", DataType::Int64, true)])) } else { counter_schema() };
        Ok(Poll::Batch(RecordBatch::try_new(schema, vec![Arc::new(values)])?))
    }

    fn snapshot(&mut self, _epoch: i64) -> Result<Option<Vec<u8>>> {
        Ok(Some(self.next.to_le_bytes().to_vec()))
    }
}

struct Double {
    column: usize,
}

impl Transform for Double {
    const NAME: &'static str = "double";
    const OPTIONS: &'static [OptionSpec] = &[OptionSpec::new("column", OptionType::String, "Which column").required()];

    fn open(options: &Options, _instance: &InstanceInfo, input: SchemaRef) -> Result<(Self, SchemaRef)> {
        let name: String = options.require_as("column")?;
        let column = input.index_of(&name).map_err(|_| Error::invalid_options(format!("option 'column': no column '{name}'")))?;
        Ok((Double { column }, input))
    }

    fn process(&mut self, batch: RecordBatch) -> Result<Vec<RecordBatch>> {
        let values = batch.column(self.column).as_primitive::<Int64Type>();
        if values.iter().any(|v| v == Some(13)) {
            return Err(Error::bad_data("double: 13 is unlucky"));
        }
        if values.iter().any(|v| v == Some(666)) {
            panic!("double: the number of the beast");
        }
        let doubled: Int64Array = values.unary(|v| v * 2);
        let mut columns = batch.columns().to_vec();
        columns[self.column] = Arc::new(doubled);
        Ok(vec![RecordBatch::try_new(batch.schema(), columns)?, RecordBatch::new_empty(batch.schema())])
    }
}

static COLLECTED: Mutex<Vec<i64>> = Mutex::new(Vec::new());

struct Collect;

impl Sink for Collect {
    const NAME: &'static str = "collect";

    fn open(_options: &Options, _instance: &InstanceInfo, schema: SchemaRef) -> Result<Self> {
        if schema.fields().len() != 1 {
            return Err(Error::invalid_options("collect takes one column"));
        }
        Ok(Collect)
    }

    fn write(&mut self, batch: RecordBatch) -> Result<()> {
        COLLECTED.lock().unwrap().extend(batch.column(0).as_primitive::<Int64Type>().iter().flatten());
        Ok(())
    }

    fn flush(&mut self, _epoch: i64) -> Result<()> {
        Ok(())
    }
}

#[derive(Default)]
struct AddOne;

impl ScalarUdf for AddOne {
    const NAME: &'static str = "add_one";

    fn arg_types() -> Vec<DataType> {
        vec![DataType::Int64]
    }

    fn return_type() -> DataType {
        DataType::Int64
    }

    fn invoke(&self, args: &[ArrayRef], _n_rows: usize) -> Result<ArrayRef> {
        let result: Int64Array = args[0].as_primitive::<Int64Type>().unary(|v| v + 1);
        Ok(Arc::new(result))
    }
}

/// Returns its argument: the result shares the host's buffers, so the SDK must copy it.
#[derive(Default)]
struct Identity;

impl ScalarUdf for Identity {
    const NAME: &'static str = "identity";

    fn arg_types() -> Vec<DataType> {
        vec![DataType::Utf8]
    }

    fn return_type() -> DataType {
        DataType::Utf8
    }

    fn invoke(&self, args: &[ArrayRef], _n_rows: usize) -> Result<ArrayRef> {
        Ok(args[0].clone())
    }
}

/// Keeps its argument in its state: not allowed, reported as an error.
#[derive(Default)]
struct Keeper {
    kept: Mutex<Vec<ArrayRef>>,
}

impl ScalarUdf for Keeper {
    const NAME: &'static str = "keeper";

    fn arg_types() -> Vec<DataType> {
        vec![DataType::Int64]
    }

    fn return_type() -> DataType {
        DataType::Int64
    }

    fn invoke(&self, args: &[ArrayRef], _n_rows: usize) -> Result<ArrayRef> {
        self.kept.lock().unwrap().push(args[0].clone());
        Ok(Arc::new(Int64Array::from(vec![0; args[0].len()])))
    }
}

struct Upper;

impl Preprocessor for Upper {
    const NAME: &'static str = "upper";
    const OPTIONS: &'static [OptionSpec] = &[OptionSpec::new("suffix", OptionType::String, "Appended")];

    fn rewrite(options: &Options, pipeline_path: &str, yaml: &str) -> Result<String> {
        if yaml.contains("fail") {
            return Err(Error::new(format!("upper: {pipeline_path} says fail")));
        }
        Ok(format!("{}{}", yaml.to_uppercase(), options.get_as::<String>("suffix")?.unwrap_or_default()))
    }
}

/// What the side output `spy` saw, by observed node (each test observes a node of its own).
#[derive(Debug, Clone)]
enum Seen {
    /// The instance's node and the number of fields of the schema.
    Open(String, usize),
    Batch(RecordBatch),
    Barrier(i64),
}

static SPIED: Mutex<Vec<(String, Seen)>> = Mutex::new(Vec::new());

fn spied(observed: &str) -> Vec<Seen> {
    SPIED.lock().unwrap().iter().filter(|(node, _)| node == observed).map(|(_, seen)| seen.clone()).collect()
}

/// Keeps (clones of) the batches it observes: allowed, since the SDK hands it a copy.
struct Spy {
    observed: String,
    panic_on_rows: Option<usize>,
    fail_barrier: bool,
}

impl SideOutput for Spy {
    const NAME: &'static str = "spy";
    const DESCRIPTION: &'static str = "Keeps what it observes.";
    const OPTIONS: &'static [OptionSpec] = &[
        OptionSpec::new("panic_on_rows", OptionType::Integer, "Panic on a batch of that many rows"),
        OptionSpec::new("fail_barrier", OptionType::Boolean, "Fail every barrier"),
    ];

    fn open(options: &Options, instance: &InstanceInfo, observed_node: &str, schema: SchemaRef) -> Result<Self> {
        if observed_node.is_empty() {
            return Err(Error::invalid_options("spy: no observed node"));
        }
        SPIED.lock().unwrap().push((observed_node.to_owned(), Seen::Open(instance.node.clone(), schema.fields().len())));
        Ok(Spy {
            observed: observed_node.to_owned(),
            panic_on_rows: options.get_as("panic_on_rows")?,
            fail_barrier: options.get_as("fail_barrier")?.unwrap_or(false),
        })
    }

    fn observe(&mut self, batch: &RecordBatch) -> Result<()> {
        if Some(batch.num_rows()) == self.panic_on_rows {
            panic!("spy: panic requested on {} rows", batch.num_rows());
        }
        SPIED.lock().unwrap().push((self.observed.clone(), Seen::Batch(batch.clone())));
        Ok(())
    }

    fn barrier(&mut self, epoch: i64) -> Result<()> {
        if self.fail_barrier {
            return Err(Error::new(format!("spy: barrier {epoch} failed")));
        }
        SPIED.lock().unwrap().push((self.observed.clone(), Seen::Barrier(epoch)));
        Ok(())
    }
}

crate::export_plugin! {
    name: "sdk-test",
    version: "1.2.3",
    sources: [Counter],
    transforms: [Double],
    sinks: [Collect],
    udfs: [AddOne, Identity, Keeper],
    preprocessors: [Upper],
    side_outputs: [Spy],
}

// ---- a minimal host --------------------------------------------------------------------------

fn plugin() -> &'static sys::SluicePlugin {
    unsafe { &*sluice_plugin_entry() }
}

fn components() -> &'static [sys::SluiceComponent] {
    let p = plugin();
    unsafe { std::slice::from_raw_parts(p.components, p.n_components as usize) }
}

fn text(p: *const c_char) -> Option<String> {
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_str().unwrap().to_owned())
}

fn component(kind: i32, name: &str) -> &'static sys::SluiceComponent {
    components().iter().find(|c| c.kind == kind && text(c.name).as_deref() == Some(name)).unwrap()
}

fn vtable<T>(kind: i32, name: &str) -> &'static T {
    unsafe { &*(component(kind, name).vtable as *const T) }
}

/// The status and the error message of a call, the message freed as the host does.
fn call(f: impl FnOnce(*mut *mut c_char) -> i32) -> (i32, Option<String>) {
    let mut error: *mut c_char = ptr::null_mut();
    let status = f(&mut error);
    let message = text(error);
    if !error.is_null() {
        unsafe { (plugin().free_string.unwrap())(error) };
    }
    assert_eq!(status == sys::SLUICE_PLUGIN_OK, message.is_none(), "a message exactly when not OK");
    (status, message)
}

fn ok(f: impl FnOnce(*mut *mut c_char) -> i32) {
    let (status, message) = call(f);
    assert_eq!(status, sys::SLUICE_PLUGIN_OK, "{message:?}");
}

struct Instance {
    _strings: Vec<CString>,
    info: sys::SluiceInstanceInfo,
}

fn instance() -> Instance {
    let strings = vec![CString::new("p").unwrap(), CString::new("n").unwrap(), CString::new("/tmp").unwrap()];
    let info =
        sys::SluiceInstanceInfo { pipeline: strings[0].as_ptr(), node: strings[1].as_ptr(), pipeline_dir: strings[2].as_ptr(), lane: 0, lanes: 1 };
    Instance { _strings: strings, info }
}

fn empty_schema() -> sys::ArrowSchema {
    unsafe { std::mem::transmute::<FFI_ArrowSchema, sys::ArrowSchema>(FFI_ArrowSchema::empty()) }
}

fn empty_array() -> sys::ArrowArray {
    unsafe { std::mem::transmute::<FFI_ArrowArray, sys::ArrowArray>(FFI_ArrowArray::empty()) }
}

fn take_schema(schema: sys::ArrowSchema) -> Schema {
    let ffi: FFI_ArrowSchema = unsafe { std::mem::transmute(schema) };
    Schema::try_from(&ffi).unwrap()
}

fn take_batch(array: sys::ArrowArray, schema: &SchemaRef) -> RecordBatch {
    let ffi: FFI_ArrowArray = unsafe { std::mem::transmute(array) };
    let data = unsafe { from_ffi_and_data_type(ffi, DataType::Struct(schema.fields().clone())) }.unwrap();
    data.validate_full().unwrap();
    RecordBatch::from(arrow::array::StructArray::from(data))
}

fn host_batch(batch: &RecordBatch) -> sys::ArrowArray {
    let mut out = MaybeUninit::<sys::ArrowArray>::uninit();
    unsafe { arrow_ffi::export_batch(batch, out.as_mut_ptr()).unwrap() };
    unsafe { out.assume_init() }
}

fn host_schema(schema: &Schema) -> sys::ArrowSchema {
    let mut out = MaybeUninit::<sys::ArrowSchema>::uninit();
    unsafe { arrow_ffi::export_schema(schema, out.as_mut_ptr()).unwrap() };
    unsafe { out.assume_init() }
}

fn release_schema(mut schema: sys::ArrowSchema) {
    if let Some(release) = schema.release {
        unsafe { release(&mut schema) };
    }
}

fn release_array(mut array: sys::ArrowArray) {
    if let Some(release) = array.release {
        unsafe { release(&mut array) };
    }
}

fn int_column(batch: &RecordBatch, i: usize) -> Vec<i64> {
    batch.column(i).as_primitive::<Int64Type>().values().to_vec()
}

fn open_counter(options: &str) -> (i32, Option<String>, *mut c_void) {
    let vt = vtable::<sys::SluiceSource>(sys::SLUICE_COMPONENT_SOURCE, "counter");
    let options = CString::new(options).unwrap();
    let inst = instance();
    let mut state = ptr::null_mut();
    let mut schema = empty_schema();
    let (status, message) = call(|e| unsafe { (vt.open.unwrap())(options.as_ptr(), &inst.info, &mut state, &mut schema, e) });
    if status == sys::SLUICE_PLUGIN_OK {
        assert_eq!(take_schema(schema), *counter_schema());
    } else {
        assert!(state.is_null());
    }
    (status, message, state)
}

struct Polled {
    status: i32,
    message: Option<String>,
    result: i32,
    batch: Option<RecordBatch>,
}

fn poll(state: *mut c_void, max_rows: i64) -> Polled {
    let vt = vtable::<sys::SluiceSource>(sys::SLUICE_COMPONENT_SOURCE, "counter");
    let mut result = -1;
    let mut batch = empty_array();
    let (status, message) = call(|e| unsafe { (vt.poll.unwrap())(state, max_rows, 10, &mut result, &mut batch, e) });
    let batch = if status == sys::SLUICE_PLUGIN_OK && result == sys::SLUICE_POLL_BATCH {
        Some(take_batch(batch, &counter_schema()))
    } else {
        assert!(batch.release.is_none(), "no batch unless SLUICE_POLL_BATCH");
        None
    };
    Polled { status, message, result, batch }
}

// ---- tests -----------------------------------------------------------------------------------

#[test]
fn descriptor_lists_components_with_schemas() {
    let p = plugin();
    assert_eq!((p.abi_major, p.abi_minor), (sys::SLUICE_PLUGIN_ABI_MAJOR, sys::SLUICE_PLUGIN_ABI_MINOR));
    assert_eq!(text(p.name).as_deref(), Some("sdk-test"));
    assert_eq!(text(p.version).as_deref(), Some("1.2.3"));
    let names: Vec<(i32, String)> = components().iter().map(|c| (c.kind, text(c.name).unwrap())).collect();
    assert_eq!(
        names,
        vec![
            (sys::SLUICE_COMPONENT_SOURCE, "counter".into()),
            (sys::SLUICE_COMPONENT_TRANSFORM, "double".into()),
            (sys::SLUICE_COMPONENT_SINK, "collect".into()),
            (sys::SLUICE_COMPONENT_SCALAR_UDF, "add_one".into()),
            (sys::SLUICE_COMPONENT_SCALAR_UDF, "identity".into()),
            (sys::SLUICE_COMPONENT_SCALAR_UDF, "keeper".into()),
            (sys::SLUICE_COMPONENT_PREPROCESSOR, "upper".into()),
            (sys::SLUICE_COMPONENT_SIDE_OUTPUT, "spy".into()),
        ]
    );
    let counter = component(sys::SLUICE_COMPONENT_SOURCE, "counter");
    assert_eq!(text(counter.description).as_deref(), Some("Counts from 0."));
    let schema: serde_json::Value = serde_json::from_str(&text(counter.options_schema).unwrap()).unwrap();
    assert_eq!(schema[0], json!({"name": "count", "type": "integer", "required": true, "doc": "How many"}));
    assert_eq!(schema[3]["default"], json!(false));
    assert!(component(sys::SLUICE_COMPONENT_SINK, "collect").options_schema.is_null());
    assert!(component(sys::SLUICE_COMPONENT_SINK, "collect").description.is_null());
    // The same descriptor every time.
    assert_eq!(sluice_plugin_entry(), sluice_plugin_entry());

    let udf = vtable::<sys::SluiceScalarUdf>(sys::SLUICE_COMPONENT_SCALAR_UDF, "identity");
    assert_eq!(udf.n_args, 1);
    assert_eq!(text(unsafe { *udf.arg_types }).as_deref(), Some("u"));
    assert_eq!(text(udf.return_type).as_deref(), Some("u"));
    assert_eq!(udf.volatility, sys::SLUICE_VOLATILITY_IMMUTABLE);
}

#[test]
fn builder_reports_bad_names() {
    struct Bad;
    impl Preprocessor for Bad {
        const NAME: &'static str = "Bad-Name";
        fn rewrite(_: &Options, _: &str, yaml: &str) -> Result<String> {
            Ok(yaml.into())
        }
    }
    let problems = PluginBuilder::new("x", "1").preprocessor::<Bad>().preprocessor::<Upper>().preprocessor::<Upper>().problems();
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems[0].contains("Bad-Name"));
    assert!(problems[1].contains("used twice"));
}

#[test]
fn source_open_poll_snapshot_restore_close() {
    let vt = vtable::<sys::SluiceSource>(sys::SLUICE_COMPONENT_SOURCE, "counter");
    let (status, _, state) = open_counter(r#"{"count": 10}"#);
    assert_eq!(status, sys::SLUICE_PLUGIN_OK);

    assert_eq!(int_column(&poll(state, 4).batch.unwrap(), 0), vec![0, 1, 2, 3]);

    let mut data: *mut u8 = ptr::null_mut();
    let mut len = 0usize;
    ok(|e| unsafe { (vt.snapshot.unwrap())(state, 1, &mut data, &mut len, e) });
    assert_eq!(len, 8);
    let snapshot = unsafe { std::slice::from_raw_parts(data, len) }.to_vec();
    unsafe { (plugin().free_bytes.unwrap())(data, len) };
    assert_eq!(snapshot, 4i64.to_le_bytes());
    ok(|e| unsafe { (vt.commit.unwrap())(state, 1, e) });

    assert_eq!(int_column(&poll(state, 100).batch.unwrap(), 0), vec![4, 5, 6, 7, 8, 9]);
    let polled = poll(state, 100);
    assert_eq!((polled.status, polled.result, polled.batch.is_none()), (sys::SLUICE_PLUGIN_OK, sys::SLUICE_POLL_FINISHED, true));
    unsafe { (vt.close.unwrap())(state) };

    // A new state restored from the snapshot continues after it.
    let (_, _, state) = open_counter(r#"{"count": 10}"#);
    ok(|e| unsafe { (vt.restore.unwrap())(state, snapshot.as_ptr(), snapshot.len(), e) });
    assert_eq!(int_column(&poll(state, 3).batch.unwrap(), 0), vec![4, 5, 6]);
    let (status, message) = call(|e| unsafe { (vt.restore.unwrap())(state, snapshot.as_ptr(), 3, e) });
    assert_eq!((status, message.as_deref()), (sys::SLUICE_PLUGIN_ERROR, Some("bad snapshot")));
    unsafe { (vt.close.unwrap())(state) };
}

#[test]
fn source_options_are_checked_against_the_declaration() {
    let cases = [
        (r#"{}"#, "option 'count' is required"),
        (r#"{"count": 1, "nope": 2}"#, "unknown option 'nope' (options: count, fail_at, panic_at, wrong_schema)"),
        (r#"{"count": "ten"}"#, "option 'count' must be of type integer, got \"ten\""),
        (r#"[1]"#, "options must be a JSON object, not [1]"),
        (r#"{"count": "#, "options are not valid JSON"),
    ];
    for (options, expected) in cases {
        let (status, message, _) = open_counter(options);
        assert_eq!(status, sys::SLUICE_PLUGIN_INVALID_OPTIONS, "{options}");
        assert!(message.as_deref().unwrap().starts_with(expected), "{options}: {message:?}");
    }
}

#[test]
fn source_error_panic_and_schema_mismatch() {
    let vt = vtable::<sys::SluiceSource>(sys::SLUICE_COMPONENT_SOURCE, "counter");
    let (_, _, state) = open_counter(r#"{"count": 10, "fail_at": 2, "panic_at": 4}"#);
    assert_eq!(int_column(&poll(state, 2).batch.unwrap(), 0), vec![0, 1]);
    let polled = poll(state, 2);
    assert_eq!((polled.status, polled.message.as_deref()), (sys::SLUICE_PLUGIN_ERROR, Some("counter: failure requested at 2")));
    unsafe { (vt.close.unwrap())(state) };

    let (_, _, state) = open_counter(r#"{"count": 10, "panic_at": 0}"#);
    let polled = poll(state, 2);
    assert_eq!(polled.status, sys::SLUICE_PLUGIN_PANIC);
    assert_eq!(polled.message.as_deref(), Some("counter: panicked in poll: counter: panic requested at 0"));
    unsafe { (vt.close.unwrap())(state) };

    let (_, _, state) = open_counter(r#"{"count": 10, "wrong_schema": true}"#);
    let polled = poll(state, 2);
    assert_eq!(polled.status, sys::SLUICE_PLUGIN_ERROR);
    assert!(polled.message.unwrap().starts_with("counter: poll produced a batch whose schema differs"));
    let polled = poll(state, 0);
    assert_eq!((polled.status, polled.message.as_deref()), (sys::SLUICE_PLUGIN_ERROR, Some("counter: poll with max_rows 0")));
    unsafe { (vt.close.unwrap())(state) };
}

fn open_double(options: &str, input: &Schema) -> (i32, Option<String>, *mut c_void) {
    let vt = vtable::<sys::SluiceTransform>(sys::SLUICE_COMPONENT_TRANSFORM, "double");
    let options = CString::new(options).unwrap();
    let inst = instance();
    let input = host_schema(input);
    let mut state = ptr::null_mut();
    let mut out_schema = empty_schema();
    let (status, message) = call(|e| unsafe { (vt.open.unwrap())(options.as_ptr(), &inst.info, &input, &mut state, &mut out_schema, e) });
    release_schema(input);
    if status == sys::SLUICE_PLUGIN_OK {
        release_schema(out_schema);
    }
    (status, message, state)
}

#[test]
fn transform_process_next_output_errors_and_panics() {
    let vt = vtable::<sys::SluiceTransform>(sys::SLUICE_COMPONENT_TRANSFORM, "double");
    let schema = Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, true), Field::new("x", DataType::Int64, false)]));
    let (status, message, _) = open_double(r#"{"column": "y"}"#, &schema);
    assert_eq!((status, message.as_deref()), (sys::SLUICE_PLUGIN_INVALID_OPTIONS, Some("option 'column': no column 'y'")));

    let (status, _, state) = open_double(r#"{"column": "x"}"#, &schema);
    assert_eq!(status, sys::SLUICE_PLUGIN_OK);
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![Arc::new(StringArray::from(vec![Some("a"), None, Some("c"), Some("d")])), Arc::new(Int64Array::from(vec![1, 2, 3, 4]))],
    )
    .unwrap();
    // A slice: the C arrays carry offsets.
    let mut input = host_batch(&batch.slice(1, 3));
    ok(|e| unsafe { (vt.process.unwrap())(state, &mut input, e) });
    assert!(input.release.is_none(), "the batch was moved in");

    let mut outputs = Vec::new();
    loop {
        let mut has = -1;
        let mut out = empty_array();
        ok(|e| unsafe { (vt.next_output.unwrap())(state, &mut has, &mut out, e) });
        if has == 0 {
            break;
        }
        outputs.push(take_batch(out, &schema));
    }
    assert_eq!(outputs.len(), 1, "the empty batch is dropped");
    assert_eq!(int_column(&outputs[0], 1), vec![4, 6, 8]);
    assert_eq!(outputs[0].column(0).as_string::<i32>().iter().collect::<Vec<_>>(), vec![None, Some("c"), Some("d")]);
    ok(|e| unsafe { (vt.barrier.unwrap())(state, 7, e) });

    let bad = RecordBatch::try_new(schema.clone(), vec![Arc::new(StringArray::from(vec!["a"])), Arc::new(Int64Array::from(vec![13]))]).unwrap();
    let mut input = host_batch(&bad);
    let (status, message) = call(|e| unsafe { (vt.process.unwrap())(state, &mut input, e) });
    assert_eq!((status, message.as_deref()), (sys::SLUICE_PLUGIN_BAD_DATA, Some("double: 13 is unlucky")));
    assert!(input.release.is_none());

    let beast = RecordBatch::try_new(schema.clone(), vec![Arc::new(StringArray::from(vec!["a"])), Arc::new(Int64Array::from(vec![666]))]).unwrap();
    let mut input = host_batch(&beast);
    let (status, message) = call(|e| unsafe { (vt.process.unwrap())(state, &mut input, e) });
    assert_eq!((status, message.as_deref()), (sys::SLUICE_PLUGIN_PANIC, Some("double: panicked in process: double: the number of the beast")));
    unsafe { (vt.close.unwrap())(state) };
}

#[test]
fn transform_rejects_invalid_input() {
    let vt = vtable::<sys::SluiceTransform>(sys::SLUICE_COMPONENT_TRANSFORM, "double");
    let schema = Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, true), Field::new("x", DataType::Int64, false)]));
    let (_, _, state) = open_double(r#"{"column": "x"}"#, &schema);

    // Invalid UTF-8 in a Utf8 column: caught by the full validation.
    let offsets = Buffer::from_slice_ref([0i32, 2]);
    let values = Buffer::from(&b"\xff\xfe"[..]);
    let data = unsafe { ArrayData::builder(DataType::Utf8).len(1).add_buffer(offsets).add_buffer(values).build_unchecked() };
    let bad = RecordBatch::try_new(schema.clone(), vec![make_array(data), Arc::new(Int64Array::from(vec![1]))]).unwrap();
    let mut input = host_batch(&bad);
    let (status, message) = call(|e| unsafe { (vt.process.unwrap())(state, &mut input, e) });
    assert_eq!(status, sys::SLUICE_PLUGIN_ERROR);
    assert!(message.as_deref().unwrap().starts_with("invalid batch from the host:"), "{message:?}");
    assert!(input.release.is_none(), "released even when invalid");

    // A struct array with one child where the schema has two.
    let one = RecordBatch::try_new(Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, false)])), vec![Arc::new(Int64Array::from(vec![1]))])
        .unwrap();
    let mut input = host_batch(&one);
    let (status, message) = call(|e| unsafe { (vt.process.unwrap())(state, &mut input, e) });
    assert_eq!(status, sys::SLUICE_PLUGIN_ERROR);
    assert!(message.as_deref().unwrap().contains("1 children, expected 2"), "{message:?}");

    // NULL and released batches.
    let (status, _) = call(|e| unsafe { (vt.process.unwrap())(state, ptr::null_mut(), e) });
    assert_eq!(status, sys::SLUICE_PLUGIN_ERROR);
    let mut released = empty_array();
    let (status, message) = call(|e| unsafe { (vt.process.unwrap())(state, &mut released, e) });
    assert_eq!((status, message.as_deref()), (sys::SLUICE_PLUGIN_ERROR, Some("the host passed a released batch")));
    unsafe { (vt.close.unwrap())(state) };
}

#[test]
fn sink_open_start_write_flush_commit() {
    let vt = vtable::<sys::SluiceSink>(sys::SLUICE_COMPONENT_SINK, "collect");
    let schema = counter_schema();
    let ffi_schema = host_schema(&schema);
    let options = CString::new("{}").unwrap();
    let inst = instance();
    let mut state = ptr::null_mut();
    ok(|e| unsafe { (vt.open.unwrap())(options.as_ptr(), &inst.info, &ffi_schema, &mut state, e) });
    release_schema(ffi_schema);
    ok(|e| unsafe { (vt.start.unwrap())(state, e) });
    let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from(vec![100, 101, 102]))]).unwrap();
    let mut input = host_batch(&batch.slice(1, 2));
    ok(|e| unsafe { (vt.write.unwrap())(state, &mut input, e) });
    ok(|e| unsafe { (vt.flush.unwrap())(state, 1, e) });
    ok(|e| unsafe { (vt.commit.unwrap())(state, 1, e) });
    unsafe { (vt.close.unwrap())(state) };
    assert_eq!(*COLLECTED.lock().unwrap(), vec![101, 102]);

    // Open's own error.
    let two = host_schema(&Schema::new(vec![Field::new("a", DataType::Int64, false), Field::new("b", DataType::Int64, false)]));
    let (status, message) = call(|e| unsafe { (vt.open.unwrap())(options.as_ptr(), &inst.info, &two, &mut state, e) });
    assert_eq!((status, message.as_deref()), (sys::SLUICE_PLUGIN_INVALID_OPTIONS, Some("collect takes one column")));
    assert!(state.is_null());
    release_schema(two);
}

/// Calls a UDF with host-made arguments; returns the status, message and result.
fn invoke(name: &str, args: &[ArrayRef], n_rows: i64, return_type: DataType) -> (i32, Option<String>, Option<ArrayRef>) {
    let vt = vtable::<sys::SluiceScalarUdf>(sys::SLUICE_COMPONENT_SCALAR_UDF, name);
    let mut exported: Vec<(FFI_ArrowArray, FFI_ArrowSchema)> = args.iter().map(|a| arrow::ffi::to_ffi(&a.to_data()).unwrap()).collect();
    let mut pointers: Vec<*mut sys::ArrowArray> = exported.iter_mut().map(|(a, _)| (a as *mut FFI_ArrowArray).cast()).collect();
    let mut out = empty_array();
    let (status, message) = call(|e| unsafe { (vt.invoke.unwrap())(vt.state, pointers.as_mut_ptr(), n_rows, &mut out, e) });
    // The arguments were borrowed: still the host's, still alive.
    for (a, _) in &exported {
        assert!(!a.is_released());
    }
    let result = (status == sys::SLUICE_PLUGIN_OK).then(|| {
        let ffi: FFI_ArrowArray = unsafe { std::mem::transmute(out) };
        let data = unsafe { from_ffi_and_data_type(ffi, return_type) }.unwrap();
        data.validate_full().unwrap();
        make_array(data)
    });
    // Drop the host's arrays before the result is read: the result must not point into them.
    drop(exported);
    (status, message, result)
}

#[test]
fn udf_invoke_with_offsets_and_nulls() {
    let input: ArrayRef = Arc::new(Int64Array::from(vec![Some(1), None, Some(3), Some(4)]));
    let (status, _, result) = invoke("add_one", &[input.slice(1, 3)], 3, DataType::Int64);
    assert_eq!(status, sys::SLUICE_PLUGIN_OK);
    let result = result.unwrap();
    assert_eq!(result.as_primitive::<Int64Type>().iter().collect::<Vec<_>>(), vec![None, Some(4), Some(5)]);

    let (status, message, _) = invoke("add_one", std::slice::from_ref(&input), 3, DataType::Int64);
    assert_eq!((status, message.as_deref()), (sys::SLUICE_PLUGIN_ERROR, Some("add_one: argument 1 has 4 rows, expected 3")));
}

#[test]
fn udf_result_sharing_the_arguments_is_copied() {
    let input: ArrayRef = Arc::new(StringArray::from(vec![Some("x"), Some("hello"), None, Some("world")]));
    let (status, _, result) = invoke("identity", &[input.slice(1, 3)], 3, DataType::Utf8);
    assert_eq!(status, sys::SLUICE_PLUGIN_OK);
    let result = result.unwrap();
    // A copy: none of the host's buffers.
    let (copy, original) = (result.as_string::<i32>(), input.as_string::<i32>());
    assert_ne!(copy.values().as_ptr(), original.values().as_ptr());
    assert_ne!(copy.offsets().inner().inner().as_ptr(), original.offsets().inner().inner().as_ptr());
    let strings: Vec<Option<String>> = copy.iter().map(|s| s.map(str::to_owned)).collect();
    assert_eq!(strings, vec![Some("hello".to_owned()), None, Some("world".to_owned())]);
}

#[test]
fn udf_keeping_its_arguments_is_an_error() {
    let input: ArrayRef = Arc::new(Int64Array::from(vec![1, 2]));
    let (status, message, _) = invoke("keeper", &[input], 2, DataType::Int64);
    assert_eq!((status, message.as_deref()), (sys::SLUICE_PLUGIN_ERROR, Some("keeper: the UDF kept its borrowed argument arrays beyond invoke")));
}

#[test]
fn preprocessor_rewrite() {
    let vt = vtable::<sys::SluicePreprocessor>(sys::SLUICE_COMPONENT_PREPROCESSOR, "upper");
    let options = CString::new(r#"{"suffix": "!"}"#).unwrap();
    let path = CString::new("/p.yaml").unwrap();
    let yaml = CString::new("name: x").unwrap();
    let mut out: *mut c_char = ptr::null_mut();
    ok(|e| unsafe { (vt.rewrite.unwrap())(options.as_ptr(), path.as_ptr(), yaml.as_ptr(), &mut out, e) });
    assert_eq!(text(out).as_deref(), Some("NAME: X!"));
    unsafe { (plugin().free_string.unwrap())(out) };

    let yaml = CString::new("fail: yes").unwrap();
    let mut out: *mut c_char = ptr::null_mut();
    let (status, message) = call(|e| unsafe { (vt.rewrite.unwrap())(options.as_ptr(), path.as_ptr(), yaml.as_ptr(), &mut out, e) });
    assert_eq!((status, message.as_deref(), out.is_null()), (sys::SLUICE_PLUGIN_ERROR, Some("upper: /p.yaml says fail"), true));

    let options = CString::new(r#"{"prefix": "!"}"#).unwrap();
    let (status, message) = call(|e| unsafe { (vt.rewrite.unwrap())(options.as_ptr(), path.as_ptr(), yaml.as_ptr(), &mut out, e) });
    assert_eq!((status, message.as_deref()), (sys::SLUICE_PLUGIN_INVALID_OPTIONS, Some("unknown option 'prefix' (options: suffix)")));
}

#[test]
fn error_messages_with_nul_bytes_survive() {
    let status = unsafe { abi::guard("x", "y", ptr::null_mut(), || Err(Error::new("a\0b"))) };
    assert_eq!(status, sys::SLUICE_PLUGIN_ERROR);
    let (status, message) = call(|e| unsafe { abi::guard("x", "y", e, || Err(Error::bad_data("a\0b"))) });
    assert_eq!((status, message.as_deref()), (sys::SLUICE_PLUGIN_BAD_DATA, Some("a\u{fffd}b")));
    let (status, message) = call(|e| unsafe { abi::guard("x", "y", e, || std::panic::panic_any(42)) });
    assert_eq!((status, message.as_deref()), (sys::SLUICE_PLUGIN_PANIC, Some("x: panicked in y: (a panic payload that is not a string)")));
}

/// A host batch whose release callback counts its calls before releasing as arrow-rs does.
struct CountedRelease {
    release: unsafe extern "C" fn(*mut sys::ArrowArray),
    private_data: *mut c_void,
    count: Arc<AtomicUsize>,
}

unsafe extern "C" fn counted_release(array: *mut sys::ArrowArray) {
    let array = unsafe { &mut *array };
    let counted = unsafe { Box::from_raw(array.private_data.cast::<CountedRelease>()) };
    counted.count.fetch_add(1, Ordering::SeqCst);
    array.private_data = counted.private_data;
    array.release = Some(counted.release);
    unsafe { (counted.release)(array) };
}

/// `batch` exported as the host lends it, and the count of its releases.
fn counted_host_batch(batch: &RecordBatch) -> (sys::ArrowArray, Arc<AtomicUsize>) {
    let mut array = host_batch(batch);
    let count = Arc::new(AtomicUsize::new(0));
    let counted = CountedRelease { release: array.release.unwrap(), private_data: array.private_data, count: count.clone() };
    array.private_data = Box::into_raw(Box::new(counted)).cast();
    array.release = Some(counted_release);
    (array, count)
}

/// The address ranges of every buffer of `data`, its children and dictionary.
fn buffer_ranges(data: &ArrayData, out: &mut Vec<std::ops::Range<usize>>) {
    let mut add = |b: &Buffer| {
        if !b.is_empty() {
            out.push(b.as_ptr() as usize..b.as_ptr() as usize + b.len());
        }
    };
    data.buffers().iter().for_each(&mut add);
    if let Some(nulls) = data.nulls() {
        add(nulls.buffer());
    }
    data.child_data().iter().for_each(|child| buffer_ranges(child, out));
}

fn spy_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("n", DataType::Int64, false),
        Field::new("s", DataType::Utf8, true),
        Field::new("d", DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)), true),
        Field::new("v", DataType::Utf8View, true),
    ]))
}

fn spy_batch() -> RecordBatch {
    let dictionary: DictionaryArray<Int32Type> = vec![Some("red"), Some("green"), None, Some("red"), Some("blue")].into_iter().collect();
    let views =
        StringViewArray::from(vec![Some("short"), None, Some("a string longer than twelve bytes"), Some("x"), Some("another long string here")]);
    RecordBatch::try_new(
        spy_schema(),
        vec![
            Arc::new(Int64Array::from(vec![1, 2, 3, 4, 5])),
            Arc::new(StringArray::from(vec![Some("a"), None, Some("c"), Some("d"), Some("e")])),
            Arc::new(dictionary),
            Arc::new(views),
        ],
    )
    .unwrap()
}

fn open_spy(options: &str, observed: Option<&str>, schema: &Schema) -> (i32, Option<String>, *mut c_void) {
    let vt = vtable::<sys::SluiceSideOutput>(sys::SLUICE_COMPONENT_SIDE_OUTPUT, "spy");
    let options = CString::new(options).unwrap();
    let observed = observed.map(|o| CString::new(o).unwrap());
    let inst = instance();
    let schema = host_schema(schema);
    let mut state = ptr::null_mut();
    let observed_ptr = observed.as_ref().map_or(ptr::null(), |o| o.as_ptr());
    let (status, message) = call(|e| unsafe { (vt.open.unwrap())(options.as_ptr(), &inst.info, observed_ptr, &schema, &mut state, e) });
    release_schema(schema);
    if status != sys::SLUICE_PLUGIN_OK {
        assert!(state.is_null());
    }
    (status, message, state)
}

#[test]
fn side_output_observes_a_copy_of_the_borrowed_batch() {
    let vt = vtable::<sys::SluiceSideOutput>(sys::SLUICE_COMPONENT_SIDE_OUTPUT, "spy");
    let (status, _, state) = open_spy("{}", Some("orders"), &spy_schema());
    assert_eq!(status, sys::SLUICE_PLUGIN_OK);
    assert!(matches!(spied("orders").as_slice(), [Seen::Open(node, 4)] if node == "n"));

    // A slice: the C arrays carry offsets.
    let original = spy_batch().slice(1, 4);
    let (mut host, releases) = counted_host_batch(&original);
    let (host_release, host_private) = (host.release, host.private_data);
    ok(|e| unsafe { (vt.observe.unwrap())(state, &host, e) });
    // Borrowed: neither released nor changed by the plugin, and still valid for the host.
    assert_eq!(releases.load(Ordering::SeqCst), 0, "the plugin released the borrowed batch");
    assert_eq!((host.release.map(|f| f as usize), host.private_data), (host_release.map(|f| f as usize), host_private));
    let read_back = take_batch(std::mem::replace(&mut host, empty_array()), &spy_schema());
    assert_eq!(read_back, original);
    drop(read_back);
    assert_eq!(releases.load(Ordering::SeqCst), 1, "released exactly once, by the host");

    ok(|e| unsafe { (vt.barrier.unwrap())(state, 3, e) });
    let seen = spied("orders");
    let [Seen::Open(..), Seen::Batch(kept), Seen::Barrier(3)] = seen.as_slice() else { panic!("{seen:?}") };
    // The batch the plugin kept shares no memory with the host's (dictionary and views too)...
    let (mut host_ranges, mut kept_ranges) = (Vec::new(), Vec::new());
    buffer_ranges(&arrow::array::StructArray::from(original.clone()).into_data(), &mut host_ranges);
    buffer_ranges(&arrow::array::StructArray::from(kept.clone()).into_data(), &mut kept_ranges);
    for k in &kept_ranges {
        assert!(host_ranges.iter().all(|h| k.end <= h.start || h.end <= k.start), "kept buffer {k:?} overlaps the host's");
    }
    // ...and stays valid, equal to it, once the host's memory is gone.
    let expected = format!("{original:?}");
    drop(original);
    arrow::array::StructArray::from(kept.clone()).into_data().validate_full().unwrap();
    assert_eq!(format!("{kept:?}"), expected);
    assert_eq!(int_column(kept, 0), vec![2, 3, 4, 5]);
    assert_eq!(kept.column(3).as_string_view().value(1), "a string longer than twelve bytes");
    unsafe { (vt.close.unwrap())(state) };
}

#[test]
fn side_output_panics_errors_and_invalid_batches() {
    let vt = vtable::<sys::SluiceSideOutput>(sys::SLUICE_COMPONENT_SIDE_OUTPUT, "spy");
    let (status, message, _) = open_spy(r#"{"panic": 1}"#, Some("x"), &spy_schema());
    assert_eq!(
        (status, message.as_deref()),
        (sys::SLUICE_PLUGIN_INVALID_OPTIONS, Some("unknown option 'panic' (options: panic_on_rows, fail_barrier)"))
    );
    let (status, message, _) = open_spy("{}", Some(""), &spy_schema());
    assert_eq!((status, message.as_deref()), (sys::SLUICE_PLUGIN_INVALID_OPTIONS, Some("spy: no observed node")));
    let (status, message, _) = open_spy("{}", None, &spy_schema());
    assert_eq!((status, message.as_deref()), (sys::SLUICE_PLUGIN_ERROR, Some("the host passed a NULL observed node name")));

    // A panic in observe: SLUICE_PLUGIN_PANIC, and the borrowed batch is still the host's.
    let (status, _, state) = open_spy(r#"{"panic_on_rows": 2, "fail_barrier": true}"#, Some("panicky"), &spy_schema());
    assert_eq!(status, sys::SLUICE_PLUGIN_OK);
    let original = spy_batch().slice(0, 2);
    let (host, releases) = counted_host_batch(&original);
    let (status, message) = call(|e| unsafe { (vt.observe.unwrap())(state, &host, e) });
    assert_eq!((status, message.as_deref()), (sys::SLUICE_PLUGIN_PANIC, Some("spy: panicked in observe: spy: panic requested on 2 rows")));
    assert_eq!(releases.load(Ordering::SeqCst), 0);
    assert_eq!(take_batch(host, &spy_schema()), original);
    assert_eq!(releases.load(Ordering::SeqCst), 1);
    // After a panic the host calls nothing but close.
    unsafe { (vt.close.unwrap())(state) };
    assert!(spied("panicky").iter().all(|seen| matches!(seen, Seen::Open(..))));

    let (_, _, state) = open_spy(r#"{"fail_barrier": true}"#, Some("strict"), &spy_schema());
    let (status, message) = call(|e| unsafe { (vt.barrier.unwrap())(state, 5, e) });
    assert_eq!((status, message.as_deref()), (sys::SLUICE_PLUGIN_ERROR, Some("spy: barrier 5 failed")));

    // Invalid batches are errors and stay the host's.
    let one = RecordBatch::try_new(Arc::new(Schema::new(vec![Field::new("n", DataType::Int64, false)])), vec![Arc::new(Int64Array::from(vec![1]))])
        .unwrap();
    let (host, releases) = counted_host_batch(&one);
    let (status, message) = call(|e| unsafe { (vt.observe.unwrap())(state, &host, e) });
    assert_eq!(status, sys::SLUICE_PLUGIN_ERROR);
    assert!(message.as_deref().unwrap().contains("1 children, expected 4"), "{message:?}");
    assert_eq!(releases.load(Ordering::SeqCst), 0);
    release_array(host);
    assert_eq!(releases.load(Ordering::SeqCst), 1);

    let schema = counter_schema();
    let (_, _, utf8_state) =
        open_spy("{}", Some("utf8"), &Schema::new(vec![Field::new("s", DataType::Utf8, true), Field::new("x", DataType::Int64, false)]));
    let offsets = Buffer::from_slice_ref([0i32, 2]);
    let values = Buffer::from(&b"\xff\xfe"[..]);
    let data = unsafe { ArrayData::builder(DataType::Utf8).len(1).add_buffer(offsets).add_buffer(values).build_unchecked() };
    let bad_schema = Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, true), Field::new("x", DataType::Int64, false)]));
    let bad = RecordBatch::try_new(bad_schema, vec![make_array(data), Arc::new(Int64Array::from(vec![1]))]).unwrap();
    let (host, releases) = counted_host_batch(&bad);
    let (status, message) = call(|e| unsafe { (vt.observe.unwrap())(utf8_state, &host, e) });
    assert_eq!(status, sys::SLUICE_PLUGIN_ERROR);
    assert!(message.as_deref().unwrap().starts_with("invalid batch from the host:"), "{message:?}");
    assert_eq!(releases.load(Ordering::SeqCst), 0);
    release_array(host);
    assert!(spied("utf8").iter().all(|seen| !matches!(seen, Seen::Batch(_))));
    unsafe { (vt.close.unwrap())(utf8_state) };

    let (status, message) = call(|e| unsafe { (vt.observe.unwrap())(state, ptr::null(), e) });
    assert_eq!((status, message.as_deref()), (sys::SLUICE_PLUGIN_ERROR, Some("the host passed a NULL batch")));
    let released = empty_array();
    let (status, message) = call(|e| unsafe { (vt.observe.unwrap())(state, &released, e) });
    assert_eq!((status, message.as_deref()), (sys::SLUICE_PLUGIN_ERROR, Some("the host passed a released batch")));
    let (host, _) = counted_host_batch(&RecordBatch::new_empty(schema));
    let (status, message) = call(|e| unsafe { (vt.observe.unwrap())(ptr::null_mut(), &host, e) });
    assert_eq!((status, message.as_deref()), (sys::SLUICE_PLUGIN_ERROR, Some("the host passed a NULL state")));
    release_array(host);
    unsafe { (vt.close.unwrap())(state) };
    assert!(spied("strict").iter().all(|seen| matches!(seen, Seen::Open(..))));
}
