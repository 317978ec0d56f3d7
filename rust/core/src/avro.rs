//! Avro records ↔ Arrow, for Kafka. A record is one Avro datum: the bare binary body (no
//! framing, the schema given by the pipeline) or Confluent's wire format (magic byte 0 and a
//! 4-byte schema id before the body). Built on arrow-avro, which decodes straight into Arrow
//! builders — no per-record value objects.

use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::{Schema, SchemaRef};
use arrow_avro::reader::ReaderBuilder;
use arrow_avro::schema::{AvroSchema, Fingerprint, FingerprintAlgorithm, SchemaStore, SCHEMA_METADATA_KEY};
use arrow_avro::writer::format::AvroBinaryFormat;
use arrow_avro::writer::WriterBuilder;
use serde::Deserialize;

use crate::error::{CoreError, ErrorKind, Result};

#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum AvroFraming {
    /// Each record is the bare Avro binary body.
    #[default]
    None,
    /// Confluent's wire format: 0x00, the schema id (4 bytes, big-endian), the body.
    Confluent,
}

/// The schema id used internally for unframed records (never on the wire).
const UNFRAMED_ID: u32 = 0;

/// Decodes Avro records of one writer schema. Reused for every batch of a stream.
pub struct AvroReader {
    store: SchemaStore,
    framing: AvroFraming,
    schema: SchemaRef,
}

impl AvroReader {
    /// `schema_json`: the writer schema (an Avro record). `schema_id`: with Confluent framing,
    /// the id the records carry (records with another id are malformed).
    pub fn new(schema_json: &str, framing: AvroFraming, schema_id: Option<u32>) -> Result<Self> {
        let id = match (framing, schema_id) {
            (AvroFraming::Confluent, Some(id)) => id,
            (AvroFraming::Confluent, None) => return Err(CoreError::config("Avro with confluent framing needs the schema id")),
            (AvroFraming::None, _) => UNFRAMED_ID,
        };
        serde_json::from_str::<serde_json::Value>(schema_json).map_err(|e| CoreError::config(format!("Avro schema is not JSON: {e}")))?;
        // arrow-avro's streaming decoder reads framed records only; unframed bodies get a
        // Confluent frame with a private id in a scratch buffer (see `decode`).
        let mut store = SchemaStore::new_with_type(FingerprintAlgorithm::Id);
        store.set(Fingerprint::Id(id), AvroSchema::new(schema_json.to_string())).map_err(avro_config)?;
        let probe = ReaderBuilder::new().with_writer_schema_store(store.clone()).build_decoder().map_err(avro_config)?;
        Ok(AvroReader { store, framing, schema: probe.schema() })
    }

    /// The Arrow schema of the decoded rows.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Decodes every record into one batch; fails on the first malformed record (the caller
    /// then decodes one by one to isolate it). One row more than records is allowed, so a
    /// record with trailing bytes that happen to decode shows as a count mismatch.
    pub fn decode(&self, records: &[&[u8]]) -> Result<RecordBatch> {
        let mut decoder = ReaderBuilder::new()
            .with_writer_schema_store(self.store.clone())
            .with_batch_size(records.len() + 1)
            .build_decoder()
            .map_err(avro_config)?;
        let mut framed = Vec::new();
        for record in records {
            let input: &[u8] = match self.framing {
                AvroFraming::Confluent => record,
                AvroFraming::None => {
                    framed.clear();
                    framed.push(0);
                    framed.extend_from_slice(&UNFRAMED_ID.to_be_bytes());
                    framed.extend_from_slice(record);
                    &framed
                }
            };
            let used = decoder.decode(input).map_err(avro_data)?;
            if used != input.len() {
                return Err(CoreError::data(format!("Avro record is truncated or has trailing bytes ({used} of {} bytes read)", input.len())));
            }
        }
        let batch = decoder.flush().map_err(avro_data)?;
        Ok(batch.unwrap_or_else(|| RecordBatch::new_empty(self.schema.clone())))
    }
}

