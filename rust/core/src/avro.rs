//! Avro records ↔ Arrow, for Kafka. A record is one Avro datum: the bare binary body (no
//! framing, the schema given by the pipeline) or Confluent's wire format (magic byte 0 and a
//! 4-byte schema id before the body). Built on arrow-avro, which decodes straight into Arrow
//! builders — no per-record value objects.

use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::{Field, Schema, SchemaRef};
use arrow_avro::reader::ReaderBuilder;
use arrow_avro::schema::{AvroSchema, Fingerprint, FingerprintAlgorithm, SchemaStore, SCHEMA_METADATA_KEY};
use arrow_avro::writer::format::AvroBinaryFormat;
use arrow_avro::writer::WriterBuilder;
use serde::Deserialize;

use crate::avro_check::AvroShape;
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
    /// The writer schema's layout, each record checked against it before arrow-avro reads it.
    shape: AvroShape,
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
        let parsed =
            serde_json::from_str::<serde_json::Value>(schema_json).map_err(|e| CoreError::config(format!("Avro schema is not JSON: {e}")))?;
        // arrow-avro's streaming decoder reads framed records only; unframed bodies get a
        // Confluent frame with a private id in a scratch buffer (see `decode`).
        let mut store = SchemaStore::new_with_type(FingerprintAlgorithm::Id);
        store.set(Fingerprint::Id(id), AvroSchema::new(schema_json.to_string())).map_err(avro_config)?;
        let probe = ReaderBuilder::new().with_writer_schema_store(store.clone()).build_decoder().map_err(avro_config)?;
        let shape = AvroShape::new(&parsed).map_err(avro_config)?;
        let schema = readable(RecordBatch::new_empty(probe.schema()))?.schema();
        Ok(AvroReader { store, framing, schema, shape })
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
            // A Confluent frame's magic byte and schema id are arrow-avro's to check.
            let body = match self.framing {
                AvroFraming::Confluent => record.get(5..),
                AvroFraming::None => Some(*record),
            };
            if let Some(body) = body {
                self.shape.check(body).map_err(CoreError::data)?;
            }
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
        let Some(batch) = batch else { return Ok(RecordBatch::new_empty(self.schema.clone())) };
        let batch = readable(batch)?;
        for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
            check_fits(field.name(), column)?;
        }
        Ok(batch)
    }
}

/// `batch` as the pipeline reads it: an Avro enum as its symbol and a uuid as its hyphenated text,
/// wherever they are nested. arrow-avro reads an enum as a dictionary, which the JVM's import
/// refuses (it needs a dictionary provider: a topic with an enum could not be read at all), and a
/// uuid as 16 bytes, which every text sink printed as 32 hex digits — another value than the
/// record's string. The Avro sink turns both back (see [`fit_to_writer_schema`]).
fn readable(batch: RecordBatch) -> Result<RecordBatch> {
    let schema = batch.schema();
    let mut fields = Vec::with_capacity(schema.fields().len());
    let mut columns = Vec::with_capacity(schema.fields().len());
    for (field, column) in schema.fields().iter().zip(batch.columns()) {
        let (field, column) = readable_column(field, column)?;
        fields.push(field);
        columns.push(column);
    }
    let options = arrow::array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    Ok(RecordBatch::try_new_with_options(Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())), columns, &options)?)
}

fn readable_column(
    field: &arrow::datatypes::FieldRef,
    column: &arrow::array::ArrayRef,
) -> Result<(arrow::datatypes::FieldRef, arrow::array::ArrayRef)> {
    use arrow::array::{Array, AsArray, ListArray, MapArray, StructArray};
    use arrow::datatypes::DataType;
    let with_type = |data_type: DataType| {
        let mut metadata = field.metadata().clone();
        metadata.remove("ARROW:extension:name");
        metadata.remove("ARROW:extension:metadata");
        metadata.remove("logicalType");
        Arc::new(Field::new(field.name(), data_type, field.is_nullable()).with_metadata(metadata))
    };
    Ok(match column.data_type() {
        DataType::Dictionary(_, values) if values.as_ref() == &DataType::Utf8 => {
            (with_type(DataType::Utf8), arrow::compute::cast(column, &DataType::Utf8)?)
        }
        DataType::FixedSizeBinary(16) if is_uuid(field) => {
            let bytes = column.as_fixed_size_binary();
            let mut text = arrow::array::StringBuilder::with_capacity(bytes.len(), bytes.len() * uuid::fmt::Hyphenated::LENGTH);
            let mut buffer = [0u8; uuid::fmt::Hyphenated::LENGTH];
            for value in bytes.iter() {
                match value.map(uuid::Uuid::from_slice).transpose() {
                    Ok(Some(id)) => text.append_value(id.hyphenated().encode_lower(&mut buffer)),
                    Ok(None) => text.append_null(),
                    Err(e) => return Err(CoreError::data(format!("column '{}': {e}", field.name()))),
                }
            }
            let text = text.finish();
            (with_type(DataType::Utf8), Arc::new(text))
        }
        DataType::Struct(children) => {
            let array = column.as_struct();
            let mut fields = Vec::with_capacity(children.len());
            let mut columns = Vec::with_capacity(children.len());
            for (child, values) in children.iter().zip(array.columns()) {
                let (child, values) = readable_column(child, values)?;
                fields.push(child);
                columns.push(values);
            }
            let fields = arrow::datatypes::Fields::from(fields);
            let rebuilt = StructArray::try_new_with_length(fields.clone(), columns, array.nulls().cloned(), array.len())?;
            (with_type(DataType::Struct(fields)), Arc::new(rebuilt))
        }
        DataType::List(item) => {
            let array = column.as_list::<i32>();
            let (item, values) = readable_column(item, array.values())?;
            let rebuilt = ListArray::try_new(item.clone(), array.offsets().clone(), values, array.nulls().cloned())?;
            (with_type(DataType::List(item)), Arc::new(rebuilt))
        }
        DataType::Map(entries, sorted) => {
            let array = column.as_map();
            let entries_array: arrow::array::ArrayRef = Arc::new(array.entries().clone());
            let (entries, rebuilt_entries) = readable_column(entries, &entries_array)?;
            let rebuilt =
                MapArray::try_new(entries.clone(), array.offsets().clone(), rebuilt_entries.as_struct().clone(), array.nulls().cloned(), *sorted)?;
            (with_type(DataType::Map(entries, *sorted)), Arc::new(rebuilt))
        }
        _ => (field.clone(), column.clone()),
    })
}

