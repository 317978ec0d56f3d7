//! The native heap after a long run through the C ABI ends where it started.
//!
//! `sluice_live_handles` and the JVM's leak checks count handles and Arrow Java memory; neither
//! sees a Rust allocation that outlives its handle, or a plan that grows while it runs. With the
//! counting allocator (`--features alloc-stats`) this test drives the core the way the engine
//! does — Java-made batches moved in, records decoded, SQL transforms (one with a side-table
//! lookup join) pushed and drained, results encoded and exported — for a million cycles, and
//! checks that:
//! - once every handle is freed, live bytes and live allocations equal their values before
//!   (exactly: the warm-up run first fills every one-off cache);
//! - while the transforms live, the heap does not grow from the first half of the run to the
//!   second (a leak held by a live plan would be freed with it and escape the first check);
//! - a single batch handle left unfreed shows up, so the instrument is not blind.
//!
//! `harness = false` (Cargo.toml): the allocator counts every thread, so nothing may run
//! beside the measured code. `SLUICE_LEAK_CYCLES` overrides the cycle count; the growth check
//! compares peaks of periodic sawtooths (join renewals every 4096 batches, lookup failures
//! every 17 500 cycles), so it needs runs of 100 000 cycles or more.

use std::ffi::{c_char, CStr, CString};
use std::sync::Arc;
use std::time::Instant;

