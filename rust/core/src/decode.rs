//! Record bytes → Arrow. A batch of records arrives as one slab plus offsets (the layout of an
//! Arrow Binary column), so the caller copies bytes once and never builds per-record objects.
//! Malformed records do not fail the batch: they come back in an error batch
//! (index, record, error) for the caller's dead-letter policy, and the rest decode normally.

use std::sync::{Arc, OnceLock};

use arrow::array::{ArrayRef, BinaryBuilder, Int64Builder, RecordBatch, StringBuilder};
use arrow::compute::concat_batches;
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use serde::Deserialize;

use crate::avro::{AvroFraming, AvroReader};
use crate::error::{CoreError, Result};
use crate::flat_json::FlatJsonDecoder;

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Json,
    Csv,
    /// No decoding: each record becomes one `value` Binary row.
    Raw,
    /// Debezium's JSON change envelope (with or without the `schema`/`payload` wrapper): the
    /// row (`after`, or `before` for deletes) plus an `_op` column: i, u or d.
    Debezium,
    /// One Avro datum per record (see `avro`); the schema comes from `avro_schema`.
    Avro,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecoderOptions {
    pub format: Format,
    /// CSV field delimiter (one byte).
    #[serde(default = "default_delimiter")]
    pub delimiter: String,
    /// Avro: the writer schema (JSON text).
    #[serde(default)]
    pub avro_schema: Option<String>,
    /// Avro: how each record is framed.
    #[serde(default)]
    pub avro_framing: AvroFraming,
    /// Avro with confluent framing: the schema id the records carry.
    #[serde(default)]
    pub avro_schema_id: Option<u32>,
}

impl DecoderOptions {
    pub fn of(format: Format, delimiter: &str) -> Self {
        DecoderOptions { format, delimiter: delimiter.to_string(), avro_schema: None, avro_framing: AvroFraming::None, avro_schema_id: None }
    }
}

fn default_delimiter() -> String {
    ",".to_string()
}

/// Decodes records of one format and schema. Reused for every batch of a stream.
pub struct RecordDecoder {
    format: Format,
    schema: SchemaRef,
    delimiter: u8,
    avro: Option<Arc<AvroReader>>,
    /// JSON rows of a flat schema: tried before arrow-json (see `flat_json`).
    flat_json: Option<Arc<FlatJsonDecoder>>,
}

/// The outcome of decoding one batch of records.
pub struct Decoded {
    /// The rows of the records that decoded, in their order.
    pub batch: RecordBatch,
    /// One row per malformed record: `index` (position in the input), `record`, `error`.
    pub errors: Option<RecordBatch>,
    /// Input positions of the rows of `batch`, when some records were malformed.
    pub good: Option<Vec<u32>>,
}

impl RecordDecoder {
    /// `schema`: the row schema for json, csv and debezium; ignored for raw (one Binary column
    /// `value`) and avro (derived from the Avro schema).
    pub fn new(options: &DecoderOptions, schema: Option<SchemaRef>) -> Result<Self> {
        let delimiter = match options.delimiter.as_bytes() {
            [b] => *b,
            _ => return Err(CoreError::config(format!("CSV delimiter must be one byte, got {:?}", options.delimiter))),
        };
        let (schema, avro) = match (options.format, schema) {
            (Format::Raw, _) => (raw_schema(), None),
            (Format::Avro, _) => {
                let json = options.avro_schema.as_deref().ok_or_else(|| CoreError::config("avro records need an Avro schema"))?;
                let reader = AvroReader::new(json, options.avro_framing, options.avro_schema_id)?;
                (reader.schema().clone(), Some(Arc::new(reader)))
            }
            (_, Some(schema)) => (schema, None),
            (format, None) => return Err(CoreError::invalid(format!("{format:?} decoders need a schema"))),
        };
        let flat_json = match options.format {
            Format::Json | Format::Debezium => FlatJsonDecoder::try_new(schema.clone()).map(Arc::new),
            _ => None,
        };
        Ok(RecordDecoder { format: options.format, schema, delimiter, avro, flat_json })
    }