/// Whether arrow-avro marked the field as an Avro uuid (by extension type or logical type).
fn is_uuid(field: &Field) -> bool {
    let metadata = field.metadata();
    metadata.get("ARROW:extension:name").is_some_and(|n| n == "arrow.uuid") || metadata.get("logicalType").is_some_and(|t| t == "uuid")
}

/// Fails naming the first decimal arrow-avro stored with more digits than its precision: it
/// keeps whatever unscaled value the bytes hold, and arrow's writers then print its first digits
/// only (123456 in decimal(4, 2) as `12.34`). A record holding one is malformed: the caller
/// isolates it as a dead letter. Timestamps and times are taken whatever their value, as the
/// Avro sink writes them (a JSON or CSV sink refuses those text cannot hold).
fn check_fits(name: &str, array: &arrow::array::ArrayRef) -> Result<()> {
    use arrow::array::AsArray;
    use arrow::datatypes::{DataType, Decimal128Type, Decimal256Type, Decimal32Type, Decimal64Type};
    let does_not_fit = |e: arrow::error::ArrowError| CoreError::data(format!("column '{name}': {e}"));
    match array.data_type() {
        DataType::Decimal32(p, _) => array.as_primitive::<Decimal32Type>().validate_decimal_precision(*p).map_err(does_not_fit),
        DataType::Decimal64(p, _) => array.as_primitive::<Decimal64Type>().validate_decimal_precision(*p).map_err(does_not_fit),
        DataType::Decimal128(p, _) => array.as_primitive::<Decimal128Type>().validate_decimal_precision(*p).map_err(does_not_fit),
        DataType::Decimal256(p, _) => array.as_primitive::<Decimal256Type>().validate_decimal_precision(*p).map_err(does_not_fit),
        DataType::Struct(fields) => {
            fields.iter().zip(array.as_struct().columns()).try_for_each(|(field, child)| check_fits(&format!("{name}.{}", field.name()), child))
        }
        DataType::List(_) => check_fits(name, array.as_list::<i32>().values()),
        DataType::LargeList(_) => check_fits(name, array.as_list::<i64>().values()),
        DataType::Map(_, _) => check_fits(name, &(Arc::new(array.as_map().entries().clone()) as arrow::array::ArrayRef)),
        _ => Ok(()),
    }
}

/// Encodes every row as one unframed Avro body; returns the bytes and `rows + 1` offsets.
/// `schema_json`, when given, is the writer schema: its fields are written from the columns of
/// their names, which must hold values of the fields' types (see [`fit_to_writer_schema`]);
/// otherwise one is derived from the Arrow schema.
pub fn encode(batch: &RecordBatch, schema_json: Option<&str>) -> Result<(Vec<u8>, Vec<i64>)> {
    refuse_sub_microsecond_times(batch)?;
    let batch = match schema_json {
        Some(json) => {
            let schema: serde_json::Value = serde_json::from_str(json).map_err(|e| CoreError::config(format!("Avro schema is not JSON: {e}")))?;
            reject_nulls_the_schema_cannot_hold(batch, &schema)?;
            let fitted = fit_to_writer_schema(batch, &schema, json)?;
            let mut arrow_schema = fitted.schema().as_ref().clone();
            arrow_schema.metadata.insert(SCHEMA_METADATA_KEY.to_string(), json.to_string());
            fitted.with_schema(Arc::new(arrow_schema))?
        }
        None => batch.clone(),
    };
    let mut encoder = WriterBuilder::new(batch.schema().as_ref().clone()).build_encoder::<AvroBinaryFormat>().map_err(avro_config)?;
    encoder.encode(&batch).map_err(|e| CoreError::new(ErrorKind::Execution, format!("Avro encoding: {e}")))?;
    let rows = encoder.flush();
    let offsets = rows.offsets().iter().map(|&o| o as i64).collect();
    Ok((Vec::from(rows.bytes().clone()), offsets))
}

/// Avro's times are micro- or milliseconds; arrow-avro writes a time of nanoseconds as
/// `time-micros` and cuts the nanoseconds off (12:00:00.123456789 was 12:00:00.123456), where a
/// timestamp that would change is refused. A time with nanoseconds is refused too, naming the
/// column (`st.t` inside a struct) and the value; also inside structs, lists and maps.
fn refuse_sub_microsecond_times(batch: &RecordBatch) -> Result<()> {
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        sub_microsecond_time(field.name(), column)?;
    }
    Ok(())
}

