//! Lookup joins against DataFusion alone: random stream batches pushed one at a time through a
//! transform that joins a side table must give, all batches together, the rows the same SQL gives
//! over the whole stream at once in a plain DataFusion session (several partitions, its own
//! optimizer settings, no per-batch execution). The side table is a static CSV file (duplicate
//! and NULL keys), a dynamic table filled by changes, and a dynamic table in lookup mode that
//! loads the keys each batch needs; joins inner, left, on one or two columns, with filters,
//! semi and anti (`IN`, `NOT IN`, `EXISTS`, `NOT EXISTS`). Queries a kind of table cannot run
//! per batch are refused at planning, which is checked too.
//!
//! `SLUICE_FUZZ_BATCHES` (stream batches are a hundredth of it) and `SLUICE_FUZZ_SEED` as in
//! `codec_fuzz`.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Int64Type, Schema, SchemaRef};
use arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::datasource::MemTable;
use datafusion::prelude::{SessionConfig, SessionContext};

use crate::codec_fuzz::{fuzz_batches, fuzz_seed, Rng};
use crate::dynamic_tables::DynamicTable;
use crate::error::ErrorKind;
use crate::plugin_udf::Functions;
use crate::side_tables::SideTable;
use crate::transform::SqlTransform;

const QUERIES: &[&str] = &[
    "SELECT s.id, s.name, t.value FROM s JOIN side t ON s.id = t.key",
    "SELECT s.id, s.name, t.value FROM s LEFT JOIN side t ON s.id = t.key",
    "SELECT s.id, s.name, t.value, t.region FROM s JOIN side t ON s.id = t.key AND s.region = t.region",
    "SELECT s.id, s.name, t.value FROM s LEFT JOIN side t ON t.key = s.id AND t.region = s.region",
    "SELECT s.id, s.name, t.value FROM s LEFT JOIN side t ON s.id = t.key AND t.value <> 'v3'",
    "SELECT s.id, t.value FROM s JOIN side t ON s.id + 1 = t.key WHERE s.name IS NOT NULL",
    "SELECT id, name FROM s WHERE id IN (SELECT key FROM side)",
    "SELECT id, name FROM s WHERE id NOT IN (SELECT key FROM side)",
    "SELECT id, name FROM s WHERE EXISTS (SELECT 1 FROM side t WHERE t.key = s.id AND t.region = s.region)",
    "SELECT id, name FROM s WHERE NOT EXISTS (SELECT 1 FROM side t WHERE t.key = s.id)",
];

/// How the side table is held.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Side {
    /// A CSV file: keys repeat and may be NULL.
    File,
    /// A dynamic table keyed by (key, region), filled once by changes.
    Changes,
    /// A dynamic table keyed by (key, region) that loads the rows of the keys each batch needs.
    Lookup,
}

fn side_schema(nullable_key: bool) -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("key", DataType::Int64, nullable_key),
        Field::new("region", DataType::Utf8, nullable_key),
        Field::new("value", DataType::Utf8, true),
    ]))
}

fn stream_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("region", DataType::Utf8, true),
        Field::new("name", DataType::Utf8, true),
    ]))
}

/// The side table's rows: unique (key, region) with neither NULL for a dynamic table.
fn side_rows(rng: &mut Rng, side: Side) -> RecordBatch {
    let mut rows: BTreeMap<(Option<i64>, Option<&str>), Option<String>> = BTreeMap::new();
    let count = [0, 1, 8, 60][rng.below(4)];
    let mut file_rows = Vec::new();
    for i in 0..count {
        let key = if side == Side::File && rng.percent(5) { None } else { Some(rng.below(30) as i64) };
        let region = if side == Side::File && rng.percent(5) { None } else { Some(["eu", "us"][rng.below(2)]) };
        let value = (!rng.percent(10)).then(|| format!("v{}", i % 7));
        if side == Side::File {
            file_rows.push((key, region, value));
        } else {
            rows.insert((key, region), value);
        }
    }
    if side != Side::File {
        file_rows = rows.into_iter().map(|((k, r), v)| (k, r, v)).collect();
    }
    RecordBatch::try_new(
        side_schema(side == Side::File),
        vec![
            Arc::new(Int64Array::from(file_rows.iter().map(|r| r.0).collect::<Vec<_>>())) as ArrayRef,
            Arc::new(StringArray::from(file_rows.iter().map(|r| r.1).collect::<Vec<_>>())),
            Arc::new(StringArray::from(file_rows.iter().map(|r| r.2.clone()).collect::<Vec<_>>())),
        ],
    )
    .unwrap()
}