    /// The same decoder without the flat JSON fast path, to compare against.
    #[cfg(test)]
    pub(crate) fn arrow_only(&self) -> RecordDecoder {
        RecordDecoder { format: self.format, schema: self.schema.clone(), delimiter: self.delimiter, avro: self.avro.clone(), flat_json: None }
    }

    #[cfg(test)]
    pub(crate) fn has_fast_path(&self) -> bool {
        self.flat_json.is_some()
    }

    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Decodes `records`. Fast path: the whole batch through one decoder. Only when that fails
    /// are records decoded one by one to separate the bad from the good.
    pub fn decode(&self, records: &[&[u8]]) -> Result<Decoded> {
        if self.format == Format::Raw {
            return Ok(Decoded { batch: raw_batch(&self.schema, records)?, errors: None, good: None });
        }
        if self.format == Format::Debezium {
            return self.decode_debezium(records);
        }
        match self.decode_all(records) {
            Ok(batch) if batch.num_rows() == records.len() => Ok(Decoded { batch, errors: None, good: None }),
            _ => self.decode_isolating(records),
        }
    }

    /// Decodes `records` and appends `extra` (one row per record, e.g. Kafka metadata such as
    /// partition and offset) to the decoded rows, dropping the rows of malformed records.
    pub fn decode_with(&self, records: &[&[u8]], extra: Option<RecordBatch>) -> Result<Decoded> {
        let decoded = self.decode(records)?;
        let Some(extra) = extra else { return Ok(decoded) };
        if extra.num_rows() != records.len() {
            return Err(CoreError::invalid(format!("{} extra rows for {} records", extra.num_rows(), records.len())));
        }
        let extra = match &decoded.good {
            Some(good) => arrow::compute::take_record_batch(&extra, &arrow::array::UInt32Array::from(good.clone()))?,
            None => extra,
        };
        let mut fields: Vec<arrow::datatypes::FieldRef> = decoded.batch.schema().fields().iter().cloned().collect();
        fields.extend(extra.schema().fields().iter().cloned());
        let mut columns = decoded.batch.columns().to_vec();
        columns.extend(extra.columns().iter().cloned());
        let options = arrow::array::RecordBatchOptions::new().with_row_count(Some(decoded.batch.num_rows()));
        let batch = RecordBatch::try_new_with_options(Arc::new(Schema::new(fields)), columns, &options)?;
        Ok(Decoded { batch, ..decoded })
    }

    fn decode_all(&self, records: &[&[u8]]) -> Result<RecordBatch> {
        if let Some(avro) = &self.avro {
            return avro.decode(records);
        }
        // Returns None for anything it does not decode exactly as arrow-json does.
        if let Some(batch) = self.flat_json.as_ref().and_then(|flat| flat.decode(records)) {
            return Ok(batch);
        }
        // One more row than records, so a record holding two values shows as a count mismatch.
        let mut decoder = self.new_decoder(records.len() + 1)?;
        match (&mut decoder, contiguous(records)) {
            // JSON values need no separator: one call over the whole slab is the fast path.
            (FormatDecoder::Json(d), Some(all)) => {
                if d.decode(all)? != all.len() {
                    return Err(CoreError::data("JSON records were not fully consumed"));
                }
            }
            _ => {
                for record in records {
                    decoder.feed(record)?;
                }
            }
        }
        decoder.finish()
    }

