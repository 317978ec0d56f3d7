//! Record bytes → Arrow. A batch of records arrives as one slab plus offsets (the layout of an
//! Arrow Binary column), so the caller copies bytes once and never builds per-record objects.
//! Malformed records do not fail the batch: they come back in an error batch
//! (index, record, error) for the caller's dead-letter policy, and the rest decode normally.

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use arrow::array::{ArrayRef, BinaryBuilder, Int64Builder, RecordBatch, StringBuilder};
use arrow::compute::concat_batches;
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use serde::Deserialize;

use crate::avro::{AvroFraming, AvroReader};
use crate::error::{CoreError, Result};
use crate::flat_json::{ExactNumber, FlatJsonDecoder, ValueGuard};
use crate::{json_syntax, temporal_text};

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
    /// Debezium: how the connector wrote binary columns (its `binary.handling.mode`).
    #[serde(default)]
    pub debezium_binary: DebeziumBinary,
    /// Debezium: how the connector wrote decimal columns (its `decimal.handling.mode`).
    #[serde(default)]
    pub debezium_decimals: DebeziumDecimals,
}

/// Debezium's `binary.handling.mode` as its JSON converter writes it: `bytes` (the default) as
/// base64 text, or `hex`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DebeziumBinary {
    #[default]
    Base64,
    Hex,
}

/// Debezium's `decimal.handling.mode`: `precise` (the default: the unscaled value's two's
/// complement bytes as base64 text), `string` or `double`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DebeziumDecimals {
    #[default]
    Precise,
    String,
    Double,
}

impl DecoderOptions {
    pub fn of(format: Format, delimiter: &str) -> Self {
        DecoderOptions {
            format,
            delimiter: delimiter.to_string(),
            avro_schema: None,
            avro_framing: AvroFraming::None,
            avro_schema_id: None,
            debezium_binary: DebeziumBinary::default(),
            debezium_decimals: DebeziumDecimals::default(),
        }
    }
}

fn default_delimiter() -> String {
    ",".to_string()
}

/// Decodes records of one format and schema. Reused for every batch of a stream.
#[derive(Clone)]
pub struct RecordDecoder {
    format: Format,
    schema: SchemaRef,
    delimiter: u8,
    avro: Option<Arc<AvroReader>>,
    /// JSON rows of a flat schema: tried before arrow-json (see `flat_json`).
    flat_json: Option<Arc<FlatJsonDecoder>>,
    /// JSON records that go to arrow-json: catches the values it would store wrongly.
    guard: Option<Arc<ValueGuard>>,
    /// CSV: the schema arrow-csv decodes (decimal, float, binary, date and timestamp columns as
    /// text, converted here exactly or checked first) and the positions of those columns.
    csv_text: Option<(SchemaRef, Vec<usize>)>,
    /// JSON: numbers and booleans in string columns become their text (inferred schemas).
    text_coercion: bool,
    /// Debezium: the row's columns written in base64 (binary, and precise decimals with their scale).
    debezium_base64: Arc<Vec<(String, Base64Value)>>,
}

/// What a Debezium column's base64 text holds.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Base64Value {
    Bytes,
    /// A decimal's unscaled value (big-endian two's complement) of this scale.
    Unscaled(i8),
    /// An integer or float column: text there is a precise decimal's base64 (the column was
    /// declared with another type), which the decoder would parse as a number when it is digits.
    NotText,
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
        let (flat_json, guard) = match options.format {
            Format::Json | Format::Debezium => (FlatJsonDecoder::try_new(schema.clone()).map(Arc::new), ValueGuard::try_new(&schema).map(Arc::new)),
            _ => (None, None),
        };
        let csv_text = (options.format == Format::Csv).then(|| csv_text_schema(&schema)).flatten();
        let debezium_base64 = if options.format == Format::Debezium {
            schema
                .fields()
                .iter()
                .filter_map(|f| match f.data_type() {
                    DataType::Binary | DataType::LargeBinary | DataType::BinaryView if options.debezium_binary == DebeziumBinary::Base64 => {
                        Some((f.name().clone(), Base64Value::Bytes))
                    }
                    DataType::Decimal32(_, scale)
                    | DataType::Decimal64(_, scale)
                    | DataType::Decimal128(_, scale)
                    | DataType::Decimal256(_, scale)
                        if options.debezium_decimals == DebeziumDecimals::Precise =>
                    {
                        Some((f.name().clone(), Base64Value::Unscaled(*scale)))
                    }
                    t if (t.is_integer() || t.is_floating()) && options.debezium_decimals == DebeziumDecimals::Precise => {
                        Some((f.name().clone(), Base64Value::NotText))
                    }
                    _ => None,
                })
                .collect()
        } else {
            Vec::new()
        };
        Ok(RecordDecoder {
            format: options.format,
            schema,
            delimiter,
            avro,
            flat_json,
            guard,
            csv_text,
            text_coercion: false,
            debezium_base64: Arc::new(debezium_base64),
        })
    }

    /// The same decoder without the flat JSON fast path, to compare against.
    #[cfg(test)]
    pub(crate) fn arrow_only(&self) -> RecordDecoder {
        RecordDecoder { flat_json: None, ..self.clone() }
    }

    #[cfg(test)]
    pub(crate) fn has_fast_path(&self) -> bool {
        self.flat_json.is_some()
    }

    /// JSON numbers and booleans given to string columns become their text instead of errors
    /// (for schemas inferred with [`infer_json_schema_widening`]).
    pub fn with_text_coercion(self) -> Self {
        RecordDecoder { text_coercion: true, ..self }
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
        let mut decoded = self.decode(records)?;
        let Some(mut extra) = extra else { return Ok(decoded) };
        if extra.num_rows() != records.len() {
            return Err(CoreError::invalid(format!("{} extra rows for {} records", extra.num_rows(), records.len())));
        }
        if let (Format::Raw, Ok(index)) = (self.format, extra.schema().index_of(VALUE_IS_NULL)) {
            decoded.batch = with_null_values(decoded.batch, extra.column(index))?;
            extra.remove_column(index);
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
        // Records are fed one at a time and each must add exactly one complete row: a record
        // holding two values, or half of one, fails here even when the batch's count adds up.
        let mut decoder = self.new_decoder(records.len() + 1)?;
        for record in records {
            decoder.feed(record, self.guard.as_deref(), self.delimiter)?;
        }
        let batch = decoder.finish()?;
        match &self.csv_text {
            Some((_, columns)) => self.csv_columns_from_text(batch, columns),
            None => Ok(batch),
        }
    }

    /// Converts the text of CSV decimal and float columns exactly (arrow-csv drops decimal
    /// digits past the scale and turns float overflow into infinity), binary columns from the
    /// hex the CSV writer gives them (arrow-csv reads no binary), and dates and timestamps after
    /// refusing text that arrow would store as another value (`temporal_text`).
    fn csv_columns_from_text(&self, batch: RecordBatch, columns: &[usize]) -> Result<RecordBatch> {
        use arrow::array::{Array, AsArray, Decimal128Builder, Float32Builder, Float64Builder};
        let mut arrays = batch.columns().to_vec();
        for &c in columns {
            let field = self.schema.field(c);
            let text = batch.column(c).as_string::<i32>();
            let bad = |value: &str, why: &str| CoreError::data(format!("column '{}': {value} {why}", field.name()));
            arrays[c] = match field.data_type() {
                DataType::Decimal128(precision, scale) => {
                    let mut values = Decimal128Builder::with_capacity(text.len());
                    for value in text.iter() {
                        match value {
                            None => values.append_null(),
                            Some(v) => match ExactNumber::parse(v.as_bytes()) {
                                None => return Err(bad(v, &format!("is not a number ({})", field.data_type()))),
                                Some(n) => values.append_value(
                                    n.decimal(*precision, *scale).ok_or_else(|| bad(v, &format!("does not fit {}", field.data_type())))?,
                                ),
                            },
                        }
                    }
                    Arc::new(values.finish().with_precision_and_scale(*precision, *scale)?)
                }
                DataType::Float64 => {
                    let mut values = Float64Builder::with_capacity(text.len());
                    for value in text.iter() {
                        values.append_option(value.map(|v| csv_float::<f64>(v).ok_or_else(|| bad(v, "is not a Float64"))).transpose()?);
                    }
                    Arc::new(values.finish())
                }
                DataType::Float32 => {
                    let mut values = Float32Builder::with_capacity(text.len());
                    for value in text.iter() {
                        values.append_option(value.map(|v| csv_float::<f32>(v).ok_or_else(|| bad(v, "is not a Float32"))).transpose()?);
                    }
                    Arc::new(values.finish())
                }
                DataType::Binary => {
                    let mut values = arrow::array::BinaryBuilder::with_capacity(text.len(), 0);
                    for value in text.iter() {
                        match value {
                            None => values.append_null(),
                            Some(v) => values.append_value(
                                hex_bytes(v).ok_or_else(|| bad(v, "is not hex (a binary value is written as two hex digits per byte)"))?,
                            ),
                        }
                    }
                    Arc::new(values.finish())
                }
                DataType::Date32 | DataType::Date64 | DataType::Timestamp(..) => {
                    let target = field.data_type();
                    for value in text.iter().flatten() {
                        let problem = match target {
                            DataType::Timestamp(unit, _) => temporal_text::timestamp_problem(value, *unit),
                            _ => temporal_text::date_problem(value),
                        };
                        if let Some(why) = problem {
                            return Err(CoreError::data(format!("column '{}': {why}", field.name())));
                        }
                    }
                    // The parsers arrow-csv itself uses for these types.
                    let options = arrow::compute::CastOptions { safe: false, ..Default::default() };
                    arrow::compute::cast_with_options(batch.column(c), target, &options)
                        .map_err(|e| CoreError::data(format!("column '{}': {e}", field.name())))?
                }
                other => return Err(CoreError::invalid(format!("no text conversion to {other}"))),
            };
            debug_assert_eq!(arrays[c].len(), batch.num_rows());
        }
        let options = arrow::array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
        Ok(RecordBatch::try_new_with_options(self.schema.clone(), arrays, &options)?)
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
            match unwrap_envelope(record).and_then(|(row, op)| Ok((from_base64(row, &self.debezium_base64)?, op))) {
                Ok((_, "t")) if !self.schema.fields().iter().all(|f| f.is_nullable()) => {
                    let required: Vec<&str> = self.schema.fields().iter().filter(|f| !f.is_nullable()).map(|f| f.name().as_str()).collect();
                    let message = format!("a Debezium truncate event (op t) has no row, and {} cannot be NULL", required.join(", "));
                    errors.push(index, record, &message);
                }
                Ok((row, op)) => {
                    rows.push(row);
                    ops.push(op);
                    origin.push(index as u32);
                }
                Err(message) => errors.push(index, record, &message),
            }
        }
        let json = RecordDecoder { format: Format::Json, ..self.clone() };
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
                Err(e) => errors.push(index, record, &self.name_csv_column(e.message)),
            }
        }
        let batch = concat_batches(&self.schema, &good)?;
        Ok(Decoded { batch, errors: errors.finish("index")?, good: Some(positions) })
    }

    /// arrow-csv names a column by its index: add its name. It also gives the line within what
    /// it was fed, always 0 for a record decoded alone (the caller names the record's line).
    fn name_csv_column(&self, message: String) -> String {
        const AT: &str = "for column ";
        let Some(at) = message.find(AT).filter(|_| self.format == Format::Csv) else { return message };
        let message = message.replacen(" at line 0.", ".", 1);
        let start = at + AT.len();
        let digits = message[start..].bytes().take_while(u8::is_ascii_digit).count();
        match message[start..start + digits].parse::<usize>().ok().filter(|&i| i < self.schema.fields().len()) {
            Some(i) => format!("{} '{}'{}", &message[..start + digits], self.schema.field(i).name(), &message[start + digits..]),
            None => message,
        }
    }

    fn new_decoder(&self, batch_size: usize) -> Result<FormatDecoder> {
        Ok(match self.format {
            Format::Json => FormatDecoder::Json(
                arrow::json::ReaderBuilder::new(self.schema.clone())
                    .with_batch_size(batch_size)
                    .with_coerce_primitive(self.text_coercion)
                    .build_decoder()?,
            ),
            Format::Raw | Format::Debezium | Format::Avro => {
                return Err(CoreError::invalid("raw, debezium and avro records use no arrow format decoder"))
            }
            Format::Csv => FormatDecoder::Csv(
                arrow::csv::ReaderBuilder::new(self.csv_text.as_ref().map_or(&self.schema, |(text, _)| text).clone())
                    .with_header(false)
                    .with_delimiter(self.delimiter)
                    .with_batch_size(batch_size)
                    .build_decoder(),
            ),
        })
    }
}