fn sub_microsecond_time(name: &str, array: &arrow::array::ArrayRef) -> Result<()> {
    use arrow::array::{Array, AsArray};
    use arrow::datatypes::{DataType, Time64NanosecondType, TimeUnit};
    match array.data_type() {
        DataType::Time64(TimeUnit::Nanosecond) => {
            let times = array.as_primitive::<Time64NanosecondType>();
            if let Some(i) = (0..times.len()).find(|&i| times.is_valid(i) && times.value(i) % 1000 != 0) {
                let value = arrow::util::display::ArrayFormatter::try_new(array.as_ref(), &Default::default())
                    .map(|f| f.value(i).to_string())
                    .unwrap_or_default();
                return Err(CoreError::data(format!(
                    "Avro encoding: column '{name}' holds {value}, but Avro times hold microseconds: its nanoseconds would be lost; cast it to microseconds in the query (arrow_cast(t, 'Time64(Microsecond)'))"
                )));
            }
            Ok(())
        }
        DataType::Struct(fields) => {
            fields.iter().zip(array.as_struct().columns()).try_for_each(|(f, child)| sub_microsecond_time(&format!("{name}.{}", f.name()), child))
        }
        DataType::List(_) => sub_microsecond_time(&format!("{name}[]"), array.as_list::<i32>().values()),
        DataType::LargeList(_) => sub_microsecond_time(&format!("{name}[]"), array.as_list::<i64>().values()),
        DataType::Map(_, _) => sub_microsecond_time(&format!("{name}{{}}"), array.as_map().values()),
        _ => Ok(()),
    }
}

/// arrow-avro writes a null in a field whose writer type has no "null" branch as that type's
/// zero value (an empty string, 0): a different row. Refuse it instead, naming column and row —
/// also inside records, arrays and maps (`rec.x`, `tags[]`, `attrs{}`), where it was written so too.
fn reject_nulls_the_schema_cannot_hold(batch: &RecordBatch, schema: &serde_json::Value) -> Result<()> {
    let Some(fields) = schema.get("fields").and_then(|f| f.as_array()) else { return Ok(()) };
    let mut named = std::collections::HashMap::new();
    named_types(schema, "", &mut named);
    for field in fields {
        let (Some(name), Some(avro_type)) = (field.get("name").and_then(|n| n.as_str()), field.get("type")) else { continue };
        let Some(column) = batch.column_by_name(name) else { continue };
        let rows: Vec<Option<usize>> = (0..column.len()).map(Some).collect();
        if let Some((place, row)) = null_not_held(column.as_ref(), avro_type, &named, &rows, name.to_string()) {
            return Err(CoreError::data(format!(
                "Avro encoding: column '{place}' is null in row {row}, but the writer schema's type there has no \"null\" branch; declare it as [\"null\", ...] or filter the nulls out"
            )));
        }
    }
    Ok(())
}

/// The place and row of the first null of `array` (whose index i is row `rows[i]` of the batch, or
/// no row when a parent is null) that `avro_type` cannot hold, looking into records, arrays and maps.
fn null_not_held(
    array: &dyn arrow::array::Array,
    avro_type: &serde_json::Value,
    named: &std::collections::HashMap<String, serde_json::Value>,
    rows: &[Option<usize>],
    place: String,
) -> Option<(String, usize)> {
    use arrow::array::AsArray;
    use arrow::datatypes::DataType;
    use serde_json::Value;
    let avro_type = by_definition(avro_type, named);
    let takes_null = match &avro_type {
        Value::String(t) => t == "null",
        Value::Array(branches) => branches.iter().any(|b| b.as_str() == Some("null")),
        _ => false,
    };
    if !takes_null && array.null_count() > 0 {
        if let Some(row) = (0..array.len()).find_map(|i| rows[i].filter(|_| array.is_null(i))) {
            return Some((place, row));
        }
    }
    let inner = match plain(&avro_type) {
        Value::Object(members) => members,
        _ => return None,
    };
    let inner_type = |key: &str| -> Option<Value> {
        // The branch of the union the value takes, as written (plain() dropped its names).
        let declared = match &avro_type {
            Value::Array(branches) => branches.iter().map(|b| by_definition(b, named)).find(|b| b.as_str() != Some("null"))?,
            other => other.clone(),
        };
        declared.get(key).cloned()
    };
    let valid_rows = |i: usize| rows[i].filter(|_| array.is_valid(i));
    match (array.data_type(), inner.get("type").and_then(Value::as_str)) {
        (DataType::Struct(_), Some("record")) => {
            let structs = array.as_struct();
            let child_rows: Vec<Option<usize>> = (0..array.len()).map(valid_rows).collect();
            for field in inner_type("fields")?.as_array()? {
                let (Some(name), Some(field_type)) = (field.get("name").and_then(Value::as_str), field.get("type")) else { continue };
                let Some(child) = structs.column_by_name(name) else { continue };
                if let Some(found) = null_not_held(child.as_ref(), field_type, named, &child_rows, format!("{place}.{name}")) {
                    return Some(found);
                }
            }
            None
        }
        (DataType::List(_) | DataType::LargeList(_) | DataType::Map(_, _), Some(kind @ ("array" | "map"))) => {
            let (offsets, values): (Vec<usize>, arrow::array::ArrayRef) = match array.data_type() {
                DataType::List(_) => {
                    let list = array.as_list::<i32>();
                    (list.value_offsets().iter().map(|&o| o as usize).collect(), list.values().clone())
                }
                DataType::LargeList(_) => {
                    let list = array.as_list::<i64>();
                    (list.value_offsets().iter().map(|&o| o as usize).collect(), list.values().clone())
                }
                _ => {
                    let map = array.as_map();
                    (map.value_offsets().iter().map(|&o| o as usize).collect(), map.values().clone())
                }
            };
            let mut item_rows = vec![None; values.len()];
            for i in 0..array.len() {
                if let Some(row) = valid_rows(i) {
                    item_rows[offsets[i]..offsets[i + 1]].iter_mut().for_each(|r| *r = Some(row));
                }
            }
            let (key, suffix) = if kind == "array" { ("items", "[]") } else { ("values", "{}") };
            null_not_held(values.as_ref(), &inner_type(key)?, named, &item_rows, format!("{place}{suffix}"))
        }
        _ => None,
    }
}