    /// Unwraps every envelope to its row, decodes the rows as JSON and appends `_op`.
    /// Tombstones (empty records) are skipped; bad envelopes and bad rows become errors.
    fn decode_debezium(&self, records: &[&[u8]]) -> Result<Decoded> {
        let mut rows = Vec::with_capacity(records.len());
        let mut ops = Vec::with_capacity(records.len());
        let mut origin = Vec::with_capacity(records.len());
        let mut errors = ErrorRows::default();
        let mut skipped = false;
        for (index, record) in records.iter().enumerate() {
            if record.iter().all(u8::is_ascii_whitespace) {
                skipped = true;
                continue;
            }
            match unwrap_envelope(record) {
                Ok((row, op)) => {
                    rows.push(row);
                    ops.push(op);
                    origin.push(index as u32);
                }
                Err(message) => errors.push(index, record, &message),
            }
        }
        let json = RecordDecoder { format: Format::Json, schema: self.schema.clone(), delimiter: b',', avro: None, flat_json: self.flat_json.clone() };
        let slices: Vec<&[u8]> = rows.iter().map(Vec::as_slice).collect();
        let inner = json.decode(&slices)?;
        let kept: Vec<usize> = match &inner.good {
            Some(good) => good.iter().map(|&g| g as usize).collect(),
            None => (0..rows.len()).collect(),
        };
        if let Some(inner_errors) = &inner.errors {
            use arrow::array::AsArray;
            let at = inner_errors.column(0).as_primitive::<arrow::datatypes::Int64Type>();
            let why = inner_errors.column(2).as_string::<i32>();
            for i in 0..inner_errors.num_rows() {
                let index = origin[at.value(i) as usize] as usize;
                errors.push(index, records[index], why.value(i));
            }
        }
        let op_column = arrow::array::StringArray::from_iter_values(kept.iter().map(|&k| ops[k]));
        let mut fields: Vec<arrow::datatypes::FieldRef> = inner.batch.schema().fields().iter().cloned().collect();
        fields.push(Arc::new(Field::new("_op", DataType::Utf8, false)));
        let mut columns = inner.batch.columns().to_vec();
        columns.push(Arc::new(op_column));
        let options = arrow::array::RecordBatchOptions::new().with_row_count(Some(kept.len()));
        let batch = RecordBatch::try_new_with_options(Arc::new(Schema::new(fields)), columns, &options)?;
        let all_good = errors.is_empty() && !skipped;
        let good = (!all_good).then(|| kept.iter().map(|&k| origin[k]).collect());
        Ok(Decoded { batch, errors: errors.finish("index")?, good })
    }

    fn decode_isolating(&self, records: &[&[u8]]) -> Result<Decoded> {
        let mut good = Vec::with_capacity(records.len());
        let mut positions = Vec::with_capacity(records.len());
        let mut errors = ErrorRows::default();
        for (index, record) in records.iter().enumerate() {
            match self.decode_all(std::slice::from_ref(record)) {
                Ok(batch) if batch.num_rows() == 1 => {
                    good.push(batch);
                    positions.push(index as u32);
                }
                Ok(batch) => errors.push(index, record, &format!("expected one record, found {}", batch.num_rows())),
                Err(e) => errors.push(index, record, &e.message),
            }
        }
        let batch = concat_batches(&self.schema, &good)?;
        Ok(Decoded { batch, errors: errors.finish("index")?, good: Some(positions) })
    }

    fn new_decoder(&self, batch_size: usize) -> Result<FormatDecoder> {
        Ok(match self.format {
            Format::Json => FormatDecoder::Json(arrow::json::ReaderBuilder::new(self.schema.clone()).with_batch_size(batch_size).build_decoder()?),
            Format::Raw | Format::Debezium | Format::Avro => return Err(CoreError::invalid("raw, debezium and avro records use no arrow format decoder")),
            Format::Csv => FormatDecoder::Csv(
                arrow::csv::ReaderBuilder::new(self.schema.clone())
                    .with_header(false)
                    .with_delimiter(self.delimiter)
                    .with_batch_size(batch_size)
                    .build_decoder(),
            ),
        })
    }
}

enum FormatDecoder {
    Json(arrow::json::reader::Decoder),
    Csv(arrow::csv::reader::Decoder),
}