use arrow::array::{Array, Int32Array, Int64Array, RecordBatch, StringArray, StructArray};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow::ffi::{from_ffi, to_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use sluice_core::abi::*;
use sluice_core::alloc_stats::{sluice_debug_live_bytes, stats};

/// Records per pushed batch: small, so the run is dominated by per-call work, where leaks hide.
const ROWS: i64 = 4;
/// Keys of the side table; stream ids are looked up by `id % 128`, so some rows find none.
const SIDE_KEYS: i64 = 100;
/// Every this many cycles one record is malformed (it becomes an error row).
const BAD_RECORD_EVERY: u64 = 1000;

fn main() {
    // The core's panic hook keeps panics quiet (the JVM owns stderr) unless this is set; this
    // test's own assertion messages must print.
    std::env::set_var("SLUICE_NATIVE_BACKTRACE", "1");
    let cycles: u64 = std::env::var("SLUICE_LEAK_CYCLES").ok().map_or(1_000_000, |v| v.parse().expect("SLUICE_LEAK_CYCLES"));
    let side = side_table_file();

    // Warm-up: the same work, long enough for the lookup join to renew its node (every 4096
    // executions), so lazy statics, registries and thread-locals exist before the baseline.
    run(&side, 10_000);
    let handles_before = live_handles();
    let before = stats();

    let started = Instant::now();
    let report = run(&side, cycles);
    let elapsed = started.elapsed();
    let after = stats();

    println!(
        "native_memory: {cycles} cycles in {:.1} s; {} allocations ({:.1} per cycle), {:.1} MB allocated; \
         live bytes {} -> {}, live allocations {} -> {}; plateau {} B (first half) / {} B (second half) above the baseline",
        elapsed.as_secs_f64(),
        after.total_allocations - before.total_allocations,
        (after.total_allocations - before.total_allocations) as f64 / cycles as f64,
        (after.total_bytes - before.total_bytes) as f64 / 1e6,
        before.live_bytes,
        after.live_bytes,
        before.live_allocations,
        after.live_allocations,
        report.first_half_peak - before.live_bytes,
        report.second_half_peak - before.live_bytes,
    );

    assert_eq!(report.rows_out, report.rows_expected, "every row came out of the transforms (the loop did the work)");
    assert!(after.total_allocations - before.total_allocations > cycles * 10, "the loop allocated (the counter is installed)");
    assert_eq!(live_handles(), handles_before, "every handle freed");
    assert_eq!(
        (after.live_bytes, after.live_allocations),
        (before.live_bytes, before.live_allocations),
        "native heap (live bytes, live allocations) after {cycles} cycles and freeing everything: {} bytes in {} allocations leaked",
        after.live_bytes - before.live_bytes,
        after.live_allocations - before.live_allocations,
    );
    assert!(
        report.second_half_peak <= report.first_half_peak,
        "the heap grew while the transforms ran: peak {} B above the baseline in the first half, {} B in the second",
        report.first_half_peak - before.live_bytes,
        report.second_half_peak - before.live_bytes,
    );

    the_instrument_sees_one_leaked_batch();
    let _ = std::fs::remove_file(&side);
    println!("native_memory: ok");
}

struct Report {
    rows_out: i64,
    rows_expected: i64,
    /// Highest live bytes seen from a quarter to half of the run, and in its second half.
    first_half_peak: i64,
    second_half_peak: i64,
}

/// One cycle: a Java-made batch into a filtering transform (moved in, or imported first on
/// odd cycles), its output encoded as CSV; records (JSON on even cycles, CSV on odd ones)
/// decoded with Kafka-style metadata columns and pushed into a side-table lookup join, its
/// output encoded as JSON lines with offsets and keys. Every output batch is also exported to
/// the "JVM" and released there. Both transforms fail a batch now and then (division by zero),
/// which restarts their streams: the filter every ~190 cycles, the lookup every 17 500, so its
/// join node is also renewed (every 4096 batches) in between. One record in 1000 is malformed.
fn run(side: &std::path::Path, cycles: u64) -> Report {
    unsafe {
        let filter = create_transform(
            "SELECT id, upper(name) AS name, price * 2 AS doubled, 1000 / (id % 500) AS ratio FROM s WHERE id % 3 <> 1",
            &stream_schema(),
            None,
        );
        let lookup = create_transform(
            "SELECT s.id, t.value, s.price, s._offset, 1000 / (s.id % 70000) AS ratio FROM s LEFT JOIN side t ON s.id % 128 = t.key",
            &decoded_schema(),
            Some(side),
        );
        let json_decoder = create_decoder(r#"{"format": "json"}"#, &stream_schema());
        let csv_decoder = create_decoder(r#"{"format": "csv"}"#, &stream_schema());
        let csv = CString::new(r#"{"format": "csv", "header": true}"#).unwrap();
        let json = CString::new(r#"{"format": "json", "record_offsets": true, "key_columns": ["id"]}"#).unwrap();

        let mut report = Report { rows_out: 0, rows_expected: 0, first_half_peak: 0, second_half_peak: 0 };
        let mut slab = Vec::new();
        let mut offsets = Vec::new();
        for cycle in 0..cycles {
            let first = cycle as i64 * ROWS;
            let ids: Vec<i64> = (first..first + ROWS).collect();

            // A batch made by Java (here by arrow-rs), crossing as C structs.
            let (array, schema) = to_ffi(&StructArray::from(java_batch(&ids)).to_data()).unwrap();
            let status = if cycle % 2 == 0 {
                drop(schema);
                let mut array = array;
                sluice_transform_push(filter, 0, &mut array)
            } else {
                let batch = import(array, schema);
                let status = sluice_transform_push_batch(filter, 0, batch);
                ok(sluice_batch_free(batch));
                status
            };
            let kept: Vec<i64> = ids.iter().copied().filter(|id| id % 3 != 1).collect();
            if kept.iter().any(|id| id % 500 == 0) {
                assert_eq!(status, SLUICE_ERR_EXECUTION, "cycle {cycle}: division by zero fails the batch");
            } else {
                ok(status);
                report.rows_expected += kept.len() as i64;
            }
            report.rows_out += drain(filter, &csv);

            // Records from Kafka, one malformed now and then, with partition and offset.
            let malformed = cycle % BAD_RECORD_EVERY == 0;
            let as_json = cycle % 2 == 0;
            slab.clear();
            offsets.clear();
            offsets.push(0i64);
            for (i, id) in ids.iter().enumerate() {
                let record = match (as_json, malformed && i == 1) {
                    (true, false) => format!(r#"{{"id":{id},"name":"n{id}","price":{}}}"#, id % 1000),
                    (true, true) => r#"{"id": "not a number"}"#.to_string(),
                    (false, false) => format!("{id},n{id},{}\n", id % 1000),
                    (false, true) => "not a number,x,1\n".to_string(),
                };
                slab.extend_from_slice(record.as_bytes());
                offsets.push(slab.len() as i64);
            }
            let (mut extra_array, mut extra_schema) = kafka_metadata(first);
            let (mut batch, mut errors) = (std::ptr::null_mut(), std::ptr::null_mut());
            ok(sluice_decoder_decode(
                if as_json { json_decoder } else { csv_decoder },
                slab.as_ptr(),
                offsets.as_ptr(),
                ROWS as usize,
                &mut extra_array,
                &mut extra_schema,
                &mut batch,
                &mut errors,
            ));
            assert_eq!(rows(errors), malformed as i64, "cycle {cycle}: error rows");
            ok(sluice_batch_free(errors));
            let status = sluice_transform_push_batch(lookup, 0, batch);
            ok(sluice_batch_free(batch));
            let good: Vec<i64> = ids.iter().enumerate().filter(|(i, _)| !(malformed && *i == 1)).map(|(_, id)| *id).collect();
            if good.iter().any(|id| id % 70000 == 0) {
                assert_eq!(status, SLUICE_ERR_EXECUTION, "cycle {cycle}: division by zero fails the batch");
            } else {
                ok(status);
                report.rows_expected += good.len() as i64;
            }
            report.rows_out += drain(lookup, &json);

            let live = stats().live_bytes;
            if cycle >= cycles / 2 {
                report.second_half_peak = report.second_half_peak.max(live);
            } else if cycle >= cycles / 4 {
                report.first_half_peak = report.first_half_peak.max(live);
            }
        }
        ok(sluice_decoder_free(json_decoder));
        ok(sluice_decoder_free(csv_decoder));
        ok(sluice_transform_free(filter));
        ok(sluice_transform_free(lookup));
        // The thread's last error message stays allocated until the next failure replaces it:
        // end on the same failure every run, so it has the same size.
        assert_eq!(sluice_batch_num_rows(std::ptr::null(), &mut 0), SLUICE_ERR_INVALID_ARGUMENT);
        report
    }
}

/// Drains `transform`, encoding each output batch with `options` and exporting it to the JVM
/// side, where it is imported and released as Arrow Java would. Returns the rows drained.
unsafe fn drain(transform: *mut SluiceTransform, options: &CStr) -> i64 {
    let mut total = 0;
    loop {
        let mut batch = std::ptr::null_mut();
        ok(sluice_transform_drain(transform, &mut batch));
        if batch.is_null() {
            return total;
        }
        let n = rows(batch);
        total += n;

        let mut buffer = std::ptr::null_mut();
        ok(sluice_encode(batch, options.as_ptr(), &mut buffer));
        let (mut data, mut len) = (std::ptr::null(), 0usize);
        ok(sluice_buffer_data(buffer, &mut data, &mut len));
        assert!(len > 0 && !data.is_null());
        let (mut offsets, mut count) = (std::ptr::null(), 0usize);
        ok(sluice_buffer_offsets(buffer, &mut offsets, &mut count));
        let (mut keys, mut key_offsets, mut key_count) = (std::ptr::null(), std::ptr::null(), 0usize);
        ok(sluice_buffer_keys(buffer, &mut keys, &mut key_offsets, &mut key_count));
        ok(sluice_buffer_free(buffer));

        let (mut array, mut schema) = (FFI_ArrowArray::empty(), FFI_ArrowSchema::empty());
        ok(sluice_batch_export(batch, &mut array, &mut schema));
        let exported = from_ffi(array, &schema).unwrap();
        assert_eq!(exported.len() as i64, n);
        drop(exported);
        drop(schema);
        ok(sluice_batch_free(batch));
    }
}

/// The negative control: leaves one drained batch unfreed and checks the counter shows it,
/// then frees it and checks the heap is back at its baseline.
fn the_instrument_sees_one_leaked_batch() {
    unsafe {
        let before = stats();
        let filter = create_transform("SELECT id, name, price FROM s", &stream_schema(), None);
        let (mut array, schema) = to_ffi(&StructArray::from(java_batch(&(0..1000).collect::<Vec<_>>())).to_data()).unwrap();
        drop(schema);
        ok(sluice_transform_push(filter, 0, &mut array));
        let mut kept = std::ptr::null_mut();
        ok(sluice_transform_drain(filter, &mut kept));
        assert_eq!(rows(kept), 1000);
        ok(sluice_transform_free(filter));
        // The kept batch holds the input's buffers: 1000 ids of 8 bytes and more. Read through
        // the ABI export, as a host-side test would.
        let (mut live, mut allocations) = (0, 0);
        ok(sluice_debug_live_bytes(&mut live, &mut allocations));
        assert_eq!((live, allocations), (stats().live_bytes, stats().live_allocations));
        let leaked = live - before.live_bytes;
        assert!(leaked >= 8000, "one unfreed 1000-row batch should keep >= 8000 bytes live, the counter shows {leaked}");
        ok(sluice_batch_free(kept));
        let after = stats();
        assert_eq!((after.live_bytes, after.live_allocations), (before.live_bytes, before.live_allocations), "after freeing the kept batch");
    }
}

fn stream_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
        Field::new("price", DataType::Int64, true),
    ]))
}

/// The decoder's rows plus the Kafka metadata columns.
fn decoded_schema() -> SchemaRef {
    let mut fields: Vec<Field> = stream_schema().fields().iter().map(|f| f.as_ref().clone()).collect();
    fields.extend(metadata_schema().fields().iter().map(|f| f.as_ref().clone()));
    Arc::new(Schema::new(fields))
}

fn metadata_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![Field::new("_partition", DataType::Int32, false), Field::new("_offset", DataType::Int64, false)]))
}