// One per decoder, used per record: boxing the larger variant would add an indirection for no gain.
#[allow(clippy::large_enum_variant)]
enum FormatDecoder {
    Json(arrow::json::reader::Decoder),
    Csv(arrow::csv::reader::Decoder),
}

impl FormatDecoder {
    /// Decodes one record, which must add exactly one complete row.
    fn feed(&mut self, record: &[u8], guard: Option<&ValueGuard>, delimiter: u8) -> Result<()> {
        match self {
            FormatDecoder::Json(d) => {
                json_syntax::check(record).map_err(CoreError::data)?;
                if let Some(guard) = guard {
                    guard.check(record).map_err(CoreError::data)?;
                }
                let record = surrogate_pairs_as_utf8(record);
                let before = d.len();
                if d.decode(&record)? != record.len() {
                    return Err(CoreError::data("JSON record was not fully consumed"));
                }
                if d.has_partial_record() {
                    return Err(CoreError::data("the record ends inside a JSON value: it is cut short, or continues in the next record"));
                }
                match d.len() - before {
                    1 => {}
                    0 => return Err(CoreError::data("empty record: no JSON object")),
                    n => return Err(CoreError::data(format!("the record holds {n} JSON values; a record must be exactly one object"))),
                }
            }
            FormatDecoder::Csv(d) => {
                let record = record.strip_suffix(b"\n").unwrap_or(record);
                let record = record.strip_suffix(b"\r").unwrap_or(record);
                check_csv_record(record, delimiter)?;
                let before = d.capacity();
                let used = d.decode(record)?;
                let end = d.decode(b"\n")?;
                if used != record.len() || end != 1 {
                    return Err(CoreError::data("CSV record was not fully consumed"));
                }
                match before - d.capacity() {
                    1 => {}
                    0 => return Err(CoreError::data("empty record: no CSV row")),
                    n => return Err(CoreError::data(format!("the record holds {n} CSV rows; a record must be exactly one"))),
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

/// `record` with each escaped UTF-16 surrogate pair (`\uD840\uDC00`) written as the UTF-8 of
/// its character, which a JSON string may hold as is. arrow-json (59.3; 60.2 too) joins the two
/// halves with `|` where it must add, so every pair whose high half is D840 or above — U+20000
/// up: the CJK extensions, supplementary private use — silently decodes to the character
/// 0x10000 below it. Anything that is not a well-formed pair stays for arrow-json to refuse.
fn surrogate_pairs_as_utf8(record: &[u8]) -> Cow<'_, [u8]> {
    let mut rewritten: Option<Vec<u8>> = None;
    let mut copied = 0;
    let mut at = 0;
    while let Some(found) = record.get(at..).and_then(|rest| rest.iter().position(|&b| b == b'\\')) {
        let escape = at + found;
        // Two-byte escapes are stepped over whole, so the second backslash of `\\` starts none.
        at = escape + 2;
        let Some(c) = escaped_surrogate_pair(&record[escape..]) else { continue };
        let out = rewritten.get_or_insert_with(|| Vec::with_capacity(record.len()));
        out.extend_from_slice(&record[copied..escape]);
        out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
        at = escape + 12;
        copied = at;
    }
    match rewritten {
        None => Cow::Borrowed(record),
        Some(mut out) => {
            out.extend_from_slice(&record[copied..]);
            Cow::Owned(out)
        }
    }
}

/// The character of `\uHHHH\uLLLL` at the start of `text`, if that is a high and a low surrogate.
fn escaped_surrogate_pair(text: &[u8]) -> Option<char> {
    let hex4 = |digits: &[u8]| -> Option<u32> { digits.iter().try_fold(0, |value, &b| Some(value * 16 + (b as char).to_digit(16)?)) };
    if text.get(..2)? != b"\\u" || text.get(6..8)? != b"\\u" {
        return None;
    }
    let (high, low) = (hex4(&text[2..6])?, hex4(text.get(8..12)?)?);
    if !(0xD800..=0xDBFF).contains(&high) || !(0xDC00..=0xDFFF).contains(&low) {
        return None;
    }
    char::from_u32(0x1_0000 + ((high - 0xD800) << 10) + (low - 0xDC00))
}

/// Scans CSV bytes as csv-core, which arrow-csv uses, reads them — a quote opens a quoted field
/// only at a field's start, `""` inside one is a quote — jumping from quote to quote (memchr).
/// `quoted`: the bytes continue a quoted field. Returns whether they end inside a quoted field,
/// and the first `\n` or `\r` outside quotes.
pub(crate) fn scan_csv(bytes: &[u8], delimiter: u8, mut quoted: bool) -> (bool, Option<usize>) {
    let mut at = 0;
    let mut line_break = None;
    loop {
        if quoted {
            // The next quote closes the field, unless a second one follows it (an escaped quote).
            let Some(quote) = memchr::memchr(b'"', &bytes[at..]).map(|q| at + q) else { return (true, line_break) };
            if bytes.get(quote + 1) == Some(&b'"') {
                at = quote + 2;
            } else {
                at = quote + 1;
                quoted = false;
            }
            continue;
        }
        // Outside quotes: up to the next quote that starts a field.
        let mut from = at;
        let opening = loop {
            match memchr::memchr(b'"', &bytes[from..]).map(|q| from + q) {
                Some(quote) if quote == 0 || bytes[quote - 1] == delimiter => break Some(quote),
                Some(quote) => from = quote + 1,
                None => break None,
            }
        };
        let end = opening.unwrap_or(bytes.len());
        if line_break.is_none() {
            line_break = memchr::memchr2(b'\n', b'\r', &bytes[at..end]).map(|b| at + b);
        }
        match opening {
            Some(quote) => {
                at = quote + 1;
                quoted = true;
            }
            None => return (false, line_break),
        }
    }
}

/// Fails a CSV record that holds a line break outside quotes (two rows glued together), ends
/// inside a quoted field (cut short: the rest would run into the next record) or has text after
/// a quoted field's closing quote; `\r` or `\n` outside quotes ends a row, as in csv-core.
fn check_csv_record(record: &[u8], delimiter: u8) -> Result<()> {
    let (ends_quoted, line_break) = scan_csv(record, delimiter, false);
    if let Some(at) = line_break {
        return Err(CoreError::data(format!("the record holds a line break outside quotes at byte {at}: more than one CSV row")));
    }
    if ends_quoted {
        return Err(CoreError::data("the record ends inside a quoted field: it is cut short, or continues in the next record"));
    }
    if let Some(at) = text_after_closing_quote(record, delimiter) {
        return Err(CoreError::data(format!(
            "the record has text after a quoted field's closing quote at byte {at} (as in \"a\"b, which csv-core reads as ab, \
             dropping the quotes): quote the whole field and double the quotes inside it (\"\"\"a\"\"b\")"
        )));
    }
    Ok(())
}

/// Where a quoted field's closing quote is followed by anything but the delimiter or the
/// record's end, in a record with no line break outside quotes and no open quote at its end.
fn text_after_closing_quote(record: &[u8], delimiter: u8) -> Option<usize> {
    let mut at = 0;
    loop {
        // A quote opens a quoted field only at a field's start, as in scan_csv.
        let mut from = at;
        let opening = loop {
            let quote = from + memchr::memchr(b'"', &record[from..])?;
            if quote == 0 || record[quote - 1] == delimiter {
                break quote;
            }
            from = quote + 1;
        };
        at = opening + 1;
        loop {
            let quote = at + memchr::memchr(b'"', &record[at..])?;
            match record.get(quote + 1) {
                Some(b'"') => at = quote + 2,
                None => return None,
                Some(&b) if b == delimiter || b == b'\r' || b == b'\n' => {
                    at = quote + 1;
                    break;
                }
                Some(_) => return Some(quote + 1),
            }
        }
    }
}

/// The schema arrow-csv reads when some columns are better converted from their text here:
/// Decimal128, float, binary, date and timestamp columns become Utf8. None when there are none.
fn csv_text_schema(schema: &SchemaRef) -> Option<(SchemaRef, Vec<usize>)> {
    let columns: Vec<usize> = schema
        .fields()
        .iter()
        .enumerate()
        .filter(|(_, f)| {
            matches!(
                f.data_type(),
                DataType::Decimal128(..)
                    | DataType::Float32
                    | DataType::Float64
                    | DataType::Binary
                    | DataType::Date32
                    | DataType::Date64
                    | DataType::Timestamp(..)
            )
        })
        .map(|(i, _)| i)
        .collect();
    if columns.is_empty() {
        return None;
    }
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .enumerate()
        .map(|(i, f)| if columns.contains(&i) { Field::new(f.name(), DataType::Utf8, f.is_nullable()) } else { f.as_ref().clone() })
        .collect();
    Some((Arc::new(Schema::new(fields)), columns))
}

/// The bytes of hex text (either case, two digits per byte), or None.
pub(crate) fn hex_bytes(text: &str) -> Option<Vec<u8>> {
    let digit = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let text = text.as_bytes();
    if !text.len().is_multiple_of(2) {
        return None;
    }
    text.chunks_exact(2).map(|pair| Some(digit(pair[0])? << 4 | digit(pair[1])?)).collect()
}

/// A CSV float: a finite number, or one of the IEEE words `NaN`, `inf`, `infinity` (any case,
/// with a sign). A number too large for the type is None, not infinity.
fn csv_float<F: std::str::FromStr + Into<f64> + Copy>(text: &str) -> Option<F> {
    let text = text.trim_ascii();
    let value: F = text.parse().ok()?;
    let is_number = ExactNumber::parse(text.as_bytes()).is_some();
    (!is_number || value.into().is_finite()).then_some(value)
}

/// Infers a schema from the records that are JSON objects (others are left out: they are
/// reported when the data is read). Strings stay strings: declare timestamps to get them.
pub fn infer_json_schema(records: &[&[u8]]) -> Result<Schema> {
    infer_json_schema_widening(records).map(|(schema, _)| schema)
}

/// As [`infer_json_schema`], plus one warning per column whose values have types that do not
/// merge (a number here, a string or a list there): such a column becomes a string column
/// (read with [`RecordDecoder::with_text_coercion`], numbers and booleans become their text).
/// Integers and floats merge to Float64; nulls merge with anything.
pub fn infer_json_schema_widening(records: &[&[u8]]) -> Result<(Schema, Vec<String>)> {
    let mut fields: Vec<Field> = Vec::new();
    let mut mixed: Vec<(String, Vec<String>)> = Vec::new();
    // Top-level columns with an integer a double cannot hold exactly, and the first such one.
    let mut inexact: Vec<(String, String)> = Vec::new();
    let mut objects = 0;
    for record in records {
        let Ok(serde_json::Value::Object(members)) = serde_json::from_slice::<serde_json::Value>(record) else { continue };
        objects += 1;
        for (name, raw) in crate::flat_json::raw_members(record).unwrap_or_default() {
            if !inexact.iter().any(|(n, _)| *n == name) && integer_beyond_a_double(raw) {
                inexact.push((name, String::from_utf8_lossy(raw).into_owned()));
            }
        }
        for (name, value) in members {
            // One member at a time: a value arrow cannot type (a list of mixed items) clashes
            // on its own instead of failing the whole sample.
            let items_unknown = without_item_types(&value);
            let one = serde_json::Value::Object(serde_json::Map::from_iter([(name.clone(), value)]));
            let (data_type, clash_here) =
                match arrow::json::reader::infer_json_schema_from_iterator(std::iter::once(Ok::<_, arrow::error::ArrowError>(one))) {
                    Ok(schema) => (items_unknown.unwrap_or_else(|| schema.field(0).data_type().clone()), false),
                    Err(_) => (DataType::Utf8, true),
                };
            // Each clash: where (the column, or a member or item inside it: `a.x`, `a[]`) and
            // the types met there.
            let mut clashes: Vec<(String, String, String)> = Vec::new();
            let top = |t: &DataType| if clash_here { "mixed list".to_string() } else { t.to_string() };
            match fields.iter_mut().find(|f| f.name() == &name) {
                None => {
                    if clash_here {
                        clashes.push((name.clone(), top(&data_type), top(&data_type)));
                    }
                    fields.push(Field::new(&name, data_type, true));
                }
                Some(known) => {
                    let (merged, inside) = merge_types(known.data_type(), &data_type);
                    for (place, was, now) in inside {
                        let now = if place.is_empty() { top(&now) } else { now.to_string() };
                        clashes.push((format!("{name}{place}"), was.to_string(), now));
                    }
                    if clash_here && !clashes.iter().any(|(place, ..)| *place == name) {
                        clashes.push((name.clone(), known.data_type().to_string(), top(&data_type)));
                    }
                    *known = Field::new(&name, merged, true);
                }
            }
            for (place, was, now) in clashes {
                // The type known before is the one seen only at a place's first clash: after
                // it, the place is a string, which no value need have been.
                if !mixed.iter().any(|(n, _)| *n == place) {
                    mixed.push((place.clone(), vec![was]));
                }
                let types = &mut mixed.iter_mut().find(|(n, _)| *n == place).expect("pushed above").1;
                if !types.contains(&now) {
                    types.push(now);
                }
            }
        }
    }
    if objects == 0 {
        return Err(CoreError::data("no record in the sample is a JSON object; declare the schema"));
    }
    let mut warnings: Vec<String> = mixed
        .into_iter()
        .map(|(name, types)| {
            format!(
                "column '{name}' has values of different types ({}); it is read as a string, declare its type to read it otherwise",
                types.join(", ")
            )
        })
        .collect();
    // arrow infers a float for an integer beyond a bigint, and for integers mixed with floats:
    // a double would round such a value (18446744073709551615 to 1.8446744073709552e19).
    for (name, value) in inexact {
        let Some(field) = fields.iter_mut().find(|f| *f.name() == name && *f.data_type() == DataType::Float64) else { continue };
        *field = Field::new(&name, DataType::Utf8, true);
        warnings.push(format!(
            "column '{name}' holds integers a double cannot hold exactly ({value}); it is read as a string, declare its type \
             (bigint, decimal(38,0)) to read it otherwise"
        ));
    }
    let fields: Vec<Field> = fields.into_iter().map(|f| Field::new(f.name(), unknown_items_as_text(f.data_type()), true)).collect();
    Ok((Schema::new(fields), warnings))
}

/// A list whose items are all null (or that is empty) says nothing of its items' type: the
/// type of such a value is a list of Null, which merges with the lists of other records (arrow
/// infers a list of strings, which clashed with `[1, 2]` and made the column text). None for
/// any other value, typed by arrow.
fn without_item_types(value: &serde_json::Value) -> Option<DataType> {
    match value {
        serde_json::Value::Array(items) if items.iter().all(serde_json::Value::is_null) => {
            Some(DataType::List(Arc::new(Field::new_list_field(DataType::Null, true))))
        }
        _ => None,
    }
}

/// `data_type` with the items of lists no record gave an item of as strings, as arrow types them.
fn unknown_items_as_text(data_type: &DataType) -> DataType {
    match data_type {
        DataType::List(item) if *item.data_type() == DataType::Null => DataType::List(Arc::new(Field::new(item.name(), DataType::Utf8, true))),
        DataType::List(item) => DataType::List(Arc::new(Field::new(item.name(), unknown_items_as_text(item.data_type()), true))),
        DataType::Struct(fields) => {
            DataType::Struct(fields.iter().map(|f| Field::new(f.name(), unknown_items_as_text(f.data_type()), true)).collect())
        }
        other => other.clone(),
    }
}

/// Whether `raw` is a JSON integer literal beyond 2^53, which a double may not hold exactly.
pub(crate) fn integer_beyond_a_double(raw: &[u8]) -> bool {
    let digits = raw.strip_prefix(b"-").unwrap_or(raw);
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return false;
    }
    digits.len() > 16 || digits.iter().fold(0u64, |acc, d| acc * 10 + u64::from(d - b'0')) > 1 << 53
}

/// The type both `a` and `b` values fit, and where they clashed (each place relative to `a`:
/// empty for `a` itself, `.x` for a member, `[]` for the items, with the two types met there),
/// which is then Utf8.
fn merge_types(a: &DataType, b: &DataType) -> (DataType, Vec<(String, DataType, DataType)>) {
    match (a, b) {
        _ if a == b => (a.clone(), Vec::new()),
        (DataType::Null, other) | (other, DataType::Null) => (other.clone(), Vec::new()),
        (DataType::Int64, DataType::Float64) | (DataType::Float64, DataType::Int64) => (DataType::Float64, Vec::new()),
        (DataType::List(x), DataType::List(y)) => {
            let (item, clashes) = merge_types(x.data_type(), y.data_type());
            let clashes = clashes.into_iter().map(|(place, was, now)| (format!("[]{place}"), was, now)).collect();
            (DataType::List(Arc::new(Field::new(x.name(), item, true))), clashes)
        }
        (DataType::Struct(x), DataType::Struct(y)) => {
            let mut fields: Vec<Field> = x.iter().map(|f| f.as_ref().clone()).collect();
            let mut clashes = Vec::new();
            for field in y.iter() {
                match fields.iter_mut().find(|f| f.name() == field.name()) {
                    None => fields.push(field.as_ref().clone()),
                    Some(known) => {
                        let (merged, inside) = merge_types(known.data_type(), field.data_type());
                        clashes.extend(inside.into_iter().map(|(place, was, now)| (format!(".{}{place}", field.name()), was, now)));
                        *known = Field::new(field.name(), merged, true);
                    }
                }
            }
            (DataType::Struct(fields.into()), clashes)
        }
        _ => (DataType::Utf8, vec![(String::new(), a.clone(), b.clone())]),
    }
}

/// The row and operation of one Debezium change event: c and r (snapshot reads) are inserts,
/// u updates with the new row, d deletes with the old one, t (a truncate, which carries no row)
/// a row of NULLs that empties a dynamic table. The row is the envelope's own text:
/// through `serde_json::Value` numbers beyond i64 or with many digits would pass via f64.
fn unwrap_envelope(record: &[u8]) -> std::result::Result<(Vec<u8>, &'static str), String> {
    serde_json::from_slice::<serde::de::IgnoredAny>(record).map_err(|e| format!("not a JSON change event: {e}"))?;
    let not_object = || "not a JSON change event: not an object".to_string();
    let is_object = |raw: &[u8]| raw.first() == Some(&b'{');
    let member = |members: &[(String, &'_ [u8])], name: &str| members.iter().rev().find(|(n, _)| n == name).map(|(_, v)| v.to_vec());
    let outer = crate::flat_json::raw_members(record).ok_or_else(not_object)?;
    let payload = match member(&outer, "payload") {
        Some(payload) if is_object(&payload) => {
            crate::flat_json::raw_members(&payload).ok_or_else(not_object)?.into_iter().map(|(n, v)| (n, v.to_vec())).collect()
        }
        _ => outer.into_iter().map(|(n, v)| (n, v.to_vec())).collect::<Vec<(String, Vec<u8>)>>(),
    };
    let get = |name: &str| payload.iter().rev().find(|(n, _)| n == name).map(|(_, v)| v.as_slice());
    let op: Option<String> = get("op").and_then(|op| serde_json::from_slice(op).ok());
    let op = op.ok_or("no \"op\" in the Debezium envelope")?;
    let (row, op) = match op.as_str() {
        "c" | "r" => (get("after"), "i"),
        "u" => (get("after"), "u"),
        "d" => (get("before"), "d"),
        "t" => return Ok((b"{}".to_vec(), "t")),
        other => return Err(format!("unknown Debezium op {other:?}")),
    };
    let row = row.filter(|row| is_object(row)).ok_or_else(|| format!("a Debezium {op} event without its row"))?;
    Ok((row.to_vec(), op))
}

/// A Debezium row with the base64 text of `columns` as the decoder reads those types: bytes as
/// hex, a decimal's unscaled bytes as its digits. Read as they were, base64 that happened to be
/// hex ("AAAA") became other bytes, and a precise decimal's text ("1234", the bytes d7 6d f8)
/// the number 1234.
fn from_base64(row: Vec<u8>, columns: &[(String, Base64Value)]) -> std::result::Result<Vec<u8>, String> {
    use base64::Engine;
    if columns.is_empty() {
        return Ok(row);
    }
    let members = crate::flat_json::raw_members(&row).ok_or_else(|| "a Debezium row that is not a JSON object".to_string())?;
    let mut out = Vec::with_capacity(row.len() + 16);
    out.push(b'{');
    for (i, (name, raw)) in members.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend(serde_json::to_vec(name).map_err(|e| e.to_string())?);
        out.push(b':');
        let kind = columns.iter().find(|(column, _)| column == name).map(|(_, kind)| *kind);
        let (Some(kind), Some(b'"')) = (kind, raw.first()) else {
            out.extend_from_slice(raw);
            continue;
        };
        let text: String = serde_json::from_slice(raw).map_err(|e| format!("column '{name}': {e}"))?;
        if kind == Base64Value::NotText {
            if matches!(text.as_str(), "NaN" | "Infinity" | "-Infinity") {
                out.extend_from_slice(raw);
                continue;
            }
            return Err(format!(
                "column '{name}': text {text:?} in a number column: Debezium writes a precise decimal as base64 text; declare \
                 the column decimal(p,s) with the connector's scale, or set debezium_decimals: string or double if it writes them so"
            ));
        }
        let bytes = base64::engine::general_purpose::STANDARD.decode(&text).map_err(|e| {
            format!(
                "column '{name}': {text:?} is not base64 ({e}); Debezium writes bytes and precise decimals as base64 by default: set \
                 debezium_binary: hex or debezium_decimals: string if the connector writes them otherwise"
            )
        })?;
        let value = match kind {
            Base64Value::Bytes => bytes.iter().map(|b| format!("{b:02x}")).collect::<String>(),
            Base64Value::NotText => unreachable!("handled above"),
            Base64Value::Unscaled(scale) => {
                if bytes.len() > 16 {
                    return Err(format!("column '{name}': a decimal of {} bytes is beyond 38 digits", bytes.len()));
                }
                let negative = bytes.first().is_some_and(|b| b & 0x80 != 0);
                let unscaled = bytes.iter().fold(if negative { -1i128 } else { 0 }, |acc, &b| (acc << 8) | i128::from(b));
                crate::encode::decimal_text(&unscaled.to_string(), scale)
            }
        };
        out.extend(serde_json::to_vec(&value).map_err(|e| e.to_string())?);
    }
    out.push(b'}');
    Ok(out)
}

/// The schema of raw records: the bytes of each record as one Binary column.
pub fn raw_schema() -> SchemaRef {
    static RAW: OnceLock<SchemaRef> = OnceLock::new();
    RAW.get_or_init(|| Arc::new(Schema::new(vec![Field::new("value", DataType::Binary, true)]))).clone()
}

/// The extra column by which a host marks the raw records that had no value at all (a Kafka
/// tombstone, which it hands over as no bytes); their value is NULL, the column is not kept.
pub const VALUE_IS_NULL: &str = "_sluice_value_is_null";

/// A raw batch with the value NULL where `is_null` (Boolean, one per row) is true.
fn with_null_values(batch: RecordBatch, is_null: &arrow::array::ArrayRef) -> Result<RecordBatch> {
    use arrow::array::AsArray;
    let is_null = is_null.as_boolean_opt().ok_or_else(|| CoreError::invalid(format!("{VALUE_IS_NULL} must be Boolean")))?;
    if is_null.true_count() == 0 {
        return Ok(batch);
    }
    let values = batch.column(0).as_binary::<i32>();
    let valid = arrow::buffer::NullBuffer::new(!is_null.values());
    let with_nulls = arrow::array::BinaryArray::new(values.offsets().clone(), values.values().clone(), Some(valid));
    Ok(RecordBatch::try_new(batch.schema(), vec![Arc::new(with_nulls)])?)
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
    fn escaped_surrogate_pairs_decode_to_their_characters_on_every_path() {
        // U+20000 and up were 0x10000 too low through arrow-json (found by codec_fuzz).
        let record: &[u8] = br#"{"id":1,"name":"\ud840\udc00 \uD878\uDD9A \udbff\udfff \ud83d\ude00 \\ud840\\udc00 \\\ud840\udc01"}"#;
        let expected = "\u{20000} \u{2E19A} \u{10FFFF} \u{1F600} \\ud840\\udc00 \\\u{20001}";
        // The flat fast path, arrow-json alone, and a schema the fast path does not take.
        let flat = RecordDecoder::new(&DecoderOptions::of(Format::Json, ","), Some(schema())).unwrap();
        let with_decimal = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
            Field::new("amount", DataType::Decimal128(10, 2), true),
        ]));
        let general = RecordDecoder::new(&DecoderOptions::of(Format::Json, ","), Some(with_decimal)).unwrap();
        assert!(flat.has_fast_path() && !general.has_fast_path());
        for decoder in [flat.clone(), flat.arrow_only(), general] {
            let decoded = decoder.decode(&[record]).unwrap();
            assert!(decoded.errors.is_none());
            assert_eq!(decoded.batch.column(1).as_any().downcast_ref::<StringArray>().unwrap().value(0), expected);
        }
    }

    #[test]
    fn json_records_cut_short_after_a_backslash_are_dead_letters() {
        // Reading past the end panicked in the value guard's skip of an unknown field (found by codec_fuzz).
        let decoder = RecordDecoder::new(&DecoderOptions::of(Format::Json, ","), Some(schema())).unwrap();
        let cut: &[&[u8]] = &[br#"{"id":2,"name":"a\"#, br#"{"id":2,"x":"a\"#, br#"{"id":2,"x":{"y":"a\"#, br#"{"id":2,"x":["\"#, br#"{"id":2,"\"#];
        for record in cut {
            for decoder in [decoder.clone(), decoder.arrow_only()] {
                let decoded = decoder.decode(&[br#"{"id":1}"#, record, br#"{"id":3}"#]).unwrap();
                assert_eq!(decoded.batch.column(0).as_any().downcast_ref::<Int64Array>().unwrap().values().to_vec(), vec![1, 3]);
                let errors = decoded.errors.expect("the cut record is a dead letter");
                assert_eq!(errors.column(0).as_any().downcast_ref::<Int64Array>().unwrap().values().to_vec(), vec![1]);
            }
        }
    }

    #[test]
    fn only_well_formed_surrogate_pairs_are_rewritten() {
        let unchanged: &[&[u8]] = &[
            br#"{"s":"plain"}"#,
            br#"{"s":"\ud800"}"#,
            br#"{"s":"\udc00\ud800"}"#,
            br#"{"s":"\ud800\u0041"}"#,
            br#"{"s":"\ud800\ud800"}"#,
            br#"{"s":"\\ud800\\udc00"}"#,
            br#"{"s":"\ud80g\udc00"}"#,
            br#"{"s":"\ud800\udc0"#,
            br#"\"#,
        ];
        for record in unchanged {
            assert!(matches!(surrogate_pairs_as_utf8(record), Cow::Borrowed(_)), "{}", String::from_utf8_lossy(record));
        }
        assert_eq!(&*surrogate_pairs_as_utf8(br#"a\ud800\ud840\udc00b\ud83d\ude00"#), "a\\ud800\u{20000}b\u{1F600}".as_bytes());
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

    /// A Kafka tombstone (no value at all) was an empty value; the host marks it, the value is NULL.
    #[test]
    fn raw_records_the_host_marks_as_null_have_a_null_value() {
        let decoder = RecordDecoder::new(&DecoderOptions::of(Format::Raw, ","), Some(raw_schema())).unwrap();
        let records: Vec<&[u8]> = vec![b"a", b"", b""];
        let marks = Arc::new(Schema::new(vec![Field::new(VALUE_IS_NULL, DataType::Boolean, false), Field::new("_offset", DataType::Int64, false)]));
        let extra = RecordBatch::try_new(
            marks,
            vec![Arc::new(arrow::array::BooleanArray::from(vec![false, true, false])), Arc::new(Int64Array::from(vec![10, 11, 12]))],
        )
        .unwrap();
        let decoded = decoder.decode_with(&records, Some(extra)).unwrap();
        let names: Vec<String> = decoded.batch.schema().fields().iter().map(|f| f.name().clone()).collect();
        assert_eq!(names, ["value", "_offset"]);
        let values = arrow::array::AsArray::as_binary::<i32>(decoded.batch.column(0));
        assert_eq!((values.is_null(1), values.is_valid(2), values.value(2)), (true, true, &b""[..]));
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
    fn back_to_back_json_in_one_slab_decodes() {
        let options = DecoderOptions::of(Format::Json, ",");
        let decoder = RecordDecoder::new(&options, Some(schema())).unwrap();
        let slab = br#"{"id":1}{"id":2,"name":"b"}{"id":3}"#;
        let records = split_records(slab, &[0, 8, 27, 35]).unwrap();
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

    /// Debezium's JSON converter writes bytes and precise decimals as base64 by default; read as
    /// hex and as decimal text, "AAAA" (three zero bytes) was the bytes aa aa and "1234" (the
    /// unscaled bytes d7 6d f8) the decimal 1234.00, silently.
    #[test]
    fn debezium_base64_bytes_and_precise_decimals_read_as_the_connector_wrote_them() {
        use arrow::array::AsArray;
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("b", DataType::Binary, true),
            Field::new("d", DataType::Decimal128(10, 2), true),
        ]));
        let records: Vec<&[u8]> = vec![
            br#"{"op": "c", "after": {"id": 1, "b": "AAAA", "d": "1234"}}"#,
            br#"{"op": "c", "after": {"id": 2, "b": "AQID", "d": "/w=="}}"#,
            br#"{"op": "c", "after": {"id": 3, "b": null, "d": "AeI="}}"#,
            br#"{"op": "c", "after": {"id": 4, "b": "not base64!", "d": null}}"#,
        ];
        let decoded = RecordDecoder::new(&DecoderOptions::of(Format::Debezium, ","), Some(schema.clone())).unwrap().decode(&records).unwrap();
        let batch = &decoded.batch;
        let bytes: Vec<Option<&[u8]>> = batch.column(1).as_binary::<i32>().iter().collect();
        assert_eq!(bytes, [Some(&[0u8, 0, 0][..]), Some(&[1, 2, 3][..]), None]);
        let text = arrow::util::display::ArrayFormatter::try_new(batch.column(2).as_ref(), &Default::default()).unwrap();
        assert_eq!((0..3).map(|i| text.value(i).to_string()).collect::<Vec<_>>(), ["-26588.24", "-0.01", "4.82"]);
        let errors = decoded.errors.unwrap();
        assert!(errors.column(2).as_string::<i32>().value(0).contains("column 'b': \"not base64!\" is not base64"), "{errors:?}");
        // A precise decimal in a column declared a number was read as the number its base64 spells.
        let doubles = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false), Field::new("p", DataType::Float64, true)]));
        let decoder = RecordDecoder::new(&DecoderOptions::of(Format::Debezium, ","), Some(doubles)).unwrap();
        let read = decoder.decode(&[br#"{"op": "c", "after": {"id": 1, "p": "1234"}}"#, br#"{"op": "c", "after": {"id": 2, "p": "NaN"}}"#]).unwrap();
        assert_eq!(read.batch.num_rows(), 1);
        assert!(read.errors.unwrap().column(2).as_string::<i32>().value(0).contains("column 'p': text \"1234\" in a number column"));
        // A connector set to hex and string writes what the JSON format reads.
        let options = DecoderOptions {
            debezium_binary: DebeziumBinary::Hex,
            debezium_decimals: DebeziumDecimals::String,
            ..DecoderOptions::of(Format::Debezium, ",")
        };
        let plain = RecordDecoder::new(&options, Some(schema)).unwrap().decode(&records[..1]).unwrap();
        assert_eq!(plain.batch.column(1).as_binary::<i32>().value(0), [0xaa, 0xaa]);
        let text = arrow::util::display::ArrayFormatter::try_new(plain.batch.column(2).as_ref(), &Default::default()).unwrap();
        assert_eq!(text.value(0).to_string(), "1234.00");
    }

    /// A truncate (op t, no row) becomes a row of NULLs with `_op` t, which empties a dynamic
    /// table; where a column cannot be NULL it is a dead letter saying so.
    #[test]
    fn debezium_truncates_become_truncate_rows() {
        use arrow::array::AsArray;
        let truncate: &[u8] = br#"{"payload": {"op": "t", "ts_ms": 1, "source": {"table": "customers"}}}"#;
        let records: Vec<&[u8]> = vec![br#"{"op": "c", "after": {"id": 1, "name": "a"}}"#, truncate, br#"{"op": "c", "after": {"id": 2}}"#];
        let nullable = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true), Field::new("name", DataType::Utf8, true)]));
        let decoded = RecordDecoder::new(&DecoderOptions::of(Format::Debezium, ","), Some(nullable)).unwrap().decode(&records).unwrap();
        assert!(decoded.errors.is_none());
        let ops = decoded.batch.column(2).as_string::<i32>();
        assert_eq!((0..3).map(|i| ops.value(i)).collect::<Vec<_>>(), vec!["i", "t", "i"]);
        assert_eq!(decoded.batch.column(0).null_count(), 1);
        assert!(decoded.batch.column(0).is_null(1) && decoded.batch.column(1).is_null(1));

        let decoded = RecordDecoder::new(&DecoderOptions::of(Format::Debezium, ","), Some(schema())).unwrap().decode(&records).unwrap();
        assert_eq!(decoded.batch.num_rows(), 2);
        let errors = decoded.errors.unwrap();
        assert_eq!(errors.column(0).as_primitive::<arrow::datatypes::Int64Type>().values().to_vec(), vec![1]);
        assert_eq!(errors.column(2).as_string::<i32>().value(0), "a Debezium truncate event (op t) has no row, and id cannot be NULL");
    }

    #[test]
    fn json_schemas_are_inferred_from_the_good_records() {
        let schema = infer_json_schema(&[br#"{"id": 1, "name": "a"}"#, b"oops", br#"{"id": 2, "score": 1.5}"#]).unwrap();
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        assert_eq!(names, vec!["id", "name", "score"]);
        assert_eq!(schema.field(0).data_type(), &DataType::Int64);
        assert!(infer_json_schema(&[b"nope"]).is_err());
    }

    /// A list of only nulls, or an empty one, typed its items as strings: the column became text
    /// (`[1, 2]` read as `["1", "2"]`) with a warning of a clash the data did not have.
    #[test]
    fn lists_of_only_nulls_take_the_item_type_of_other_records() {
        let sample: [&[u8]; 4] =
            [br#"{"a": [null, null], "e": [], "n": [null]}"#, br#"{"a": [1, 2], "e": [1.5], "n": null}"#, br#"{"a": null}"#, br#"{"a": []}"#];
        let (schema, warnings) = infer_json_schema_widening(&sample).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        let item = |name: &str| match schema.field_with_name(name).unwrap().data_type() {
            DataType::List(item) => item.data_type().clone(),
            other => panic!("{other}"),
        };
        assert_eq!((item("a"), item("e"), item("n")), (DataType::Int64, DataType::Float64, DataType::Utf8));
        let decoded = RecordDecoder::new(&DecoderOptions::of(Format::Json, ","), Some(Arc::new(schema))).unwrap().decode(&sample).unwrap();
        let lists = arrow::array::AsArray::as_list::<i32>(decoded.batch.column(0));
        assert_eq!(arrow::array::AsArray::as_primitive::<arrow::datatypes::Int64Type>(&lists.value(1)).values().to_vec(), [1, 2]);
        assert_eq!(lists.value(0).null_count(), 2);
    }

    /// arrow infers a double for an integer beyond a bigint and for integers mixed with
    /// floats; a double rounds such a value past 2^53, so the column is read as a string (with a
    /// warning), its digits kept.
    #[test]
    fn inferred_columns_never_round_an_integer() {
        let sample: [&[u8]; 3] = [
            br#"{"big": 18446744073709551615, "mix": 9007199254740993, "ok": 1, "small": -1}"#,
            br#"{"big": 1, "mix": 0.5, "ok": 9007199254740993, "small": 0.5}"#,
            br#"{"big": -9223372036854775809}"#,
        ];
        let (schema, warnings) = infer_json_schema_widening(&sample).unwrap();
        let types: Vec<&DataType> = schema.fields().iter().map(|f| f.data_type()).collect();
        assert_eq!(types, [&DataType::Utf8, &DataType::Utf8, &DataType::Int64, &DataType::Float64]);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].contains("column 'big' holds integers a double cannot hold exactly (18446744073709551615)"), "{warnings:?}");
        let decoder = RecordDecoder::new(&DecoderOptions::of(Format::Json, ","), Some(Arc::new(schema))).unwrap().with_text_coercion();
        let decoded = decoder.decode(&sample).unwrap();
        let strings = |_: &Decoded, c: usize| -> Vec<Option<String>> {
            arrow::array::AsArray::as_string::<i32>(decoded.batch.column(c)).iter().map(|s| s.map(str::to_string)).collect()
        };
        assert_eq!(strings(&decoded, 0), [Some("18446744073709551615".to_string()), Some("1".into()), Some("-9223372036854775809".into())]);
        assert_eq!(strings(&decoded, 1), [Some("9007199254740993".to_string()), Some("0.5".into()), None]);
    }

    #[test]
    fn offsets_are_checked() {
        assert!(split_records(b"abc", &[0, 2, 5]).is_err());
        assert_eq!(split_records(b"abc", &[0, 1, 3]).unwrap(), vec![&b"a"[..], &b"bc"[..]]);
    }
}

/// Issue 10: every record decodes to exactly one row from exactly its own bytes, and every
/// value fits its declared type, or the record is an error row (a dead letter).
#[cfg(test)]
mod strict_tests {
    use super::*;
    use arrow::array::{Array, AsArray};
    use arrow::datatypes::{Float64Type, Int64Type};

    fn id_v() -> SchemaRef {
        Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true), Field::new("v", DataType::Utf8, true)]))
    }

    /// The decoders to check: with the flat fast path and arrow-json alone.
    fn json_decoders(schema: SchemaRef) -> Vec<RecordDecoder> {
        let decoder = RecordDecoder::new(&DecoderOptions::of(Format::Json, ","), Some(schema)).unwrap();
        let arrow = decoder.arrow_only();
        vec![decoder, arrow]
    }

    /// The records back to back in one slab (as the Kafka source and the file reader pass
    /// them) and as separate allocations.
    fn both_layouts(records: &[&[u8]], check: impl Fn(&[&[u8]])) {
        check(records);
        let slab = records.concat();
        let mut offsets = vec![0i64];
        for r in records {
            offsets.push(offsets.last().unwrap() + r.len() as i64);
        }
        check(&split_records(&slab, &offsets).unwrap());
    }

    fn error_indexes(decoded: &Decoded) -> Vec<i64> {
        decoded.errors.as_ref().map_or(vec![], |e| e.column(0).as_primitive::<Int64Type>().values().to_vec())
    }

    fn error_messages(decoded: &Decoded) -> Vec<String> {
        decoded.errors.as_ref().map_or(vec![], |e| (0..e.num_rows()).map(|i| e.column(2).as_string::<i32>().value(i).to_string()).collect())
    }

    fn ids(decoded: &Decoded) -> Vec<Option<i64>> {
        decoded.batch.column(0).as_primitive::<Int64Type>().iter().collect()
    }

    fn strings(decoded: &Decoded, column: usize) -> Vec<Option<String>> {
        decoded.batch.column(column).as_string::<i32>().iter().map(|s| s.map(str::to_string)).collect()
    }

    /// The three records of the issue, alone in a batch: none may become a row.
    #[test]
    fn glued_and_split_json_records_are_dead_letters() {
        let issue: [&[u8]; 3] = [br#"{"id":2000001,"v":"glued-a"}{"id":2000002,"v":"glued-b"}"#, br#"{"id":2000003,"#, br#""v":"glued-c"}"#];
        for decoder in json_decoders(id_v()) {
            both_layouts(&issue, |records| {
                let decoded = decoder.decode(records).unwrap();
                assert_eq!(decoded.batch.num_rows(), 0, "rows {:?}", ids(&decoded));
                assert_eq!(error_indexes(&decoded), vec![0, 1, 2]);
            });
            // Between good records, whose values stay intact.
            let mut records: Vec<&[u8]> = vec![br#"{"id":1,"v":"a"}"#];
            records.extend(issue);
            records.push(br#"{"id":5,"v":"e"}"#);
            both_layouts(&records, |records| {
                let decoded = decoder.decode(records).unwrap();
                assert_eq!(ids(&decoded), vec![Some(1), Some(5)]);
                assert_eq!(strings(&decoded, 1), vec![Some("a".into()), Some("e".into())]);
                assert_eq!(error_indexes(&decoded), vec![1, 2, 3]);
                assert_eq!(decoded.good, Some(vec![0, 4]));
            });
        }
    }

    #[test]
    fn json_records_that_are_not_exactly_one_object_are_dead_letters() {
        let bad: [&[u8]; 7] = [
            br#"{"id":1,"v":"a"} {"id":2,"v":"b"}"#,
            b"{\"id\":1,\"v\":\"a\"}\n{\"id\":2,\"v\":\"b\"}",
            br#"{"id":1,"v":"a"} x"#,
            br#"{"id":1,"v":"a"}}"#,
            b"",
            b"  \n",
            br#"{"id":1,"v":"a""#,
        ];
        for decoder in json_decoders(id_v()) {
            for case in bad {
                // Alone, and as the only bad record between good ones (the whole-batch count
                // would not catch a glued record next to an empty one).
                let decoded = decoder.decode(&[case]).unwrap();
                assert_eq!(decoded.batch.num_rows(), 0, "{:?}", String::from_utf8_lossy(case));
                assert_eq!(error_indexes(&decoded), vec![0]);
                let records: [&[u8]; 4] = [br#"{"id":7,"v":"g"}"#, case, br#"{"id":8}"#, b""];
                both_layouts(&records, |records| {
                    let decoded = decoder.decode(records).unwrap();
                    assert_eq!(ids(&decoded), vec![Some(7), Some(8)], "{:?}", String::from_utf8_lossy(case));
                    assert_eq!(error_indexes(&decoded), vec![1, 3]);
                });
            }
            // Whitespace around one object is fine.
            let decoded = decoder.decode(&[b" \t{\"id\":3}\r\n"]).unwrap();
            assert_eq!(ids(&decoded), vec![Some(3)]);
            assert!(decoded.errors.is_none());
        }
    }

    #[test]
    fn glued_and_split_csv_records_are_dead_letters() {
        let decoder = RecordDecoder::new(&DecoderOptions::of(Format::Csv, ","), Some(id_v())).unwrap();
        // A glued record next to an empty one, or next to a record cut inside a quoted field
        // and its rest: the batch's row count adds up either way.
        let glued: &[u8] = b"2000001,glued-a\n2000002,glued-b";
        let batches: [&[&[u8]]; 2] = [&[b"1,a", glued, b""], &[b"1,a", b"2000003,\"glued", b"c\"", glued]];
        for records in batches {
            both_layouts(records, |records| {
                let decoded = decoder.decode(records).unwrap();
                assert_eq!(ids(&decoded), vec![Some(1)]);
                assert_eq!(strings(&decoded, 1), vec![Some("a".into())]);
                assert_eq!(error_indexes(&decoded), (1..records.len() as i64).collect::<Vec<_>>());
            });
        }
        for case in [&b"1,a\r2,b"[..], b"1,a\r\n2,b\n", b"1,\"a", b"\n", b"1,a,"] {
            let decoded = decoder.decode(&[b"9,z", case]).unwrap();
            assert_eq!(ids(&decoded), vec![Some(9)], "{:?}", String::from_utf8_lossy(case));
            assert_eq!(error_indexes(&decoded), vec![1]);
        }
        // Quoted line breaks and doubled quotes stay one record; a quote inside an unquoted
        // field is text, as are quotes after a quoted field's closing quote's delimiter.
        let decoded = decoder.decode(&[b"1,\"a\nb\"", b"2,\"say \"\"hi\"\"\"\r\n", b"3,x\"y", b"\"4\",\"q\"", b"5,\"\"\"\""]).unwrap();
        assert!(decoded.errors.is_none(), "{:?}", error_messages(&decoded));
        assert_eq!(
            strings(&decoded, 1),
            vec![Some("a\nb".into()), Some("say \"hi\"".into()), Some("x\"y".into()), Some("q".into()), Some("\"".into())]
        );
    }

    /// csv-core reads `"a"b` as `ab`: the quotes, which the writer meant as text, were lost.
    #[test]
    fn text_after_a_closing_quote_is_a_dead_letter() {
        let decoder = RecordDecoder::new(&DecoderOptions::of(Format::Csv, ","), Some(id_v())).unwrap();
        for case in [&b"1,\"a\"b"[..], b"1,\"a\" ", b"\"1\"2,a", b"1,\"a\"\"b\"c", b"1,\"a\nb\"c\n"] {
            let decoded = decoder.decode(&[b"9,z", case]).unwrap();
            assert_eq!(ids(&decoded), vec![Some(9)], "{:?}", String::from_utf8_lossy(case));
            assert_eq!(error_indexes(&decoded), vec![1]);
            assert!(error_messages(&decoded)[0].contains("text after a quoted field's closing quote"), "{:?}", error_messages(&decoded));
        }
    }

    fn one_column(name: &str, data_type: DataType) -> SchemaRef {
        Arc::new(Schema::new(vec![Field::new(name, data_type, true)]))
    }

    /// `{"n": value}` for each value: which decode, and the error messages of the others.
    fn json_outcomes(data_type: DataType, values: &[&str]) -> Vec<Result<String, String>> {
        let mut outcomes = Vec::new();
        for decoder in json_decoders(one_column("n", data_type.clone())) {
            let records: Vec<String> = values.iter().map(|v| format!(r#"{{"n":{v}}}"#)).collect();
            let slices: Vec<&[u8]> = records.iter().map(|r| r.as_bytes()).collect();
            let decoded = decoder.decode(&slices).unwrap();
            let formatter = arrow::util::display::ArrayFormatter::try_new(decoded.batch.column(0), &Default::default()).unwrap();
            let mut good = (0..decoded.batch.num_rows()).map(|i| formatter.value(i).to_string());
            let mut bad = error_messages(&decoded).into_iter();
            let errors = error_indexes(&decoded);
            let these: Vec<Result<String, String>> =
                (0..values.len()).map(|i| if errors.contains(&(i as i64)) { Err(bad.next().unwrap()) } else { Ok(good.next().unwrap()) }).collect();
            if !outcomes.is_empty() {
                assert_eq!(outcomes, these, "fast path and arrow-json differ for {data_type}");
            }
            outcomes = these;
        }
        outcomes
    }

    fn assert_json_values(data_type: DataType, good: &[(&str, &str)], bad: &[&str]) {
        let values: Vec<&str> = good.iter().map(|(v, _)| *v).chain(bad.iter().copied()).collect();
        let outcomes = json_outcomes(data_type.clone(), &values);
        for (i, (value, expected)) in good.iter().enumerate() {
            assert_eq!(outcomes[i], Ok(expected.to_string()), "{value} as {data_type}");
        }
        for (i, value) in bad.iter().enumerate() {
            match &outcomes[good.len() + i] {
                Err(message) => {
                    assert!(message.contains("'n'"), "{value} as {data_type}: the error names no column: {message}");
                    assert!(message.contains(value.trim_matches('"')), "{value} as {data_type}: the error names no value: {message}");
                }
                Ok(decoded) => panic!("{value} as {data_type} decoded as {decoded}"),
            }
        }
    }

    #[test]
    fn json_integers_that_do_not_fit_are_dead_letters() {
        assert_json_values(
            DataType::Int64,
            &[
                ("-9223372036854775808", "-9223372036854775808"),
                ("9223372036854775807", "9223372036854775807"),
                ("1.0", "1"),
                ("1e2", "100"),
                ("-2.50e1", "-25"),
                ("\"12\"", "12"),
            ],
            &["-9223372036854775809", "9223372036854775808", "99999999999999999999999", "1.5", "1e-1", "9007199254740993.0", "-9.3e18", "1e400"],
        );
        assert_json_values(DataType::Int32, &[("-2147483648", "-2147483648"), ("2147483647", "2147483647")], &["-2147483649", "2147483648", "0.5"]);
        assert_json_values(DataType::Int16, &[("-32768", "-32768"), ("32767", "32767")], &["-32769", "32768", "3.25"]);
        assert_json_values(DataType::Int8, &[("-128", "-128"), ("127", "127")], &["-129", "128", "1.5"]);
        assert_json_values(DataType::UInt8, &[("0", "0"), ("255", "255")], &["-1", "256", "0.5"]);
        assert_json_values(DataType::UInt64, &[("18446744073709551615", "18446744073709551615")], &["-1", "18446744073709551616"]);
        assert_json_values(
            DataType::Timestamp(arrow::datatypes::TimeUnit::Millisecond, None),
            &[("0", "1970-01-01T00:00:00")],
            &["1.5", "1e30", "9223372036854775808"],
        );
    }

    /// JSON carries binary as hex, two digits per byte (as the writers write it); arrow-json
    /// would read an odd count as if the last digit had a 0 before it.
    #[test]
    fn json_binary_with_an_odd_number_of_hex_digits_is_a_dead_letter() {
        for data_type in [DataType::Binary, DataType::LargeBinary, DataType::BinaryView] {
            assert_json_values(data_type, &[("\"616263\"", "616263"), ("\"\"", ""), ("\"00FF\"", "00ff")], &["\"abc\"", "\"a\"", "\"0\""]);
        }
        assert_json_values(DataType::FixedSizeBinary(2), &[("\"0aff\"", "0aff")], &["\"aff\""]);
    }

    #[test]
    fn json_decimals_and_floats_that_do_not_fit_are_dead_letters() {
        assert_json_values(
            DataType::Decimal128(5, 2),
            &[("123.45", "123.45"), ("-999.99", "-999.99"), ("1e2", "100.00"), ("0.5", "0.50"), ("\"1.25\"", "1.25"), ("7", "7.00")],
            &["123.456", "1234.5", "1000", "\"1.234\"", "1e3", "0.001"],
        );
        assert_json_values(DataType::Float64, &[("1.5", "1.5"), ("-0.0", "-0.0")], &["1e400", "-1e400"]);
        assert_json_values(DataType::Float32, &[("1.5", "1.5")], &["1e39"]);
    }

    #[test]
    fn csv_values_that_do_not_fit_are_dead_letters() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, true),
            Field::new("small", DataType::Int8, true),
            Field::new("d", DataType::Decimal128(5, 2), true),
            Field::new("x", DataType::Float64, true),
        ]));
        let decoder = RecordDecoder::new(&DecoderOptions::of(Format::Csv, ","), Some(schema)).unwrap();
        let records: [&[u8]; 8] =
            [b"1,2,3.25,0.5", b"-9223372036854775809,,,", b"1.5,,,", b",128,,", b",,1.234,", b",,1234.5,", b"2,-128,-999.99,", b",,,1e400"];
        let decoded = decoder.decode(&records).unwrap();
        assert_eq!(ids(&decoded), vec![Some(1), Some(2)]);
        let d = decoded.batch.column(2).as_primitive::<arrow::datatypes::Decimal128Type>();
        assert_eq!(d.values().to_vec(), vec![325, -99999]);
        assert_eq!(error_indexes(&decoded), vec![1, 2, 3, 4, 5, 7]);
        let messages = error_messages(&decoded);
        for (message, (column, value)) in
            messages.iter().zip([("id", "-9223372036854775809"), ("id", "1.5"), ("small", "128"), ("d", "1.234"), ("d", "1234.5"), ("x", "1e400")])
        {
            assert!(message.contains(column) && message.contains(value), "{message}");
            // Each record is parsed alone: arrow-csv's line within it would always be 0.
            assert!(!message.contains("line 0"), "{message}");
        }
    }

    /// arrow-json skips commas like whitespace and reads a leading zero: two records glued
    /// without a line break became one row holding the second's values. Such records are
    /// malformed now, with where and why; a record arrow-json alone reads (a date column takes
    /// the arrow path) shows the check runs there.
    #[test]
    fn json_records_with_invalid_syntax_are_dead_letters() {
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true), Field::new("day", DataType::Date32, true)]));
        let decoder = RecordDecoder::new(&DecoderOptions::of(Format::Json, ","), Some(schema)).unwrap();
        let records: [&[u8]; 6] = [
            br#"{"id":1,"day":"2024-01-01"}"#,
            br#"{"id":2,"day":"2024-01-02" "id":3,"day":"2024-01-03"}"#,
            br#"{"id":4,,"day":"2024-01-04"}"#,
            br#"{"id":5,"day":"2024-01-05",}"#,
            br#"{"id":06}"#,
            br#"{"id":7, "day": null}"#,
        ];
        let decoded = decoder.decode(&records).unwrap();
        assert_eq!(ids(&decoded), vec![Some(1), Some(7)]);
        assert_eq!(error_indexes(&decoded), vec![1, 2, 3, 4]);
        let messages = error_messages(&decoded);
        for (message, why) in messages.iter().zip([
            "invalid JSON at byte 27: ',' or '}' is due after a member",
            "invalid JSON at byte 8: a member name in quotes is due, found ','",
            "invalid JSON at byte 27: a member name in quotes is due, found '}'",
            "a number may not have a leading zero",
        ]) {
            assert!(message.contains(why), "{message}");
        }
    }

    /// arrow's parsers read a date column's `2024-01-01T23:00:00-05:00` as 2024-01-02 (the UTC
    /// date) and cut a fraction finer than a timestamp column's unit; in JSON and in CSV such
    /// values are malformed records instead, naming the column.
    #[test]
    fn dates_with_a_time_and_fractions_finer_than_the_unit_are_dead_letters() {
        use arrow::datatypes::TimeUnit;
        assert_json_values(
            DataType::Date32,
            &[("\"2024-02-29\"", "2024-02-29"), ("19782", "2024-02-29")],
            &["\"2024-01-01T00:00:00+05:30\"", "\"2024-01-01T23:00:00-05:00\"", "\"2024-02-29T12:34:56\""],
        );
        assert_json_values(
            DataType::Timestamp(TimeUnit::Second, None),
            &[("\"2024-02-29T12:34:56\"", "2024-02-29T12:34:56"), ("\"2024-02-29T12:34:56.000\"", "2024-02-29T12:34:56")],
            &["\"2024-02-29T12:34:56.5\"", "\"2024-01-01T23:59:60\""],
        );
        assert_json_values(
            DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
            &[("\"2024-02-29T12:34:56.123+01:00\"", "2024-02-29T11:34:56.123Z")],
            &["\"1969-12-31T23:59:59.9995Z\"", "\"2024-01-01T23:59:60Z\""],
        );
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, true),
            Field::new("day", DataType::Date32, true),
            Field::new("at", DataType::Timestamp(TimeUnit::Millisecond, None), true),
            Field::new("zoned", DataType::Timestamp(TimeUnit::Second, Some("+00:00".into())), true),
        ]));
        let decoder = RecordDecoder::new(&DecoderOptions::of(Format::Csv, ","), Some(schema)).unwrap();
        let records: [&[u8]; 6] = [
            b"1,2024-02-29,2024-02-29T12:34:56.123,2024-02-29T12:34:56+01:00",
            b"2,2024-01-01T23:00:00-05:00,,",
            b"3,,1969-12-31T23:59:59.9995,",
            b"4,,,2024-02-29T12:34:56.5Z",
            b"5,,2024-01-01T23:59:60,",
            b"6,,,",
        ];
        let decoded = decoder.decode(&records).unwrap();
        assert_eq!(ids(&decoded), vec![Some(1), Some(6)]);
        let columns: Vec<String> = (1..4)
            .map(|c| arrow::util::display::ArrayFormatter::try_new(decoded.batch.column(c), &Default::default()).unwrap().value(0).to_string())
            .collect();
        assert_eq!(columns, ["2024-02-29", "2024-02-29T12:34:56.123", "2024-02-29T11:34:56Z"]);
        assert_eq!(error_indexes(&decoded), vec![1, 2, 3, 4]);
        for (message, why) in error_messages(&decoded).iter().zip([
            "column 'day': \"2024-01-01T23:00:00-05:00\" has a time of day",
            "column 'at': \"1969-12-31T23:59:59.9995\" has a fraction of a second finer than timestamp(ms)",
            "column 'zoned': \"2024-02-29T12:34:56.5Z\" has a fraction of a second finer than timestamp(s)",
            "column 'at': \"2024-01-01T23:59:60\" is a leap second",
        ]) {
            assert!(message.contains(why), "{message}");
        }
    }

    /// `scan_csv` jumps from quote to quote; it must agree with csv-core's states taken byte by
    /// byte, on every string of the bytes that matter, starting inside quotes or not.
    #[test]
    fn the_csv_scan_agrees_with_csv_cores_states_byte_by_byte() {
        #[derive(PartialEq)]
        enum State {
            FieldStart,
            InField,
            Quoted,
            QuoteInQuoted,
        }
        let by_byte = |bytes: &[u8], quoted: bool| {
            let mut state = if quoted { State::Quoted } else { State::FieldStart };
            let mut line_break = None;
            for (at, &b) in bytes.iter().enumerate() {
                if (b == b'\n' || b == b'\r') && state != State::Quoted && line_break.is_none() {
                    line_break = Some(at);
                }
                state = match state {
                    State::Quoted if b == b'"' => State::QuoteInQuoted,
                    State::Quoted => State::Quoted,
                    State::QuoteInQuoted if b == b'"' => State::Quoted,
                    State::FieldStart if b == b'"' => State::Quoted,
                    _ if b == b';' => State::FieldStart,
                    _ => State::InField,
                };
            }
            (state == State::Quoted, line_break)
        };
        let alphabet = [b'a', b';', b'"', b'\n', b'\r'];
        let mut bits = 0x5EED_u64;
        for _ in 0..200_000 {
            bits ^= bits << 13;
            bits ^= bits >> 7;
            bits ^= bits << 17;
            let len = (bits % 12) as usize;
            let bytes: Vec<u8> = (0..len).map(|i| alphabet[(bits >> (8 + 3 * i)) as usize % alphabet.len()]).collect();
            let quoted = bits >> 63 == 1;
            assert_eq!(scan_csv(&bytes, b';', quoted), by_byte(&bytes, quoted), "{:?} quoted {quoted}", String::from_utf8_lossy(&bytes));
        }
    }

    /// A binary CSV column is hex, as the CSV writer writes it; text that is no hex is a dead
    /// letter naming the column (arrow-csv reads no binary: every record was one).
    #[test]
    fn csv_binary_columns_are_hex() {
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true), Field::new("b", DataType::Binary, true)]));
        let decoder = RecordDecoder::new(&DecoderOptions::of(Format::Csv, ","), Some(schema)).unwrap();
        let records: [&[u8]; 5] = [b"1,00fF7a", b"2,", b"3,abc", b"4,zz", b"5,\"0a\""];
        let decoded = decoder.decode(&records).unwrap();
        assert_eq!(ids(&decoded), vec![Some(1), Some(2), Some(5)]);
        let b = decoded.batch.column(1).as_binary::<i32>();
        assert_eq!(b.iter().collect::<Vec<_>>(), vec![Some(&[0u8, 0xff, 0x7a][..]), None, Some(&[0x0a][..])]);
        assert_eq!(error_indexes(&decoded), vec![2, 3]);
        assert!(error_messages(&decoded).iter().all(|m| m.contains("column 'b'") && m.contains("is not hex")), "{:?}", error_messages(&decoded));
    }

    /// Debezium rows keep their numbers as written: a decimal with 19 digits stays exact, an
    /// integer beyond i64 is a dead letter (both went through f64 in serde_json::Value).
    #[test]
    fn debezium_rows_keep_their_numbers_exact() {
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true), Field::new("d", DataType::Decimal128(20, 2), true)]));
        // Decimals as numbers or text: the connector's decimal.handling.mode double or string.
        let options = DecoderOptions { debezium_decimals: DebeziumDecimals::String, ..DecoderOptions::of(Format::Debezium, ",") };
        let decoder = RecordDecoder::new(&options, Some(schema)).unwrap();
        let records: [&[u8]; 3] = [
            br#"{"payload":{"op":"c","after":{"id":1,"d":12345678901234567.89}}}"#,
            br#"{"op":"c","after":{"id":-9223372036854775809,"d":1}}"#,
            br#"{"op":"u","before":null,"after":{"id":3,"d":"0.10"}}"#,
        ];
        let decoded = decoder.decode(&records).unwrap();
        assert_eq!(ids(&decoded), vec![Some(1), Some(3)]);
        let d = decoded.batch.column(1).as_primitive::<arrow::datatypes::Decimal128Type>();
        assert_eq!(d.values().to_vec(), vec![1234567890123456789, 10]);
        assert_eq!(error_indexes(&decoded), vec![1]);
        assert!(error_messages(&decoded)[0].contains("'id'"), "{:?}", error_messages(&decoded));
    }

    /// NaN and infinities are IEEE values of float columns (documented), never nulls.
    #[test]
    fn csv_and_json_nan_and_infinity_are_float_values() {
        let decoder = RecordDecoder::new(&DecoderOptions::of(Format::Csv, ","), Some(one_column("x", DataType::Float64))).unwrap();
        let decoded = decoder.decode(&[b"NaN", b"inf", b"-inf", b"Infinity", b"-Infinity", b"\"\""]).unwrap();
        assert!(decoded.errors.is_none(), "{:?}", error_messages(&decoded));
        let x = decoded.batch.column(0).as_primitive::<Float64Type>();
        assert!(x.value(0).is_nan() && x.is_valid(0));
        assert_eq!(&x.values()[1..5], &[f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY]);
        assert_eq!(x.null_count(), 1, "only the empty field is null");
        // JSON has no such numbers; as strings they are the same values.
        for decoder in json_decoders(one_column("x", DataType::Float64)) {
            let decoded = decoder.decode(&[br#"{"x":"NaN"}"#, br#"{"x":"-inf"}"#, br#"{"x":"Infinity"}"#]).unwrap();
            assert!(decoded.errors.is_none(), "{:?}", error_messages(&decoded));
            let x = decoded.batch.column(0).as_primitive::<Float64Type>();
            assert!(x.value(0).is_nan() && x.null_count() == 0);
            assert_eq!(&x.values()[1..], &[f64::NEG_INFINITY, f64::INFINITY]);
        }
    }
}