/// Encodes every row as one unframed Avro body; returns the bytes and `rows + 1` offsets.
/// `schema_json`, when given, is the writer schema (it must fit the columns); otherwise one
/// is derived from the Arrow schema.
pub fn encode(batch: &RecordBatch, schema_json: Option<&str>) -> Result<(Vec<u8>, Vec<i64>)> {
    let mut arrow_schema: Schema = batch.schema().as_ref().clone();
    if let Some(json) = schema_json {
        reject_nulls_the_schema_cannot_hold(batch, json)?;
        arrow_schema.metadata.insert(SCHEMA_METADATA_KEY.to_string(), json.to_string());
    }
    let mut encoder = WriterBuilder::new(arrow_schema.clone()).build_encoder::<AvroBinaryFormat>().map_err(avro_config)?;
    let batch = batch.clone().with_schema(Arc::new(arrow_schema))?;
    encoder.encode(&batch).map_err(|e| CoreError::new(ErrorKind::Execution, format!("Avro encoding: {e}")))?;
    let rows = encoder.flush();
    let offsets = rows.offsets().iter().map(|&o| o as i64).collect();
    Ok((Vec::from(rows.bytes().clone()), offsets))
}

/// arrow-avro writes a null in a field whose writer type has no "null" branch as that type's
/// zero value (an empty string, 0): a different row. Refuse it instead, naming column and row.
fn reject_nulls_the_schema_cannot_hold(batch: &RecordBatch, schema_json: &str) -> Result<()> {
    let schema: serde_json::Value = serde_json::from_str(schema_json).map_err(|e| CoreError::config(format!("Avro schema is not JSON: {e}")))?;
    let Some(fields) = schema.get("fields").and_then(|f| f.as_array()) else { return Ok(()) };
    for field in fields {
        let (Some(name), Some(avro_type)) = (field.get("name").and_then(|n| n.as_str()), field.get("type")) else { continue };
        let takes_null = match avro_type {
            serde_json::Value::String(t) => t == "null",
            serde_json::Value::Array(branches) => branches.iter().any(|b| b.as_str() == Some("null")),
            _ => false,
        };
        let Some(column) = batch.column_by_name(name) else { continue };
        if !takes_null && column.null_count() > 0 {
            let row = (0..column.len()).find(|&i| column.is_null(i)).unwrap_or(0);
            return Err(CoreError::data(format!(
                "Avro encoding: column '{name}' is null in row {row}, but the writer schema's field '{name}' has no \"null\" branch; declare it as [\"null\", ...] or filter the nulls out"
            )));
        }
    }
    Ok(())
}

fn avro_config(e: impl std::fmt::Display) -> CoreError {
    CoreError::config(format!("Avro schema: {e}"))
}