/// `batch` with each column written as its writer-schema field's type. arrow-avro writes a
/// column by its Arrow type whatever the writer schema says, so a Float32 under "double", a
/// timestamp in milliseconds under "timestamp-micros" or a bigint under "int" made records a
/// reader of that schema decodes to other values, or cannot decode. A column whose Avro type
/// differs is converted to the field's type when every value survives the trip there and back
/// (bigint to "int" while it fits, seconds to "timestamp-micros"); else the batch is refused,
/// naming the column, the row and both types. "int" under "long" and "string" under "bytes"
/// are written as they are: their encodings are the same.
fn fit_to_writer_schema(batch: &RecordBatch, schema: &serde_json::Value, json: &str) -> Result<RecordBatch> {
    let Some(fields) = schema.get("fields").and_then(|f| f.as_array()) else { return Ok(batch.clone()) };
    let written = AvroSchema::try_from(batch.schema().as_ref()).map_err(avro_config)?;
    let written: serde_json::Value = serde_json::from_str(&written.json_string).map_err(avro_config)?;
    let field_type = |schema: &serde_json::Value, name: &str| -> Option<serde_json::Value> {
        schema.get("fields")?.as_array()?.iter().find(|f| f.get("name").and_then(|n| n.as_str()) == Some(name)).and_then(|f| f.get("type")).map(plain)
    };
    let mut columns = batch.columns().to_vec();
    let mut fields_out: Vec<arrow::datatypes::FieldRef> = batch.schema().fields().iter().cloned().collect();
    let mut reader_schema: Option<SchemaRef> = None;
    let mut named = std::collections::HashMap::new();
    named_types(schema, "", &mut named);
    for field in fields {
        let Some(name) = field.get("name").and_then(|n| n.as_str()) else { continue };
        let wanted = field.get("type").map(|t| plain(&by_definition(t, &named)));
        let (Ok(index), Some(wanted)) = (batch.schema().index_of(name), wanted) else { continue };
        let Some(has) = field_type(&written, name) else { continue };
        if same_encoding(&has, &wanted) {
            continue;
        }
        let column = batch.column(index);
        let refuse = |why: String| {
            CoreError::data(format!(
                "Avro encoding: column '{name}' ({}, written as Avro {has}) does not fit the writer schema's field '{name}' ({wanted}): {why}; CAST it in the query",
                column.data_type()
            ))
        };
        if let Some(fitted) = text_into_enum_or_uuid(column, &wanted).map_err(refuse)? {
            fields_out[index] = Arc::new(Field::new(name, fitted.data_type().clone(), batch.schema().field(index).is_nullable()));
            columns[index] = fitted;
            continue;
        }
        if reader_schema.is_none() {
            reader_schema = Some(AvroReader::new(json, AvroFraming::None, None)?.schema().clone());
        }
        let target = reader_schema.as_ref().and_then(|s| s.field_with_name(name).ok()).map(|f| f.data_type().clone());
        let Some(target) = target else { return Err(refuse("no Arrow type reads that field".into())) };
        let strict = arrow::compute::CastOptions { safe: false, ..Default::default() };
        let converted = arrow::compute::cast_with_options(column, &target, &strict).map_err(|e| refuse(format!("{e}")))?;
        let back = arrow::compute::cast_with_options(&converted, column.data_type(), &strict).map_err(|e| refuse(format!("{e}")))?;
        let changed = arrow::compute::kernels::cmp::distinct(column, &back).map_err(|e| refuse(format!("{e}")))?;
        if let Some(row) = changed.iter().position(|d| d == Some(true)) {
            let value = arrow::util::display::ArrayFormatter::try_new(column.as_ref(), &Default::default())
                .map(|f| f.value(row).to_string())
                .unwrap_or_default();
            return Err(refuse(format!("row {row}'s value {value} would change")));
        }
        let converted_field = Arc::new(Field::new(name, target, batch.schema().field(index).is_nullable()));
        let as_written = AvroSchema::try_from(&Schema::new(vec![converted_field.clone()])).map_err(avro_config)?;
        let as_written: serde_json::Value = serde_json::from_str(&as_written.json_string).map_err(avro_config)?;
        if !field_type(&as_written, name).is_some_and(|t| same_encoding(&t, &wanted)) {
            return Err(refuse(format!(
                "as {} it would be written as Avro {}",
                converted_field.data_type(),
                field_type(&as_written, name).unwrap_or_default()
            )));
        }
        columns[index] = converted;
        fields_out[index] = converted_field;
    }
    let options = arrow::array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    Ok(RecordBatch::try_new_with_options(Arc::new(Schema::new_with_metadata(fields_out, batch.schema().metadata().clone())), columns, &options)?)
}