impl FormatDecoder {
    fn feed(&mut self, record: &[u8]) -> Result<()> {
        match self {
            FormatDecoder::Json(d) => {
                let used = d.decode(record)?;
                if used != record.len() {
                    return Err(CoreError::data("JSON record was not fully consumed"));
                }
                // Separates records so two values cannot run together.
                d.decode(b"\n")?;
            }
            FormatDecoder::Csv(d) => {
                let record = record.strip_suffix(b"\n").unwrap_or(record);
                let record = record.strip_suffix(b"\r").unwrap_or(record);
                let used = d.decode(record)?;
                let end = d.decode(b"\n")?;
                if used != record.len() || end != 1 {
                    return Err(CoreError::data("CSV record was not fully consumed"));
                }
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<RecordBatch> {
        let batch = match self {
            FormatDecoder::Json(d) => d.flush()?,
            FormatDecoder::Csv(d) => d.flush()?,
        };
        batch.ok_or_else(|| CoreError::data("no record decoded"))
    }
}

/// Infers a schema from the records that are JSON objects (others are left out: they are
/// reported when the data is read). Strings stay strings: declare timestamps to get them.
pub fn infer_json_schema(records: &[&[u8]]) -> Result<Schema> {
    let mut sample = Vec::new();
    for record in records {
        if matches!(serde_json::from_slice::<serde_json::Value>(record), Ok(serde_json::Value::Object(_))) {
            sample.extend_from_slice(record);
            sample.push(b'\n');
        }
    }
    if sample.is_empty() {
        return Err(CoreError::data("no record in the sample is a JSON object; declare the schema"));
    }
    let (schema, _) = arrow::json::reader::infer_json_schema_from_seekable(std::io::Cursor::new(sample), None)?;
    Ok(schema)
}

/// The row and operation of one Debezium change event: c and r (snapshot reads) are inserts,
/// u updates with the new row, d deletes with the old one.
fn unwrap_envelope(record: &[u8]) -> std::result::Result<(Vec<u8>, &'static str), String> {
    let value: serde_json::Value = serde_json::from_slice(record).map_err(|e| format!("not a JSON change event: {e}"))?;
    let payload = match value.get("payload") {
        Some(payload) if payload.is_object() => payload,
        _ => &value,
    };
    let op = payload.get("op").and_then(|op| op.as_str()).ok_or("no \"op\" in the Debezium envelope")?;
    let (row, op) = match op {
        "c" | "r" => (payload.get("after"), "i"),
        "u" => (payload.get("after"), "u"),
        "d" => (payload.get("before"), "d"),
        other => return Err(format!("unknown Debezium op {other:?}")),
    };
    let row = row.filter(|row| row.is_object()).ok_or_else(|| format!("a Debezium {op} event without its row"))?;
    Ok((serde_json::to_vec(row).map_err(|e| e.to_string())?, op))
}

/// The schema of raw records: the bytes of each record as one Binary column.
pub fn raw_schema() -> SchemaRef {
    static RAW: OnceLock<SchemaRef> = OnceLock::new();
    RAW.get_or_init(|| Arc::new(Schema::new(vec![Field::new("value", DataType::Binary, false)]))).clone()
}

fn raw_batch(schema: &SchemaRef, records: &[&[u8]]) -> Result<RecordBatch> {
    let bytes: usize = records.iter().map(|r| r.len()).sum();
    let mut values = BinaryBuilder::with_capacity(records.len(), bytes);
    for record in records {
        values.append_value(record);
    }
    Ok(RecordBatch::try_new(schema.clone(), vec![Arc::new(values.finish())])?)
}

/// Collects malformed records: their position, their bytes and why they failed.
#[derive(Default)]
pub struct ErrorRows {
    positions: Vec<i64>,
    records: Vec<Vec<u8>>,
    messages: Vec<String>,
}

impl ErrorRows {
    pub fn push(&mut self, position: usize, record: &[u8], message: &str) {
        self.positions.push(position as i64);
        self.records.push(record.to_vec());
        self.messages.push(message.to_string());
    }

    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// Renumbers positions (e.g. record index → line number in a file).
    pub fn map_positions(&mut self, f: impl Fn(i64) -> i64) {
        for p in &mut self.positions {
            *p = f(*p);
        }
    }

    pub fn append(&mut self, other: ErrorRows) {
        self.positions.extend(other.positions);
        self.records.extend(other.records);
        self.messages.extend(other.messages);
    }

    /// The error batch `(position_name Int64, record Binary, error Utf8)`, or None if empty.
    pub fn finish(self, position_name: &str) -> Result<Option<RecordBatch>> {
        if self.is_empty() {
            return Ok(None);
        }
        let mut positions = Int64Builder::with_capacity(self.positions.len());
        positions.append_slice(&self.positions);
        let mut records = BinaryBuilder::new();
        for r in &self.records {
            records.append_value(r);
        }
        let mut messages = StringBuilder::new();
        for m in &self.messages {
            messages.append_value(m);
        }
        let columns: Vec<ArrayRef> = vec![Arc::new(positions.finish()), Arc::new(records.finish()), Arc::new(messages.finish())];
        Ok(Some(RecordBatch::try_new(error_schema(position_name), columns)?))
    }
}

/// Schema of error batches; `position_name` is `index` for decoders and `line` for files.
pub fn error_schema(position_name: &str) -> SchemaRef {
    static INDEX: OnceLock<SchemaRef> = OnceLock::new();
    static LINE: OnceLock<SchemaRef> = OnceLock::new();
    let make = |name: &str| {
        Arc::new(Schema::new(vec![
            Field::new(name, DataType::Int64, false),
            Field::new("record", DataType::Binary, false),
            Field::new("error", DataType::Utf8, false),
        ]))
    };
    match position_name {
        "line" => LINE.get_or_init(|| make("line")).clone(),
        _ => INDEX.get_or_init(|| make("index")).clone(),
    }
}

/// The records as one slice when they lie back to back in memory (as split from one slab).
fn contiguous<'a>(records: &[&'a [u8]]) -> Option<&'a [u8]> {
    let first = records.first()?;
    let mut end = first.as_ptr_range().end;
    for record in &records[1..] {
        if record.as_ptr() != end {
            return None;
        }
        end = record.as_ptr_range().end;
    }
    let len = end as usize - first.as_ptr() as usize;
    // SAFETY: the records are adjacent slices of one allocation, so the span is one slice of it.
    Some(unsafe { std::slice::from_raw_parts(first.as_ptr(), len) })
}

