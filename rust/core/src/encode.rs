//! Arrow → record bytes, for sinks. One slab per batch; Java only writes it out (or, for
//! Kafka, slices it by the record offsets).

use arrow::array::RecordBatch;
use arrow::json::writer::{JsonArray, LineDelimited, WriterBuilder};
use serde::Deserialize;

use crate::error::{CoreError, Result};

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum EncodeFormat {
    /// One JSON object per line.
    #[default]
    Json,
    /// The whole batch as one JSON array (for HTTP bodies).
    JsonArray,
    /// CSV lines, with a header line when `header` is set.
    Csv,
}

#[derive(Clone, Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct EncodeOptions {
    #[serde(default)]
    pub format: EncodeFormat,
    /// CSV: write a header line first.
    #[serde(default)]
    pub header: bool,
    /// Also return where each row's record starts and ends (for one message per row).
    #[serde(default)]
    pub record_offsets: bool,
    /// Also encode these columns as each row's key: the value itself for one string or
    /// integer column, else a JSON object.
    #[serde(default)]
    pub key_columns: Vec<String>,
    /// Columns left out of the encoded records (e.g. `_op`, which a Kafka sink sends as a header).
    #[serde(default)]
    pub exclude_columns: Vec<String>,
}

/// Encoded rows: one slab, and optionally per-row offsets and keys.
#[derive(Default)]
pub struct Encoded {
    pub bytes: Vec<u8>,
    /// `rows + 1` offsets into `bytes` (each record without its trailing newline), if asked.
    pub offsets: Vec<i64>,
    pub keys: Vec<u8>,
    pub key_offsets: Vec<i64>,
}

/// Encodes a batch with record offsets and keys as `options` asks.
pub fn encode_records(batch: &RecordBatch, options: &EncodeOptions) -> Result<Encoded> {
    let bytes = if options.exclude_columns.is_empty() {
        encode(batch, options)?
    } else {
        let schema = batch.schema();
        let kept: Vec<usize> = (0..schema.fields().len()).filter(|&i| !options.exclude_columns.contains(schema.field(i).name())).collect();
        encode(&batch.project(&kept)?, options)?
    };
    let offsets = if options.record_offsets { line_offsets(&bytes, batch.num_rows(), options.format == EncodeFormat::Csv && options.header)? } else { Vec::new() };
    let (keys, key_offsets) = if options.key_columns.is_empty() { (Vec::new(), Vec::new()) } else { encode_keys(batch, &options.key_columns)? };
    Ok(Encoded { bytes, offsets, keys, key_offsets })
}

/// Start offsets of the `rows` lines in `bytes`, plus `bytes.len()`: record i is
/// `bytes[o[i] .. o[i+1] - 1]` (each line ends in one newline, not part of the record).
/// JSON escapes newlines inside strings and the CSV writer quotes them, so only quote state
/// needs tracking.
fn line_offsets(bytes: &[u8], rows: usize, skip_header: bool) -> Result<Vec<i64>> {
    let mut offsets = Vec::with_capacity(rows + 1);
    let mut line_start = 0usize;
    let mut quoted = false;
    let mut header = skip_header;
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'"' => quoted = !quoted,
            b'\n' if !quoted => {
                if header {
                    header = false;
                } else {
                    offsets.push(line_start as i64);
                }
                line_start = i + 1;
            }
            _ => {}
        }
    }
    if offsets.len() != rows || line_start != bytes.len() {
        return Err(CoreError::new(crate::error::ErrorKind::Execution, format!("encoded {} records for {rows} rows", offsets.len())));
    }
    offsets.push(bytes.len() as i64);
    Ok(offsets)
}

