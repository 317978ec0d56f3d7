//! Dynamic tables against a model: random changes and lookups, and after each step the table must
//! answer what a `BTreeMap` of the same changes answers.
//!
//! Filled by changes: batches of upserts (`i`, `u`, `c`, `r`, NULL), deletes and truncates over
//! few keys (so a batch repeats keys, deletes what it inserted, truncates between), sized to
//! cross the merge and compaction thresholds; after each batch the snapshot, the row count and
//! `contains` of random keys must be the model's. A batch that must be refused (a NULL key)
//! leaves the table as it was.
//!
//! Lookup mode: a backend map that changes, each change followed by a `forget` of its keys (as
//! the postgres backend's NOTIFY does) or of everything; random lookups (repeated and NULL keys,
//! keys given as text) must return exactly the backend's current rows of those keys, through
//! caching, eviction by `max_rows` or `max_bytes` and forgetting.
//!
//! `SLUICE_FUZZ_BATCHES` (steps are a tenth of it) and `SLUICE_FUZZ_SEED` as in `codec_fuzz`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use arrow::array::{Array, ArrayRef, AsArray, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Int64Type, Schema};

use crate::codec_fuzz::{fuzz_batches, fuzz_seed, Rng};
use crate::dynamic_tables::{DynamicTable, OP_COLUMN};

type Model = BTreeMap<(i64, String), String>;

/// A table keyed by `id` alone or by (`id`, `region`), with a `name`.
fn table(two_column_key: bool, max_rows: Option<u64>, max_bytes: Option<u64>) -> DynamicTable {
    let key = if two_column_key { serde_json::json!(["id", "region"]) } else { serde_json::json!(["id"]) };
    DynamicTable::new(
        serde_json::from_value(serde_json::json!({
            "name": "model",
            "columns": [
                {"name": "id", "type": "Int64"},
                {"name": "region", "type": "Utf8"},
                {"name": "name", "type": "Utf8"}
            ],
            "key": key,
            "max_rows": max_rows,
            "max_bytes": max_bytes,
        }))
        .unwrap(),
    )
    .unwrap()
}

fn steps() -> usize {
    (fuzz_batches() / 10).max(30)
}

/// A row's key in the model: the region only counts when it is part of the key.
fn model_key(two_column_key: bool, id: i64, region: &str) -> (i64, String) {
    (id, if two_column_key { region.to_string() } else { String::new() })
}

/// Every row of a batch of the table's columns, as the model holds them.
fn as_model(batch: &RecordBatch, two_column_key: bool) -> Model {
    let ids = batch.column(0).as_primitive::<Int64Type>();
    let regions = batch.column(1).as_string::<i32>();
    let names = batch.column(2).as_string::<i32>();
    let mut rows = Model::new();
    for i in 0..batch.num_rows() {
        let region = regions.value(i);
        let name = if names.is_null(i) { "NULL".to_string() } else { names.value(i).to_string() };
        let value = if two_column_key { name } else { format!("{region}/{name}") };
        assert!(rows.insert(model_key(two_column_key, ids.value(i), region), value).is_none(), "a key came twice in {batch:?}");
    }
    rows
}