fn stream_batch(rng: &mut Rng) -> RecordBatch {
    let rows = [0, 1, 3, 40][rng.below(4)];
    let ids: Vec<Option<i64>> = (0..rows).map(|_| (!rng.percent(8)).then(|| rng.below(34) as i64 - 2)).collect();
    let regions: Vec<Option<&str>> = (0..rows).map(|_| (!rng.percent(8)).then(|| ["eu", "us", "ap"][rng.below(3)])).collect();
    let names: Vec<Option<String>> = (0..rows).map(|i| (!rng.percent(8)).then(|| format!("n{i}"))).collect();
    RecordBatch::try_new(
        stream_schema(),
        vec![Arc::new(Int64Array::from(ids)) as ArrayRef, Arc::new(StringArray::from(regions)), Arc::new(StringArray::from(names))],
    )
    .unwrap()
}

/// A CSV file of `rows` (an empty field is NULL, which is how arrow-csv reads one).
fn side_file(rows: &RecordBatch, case: usize) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("sluice-lookup-model-{}-{case}.csv", std::process::id()));
    let (keys, regions, values) = (rows.column(0).as_primitive::<Int64Type>(), rows.column(1).as_string::<i32>(), rows.column(2).as_string::<i32>());
    let text: String = (0..rows.num_rows())
        .map(|i| {
            let key = if keys.is_null(i) { String::new() } else { keys.value(i).to_string() };
            let region = if regions.is_null(i) { "" } else { regions.value(i) };
            let value = if values.is_null(i) { "" } else { values.value(i) };
            format!("{key},{region},{value}\n")
        })
        .collect();
    std::fs::write(&path, text).unwrap();
    path
}

/// A dynamic table keyed by (key, region) holding `rows`: filled by changes, or in lookup mode
/// (a cache of at most 7 keys) loading them from `rows`.
fn dynamic_table(rows: &RecordBatch, side: Side) -> Arc<DynamicTable> {
    let max_rows = (side == Side::Lookup).then_some(7);
    let table = Arc::new(
        DynamicTable::new(
            serde_json::from_value(serde_json::json!({
                "name": "side",
                "columns": [
                    {"name": "key", "type": "Int64"}, {"name": "region", "type": "Utf8"}, {"name": "value", "type": "Utf8"}
                ],
                "key": ["key", "region"],
                "max_rows": max_rows,
            }))
            .unwrap(),
        )
        .unwrap(),
    );
    if side == Side::Changes {
        table.apply(rows).unwrap();
        return table;
    }
    let backend = rows.clone();
    table
        .set_loader(Box::new(move |asked: RecordBatch| {
            let (keys, regions) = (asked.column(0).as_primitive::<Int64Type>(), asked.column(1).as_string::<i32>());
            let wanted: std::collections::HashSet<(i64, &str)> = (0..asked.num_rows()).map(|i| (keys.value(i), regions.value(i))).collect();
            let (held_keys, held_regions) = (backend.column(0).as_primitive::<Int64Type>(), backend.column(1).as_string::<i32>());
            let found: Vec<u32> =
                (0..backend.num_rows()).filter(|&i| wanted.contains(&(held_keys.value(i), held_regions.value(i)))).map(|i| i as u32).collect();
            Ok(Some(arrow::compute::take_record_batch(&backend, &arrow::array::UInt32Array::from(found)).unwrap()))
        }))
        .unwrap();
    table
}

/// Each row of `batches` as text, sorted: the rows as a multiset.
fn rows_as_text(batches: &[RecordBatch]) -> Vec<String> {
    let options = FormatOptions::default().with_null("NULL");
    let mut rows = Vec::new();
    for batch in batches {
        let formatters: Vec<ArrayFormatter> = batch.columns().iter().map(|c| ArrayFormatter::try_new(c.as_ref(), &options).unwrap()).collect();
        for row in 0..batch.num_rows() {
            rows.push(formatters.iter().map(|f| f.value(row).to_string()).collect::<Vec<_>>().join("|"));
        }
    }
    rows.sort();
    rows
}

