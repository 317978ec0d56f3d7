//! Times integer arithmetic through a SQL transform (`SqlTransform`, as a `sql` node runs it):
//! `a + b`, `a * 3`, `a - b` and `-a` over BIGINT columns in batches of 8192, a tenth of the rows
//! NULL (`SLUICE_TIMING_SQL` sets other SQL over `t`). Uses only the public API, so the same file times older commits (wrapping arithmetic
//! before checked_arithmetic.rs). Run with
//! `SLUICE_TIMING_ROWS=10000000 cargo test --release -p sluice-core --test arithmetic_timing -- --ignored --nocapture`.

use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use sluice_core::transform::SqlTransform;

fn env(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[test]
#[ignore]
fn timing_integer_arithmetic() {
    let (rows, rounds) = (env("SLUICE_TIMING_ROWS", 10_000_000), env("SLUICE_TIMING_ROUNDS", 5));
    let schema = Arc::new(Schema::new(vec![Field::new("a", DataType::Int64, true), Field::new("b", DataType::Int64, true)]));
    let batches: Vec<RecordBatch> = (0..rows.div_ceil(8192))
        .map(|n| {
            let start = (n * 8192) as i64;
            let a: Int64Array = (start..start + 8192).map(|i| (i % 10 != 0).then_some(i * 7 - 1_000_000)).collect();
            let b: Int64Array = (start..start + 8192).map(|i| Some(i % 1000 - 500)).collect();
            RecordBatch::try_new(schema.clone(), vec![Arc::new(a) as ArrayRef, Arc::new(b)]).unwrap()
        })
        .collect();
    let sql = std::env::var("SLUICE_TIMING_SQL").unwrap_or_else(|_| "SELECT a + b AS x, a * 3 AS y, a - b AS z, -a AS n FROM t".into());
    let mut rates = Vec::new();
    for _ in 0..rounds {
        let mut transform = SqlTransform::new(&sql, vec![("t".to_string(), schema.clone())]).unwrap();
        let started = std::time::Instant::now();
        let mut out_rows = 0;
        for batch in &batches {
            transform.push(0, batch.clone()).unwrap();
            while let Some(out) = transform.next_output() {
                out_rows += out.num_rows();
            }
        }
        let seconds = started.elapsed().as_secs_f64();
        assert_eq!(out_rows, batches.len() * 8192);
        rates.push(out_rows as f64 / seconds / 1e6);
    }
    rates.sort_by(f64::total_cmp);
    println!("integer arithmetic: {rows} rows, best {:.1} M rows/s, median {:.1} M rows/s", rates[rates.len() - 1], rates[rates.len() / 2]);
}