#[test]
fn a_table_filled_by_changes_holds_what_a_map_of_the_same_changes_holds() {
    let seed = fuzz_seed();
    for two_column_key in [false, true] {
        let mut rng = Rng::new(seed ^ 0xD7A8_1E00 ^ u64::from(two_column_key));
        let t = table(two_column_key, None, None);
        let mut model = Model::new();
        let mut applied = 0u64;
        for step in 0..steps() {
            let domain = [8, 300, 3000][rng.below(3)];
            let rows = [1, 5, 200, 2500][rng.below(4)];
            let (mut ids, mut regions, mut names, mut ops) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            let mut next = model.clone();
            let mut refused = false;
            for r in 0..rows {
                let id = rng.below(domain) as i64 - 2;
                let region = ["eu", "us", ""][rng.below(3)];
                let name = (!rng.percent(10)).then(|| format!("n{step}.{r}"));
                let op = match rng.below(100) {
                    0 => Some("t"),
                    1..=24 => Some("d"),
                    25..=29 => None,
                    n => Some(["i", "u", "c", "r"][n % 4]),
                };
                let null_key = rng.percent(1) && op != Some("t");
                refused |= null_key;
                let key = model_key(two_column_key, id, region);
                match op {
                    Some("t") => next.clear(),
                    Some("d") => {
                        next.remove(&key);
                    }
                    _ => {
                        let name = name.clone().unwrap_or_else(|| "NULL".into());
                        next.insert(key, if two_column_key { name } else { format!("{region}/{name}") });
                    }
                }
                ids.push((!null_key).then_some(id));
                regions.push(Some(region));
                names.push(name);
                ops.push(op);
            }
            let batch = RecordBatch::try_new(
                Arc::new(Schema::new(vec![
                    Field::new("id", DataType::Int64, true),
                    Field::new("region", DataType::Utf8, true),
                    Field::new("name", DataType::Utf8, true),
                    Field::new(OP_COLUMN, DataType::Utf8, true),
                ])),
                vec![
                    Arc::new(Int64Array::from(ids)) as ArrayRef,
                    Arc::new(StringArray::from(regions)),
                    Arc::new(StringArray::from(names)),
                    Arc::new(StringArray::from(ops)),
                ],
            )
            .unwrap();
            match t.apply(&batch) {
                Ok(()) => {
                    assert!(!refused, "seed {seed}, step {step}: a batch with a NULL key was applied");
                    model = next;
                    applied += 1;
                }
                Err(e) => assert!(refused, "seed {seed}, step {step}: {e}"),
            }
            let snapshot = t.snapshot().unwrap();
            assert_eq!(as_model(&snapshot, two_column_key), model, "seed {seed}, step {step}, two-column key {two_column_key}");
            assert_eq!(t.stats().rows, model.len() as u64, "seed {seed}, step {step}");
            assert_eq!(t.stats().version, applied, "seed {seed}, step {step}: one version per applied batch");
            if !two_column_key {
                let probes: Vec<Option<i64>> = (0..20).map(|_| (!rng.percent(10)).then(|| rng.below(domain + 4) as i64 - 4)).collect();
                let found = t.contains(&(Arc::new(Int64Array::from(probes.clone())) as ArrayRef)).unwrap();
                for (i, probe) in probes.iter().enumerate() {
                    let expected = probe.map(|id| model.contains_key(&(id, String::new())));
                    assert_eq!(found.is_valid(i).then(|| found.value(i)), expected, "seed {seed}, step {step}: contains({probe:?})");
                }
            }
        }
    }
}

/// The rows of `keys` in `backend`, as the model holds them.
fn backend_rows(backend: &BTreeMap<i64, String>, keys: &[Option<i64>]) -> Model {
    keys.iter().flatten().filter_map(|id| backend.get(id).map(|name| ((*id, String::new()), format!("r/{name}")))).collect()
}