fn java_batch(ids: &[i64]) -> RecordBatch {
    let names: Vec<String> = ids.iter().map(|i| format!("name-{i}")).collect();
    let prices: Vec<Option<i64>> = ids.iter().map(|i| (i % 7 != 0).then_some(i % 1000)).collect();
    RecordBatch::try_new(
        stream_schema(),
        vec![Arc::new(Int64Array::from(ids.to_vec())), Arc::new(StringArray::from(names)), Arc::new(Int64Array::from(prices))],
    )
    .unwrap()
}

fn kafka_metadata(first_offset: i64) -> (FFI_ArrowArray, FFI_ArrowSchema) {
    let batch = RecordBatch::try_new(
        metadata_schema(),
        vec![Arc::new(Int32Array::from(vec![3; ROWS as usize])), Arc::new(Int64Array::from_iter_values(first_offset..first_offset + ROWS))],
    )
    .unwrap();
    to_ffi(&StructArray::from(batch).to_data()).unwrap()
}

unsafe fn import(mut array: FFI_ArrowArray, mut schema: FFI_ArrowSchema) -> *mut SluiceBatch {
    let mut batch = std::ptr::null_mut();
    ok(sluice_batch_import(&mut array, &mut schema, &mut batch));
    batch
}

unsafe fn create_transform(sql: &str, input: &SchemaRef, side: Option<&std::path::Path>) -> *mut SluiceTransform {
    let tables = match side {
        Some(path) => serde_json::json!([{
            "name": "side",
            "file": {"path": path, "format": "csv", "header": false},
            "columns": [{"name": "key", "type": "Int64"}, {"name": "value", "type": "Utf8"}],
        }]),
        None => serde_json::json!([]),
    };
    let options = CString::new(serde_json::json!({"sql": sql, "inputs": ["s"], "tables": tables}).to_string()).unwrap();
    let mut schema = FFI_ArrowSchema::try_from(input.as_ref()).unwrap();
    let mut transform = std::ptr::null_mut();
    let inputs = SluiceTransformInputs { schemas: &mut schema, n_schemas: 1, functions: std::ptr::null() };
    ok(sluice_transform_create(options.as_ptr(), &inputs, &mut transform));
    transform
}