/// A text column under an Avro enum or uuid field, as the Avro source reads them (see
/// [`readable`]): an enum as the index of its symbol (arrow-avro writes an enum from a dictionary
/// whose values are the symbols), a uuid as the text it is, once every value is a uuid. None for
/// any other column or field; a value that is no symbol or no uuid is refused, naming its row.
fn text_into_enum_or_uuid(
    column: &arrow::array::ArrayRef,
    wanted: &serde_json::Value,
) -> std::result::Result<Option<arrow::array::ArrayRef>, String> {
    use arrow::array::{Array, AsArray, DictionaryArray, Int32Array, StringArray};
    use arrow::datatypes::DataType;
    if !matches!(column.data_type(), DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View) {
        return Ok(None);
    }
    let text = arrow::compute::cast(column, &DataType::Utf8).map_err(|e| e.to_string())?;
    let text = text.as_string::<i32>();
    if wanted.get("type").and_then(|t| t.as_str()) == Some("enum") {
        let symbols: Vec<&str> =
            wanted.get("symbols").and_then(|s| s.as_array()).map_or_else(Vec::new, |s| s.iter().filter_map(|v| v.as_str()).collect());
        let keys = text
            .iter()
            .enumerate()
            .map(|(row, value)| match value {
                None => Ok(None),
                Some(value) => symbols
                    .iter()
                    .position(|s| *s == value)
                    .map(|i| Some(i as i32))
                    .ok_or_else(|| format!("row {row}'s value '{value}' is not one of the enum's symbols {symbols:?}")),
            })
            .collect::<std::result::Result<Int32Array, String>>()?;
        let dictionary = DictionaryArray::try_new(keys, Arc::new(StringArray::from(symbols))).map_err(|e| e.to_string())?;
        return Ok(Some(Arc::new(dictionary)));
    }
    if wanted.get("logicalType").and_then(|t| t.as_str()) == Some("uuid") && wanted.get("type").and_then(|t| t.as_str()) == Some("string") {
        for (row, value) in text.iter().enumerate() {
            if let Some(value) = value {
                if value.len() != uuid::fmt::Hyphenated::LENGTH || uuid::Uuid::try_parse(value).is_err() {
                    return Err(format!("row {row}'s value '{value}' is not a uuid (8-4-4-4-12 hex digits)"));
                }
            }
        }
        return Ok(Some(Arc::new(text.clone())));
    }
    Ok(None)
}

/// Every named type (record, enum, fixed) `schema` defines, by full and by short name.
fn named_types(schema: &serde_json::Value, namespace: &str, out: &mut std::collections::HashMap<String, serde_json::Value>) {
    use serde_json::Value;
    match schema {
        Value::Array(branches) => branches.iter().for_each(|b| named_types(b, namespace, out)),
        Value::Object(members) => {
            let namespace = members.get("namespace").and_then(Value::as_str).unwrap_or(namespace);
            if let (Some(Value::String(kind)), Some(Value::String(name))) = (members.get("type"), members.get("name")) {
                if matches!(kind.as_str(), "record" | "error" | "enum" | "fixed") {
                    let short = name.rsplit('.').next().unwrap_or(name);
                    let full = if name.contains('.') || namespace.is_empty() { name.clone() } else { format!("{namespace}.{name}") };
                    out.insert(full, schema.clone());
                    out.entry(short.to_string()).or_insert_with(|| schema.clone());
                }
            }
            for key in ["type", "items", "values"] {
                if let Some(inner) = members.get(key).filter(|v| !v.is_string()) {
                    named_types(inner, namespace, out);
                }
            }
            if let Some(Value::Array(fields)) = members.get("fields") {
                fields.iter().for_each(|f| named_types(f, namespace, out));
            }
        }
        _ => {}
    }
}

/// A field's type with a reference to a named type (`"Suit"`), alone or as a union branch,
/// replaced by the type's definition.
fn by_definition(avro_type: &serde_json::Value, named: &std::collections::HashMap<String, serde_json::Value>) -> serde_json::Value {
    use serde_json::Value;
    match avro_type {
        Value::String(name) => named.get(name).cloned().unwrap_or_else(|| avro_type.clone()),
        Value::Array(branches) => Value::Array(branches.iter().map(|b| by_definition(b, named)).collect()),
        other => other.clone(),
    }
}

/// Whether values written as Avro type `has` read back unchanged as `wanted` (both `plain`).
fn same_encoding(has: &serde_json::Value, wanted: &serde_json::Value) -> bool {
    has == wanted || (has == "int" && wanted == "long") || (has == "string" && wanted == "bytes")
}

