//! Times the file source's reader (`FileReader`, as the `file` source and side tables use it)
//! over a generated CSV file with a header, in batches of 8192: `SLUICE_TIMING_QUOTED` percent of
//! the rows (default 50) have their text quoted, with a comma inside. Uses only the public API,
//! so the same file times older commits. Run with
//! `SLUICE_TIMING_ROWS=1000000 cargo test --release -p sluice-core --test file_timing -- --ignored --nocapture`.

use std::fmt::Write as _;
use std::sync::Arc;

use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use sluice_core::file_io::{FileFormat, FileReader, ReaderOptions};

fn env(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[test]
#[ignore]
fn timing_csv_file_reader() {
    let (rows, rounds, quoted) = (env("SLUICE_TIMING_ROWS", 1_000_000), env("SLUICE_TIMING_ROUNDS", 5), env("SLUICE_TIMING_QUOTED", 50));
    let mut text = String::from("id,name,note,price,at\n");
    for i in 0..rows {
        let note = if i % 100 < quoted { format!("\"note {i}, with a comma\"") } else { format!("note {i}") };
        let _ = writeln!(text, "{i},name-{},{note},{}.{:02},2026-12-06T10:{:02}:{:02}", i % 977, i % 10_000, i % 100, i / 60 % 60, i % 60);
    }
    let path = std::env::temp_dir().join(format!("sluice-file-timing-{}.csv", std::process::id()));
    std::fs::write(&path, &text).unwrap();
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("name", DataType::Utf8, true),
        Field::new("note", DataType::Utf8, true),
        Field::new("price", DataType::Float64, true),
        Field::new("at", DataType::Timestamp(TimeUnit::Millisecond, None), true),
    ]));
    let mut rates = Vec::new();
    for _ in 0..rounds {
        let options =
            ReaderOptions { path: path.clone(), format: FileFormat::Csv, batch_size: 8192, header: true, delimiter: ",".into(), infer_rows: 1000 };
        let started = std::time::Instant::now();
        let mut reader = FileReader::open(options, Some(schema.clone())).unwrap();
        let mut read = 0;
        while let Some(next) = reader.next_batch().unwrap() {
            assert!(next.errors.is_none());
            read += next.batch.num_rows();
        }
        assert_eq!(read, rows);
        rates.push(rows as f64 / started.elapsed().as_secs_f64() / 1e6);
    }
    std::fs::remove_file(&path).ok();
    rates.sort_by(f64::total_cmp);
    println!(
        "csv file reader: {rows} rows ({} bytes/row, {quoted}% quoted), {rounds} rounds: min {:.3} median {:.3} max {:.3} M rows/s",
        text.len() / rows,
        rates[0],
        rates[rounds / 2],
        rates[rounds - 1]
    );
}