unsafe fn create_decoder(options: &str, schema: &SchemaRef) -> *mut SluiceDecoder {
    let options = CString::new(options).unwrap();
    let mut schema = FFI_ArrowSchema::try_from(schema.as_ref()).unwrap();
    let mut decoder = std::ptr::null_mut();
    ok(sluice_decoder_create(options.as_ptr(), &mut schema, &mut decoder));
    decoder
}

/// Rows of a batch handle; 0 for NULL.
unsafe fn rows(batch: *const SluiceBatch) -> i64 {
    if batch.is_null() {
        return 0;
    }
    let mut n = 0;
    ok(sluice_batch_num_rows(batch, &mut n));
    n
}

fn live_handles() -> i64 {
    let mut n = 0;
    unsafe { ok(sluice_live_handles(&mut n)) };
    n
}

fn ok(status: i32) {
    if status != SLUICE_OK {
        let mut message: *const c_char = std::ptr::null();
        unsafe { sluice_last_error(&mut message) };
        let text = unsafe { CStr::from_ptr(message) }.to_string_lossy();
        panic!("status {status}: {text}");
    }
}

/// A CSV side table `key,value` with keys 0..SIDE_KEYS.
fn side_table_file() -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("sluice-native-memory-side-{}.csv", std::process::id()));
    let lines: String = (0..SIDE_KEYS).map(|k| format!("{k},v{k}\n")).collect();
    std::fs::write(&path, lines).unwrap();
    path
}