fn encode_keys(batch: &RecordBatch, columns: &[String]) -> Result<(Vec<u8>, Vec<i64>)> {
    use arrow::array::Array;
    let indices = columns
        .iter()
        .map(|c| batch.schema().index_of(c).map_err(|_| CoreError::config(format!("key column '{c}' is not in the output ({})", batch.schema()))))
        .collect::<Result<Vec<_>>>()?;
    let projected = batch.project(&indices)?;
    let mut keys = Vec::new();
    let mut offsets = Vec::with_capacity(batch.num_rows() + 1);
    if indices.len() == 1 {
        let column = arrow::compute::cast(projected.column(0), &arrow::datatypes::DataType::Utf8)?;
        let strings = column.as_any().downcast_ref::<arrow::array::StringArray>().expect("cast to Utf8");
        // Same layout as the records: each key followed by one newline that is not part of it.
        for i in 0..strings.len() {
            offsets.push(keys.len() as i64);
            if strings.is_valid(i) {
                keys.extend_from_slice(strings.value(i).as_bytes());
            }
            keys.push(b'\n');
        }
        offsets.push(keys.len() as i64);
    } else {
        let json = encode(&projected, &EncodeOptions::default())?;
        offsets = line_offsets(&json, projected.num_rows(), false)?;
        keys = json;
    }
    Ok((keys, offsets))
}

/// Encodes a batch. JSON output writes nulls explicitly so every row has every column.
pub fn encode(batch: &RecordBatch, options: &EncodeOptions) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(batch.num_rows() * 64);
    match options.format {
        EncodeFormat::Json => {
            let mut writer = WriterBuilder::new().with_explicit_nulls(true).build::<_, LineDelimited>(&mut out);
            writer.write(batch)?;
            writer.finish()?;
        }
        EncodeFormat::JsonArray => {
            let mut writer = WriterBuilder::new().with_explicit_nulls(true).build::<_, JsonArray>(&mut out);
            writer.write(batch)?;
            writer.finish()?;
        }
        EncodeFormat::Csv => {
            let mut writer = arrow::csv::WriterBuilder::new().with_header(options.header).build(&mut out);
            writer.write(batch)?;
        }
    }
    Ok(out)
}

pub fn parse_options(json: &str) -> Result<EncodeOptions> {
    if json.trim().is_empty() {
        return Ok(EncodeOptions::default());
    }
    serde_json::from_str(json).map_err(|e| CoreError::invalid(format!("encoder options: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int64Array, StringArray};
    use arrow::datatypes::{DataType, Field, Schema};
    use std::sync::Arc;

    #[test]
    fn record_offsets_and_keys() {
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false), Field::new("s", DataType::Utf8, true)]));
        let batch = RecordBatch::try_new(
            schema,
            vec![Arc::new(Int64Array::from(vec![7, 8])), Arc::new(StringArray::from(vec![Some("x\ny"), None]))],
        )
        .unwrap();
        let options = EncodeOptions {
            format: EncodeFormat::Csv,
            header: true,
            record_offsets: true,
            key_columns: vec!["id".into()],
            exclude_columns: vec![],
        };
        let out = encode_records(&batch, &options).unwrap();
        let record = |i: usize| &out.bytes[out.offsets[i] as usize..out.offsets[i + 1] as usize - 1];
        assert_eq!(record(0), b"7,\"x\ny\"");
        assert_eq!(record(1), b"8,");
        let key = |i: usize| &out.keys[out.key_offsets[i] as usize..out.key_offsets[i + 1] as usize - 1];
        assert_eq!((key(0), key(1)), (&b"7"[..], &b"8"[..]));
    }

    #[test]
    fn excluded_columns_stay_out_of_the_records() {
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false), Field::new("_op", DataType::Utf8, false)]));
        let batch = RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from(vec![7])), Arc::new(StringArray::from(vec!["d"]))]).unwrap();
        let options = EncodeOptions { record_offsets: true, exclude_columns: vec!["_op".into()], ..EncodeOptions::default() };
        assert_eq!(encode_records(&batch, &options).unwrap().bytes, b"{\"id\":7}\n");
    }

    #[test]
    fn json_lines_with_explicit_nulls() {
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false), Field::new("s", DataType::Utf8, true)]));
        let batch = RecordBatch::try_new(
            schema,
            vec![Arc::new(Int64Array::from(vec![1, 2])), Arc::new(StringArray::from(vec![Some("a\nb"), None]))],
        )
        .unwrap();
        let out = encode(&batch, &EncodeOptions::default()).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "{\"id\":1,\"s\":\"a\\nb\"}\n{\"id\":2,\"s\":null}\n");
    }
}