/// Splits a slab + Arrow-style offsets (`n + 1` of them) into record slices.
pub fn split_records<'a>(data: &'a [u8], offsets: &[i64]) -> Result<Vec<&'a [u8]>> {
    let mut records = Vec::with_capacity(offsets.len().saturating_sub(1));
    for pair in offsets.windows(2) {
        let (start, end) = (pair[0], pair[1]);
        if start < 0 || end < start || end as usize > data.len() {
            return Err(CoreError::invalid(format!("bad record offsets {start}..{end} for a slab of {} bytes", data.len())));
        }
        records.push(&data[start as usize..end as usize]);
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Array, Int64Array, StringArray};

    fn schema() -> SchemaRef {
        Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false), Field::new("name", DataType::Utf8, true)]))
    }

    #[test]
    fn json_records_decode_and_bad_ones_are_isolated() {
        let options = DecoderOptions::of(Format::Json, ",");
        let decoder = RecordDecoder::new(&options, Some(schema())).unwrap();
        let records: Vec<&[u8]> = vec![br#"{"id":1,"name":"a"}"#, br#"{"id":"x"}"#, br#"{"id":3}"#, b"{oops", br#"{"id":5,"name":"e"}{"id":6}"#];
        let decoded = decoder.decode(&records).unwrap();
        let ids = decoded.batch.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        assert_eq!(ids.values().to_vec(), vec![1, 3]);
        let errors = decoded.errors.unwrap();
        let index = errors.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        assert_eq!(index.values().to_vec(), vec![1, 3, 4]);
        let messages = errors.column(2).as_any().downcast_ref::<StringArray>().unwrap();
        assert!(!messages.value(0).is_empty());
    }

    #[test]
    fn csv_records_decode() {
        let options = DecoderOptions::of(Format::Csv, ";");
        let decoder = RecordDecoder::new(&options, Some(schema())).unwrap();
        let records: Vec<&[u8]> = vec![b"1;a\n", b"2;", b"x;y", b"4;d\r\n"];
        let decoded = decoder.decode(&records).unwrap();
        assert_eq!(decoded.batch.num_rows(), 3);
        let names = decoded.batch.column(1).as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(names.value(0), "a");
        assert!(names.is_null(1));
        assert_eq!(names.value(2), "d");
        assert_eq!(decoded.errors.unwrap().num_rows(), 1);
    }

    #[test]
    fn extra_columns_follow_the_good_records() {
        let options = DecoderOptions::of(Format::Json, ",");
        let decoder = RecordDecoder::new(&options, Some(schema())).unwrap();
        let records: Vec<&[u8]> = vec![br#"{"id":1}"#, b"bad", br#"{"id":3}"#];
        let extra_schema = Arc::new(Schema::new(vec![Field::new("_offset", DataType::Int64, false)]));
        let extra = RecordBatch::try_new(extra_schema, vec![Arc::new(Int64Array::from(vec![10, 11, 12]))]).unwrap();
        let decoded = decoder.decode_with(&records, Some(extra)).unwrap();
        assert_eq!(decoded.batch.schema().field(2).name(), "_offset");
        let offsets = decoded.batch.column(2).as_any().downcast_ref::<Int64Array>().unwrap();
        assert_eq!(offsets.values().to_vec(), vec![10, 12]);
    }

    #[test]
    fn raw_records_become_binary_rows() {
        let options = DecoderOptions::of(Format::Raw, ",");
        let decoder = RecordDecoder::new(&options, Some(raw_schema())).unwrap();
        let decoded = decoder.decode(&[b"a", b"", b"\xff"]).unwrap();
        assert_eq!(decoded.batch.num_rows(), 3);
    }

    #[test]
    fn back_to_back_json_in_one_slab_decodes_in_one_pass() {
        let options = DecoderOptions::of(Format::Json, ",");
        let decoder = RecordDecoder::new(&options, Some(schema())).unwrap();
        let slab = br#"{"id":1}{"id":2,"name":"b"}{"id":3}"#;
        let records = split_records(slab, &[0, 8, 27, 35]).unwrap();
        assert!(contiguous(&records).is_some());
        let decoded = decoder.decode(&records).unwrap();
        assert!(decoded.errors.is_none());
        assert_eq!(decoded.batch.column(0).as_any().downcast_ref::<Int64Array>().unwrap().values().to_vec(), vec![1, 2, 3]);
        // A record holding two values still shows up as a count mismatch and is isolated.
        let records = split_records(slab, &[0, 27, 35]).unwrap();
        let decoded = decoder.decode(&records).unwrap();
        assert_eq!(decoded.batch.num_rows(), 1);
        assert_eq!(decoded.errors.unwrap().num_rows(), 1);
    }

    #[test]
    fn debezium_envelopes_become_rows_with_op() {
        let options = DecoderOptions::of(Format::Debezium, ",");
        let decoder = RecordDecoder::new(&options, Some(schema())).unwrap();
        let records: Vec<&[u8]> = vec![
            br#"{"payload": {"op": "c", "after": {"id": 1, "name": "a"}, "before": null}}"#,
            br#"{"op": "u", "before": {"id": 1}, "after": {"id": 1, "name": "b"}}"#,
            b"",
            br#"{"op": "d", "before": {"id": 1, "name": "b"}, "after": null}"#,
            br#"{"op": "x"}"#,
            br#"{"op": "c", "after": {"id": "bad"}}"#,
        ];
        let extra_schema = Arc::new(Schema::new(vec![Field::new("_offset", DataType::Int64, false)]));
        let extra = RecordBatch::try_new(extra_schema, vec![Arc::new(Int64Array::from(vec![10, 11, 12, 13, 14, 15]))]).unwrap();
        let decoded = decoder.decode_with(&records, Some(extra)).unwrap();
        let batch = &decoded.batch;
        assert_eq!(batch.schema().field(2).name(), "_op");
        let ops = batch.column(2).as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!((0..3).map(|i| ops.value(i)).collect::<Vec<_>>(), vec!["i", "u", "d"]);
        let offsets = batch.column(3).as_any().downcast_ref::<Int64Array>().unwrap();
        assert_eq!(offsets.values().to_vec(), vec![10, 11, 13]);
        let errors = decoded.errors.unwrap();
        let index = errors.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        assert_eq!(index.values().to_vec(), vec![4, 5]);
    }

    #[test]
    fn json_schemas_are_inferred_from_the_good_records() {
        let schema = infer_json_schema(&[br#"{"id": 1, "name": "a"}"#, b"oops", br#"{"id": 2, "score": 1.5}"#]).unwrap();
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        assert_eq!(names, vec!["id", "name", "score"]);
        assert_eq!(schema.field(0).data_type(), &DataType::Int64);
        assert!(infer_json_schema(&[b"nope"]).is_err());
    }

    #[test]
    fn offsets_are_checked() {
        assert!(split_records(b"abc", &[0, 2, 5]).is_err());
        assert_eq!(split_records(b"abc", &[0, 1, 3]).unwrap(), vec![&b"a"[..], &b"bc"[..]]);
    }
}