#[test]
fn a_lookup_table_answers_what_its_backend_holds_through_caching_eviction_and_forgetting() {
    let seed = fuzz_seed();
    for (max_rows, max_bytes) in [(None, None), (Some(40), None), (None, Some(6_000)), (Some(5), Some(20_000))] {
        let mut rng = Rng::new(seed ^ 0x0010_0C0B ^ max_rows.unwrap_or(0) ^ max_bytes.unwrap_or(0));
        let backend = Arc::new(Mutex::new(BTreeMap::<i64, String>::new()));
        let loads = Arc::new(AtomicU64::new(0));
        let t = table(false, max_rows, max_bytes);
        {
            let (backend, loads) = (Arc::clone(&backend), Arc::clone(&loads));
            t.set_loader(Box::new(move |asked: RecordBatch| {
                loads.fetch_add(1, Ordering::Relaxed);
                let backend = backend.lock().unwrap();
                let ids = asked.column(0).as_primitive::<Int64Type>();
                let found: Vec<(i64, &String)> = ids.iter().flatten().filter_map(|id| backend.get(&id).map(|n| (id, n))).collect();
                Ok(Some(
                    RecordBatch::try_new(
                        Arc::new(Schema::new(vec![
                            Field::new("id", DataType::Int64, false),
                            Field::new("region", DataType::Utf8, false),
                            Field::new("name", DataType::Utf8, false),
                        ])),
                        vec![
                            Arc::new(Int64Array::from(found.iter().map(|(id, _)| *id).collect::<Vec<_>>())) as ArrayRef,
                            Arc::new(StringArray::from(vec!["r"; found.len()])),
                            Arc::new(StringArray::from(found.iter().map(|(_, n)| n.as_str()).collect::<Vec<_>>())),
                        ],
                    )
                    .unwrap(),
                ))
            }))
            .unwrap();
        }
        let domain = 120;
        for step in 0..steps() * 4 {
            match rng.below(10) {
                0..=2 => {
                    // The backend changes; its keys are forgotten, one way or another.
                    let changed: Vec<i64> = (0..1 + rng.below(6)).map(|_| rng.below(domain) as i64).collect();
                    {
                        let mut backend = backend.lock().unwrap();
                        for id in &changed {
                            if rng.percent(30) {
                                backend.remove(id);
                            } else {
                                backend.insert(*id, format!("v{step}"));
                            }
                        }
                    }
                    match rng.below(10) {
                        0 => t.forget(None).unwrap(),
                        1 => {
                            let text: Vec<String> = changed.iter().map(i64::to_string).collect();
                            t.forget(Some(&[Arc::new(StringArray::from(text)) as ArrayRef])).unwrap()
                        }
                        _ => t.forget(Some(&[Arc::new(Int64Array::from(changed)) as ArrayRef])).unwrap(),
                    }
                }
                3 => {
                    let probes: Vec<Option<i64>> = (0..10).map(|_| (!rng.percent(10)).then(|| rng.below(domain) as i64)).collect();
                    let found = t.contains(&(Arc::new(Int64Array::from(probes.clone())) as ArrayRef)).unwrap();
                    let backend = backend.lock().unwrap().clone();
                    for (i, probe) in probes.iter().enumerate() {
                        let expected = probe.map(|id| backend.contains_key(&id));
                        assert_eq!(found.is_valid(i).then(|| found.value(i)), expected, "seed {seed}, step {step}: contains({probe:?})");
                    }
                }
                _ => {
                    let keys: Vec<Option<i64>> = (0..1 + rng.below(30)).map(|_| (!rng.percent(5)).then(|| rng.below(domain) as i64)).collect();
                    let column: ArrayRef = if rng.percent(20) {
                        Arc::new(StringArray::from(keys.iter().map(|k| k.map(|id| id.to_string())).collect::<Vec<_>>()))
                    } else {
                        Arc::new(Int64Array::from(keys.clone()))
                    };
                    let found = t.lookup(&[column]).unwrap();
                    let expected = backend_rows(&backend.lock().unwrap(), &keys);
                    assert_eq!(as_model(&found, false), expected, "seed {seed}, step {step}, limits {max_rows:?} {max_bytes:?}: lookup {keys:?}");
                }
            }
            let stats = t.stats();
            if let Some(max) = max_rows {
                assert!(stats.rows <= max, "seed {seed}, step {step}: {} rows held, max_rows {max}", stats.rows);
            }
        }
        assert!(loads.load(Ordering::Relaxed) > 0);
        if max_rows.is_none() && max_bytes.is_none() {
            assert!(t.stats().hits > 0, "the cache was never used");
        }
    }
}