fn avro_data(e: impl std::fmt::Display) -> CoreError {
    CoreError::data(format!("Avro record: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{AsArray, Int64Array, StringArray};
    use arrow::datatypes::{DataType, Field, Int64Type};

    const SCHEMA: &str = r#"{"type":"record","name":"Bid","fields":[
        {"name":"auction","type":"long"},{"name":"channel","type":"string"}]}"#;

    fn bids() -> RecordBatch {
        let schema = Schema::new(vec![Field::new("auction", DataType::Int64, false), Field::new("channel", DataType::Utf8, false)]);
        RecordBatch::try_new(Arc::new(schema), vec![Arc::new(Int64Array::from(vec![7, 300_000])), Arc::new(StringArray::from(vec!["apple", "ü"]))])
            .unwrap()
    }

    fn records(bytes: &[u8], offsets: &[i64]) -> Vec<Vec<u8>> {
        offsets.windows(2).map(|w| bytes[w[0] as usize..w[1] as usize].to_vec()).collect()
    }

    #[test]
    fn unframed_round_trip() {
        let (bytes, offsets) = encode(&bids(), Some(SCHEMA)).unwrap();
        assert_eq!(offsets.len(), 3);
        let owned = records(&bytes, &offsets);
        let slices: Vec<&[u8]> = owned.iter().map(Vec::as_slice).collect();
        let reader = AvroReader::new(SCHEMA, AvroFraming::None, None).unwrap();
        let batch = reader.decode(&slices).unwrap();
        assert_eq!(batch.num_rows(), 2);
        assert_eq!(batch.column(0).as_primitive::<Int64Type>().values(), &[7, 300_000]);
        assert_eq!(batch.column(1).as_string::<i32>().value(1), "ü");
    }

    #[test]
    fn confluent_frames_carry_the_id() {
        let (bytes, offsets) = encode(&bids(), None).unwrap();
        let framed: Vec<Vec<u8>> = records(&bytes, &offsets).into_iter().map(|body| [vec![0u8, 0, 0, 0, 42], body].concat()).collect();
        let slices: Vec<&[u8]> = framed.iter().map(Vec::as_slice).collect();
        let reader = AvroReader::new(SCHEMA, AvroFraming::Confluent, Some(42)).unwrap();
        assert_eq!(reader.decode(&slices).unwrap().num_rows(), 2);
        let other = AvroReader::new(SCHEMA, AvroFraming::Confluent, Some(43)).unwrap();
        assert!(other.decode(&slices).is_err(), "a record with an unknown schema id is malformed");
    }

    #[test]
    fn truncated_and_trailing_bytes_are_errors() {
        let (bytes, offsets) = encode(&bids(), Some(SCHEMA)).unwrap();
        let reader = AvroReader::new(SCHEMA, AvroFraming::None, None).unwrap();
        let whole = &bytes[offsets[1] as usize..offsets[2] as usize];
        let err = reader.decode(&[&whole[..whole.len() - 1]]).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Data, "{}", err.message);
        let mut longer = whole.to_vec();
        longer.push(0x55);
        assert!(reader.decode(&[&longer]).is_err());
    }

    #[test]
    fn a_null_in_a_field_without_a_null_branch_is_an_error_not_an_empty_string() {
        let schema = Schema::new(vec![Field::new("auction", DataType::Int64, false), Field::new("channel", DataType::Utf8, true)]);
        let batch = RecordBatch::try_new(
            Arc::new(schema),
            vec![Arc::new(Int64Array::from(vec![7, 8])), Arc::new(StringArray::from(vec![Some("apple"), None]))],
        )
        .unwrap();
        let err = encode(&batch, Some(SCHEMA)).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Data, "{}", err.message);
        assert!(err.message.contains("'channel' is null in row 1"), "{}", err.message);
        let nullable = r#"{"type":"record","name":"Bid","fields":[
            {"name":"auction","type":"long"},{"name":"channel","type":["null","string"]}]}"#;
        let (bytes, offsets) = encode(&batch, Some(nullable)).unwrap();
        let owned = records(&bytes, &offsets);
        let slices: Vec<&[u8]> = owned.iter().map(Vec::as_slice).collect();
        let decoded = AvroReader::new(nullable, AvroFraming::None, None).unwrap().decode(&slices).unwrap();
        assert!(decoded.column(1).is_null(1), "the null stays a null");
    }

    #[test]
    fn bad_schema_is_a_config_error() {
        assert_eq!(AvroReader::new("{", AvroFraming::None, None).err().unwrap().kind, ErrorKind::Config);
        let err = AvroReader::new(r#"{"type":"record","name":"X","fields":[{"name":"a","type":"nope"}]}"#, AvroFraming::None, None);
        assert_eq!(err.err().unwrap().kind, ErrorKind::Config);
        assert_eq!(reader_schema_of_zero_records().num_rows(), 0);
    }

    fn reader_schema_of_zero_records() -> RecordBatch {
        AvroReader::new(SCHEMA, AvroFraming::None, None).unwrap().decode(&[]).unwrap()
    }
}
