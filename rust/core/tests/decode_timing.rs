//! Times `RecordDecoder::decode` over generated Nexmark bids as JSON records, back to back in
//! one slab as the Kafka source and the file reader pass them, in batches of 8192: once with a
//! schema the flat fast path takes, once with one that goes to arrow-json (dateTime with a time
//! zone). Uses only the public API, so the same file times older commits. Run with
//! `SLUICE_TIMING_ROWS=2000000 cargo test --release -p sluice-core --test decode_timing -- --ignored --nocapture`.

use std::sync::Arc;

use arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use sluice_core::decode::{split_records, DecoderOptions, Format, RecordDecoder};
use sluice_core::encode::{encode_records, EncodeFormat, EncodeOptions};
use sluice_core::nexmark::{Entity, GeneratorConfig, NexmarkGenerator};

fn bids(rows: usize) -> (Vec<u8>, Vec<i64>) {
    let mut generator = NexmarkGenerator::new(GeneratorConfig { entity: Entity::Bid, ..GeneratorConfig::default() });
    let options = EncodeOptions { format: EncodeFormat::Json, record_offsets: true, ..EncodeOptions::default() };
    let (mut slab, mut offsets) = (Vec::new(), vec![0i64]);
    while offsets.len() <= rows {
        let batch = generator.next_batch((rows + 1 - offsets.len()).min(8192)).unwrap();
        let encoded = encode_records(&batch, &options).unwrap();
        let base = slab.len() as i64;
        slab.extend_from_slice(&encoded.bytes);
        offsets.extend(encoded.offsets[1..].iter().map(|o| base + o));
    }
    (slab, offsets)
}

fn with_zone(schema: &SchemaRef) -> SchemaRef {
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| match f.data_type() {
            DataType::Timestamp(unit, None) => Field::new(f.name(), DataType::Timestamp(*unit, Some("UTC".into())), f.is_nullable()),
            _ => f.as_ref().clone(),
        })
        .collect();
    Arc::new(Schema::new(fields))
}

#[test]
#[ignore]
fn timing_record_decoder_over_bids() {
    let rows: usize = std::env::var("SLUICE_TIMING_ROWS").ok().and_then(|r| r.parse().ok()).unwrap_or(2_000_000);
    let rounds: usize = std::env::var("SLUICE_TIMING_ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(5);
    let (slab, offsets) = bids(rows);
    let records = split_records(&slab, &offsets).unwrap();
    let flat = NexmarkGenerator::schema(Entity::Bid);
    assert!(matches!(flat.field_with_name("dateTime").unwrap().data_type(), DataType::Timestamp(TimeUnit::Millisecond, None)));
    // `SLUICE_TIMING_FLAT_ONLY=1` skips arrow-json (for profiling the fast path alone).
    let flat_only = std::env::var("SLUICE_TIMING_FLAT_ONLY").is_ok_and(|v| v == "1");
    let decoders =
        if flat_only { vec![("flat fast path", flat.clone())] } else { vec![("flat fast path", flat.clone()), ("arrow-json", with_zone(&flat))] };
    for (name, schema) in decoders {
        let decoder = RecordDecoder::new(&DecoderOptions::of(Format::Json, ","), Some(schema)).unwrap();
        let mut rates = Vec::new();
        for _ in 0..rounds {
            let started = std::time::Instant::now();
            let mut decoded = 0;
            for batch in records.chunks(8192) {
                let out = decoder.decode(batch).unwrap();
                assert!(out.errors.is_none());
                decoded += out.batch.num_rows();
            }
            assert_eq!(decoded, rows);
            rates.push(rows as f64 / started.elapsed().as_secs_f64() / 1e6);
        }
        rates.sort_by(f64::total_cmp);
        println!(
            "{name}: {rows} bids ({} bytes/record), {rounds} rounds: min {:.3} median {:.3} max {:.3} M records/s",
            slab.len() / rows,
            rates[0],
            rates[rounds / 2],
            rates[rounds - 1]
        );
    }
}

/// Times `encode_records` (JSON with record offsets, as the Kafka sink asks) over generated bid
/// batches of 8192 rows. `SLUICE_TIMING_ROWS` and `SLUICE_TIMING_ROUNDS` as above.
#[test]
#[ignore]
fn timing_record_encoder_over_bids() {
    let rows: usize = std::env::var("SLUICE_TIMING_ROWS").ok().and_then(|r| r.parse().ok()).unwrap_or(2_000_000);
    let rounds: usize = std::env::var("SLUICE_TIMING_ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(5);
    let mut generator = NexmarkGenerator::new(GeneratorConfig { entity: Entity::Bid, ..GeneratorConfig::default() });
    let mut batches = Vec::new();
    let mut generated = 0;
    while generated < rows {
        let batch = generator.next_batch((rows - generated).min(8192)).unwrap();
        generated += batch.num_rows();
        batches.push(batch);
    }
    let options = EncodeOptions { format: EncodeFormat::Json, record_offsets: true, ..EncodeOptions::default() };
    let mut rates = Vec::new();
    let mut bytes = 0;
    for _ in 0..rounds {
        let started = std::time::Instant::now();
        bytes = 0;
        for batch in &batches {
            let encoded = encode_records(batch, &options).unwrap();
            assert_eq!(encoded.offsets.len(), batch.num_rows() + 1);
            bytes += encoded.bytes.len();
        }
        rates.push(rows as f64 / started.elapsed().as_secs_f64() / 1e6);
    }
    rates.sort_by(f64::total_cmp);
    println!(
        "encode_records: {rows} bids ({} bytes/record), {rounds} rounds: min {:.3} median {:.3} max {:.3} M records/s",
        bytes / rows,
        rates[0],
        rates[rounds / 2],
        rates[rounds - 1]
    );
}