/// An Avro type as far as its encoding goes: a nullable union as its other branch (the writer
/// picks the branch index), names, docs, defaults and arrow-avro's own hints dropped, and
/// `{"type": "long"}` as `"long"`.
fn plain(avro_type: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match avro_type {
        Value::Array(branches) => {
            let kept: Vec<Value> = branches.iter().filter(|b| b.as_str() != Some("null")).map(plain).collect();
            match <[Value; 1]>::try_from(kept) {
                Ok([only]) => only,
                Err(kept) => Value::Array(kept),
            }
        }
        Value::Object(members) => {
            let named = matches!(members.get("type").and_then(Value::as_str), Some("record" | "enum" | "fixed" | "error"));
            let mut out = serde_json::Map::new();
            for (key, value) in members {
                let dropped = matches!(key.as_str(), "doc" | "aliases" | "default" | "order" | "namespace")
                    || key.starts_with("arrow")
                    || (named && key == "name");
                if dropped {
                    continue;
                }
                let value = match key.as_str() {
                    "type" | "items" | "values" => plain(value),
                    "fields" => Value::Array(value.as_array().map_or_else(Vec::new, |fields| fields.iter().map(plain).collect())),
                    _ => value.clone(),
                };
                out.insert(key.clone(), value);
            }
            match (out.len(), out.get("type")) {
                (1, Some(only)) => only.clone(),
                _ => Value::Object(out),
            }
        }
        other => other.clone(),
    }
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

    /// arrow-avro read union branch 2 of ["null", "long"] as the long: such a record (bare or
    /// framed) is malformed, naming the field, before it decodes.
    #[test]
    fn a_union_branch_out_of_range_is_an_error_not_a_value() {
        let schema = r#"{"type":"record","name":"R","fields":[{"name":"id","type":"long"},{"name":"u","type":["null","long"]}]}"#;
        let good: &[u8] = &[0x02, 0x02, 0x0a]; // id 1, branch 1, 5
        let bad: &[u8] = &[0x02, 0x04, 0x0a]; // id 1, branch 2, 5
        let reader = AvroReader::new(schema, AvroFraming::None, None).unwrap();
        assert_eq!(reader.decode(&[good]).unwrap().num_rows(), 1);
        let err = reader.decode(&[bad]).unwrap_err();
        assert!(err.message.contains("field 'u': union branch 2 is not one of its 2 branches"), "{}", err.message);
        let framed = AvroReader::new(schema, AvroFraming::Confluent, Some(7)).unwrap();
        let err = framed.decode(&[&[&[0u8, 0, 0, 0, 7][..], bad].concat()]).unwrap_err();
        assert!(err.message.contains("union branch 2"), "{}", err.message);
    }

    /// A time's nanoseconds were cut off under time-micros (given or derived schema); refused.
    #[test]
    fn a_time_with_nanoseconds_is_refused_whole_microseconds_pass() {
        use arrow::array::{ArrayRef, Time64NanosecondArray};
        let nanos = 43_200_123_456_789_i64;
        let batch =
            |t: i64| RecordBatch::try_from_iter([("t", Arc::new(Time64NanosecondArray::from(vec![Some(0), None, Some(t)])) as ArrayRef)]).unwrap();
        let micros = r#"{"type":"record","name":"T","fields":[{"name":"t","type":["null",{"type":"long","logicalType":"time-micros"}]}]}"#;
        for schema in [Some(micros), None] {
            let err = encode(&batch(nanos), schema).unwrap_err();
            assert!(err.message.contains("column 't' holds 12:00:00.123456789"), "{}", err.message);
            assert!(encode(&batch(nanos - 789), schema).is_ok());
        }
        // Inside a struct too.
        let inner = arrow::array::StructArray::from(vec![(
            Arc::new(Field::new("t", DataType::Time64(arrow::datatypes::TimeUnit::Nanosecond), true)),
            Arc::new(Time64NanosecondArray::from(vec![nanos])) as ArrayRef,
        )]);
        let nested = RecordBatch::try_from_iter([("st", Arc::new(inner) as ArrayRef)]).unwrap();
        let err = encode(&nested, None).unwrap_err();
        assert!(err.message.contains("column 'st.t' holds 12:00:00.123456789"), "{}", err.message);
    }

    /// Inside a record, an array or a map a null was written as the zero value too ("", 0).
    #[test]
    fn a_nested_null_without_a_null_branch_is_an_error_too() {
        use arrow::array::{ArrayRef, ListArray, StructArray};
        use arrow::datatypes::Int32Type;
        let x = Arc::new(StringArray::from(vec![Some("a"), None, None])) as ArrayRef;
        let rec = StructArray::new(
            vec![Field::new("x", DataType::Utf8, true)].into(),
            vec![x],
            Some(arrow::buffer::NullBuffer::from(vec![true, true, false])),
        );
        let tags = ListArray::from_iter_primitive::<Int32Type, _, _>(vec![Some(vec![Some(1)]), Some(vec![Some(2)]), Some(vec![None, Some(3)])]);
        let batch = RecordBatch::try_from_iter([("rec", Arc::new(rec) as ArrayRef), ("tags", Arc::new(tags) as ArrayRef)]).unwrap();
        let schema = |x: &str, item: &str| {
            format!(
                r#"{{"type":"record","name":"R","fields":[
                {{"name":"rec","type":["null",{{"type":"record","name":"In","fields":[{{"name":"x","type":{x}}}]}}]}},
                {{"name":"tags","type":{{"type":"array","items":{item}}}}}]}}"#
            )
        };
        let err = encode(&batch, Some(&schema(r#""string""#, r#"["null","int"]"#))).unwrap_err();
        assert!(err.message.contains("column 'rec.x' is null in row 1"), "{}", err.message);
        let err = encode(&batch, Some(&schema(r#"["null","string"]"#, r#""int""#))).unwrap_err();
        assert!(err.message.contains("column 'tags[]' is null in row 2"), "{}", err.message);
        // The null x of row 2 is inside a null record: nothing to write there.
        let (bytes, offsets) = encode(&batch, Some(&schema(r#"["null","string"]"#, r#"["null","int"]"#))).unwrap();
        assert_eq!(offsets.len(), 4, "{bytes:?}");
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

    /// An enum was read as a dictionary, which the JVM's import refused (a topic with one could
    /// not be read at all), and a uuid as 16 bytes that text sinks printed as hex. Both are read
    /// as text now, nested too, and the Avro sink writes that text back to the same bytes.
    #[test]
    fn enums_and_uuids_are_read_as_their_text_and_written_back() {
        let schema = r#"{"type":"record","name":"R","fields":[
            {"name":"suit","type":{"type":"enum","name":"Suit","symbols":["HEARTS","SPADES","CLUBS"]}},
            {"name":"maybe","type":["null","Suit"]},
            {"name":"id","type":{"type":"string","logicalType":"uuid"}},
            {"name":"inner","type":{"type":"record","name":"Inner","fields":[{"name":"s","type":"Suit"}]}},
            {"name":"many","type":{"type":"array","items":"Suit"}}]}"#;
        let text = "00112233-4455-6677-8899-aabbccddeeff";
        let string = |s: &str| [vec![(s.len() as u8) << 1], s.as_bytes().to_vec()].concat();
        // CLUBS; null branch; the uuid; inner SPADES; [HEARTS, CLUBS]
        let first = [vec![0x04, 0x00], string(text), vec![0x02, 0x04, 0x00, 0x04, 0x00]].concat();
        // HEARTS; SPADES; an upper-case uuid; inner CLUBS; []
        let second = [vec![0x00, 0x02, 0x02], string(&text.to_uppercase()), vec![0x04, 0x00]].concat();
        let reader = AvroReader::new(schema, AvroFraming::None, None).unwrap();
        let batch = reader.decode(&[&first, &second]).unwrap();
        assert_eq!(batch.schema(), *reader.schema());
        let format = |c: usize, row: usize| {
            arrow::util::display::ArrayFormatter::try_new(batch.column(c).as_ref(), &Default::default()).unwrap().value(row).to_string()
        };
        assert_eq!(batch.schema().field(0).data_type(), &DataType::Utf8);
        assert_eq!(batch.schema().field(2).data_type(), &DataType::Utf8);
        assert_eq!([format(0, 0), format(1, 0), format(2, 0), format(3, 0), format(4, 0)], ["CLUBS", "", text, "{s: SPADES}", "[HEARTS, CLUBS]"]);
        assert_eq!([format(0, 1), format(1, 1), format(2, 1), format(3, 1), format(4, 1)], ["HEARTS", "SPADES", text, "{s: CLUBS}", "[]"]);
        // Written back under a schema of the top-level fields (an enum inside a record or an
        // array is refused by the sink: `fit_to_writer_schema` fits top-level fields only).
        let flat = r#"{"type":"record","name":"R","fields":[
            {"name":"suit","type":{"type":"enum","name":"Suit","symbols":["HEARTS","SPADES","CLUBS"]}},
            {"name":"maybe","type":["null","Suit"]},
            {"name":"id","type":{"type":"string","logicalType":"uuid"}}]}"#;
        let (bytes, offsets) = encode(&batch.project(&[0, 1, 2]).unwrap(), Some(flat)).unwrap();
        let written = records(&bytes, &offsets);
        assert_eq!(written[0], [vec![0x04, 0x00], string(text)].concat(), "the first record's fields byte for byte");
        assert_eq!(written[1], [vec![0x00, 0x02, 0x02], string(text)].concat(), "the uuid in its lower-case text");
        let err = encode(&batch, Some(schema)).unwrap_err();
        assert!(err.message.contains("column 'inner'") && err.message.contains("does not fit"), "{}", err.message);
        // Without a writer schema the text is written as Avro strings.
        let (bytes, offsets) = encode(&batch, None).unwrap();
        assert_eq!(records(&bytes, &offsets)[1][..2], [0x0c, b'H'], "HEARTS as a string");

        let one = |suit: &str, id: &str| {
            let batch = RecordBatch::try_new(
                Arc::new(Schema::new(vec![Field::new("suit", DataType::Utf8, false), Field::new("id", DataType::Utf8, false)])),
                vec![Arc::new(StringArray::from(vec!["SPADES", suit])), Arc::new(StringArray::from(vec![text, id]))],
            )
            .unwrap();
            let flat = r#"{"type":"record","name":"R","fields":[
                {"name":"suit","type":{"type":"enum","name":"Suit","symbols":["HEARTS","SPADES","CLUBS"]}},
                {"name":"id","type":{"type":"string","logicalType":"uuid"}}]}"#;
            encode(&batch, Some(flat)).map(|_| ()).map_err(|e| e.message)
        };
        assert_eq!(one("CLUBS", text), Ok(()));
        let err = one("DIAMONDS", text).unwrap_err();
        assert!(err.contains("column 'suit'") && err.contains("row 1's value 'DIAMONDS' is not one of the enum's symbols"), "{err}");
        let err = one("CLUBS", "0011223344556677").unwrap_err();
        assert!(err.contains("column 'id'") && err.contains("row 1's value '0011223344556677' is not a uuid"), "{err}");
    }

    fn one_column(column: arrow::array::ArrayRef) -> RecordBatch {
        let schema = Schema::new(vec![Field::new("c", column.data_type().clone(), column.null_count() > 0)]);
        RecordBatch::try_new(Arc::new(schema), vec![column]).unwrap()
    }

    fn writer_schema(avro_type: &str) -> String {
        format!(r#"{{"type":"record","name":"R","fields":[{{"name":"c","type":{avro_type}}}]}}"#)
    }

    /// The first column as a reader of `schema_json` decodes it, formatted.
    fn read_back(batch: &RecordBatch, schema_json: &str) -> Result<Vec<String>> {
        let (bytes, offsets) = encode(batch, Some(schema_json))?;
        let owned = records(&bytes, &offsets);
        let slices: Vec<&[u8]> = owned.iter().map(Vec::as_slice).collect();
        let decoded = AvroReader::new(schema_json, AvroFraming::None, None)?.decode(&slices)?;
        let format = arrow::util::display::ArrayFormatter::try_new(decoded.column(0).as_ref(), &Default::default()).unwrap();
        Ok((0..decoded.num_rows()).map(|i| format.value(i).to_string()).collect())
    }

    /// arrow-avro writes a column by its Arrow type whatever the writer schema says: a Float32
    /// under "double" made records no reader of that schema could decode, a bigint under "int"
    /// ones whose large values it could not, and milliseconds under "timestamp-micros" instants
    /// a thousand times too early. Each column now takes its field's type when every value
    /// survives the trip, and is refused, named, when one would not.
    #[test]
    fn columns_are_written_as_the_writer_schemas_types_or_refused() {
        use arrow::array::{ArrayRef, Float32Array, Float64Array, Int32Array, TimestampMicrosecondArray, TimestampMillisecondArray};
        let floats: ArrayRef = Arc::new(Float32Array::from(vec![1.5, -0.0, f32::MAX]));
        assert_eq!(read_back(&one_column(floats), &writer_schema(r#""double""#)).unwrap(), ["1.5", "-0.0", "3.4028234663852886e38"]);
        let exact: ArrayRef = Arc::new(Float64Array::from(vec![1.5, 0.25]));
        assert_eq!(read_back(&one_column(exact), &writer_schema(r#""float""#)).unwrap(), ["1.5", "0.25"]);
        let inexact: ArrayRef = Arc::new(Float64Array::from(vec![1.5, 0.1]));
        let err = read_back(&one_column(inexact), &writer_schema(r#""float""#)).unwrap_err();
        assert!(err.message.contains("column 'c' (Float64, written as Avro \"double\") does not fit the writer schema's field 'c' (\"float\"): row 1's value 0.1 would change"), "{}", err.message);
        let small: ArrayRef = Arc::new(Int64Array::from(vec![-7, 300]));
        assert_eq!(read_back(&one_column(small), &writer_schema(r#"["null","int"]"#)).unwrap(), ["-7", "300"]);
        let large: ArrayRef = Arc::new(Int64Array::from(vec![1, 5_000_000_000]));
        let err = read_back(&one_column(large), &writer_schema(r#""int""#)).unwrap_err();
        assert!(err.message.contains("column 'c' (Int64") && err.message.contains("(\"int\")"), "{}", err.message);
        let millis: ArrayRef = Arc::new(TimestampMillisecondArray::from(vec![1_700_000_000_123]).with_timezone("UTC"));
        let micros_type = r#"{"type":"long","logicalType":"timestamp-micros"}"#;
        assert_eq!(read_back(&one_column(millis), &writer_schema(micros_type)).unwrap(), ["2023-11-14T22:13:20.123Z"]);
        let naive: ArrayRef = Arc::new(TimestampMillisecondArray::from(vec![1_700_000_000_123]));
        let millis_type = r#"{"type":"long","logicalType":"timestamp-millis"}"#;
        assert_eq!(read_back(&one_column(naive), &writer_schema(millis_type)).unwrap(), ["2023-11-14T22:13:20.123Z"]);
        let fine: ArrayRef = Arc::new(TimestampMicrosecondArray::from(vec![1_700_000_000_123_456]).with_timezone("UTC"));
        let err = read_back(&one_column(fine), &writer_schema(millis_type)).unwrap_err();
        assert!(err.message.contains("would change"), "{}", err.message);
        let text: ArrayRef = Arc::new(StringArray::from(vec!["7", "x"]));
        let err = read_back(&one_column(text), &writer_schema(r#""long""#)).unwrap_err();
        assert!(
            err.message.contains("column 'c' (Utf8, written as Avro \"string\")") && err.message.contains("CAST it in the query"),
            "{}",
            err.message
        );
        // Same encodings are written as they are.
        let ints: ArrayRef = Arc::new(Int32Array::from(vec![-1, 2]));
        assert_eq!(read_back(&one_column(ints), &writer_schema(r#""long""#)).unwrap(), ["-1", "2"]);
        let strings: ArrayRef = Arc::new(StringArray::from(vec!["ab"]));
        assert_eq!(read_back(&one_column(strings), &writer_schema(r#""bytes""#)).unwrap(), ["6162"]);
    }

    /// A zigzag varint, as Avro writes `int` and `long`.
    fn zigzag(v: i64) -> Vec<u8> {
        let mut u = ((v << 1) ^ (v >> 63)) as u64;
        let mut out = Vec::new();
        loop {
            let byte = (u & 0x7f) as u8;
            u >>= 7;
            if u == 0 {
                out.push(byte);
                return out;
            }
            out.push(byte | 0x80);
        }
    }

    /// Decimals with more digits than their precision (arrow-avro stores what the bytes say)
    /// make their records dead letters; the other records decode, timestamps and times as they
    /// are (the Avro sink writes any).
    #[test]
    fn decimals_past_their_precision_are_dead_letters() {
        use crate::decode::{DecoderOptions, Format, RecordDecoder};
        let schema = r#"{"type":"record","name":"R","fields":[
            {"name":"d","type":{"type":"bytes","logicalType":"decimal","precision":4,"scale":2}},
            {"name":"f","type":{"type":"fixed","name":"F","size":3,"logicalType":"decimal","precision":3,"scale":0}},
            {"name":"t","type":{"type":"long","logicalType":"timestamp-millis"}},
            {"name":"tm","type":{"type":"int","logicalType":"time-millis"}}]}"#;
        let options = DecoderOptions { avro_schema: Some(schema.to_string()), ..DecoderOptions::of(Format::Avro, ",") };
        let decoder = RecordDecoder::new(&options, None).unwrap();
        // d as bytes (length, then big-endian two's complement), f as 3 bytes, t, tm.
        let record = |d: &[u8], f: [u8; 3], t: i64, tm: i64| [zigzag(d.len() as i64), d.to_vec(), f.to_vec(), zigzag(t), zigzag(tm)].concat();
        let records = [
            record(&[0x27, 0x0f], [0, 0, 0x7b], 1_700_000_000_000, 86_399_999), // 99.99, 123: the ends that fit
            record(&[0x27, 0x10], [0, 0, 1], 0, 0),                             // 100.00 in decimal(4, 2)
            record(&[0x01, 0xe2, 0x40], [0, 0, 1], 0, 0),                       // 1234.56, which was written as 12.34
            record(&[0x01], [0, 0x03, 0xe8], 0, 0),                             // 1000 in decimal(3, 0)
            record(&[0xd8, 0xf1], [0xff, 0xfc, 0x19], 0, 0),                    // -99.99, -999: fit
            record(&[0x01], [0, 0, 1], 9_000_000_000_000_000_000, 86_400_000),  // taken as they are
        ];
        let slices: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
        let decoded = decoder.decode(&slices).unwrap();
        let d = decoded.batch.column(0).as_primitive::<arrow::datatypes::Decimal128Type>();
        assert_eq!(d.values().to_vec(), vec![9999, -9999, 1]);
        let errors = decoded.errors.expect("dead letters");
        let messages: Vec<String> = (0..errors.num_rows()).map(|i| errors.column(2).as_string::<i32>().value(i).to_string()).collect();
        assert_eq!(errors.column(0).as_primitive::<Int64Type>().values().to_vec(), vec![1, 2, 3], "{messages:?}");
        for (message, expected) in messages.iter().zip(["'d'", "'d': Invalid argument error: 1234.56 is too large", "'f'"]) {
            assert!(message.contains(&format!("column {expected}")), "{message}");
        }
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