/// The same SQL over all the stream at once, in a plain DataFusion session.
fn reference(sql: &str, stream: &[RecordBatch], side: &RecordBatch) -> Vec<String> {
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(3));
    ctx.register_table("s", Arc::new(MemTable::try_new(stream_schema(), vec![stream.to_vec()]).unwrap())).unwrap();
    ctx.register_table("side", Arc::new(MemTable::try_new(side.schema(), vec![vec![side.clone()]]).unwrap())).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let batches = runtime.block_on(async { ctx.sql(sql).await?.collect().await }).unwrap();
    rows_as_text(&batches)
}

#[test]
fn lookup_joins_batch_by_batch_give_what_one_query_over_the_whole_stream_gives() {
    let seed = fuzz_seed();
    let batches = (fuzz_batches() / 100).max(10);
    let mut rng = Rng::new(seed ^ 0x0001_0C4B_301E);
    let mut planned = BTreeMap::new();
    let mut case = 0;
    let mut compared = 0;
    for round in 0..3 {
        for side in [Side::File, Side::Changes, Side::Lookup] {
            for sql in QUERIES {
                case += 1;
                let rows = side_rows(&mut rng, side);
                let stream: SchemaRef = stream_schema();
                let mut functions = Functions::default();
                let mut side_tables = Vec::new();
                let path = (side == Side::File).then(|| side_file(&rows, case));
                if let Some(path) = &path {
                    side_tables.push(
                        serde_json::from_value::<SideTable>(serde_json::json!({
                            "name": "side",
                            "file": {"path": path, "format": "csv", "header": false},
                            "columns": [
                                {"name": "key", "type": "Int64"}, {"name": "region", "type": "Utf8"}, {"name": "value", "type": "Utf8"}
                            ],
                        }))
                        .unwrap(),
                    );
                } else {
                    functions.add_table(dynamic_table(&rows, side)).unwrap();
                }
                let transform = SqlTransform::with_functions(sql, vec![("s".into(), stream)], &side_tables, &functions);
                let mut transform = match transform {
                    Ok(t) => t,
                    Err(e) => {
                        assert_eq!(e.kind, ErrorKind::Plan, "{side:?} {sql}: {}", e.message);
                        if sql.contains("NOT IN") {
                            assert!(e.message.contains("NOT EXISTS (SELECT 1 FROM table t WHERE t.k = x)"), "{}", e.message);
                        }
                        planned.entry((side as u8, *sql)).or_insert(false);
                        continue;
                    }
                };
                planned.insert((side as u8, *sql), true);
                let pushed: Vec<RecordBatch> = (0..batches).map(|_| stream_batch(&mut rng)).collect();
                let mut out = Vec::new();
                for batch in &pushed {
                    transform.push(0, batch.clone()).unwrap();
                    while let Some(b) = transform.next_output() {
                        out.push(b);
                    }
                }
                let expected = reference(sql, &pushed, &rows);
                compared += expected.len();
                let actual = rows_as_text(&out);
                assert_eq!(actual, expected, "seed {seed}, round {round}, {side:?} side of {} rows, {sql}", rows.num_rows());
                if let Some(path) = path {
                    let _ = std::fs::remove_file(path);
                }
            }
        }
    }
    assert!(compared > 1000 * batches / 10, "only {compared} rows compared");
    // What each kind of side table refuses, exactly. NOT IN everywhere: DataFusion plans it as
    // a null-aware anti join that builds on the stream, which the per-batch execution does not
    // take (yet). Lookup mode takes equality on the whole key (key, region) only.
    let refused: Vec<(u8, &str)> = planned.iter().filter(|(_, ok)| !**ok).map(|(k, _)| *k).collect();
    let mut expected: Vec<(u8, &str)> = [Side::File, Side::Changes, Side::Lookup].iter().map(|s| (*s as u8, QUERIES[7])).collect();
    expected.extend([0, 1, 4, 5, 6, 9].iter().map(|q| (Side::Lookup as u8, QUERIES[*q])));
    expected.sort();
    assert_eq!(refused, expected);
}
