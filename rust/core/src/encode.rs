//! Arrow → record bytes, for sinks. One slab per batch; Java only writes it out (or, for
//! Kafka, slices it by the record offsets).

use arrow::array::RecordBatch;
use arrow::json::writer::{make_encoder, Encoder, EncoderFactory, EncoderOptions, JsonArray, LineDelimited, NullableEncoder, WriterBuilder};
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
    /// The bytes of the one remaining column (binary or string) as they are; null is empty.
    Raw,
    /// One unframed Avro datum per row (always with record offsets).
    Avro,
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
    /// Also encode these columns as each row's key: for one column its bytes (binary) or its
    /// text, NULL as no key at all; for several a JSON object.
    #[serde(default)]
    pub key_columns: Vec<String>,
    /// Columns left out of the encoded records (e.g. `_op`, which a Kafka sink sends as a header).
    #[serde(default)]
    pub exclude_columns: Vec<String>,
    /// Avro: the writer schema (JSON text); absent means derived from the columns.
    #[serde(default)]
    pub avro_schema: Option<String>,
    /// Encode only the first rows, at most this many (the inspect sampler takes a few rows of a
    /// batch of thousands).
    #[serde(default)]
    pub max_rows: Option<usize>,
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
    let limited;
    let batch = match options.max_rows {
        Some(max) if max < batch.num_rows() => {
            limited = batch.slice(0, max); // zero-copy: shares the buffers
            &limited
        }
        _ => batch,
    };
    let values = if options.exclude_columns.is_empty() {
        batch.clone()
    } else {
        let schema = batch.schema();
        let kept: Vec<usize> = (0..schema.fields().len()).filter(|&i| !options.exclude_columns.contains(schema.field(i).name())).collect();
        batch.project(&kept)?
    };
    let (bytes, offsets) = match options.format {
        // Records of these formats are not lines: they come with their offsets.
        EncodeFormat::Avro => crate::avro::encode(&values, options.avro_schema.as_deref())?,
        EncodeFormat::Raw => encode_raw(&values)?,
        EncodeFormat::Json if options.record_offsets => encode_json_records(&values)?,
        _ => {
            let bytes = encode(&values, options)?;
            let offsets = if options.record_offsets { csv_line_offsets(&bytes, batch.num_rows(), options.header)? } else { Vec::new() };
            (bytes, offsets)
        }
    };
    let (keys, key_offsets) = if options.key_columns.is_empty() { (Vec::new(), Vec::new()) } else { encode_keys(batch, &options.key_columns)? };
    Ok(Encoded { bytes, offsets, keys, key_offsets })
}

/// JSON lines with their record offsets in one pass: arrow-json's own encoder (so the text is
/// byte for byte the writer's) driven row by row into one buffer, which records where each row
/// starts instead of scanning for newlines afterwards.
fn encode_json_records(batch: &RecordBatch) -> Result<(Vec<u8>, Vec<i64>)> {
    check_text_writable(batch)?;
    let array = arrow::array::StructArray::from(batch.clone());
    let field = std::sync::Arc::new(arrow::datatypes::Field::new_struct("", batch.schema().fields().clone(), false));
    let options = EncoderOptions::default().with_explicit_nulls(true).with_encoder_factory(std::sync::Arc::new(JsonEncoders));
    let mut encoder = make_encoder(&field, &array, &options)?;
    // Sized once: growing a slab of a few MiB copies it whole each time it doubles.
    let mut bytes = Vec::with_capacity(json_size_estimate(batch));
    let mut offsets = Vec::with_capacity(batch.num_rows() + 1);
    for row in 0..batch.num_rows() {
        offsets.push(bytes.len() as i64);
        encoder.encode(row, &mut bytes);
        bytes.push(b'\n');
    }
    offsets.push(bytes.len() as i64);
    Ok((bytes, offsets))
}

/// About how many bytes `batch` takes as JSON lines, a little more when unescaped: string
/// columns by their value bytes, other columns by a generous width per value.
fn json_size_estimate(batch: &RecordBatch) -> usize {
    use arrow::array::{Array, AsArray};
    use arrow::datatypes::DataType;
    let rows = batch.num_rows();
    let schema = batch.schema();
    let mut total = rows * 3; // braces and newline
    for (field, column) in schema.fields().iter().zip(batch.columns()) {
        let name = field.name().len() + 4; // quotes, colon, comma
        let values = match column.data_type() {
            DataType::Utf8 => value_bytes(column.as_string::<i32>().value_offsets()) + rows * 2,
            DataType::LargeUtf8 => value_bytes(column.as_string::<i64>().value_offsets()) + rows * 2,
            DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::Boolean => {
                rows * 11
            }
            DataType::Timestamp(_, None) => rows * 32,
            _ => rows * 24,
        };
        total += rows * name + values + column.null_count() * 4;
    }
    total
}

/// The bytes between the first and the last offset of a string array.
fn value_bytes<O: arrow::array::OffsetSizeTrait>(offsets: &[O]) -> usize {
    match (offsets.first(), offsets.last()) {
        (Some(first), Some(last)) => (*last - *first).as_usize(),
        _ => 0,
    }
}

/// Sluice's JSON encoders, used by every JSON path: faster ones for the column types sinks
/// write most, each byte for byte what arrow-json writes (the tests compare with its writer), and
/// one that writes NaN and the infinities as strings where arrow-json writes `null`; other types
/// keep arrow-json's own.
///
/// - Timestamps without a time zone are written straight as digits in the text chrono's `Debug`
///   gives (which arrow-json uses: `2026-11-30T01:02:03.456`, fraction only when non-zero, 3, 6
///   or 9 digits), the date part reused while rows stay on one day. The default goes through
///   `fmt` one character at a time, the most expensive part of encoding a Nexmark bid.
/// - Strings that need no escaping are copied between quotes; the others go through serde_json,
///   as in arrow-json. The check runs once over the column's whole value buffer, and per value
///   only when that buffer holds a byte to escape somewhere.
#[derive(Debug)]
struct JsonEncoders;

impl EncoderFactory for JsonEncoders {
    fn make_default_encoder<'a>(
        &self,
        field: &'a arrow::datatypes::FieldRef,
        array: &'a dyn arrow::array::Array,
        _options: &'a EncoderOptions,
    ) -> std::result::Result<Option<NullableEncoder<'a>>, arrow::error::ArrowError> {
        use arrow::array::AsArray;
        use arrow::datatypes::{
            DataType, Float16Type, Float32Type, Float64Type, TimeUnit, TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
            TimestampSecondType,
        };
        let nulls = array.nulls().cloned();
        let fallback = || arrow::util::display::ArrayFormatter::try_new(array, &arrow::util::display::FormatOptions::new());
        let encoder: Box<dyn Encoder + 'a> = match array.data_type() {
            DataType::Utf8 => Box::new(StringEncoder::new(array.as_string::<i32>())),
            DataType::LargeUtf8 => Box::new(StringEncoder::new(array.as_string::<i64>())),
            DataType::Timestamp(TimeUnit::Second, None) => {
                Box::new(TimestampEncoder::<1_000_000_000>::new(array.as_primitive::<TimestampSecondType>().values().clone(), fallback()?))
            }
            DataType::Timestamp(TimeUnit::Millisecond, None) => {
                Box::new(TimestampEncoder::<1_000_000>::new(array.as_primitive::<TimestampMillisecondType>().values().clone(), fallback()?))
            }
            DataType::Timestamp(TimeUnit::Microsecond, None) => {
                Box::new(TimestampEncoder::<1_000>::new(array.as_primitive::<TimestampMicrosecondType>().values().clone(), fallback()?))
            }
            DataType::Timestamp(TimeUnit::Nanosecond, None) => {
                Box::new(TimestampEncoder::<1>::new(array.as_primitive::<TimestampNanosecondType>().values().clone(), fallback()?))
            }
            DataType::Float16 => return NonFiniteAsText::wrap(field, array, array.as_primitive::<Float16Type>().values(), |v| v.to_f64()),
            DataType::Float32 => return NonFiniteAsText::wrap(field, array, array.as_primitive::<Float32Type>().values(), f64::from),
            DataType::Float64 => return NonFiniteAsText::wrap(field, array, array.as_primitive::<Float64Type>().values(), |v| v),
            _ => return Ok(None),
        };
        Ok(Some(NullableEncoder::new(encoder, nulls)))
    }
}

/// A float column holding NaN or an infinity: those are written as the strings `"NaN"`,
/// `"Infinity"` and `"-Infinity"` (as Jackson, and so Flink and Kafka Connect, write them, and as
/// Sluice's JSON decoders read them back), where arrow-json writes `null` and so loses the value.
/// Finite values go through arrow-json's own encoder. Columns without such values are not wrapped.
struct NonFiniteAsText<'a, T: arrow::datatypes::ArrowNativeType> {
    finite: NullableEncoder<'a>,
    values: arrow::buffer::ScalarBuffer<T>,
    as_f64: fn(T) -> f64,
}

/// arrow-json's defaults, which the wrapped encoders use (a static, as they borrow it).
static PLAIN_JSON: std::sync::LazyLock<EncoderOptions> = std::sync::LazyLock::new(EncoderOptions::default);

impl<'a, T: arrow::datatypes::ArrowNativeType> NonFiniteAsText<'a, T> {
    fn wrap(
        field: &'a arrow::datatypes::FieldRef,
        array: &'a dyn arrow::array::Array,
        values: &arrow::buffer::ScalarBuffer<T>,
        as_f64: fn(T) -> f64,
    ) -> std::result::Result<Option<NullableEncoder<'a>>, arrow::error::ArrowError> {
        if values.iter().all(|&v| as_f64(v).is_finite()) {
            return Ok(None);
        }
        let finite = make_encoder(field, array, &PLAIN_JSON)?;
        let encoder = NonFiniteAsText { finite, values: values.clone(), as_f64 };
        Ok(Some(NullableEncoder::new(Box::new(encoder), array.nulls().cloned())))
    }
}

impl<T: arrow::datatypes::ArrowNativeType> Encoder for NonFiniteAsText<'_, T> {
    fn encode(&mut self, idx: usize, out: &mut Vec<u8>) {
        let value = (self.as_f64)(self.values[idx]);
        if value.is_nan() {
            out.extend_from_slice(b"\"NaN\"");
        } else if value == f64::INFINITY {
            out.extend_from_slice(b"\"Infinity\"");
        } else if value == f64::NEG_INFINITY {
            out.extend_from_slice(b"\"-Infinity\"");
        } else {
            self.finite.encode(idx, out);
        }
    }
}

struct StringEncoder<'a, O: arrow::array::OffsetSizeTrait> {
    array: &'a arrow::array::GenericStringArray<O>,
    /// No value of the array holds a byte JSON escapes.
    all_plain: bool,
}

impl<'a, O: arrow::array::OffsetSizeTrait> StringEncoder<'a, O> {
    fn new(array: &'a arrow::array::GenericStringArray<O>) -> Self {
        let offsets = array.value_offsets();
        let start = offsets.first().map_or(0, |o| o.as_usize());
        let all_plain = !needs_json_escape(&array.value_data()[start..start + value_bytes(offsets)]);
        StringEncoder { array, all_plain }
    }
}

impl<O: arrow::array::OffsetSizeTrait> Encoder for StringEncoder<'_, O> {
    fn encode(&mut self, idx: usize, out: &mut Vec<u8>) {
        let value = self.array.value(idx);
        if !self.all_plain && needs_json_escape(value.as_bytes()) {
            let mut serializer = serde_json::Serializer::new(out);
            serde::Serializer::serialize_str(&mut serializer, value).expect("writing to a Vec cannot fail");
        } else {
            out.reserve(value.len() + 2);
            out.push(b'"');
            out.extend_from_slice(value.as_bytes());
            out.push(b'"');
        }
    }
}

/// Whether `bytes` hold a quote, a backslash or a control character (below 0x20), the bytes
/// JSON strings escape. Eight bytes at a time: a word has such a byte exactly when one of
/// its bytes, XORed with the quote or backslash or taken as is, falls below the limit.
fn needs_json_escape(bytes: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Whole column buffers go 32 bytes at a time, a loop the compiler turns into vector compares.
    let mut blocks = bytes.chunks_exact(32);
    for block in &mut blocks {
        if block.iter().fold(false, |hit, &b| hit | (b < 0x20) | (b == b'"') | (b == b'\\')) {
            return true;
        }
    }
    // Sets the high bit of each byte that is below `n` (n <= 128), for bytes without the high bit set.
    let below = |word: u64, n: u8| word.wrapping_sub(ONES * n as u64) & !word & HIGH;
    let mut chunks = blocks.remainder().chunks_exact(8);
    for chunk in &mut chunks {
        let word = u64::from_le_bytes(chunk.try_into().expect("chunks of 8"));
        if below(word, 0x20) | below(word ^ (ONES * b'"' as u64), 1) | below(word ^ (ONES * b'\\' as u64), 1) != 0 {
            return true;
        }
    }
    chunks.remainder().iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\')
}

/// Timestamps of one unit (`NANOS_PER_UNIT` nanoseconds each; a constant, so the divisions
/// below compile to multiplications).
struct TimestampEncoder<'a, const NANOS_PER_UNIT: i64> {
    values: arrow::buffer::ScalarBuffer<i64>,
    /// For the rare values this does not write itself (years outside 0..=9999).
    fallback: arrow::util::display::ArrayFormatter<'a>,
    /// The first value of the day last written (its units since the epoch), and that day's
    /// `"YYYY-MM-DDT` text.
    cached_day_start: Option<i64>,
    cached_date: [u8; 12],
}

impl<'a, const NANOS_PER_UNIT: i64> TimestampEncoder<'a, NANOS_PER_UNIT> {
    const UNITS_PER_DAY: i64 = 86_400_000_000_000 / NANOS_PER_UNIT;
    const UNITS_PER_SECOND: i64 = 1_000_000_000 / NANOS_PER_UNIT;

    fn new(values: arrow::buffer::ScalarBuffer<i64>, fallback: arrow::util::display::ArrayFormatter<'a>) -> Self {
        TimestampEncoder { values, fallback, cached_day_start: None, cached_date: [0; 12] }
    }

    /// Makes `value`'s day the cached one; false when its year is outside 0..=9999 or the day
    /// starts before the first value an i64 holds (nanoseconds in September 1677).
    fn cache_day_of(&mut self, value: i64) -> bool {
        let days = value.div_euclid(Self::UNITS_PER_DAY);
        let (year, month, day) = civil_from_days(days);
        let Some(day_start) = days.checked_mul(Self::UNITS_PER_DAY) else { return false };
        if !(0..=9999).contains(&year) {
            return false;
        }
        let date = &mut self.cached_date;
        date[0] = b'"';
        put_digits(&mut date[1..5], year);
        date[5] = b'-';
        put_digits(&mut date[6..8], month);
        date[8] = b'-';
        put_digits(&mut date[9..11], day);
        date[11] = b'T';
        self.cached_day_start = Some(day_start);
        true
    }
}

impl<const NANOS_PER_UNIT: i64> Encoder for TimestampEncoder<'_, NANOS_PER_UNIT> {
    fn encode(&mut self, idx: usize, out: &mut Vec<u8>) {
        let value = self.values[idx];
        let on_cached_day =
            self.cached_day_start.is_some_and(|start| value.checked_sub(start).is_some_and(|units| (0..Self::UNITS_PER_DAY).contains(&units)));
        if !on_cached_day && !self.cache_day_of(value) {
            use std::io::Write;
            out.push(b'"');
            let _ = write!(out, "{}", self.fallback.value(idx));
            out.push(b'"');
            return;
        }
        let units_of_day = value - self.cached_day_start.expect("cached above");
        let seconds = units_of_day / Self::UNITS_PER_SECOND;
        let nanos = units_of_day % Self::UNITS_PER_SECOND * NANOS_PER_UNIT;
        // `HH:MM:SS`, then `.` and 3, 6 or 9 fraction digits when the fraction is not zero, then the quote.
        let mut text = [b'0'; 19];
        put_digits(&mut text[0..2], seconds / 3600);
        text[2] = b':';
        put_digits(&mut text[3..5], seconds / 60 % 60);
        text[5] = b':';
        put_digits(&mut text[6..8], seconds % 60);
        let len = if nanos == 0 {
            8
        } else {
            text[8] = b'.';
            let (digits, width) = if nanos % 1_000_000 == 0 {
                (nanos / 1_000_000, 3)
            } else if nanos % 1_000 == 0 {
                (nanos / 1_000, 6)
            } else {
                (nanos, 9)
            };
            put_digits(&mut text[9..9 + width], digits);
            9 + width
        };
        text[len] = b'"';
        out.extend_from_slice(&self.cached_date);
        out.extend_from_slice(&text[..len + 1]);
    }
}

/// `value` (non-negative) as exactly `slot.len()` decimal digits, zero-padded.
fn put_digits(slot: &mut [u8], mut value: i64) {
    for digit in slot.iter_mut().rev() {
        *digit = b'0' + (value % 10) as u8;
        value /= 10;
    }
}

/// Proleptic Gregorian (year, month, day) of a day count since 1970-01-01 (H. Hinnant's
/// `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 { month_index + 3 } else { month_index - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Start offsets of the `rows` CSV lines in `bytes`, plus `bytes.len()`: record i is
/// `bytes[o[i] .. o[i+1] - 1]` (each line ends in one newline, not part of the record). The
/// CSV writer quotes fields with newlines and doubles quotes inside them, so a newline ends a
/// record exactly when it is outside quotes.
fn csv_line_offsets(bytes: &[u8], rows: usize, skip_header: bool) -> Result<Vec<i64>> {
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
        use arrow::datatypes::DataType;
        let column = projected.column(0);
        // Binary keys stay bytes: as text, one that is not UTF-8 would become NULL. Every other
        // cast to text either succeeds or fails the batch (`safe: false`), never makes a NULL.
        let column = match column.data_type() {
            DataType::Binary => column.clone(),
            DataType::LargeBinary | DataType::FixedSizeBinary(_) | DataType::BinaryView => arrow::compute::cast(column, &DataType::Binary)?,
            _ => {
                let options = arrow::compute::CastOptions { safe: false, ..Default::default() };
                let text = arrow::compute::cast_with_options(column, &DataType::Utf8, &options)?;
                arrow::compute::cast(&text, &DataType::Binary)?
            }
        };
        let bytes = column.as_any().downcast_ref::<arrow::array::BinaryArray>().expect("cast to Binary");
        // Same layout as the records: each key followed by one newline that is not part of it;
        // a NULL key is no bytes at all, not even the newline (length -1: no message key).
        for i in 0..bytes.len() {
            offsets.push(keys.len() as i64);
            if bytes.is_valid(i) {
                keys.extend_from_slice(bytes.value(i));
                keys.push(b'\n');
            }
        }
        offsets.push(keys.len() as i64);
    } else {
        (keys, offsets) = encode_json_records(&projected)?;
    }
    Ok((keys, offsets))
}

/// The one column's values back to back, with `rows + 1` offsets.
fn encode_raw(batch: &RecordBatch) -> Result<(Vec<u8>, Vec<i64>)> {
    use arrow::array::{Array, AsArray};
    if batch.num_columns() != 1 {
        return Err(CoreError::config(format!(
            "raw records need exactly one column (binary or string) besides the key and _op columns, got {}",
            batch.schema()
        )));
    }
    let column = arrow::compute::cast(batch.column(0), &arrow::datatypes::DataType::LargeBinary)
        .map_err(|e| CoreError::config(format!("raw records need a binary or string column: {e}")))?;
    let values = column.as_binary::<i64>();
    let mut offsets = Vec::with_capacity(values.len() + 1);
    if values.null_count() == 0 {
        // The column's own buffers already hold the layout we want.
        let base = values.value_offsets()[0];
        offsets.extend(values.value_offsets().iter().map(|o| o - base));
        let bytes = values.values()[base as usize..*values.value_offsets().last().unwrap() as usize].to_vec();
        return Ok((bytes, offsets));
    }
    let mut bytes = Vec::with_capacity(values.values().len());
    for i in 0..values.len() {
        offsets.push(bytes.len() as i64);
        if values.is_valid(i) {
            bytes.extend_from_slice(values.value(i));
        }
    }
    offsets.push(bytes.len() as i64);
    Ok((bytes, offsets))
}

/// Encodes a batch. JSON output writes nulls explicitly so every row has every column.
pub fn encode(batch: &RecordBatch, options: &EncodeOptions) -> Result<Vec<u8>> {
    if matches!(options.format, EncodeFormat::Json | EncodeFormat::JsonArray | EncodeFormat::Csv) {
        check_text_writable(batch)?;
    }
    let mut out = Vec::with_capacity(batch.num_rows() * 64);
    match options.format {
        EncodeFormat::Json => {
            let mut writer = WriterBuilder::new()
                .with_explicit_nulls(true)
                .with_encoder_factory(std::sync::Arc::new(JsonEncoders))
                .build::<_, LineDelimited>(&mut out);
            writer.write(batch)?;
            writer.finish()?;
        }
        EncodeFormat::JsonArray => {
            let mut writer = WriterBuilder::new()
                .with_explicit_nulls(true)
                .with_encoder_factory(std::sync::Arc::new(JsonEncoders))
                .build::<_, JsonArray>(&mut out);
            writer.write(batch)?;
            writer.finish()?;
        }
        EncodeFormat::Csv => {
            let mut writer = arrow::csv::WriterBuilder::new().with_header(options.header).build(&mut out);
            writer.write(batch)?;
            drop(writer);
            quote_leading_byte_order_mark(&mut out);
        }
        EncodeFormat::Raw | EncodeFormat::Avro => return Ok(encode_records(batch, options)?.bytes),
    }
    Ok(out)
}

/// Quotes the first CSV field when it starts with U+FEFF: at the start of a file, readers (ours
/// too) take it for a byte order mark and drop it from the value. Unquoted, the field holds no
/// comma, quote or line end, so it ends at the first of those.
fn quote_leading_byte_order_mark(csv: &mut Vec<u8>) {
    const BOM: &[u8] = "\u{feff}".as_bytes();
    if csv.starts_with(BOM) {
        let end = csv.iter().position(|&b| matches!(b, b',' | b'\n' | b'\r')).unwrap_or(csv.len());
        csv.insert(end, b'"');
        csv.insert(0, b'"');
    }
}

/// Fails naming the first date, time, timestamp or duration that arrow's text writers cannot
/// write (chrono holds years -262143..=262142 and durations up to 2^63 milliseconds; a time of
/// day must be under 24 hours): they would write the text `ERROR: …` (`<invalid>` for a
/// duration) in its place, as if it were the value. Each column's
/// smallest and largest values are tried first, so a batch in range costs two lookups per
/// column; nested columns are checked through their children.
pub fn check_text_writable(batch: &RecordBatch) -> Result<()> {
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        check_writable(field.name(), column.as_ref(), true)?;
    }
    Ok(())
}

/// `top_level`: `array` is the column itself, so its indices are the batch's rows.
fn check_writable(column: &str, array: &dyn arrow::array::Array, top_level: bool) -> Result<()> {
    use arrow::array::{Array, AsArray};
    use arrow::datatypes::{ArrowNativeType, DataType};
    match array.data_type() {
        DataType::Date32 | DataType::Time32(_) => check_temporal::<arrow::datatypes::Int32Type>(column, array, top_level),
        DataType::Date64 | DataType::Time64(_) | DataType::Timestamp(_, _) | DataType::Duration(_) => {
            check_temporal::<arrow::datatypes::Int64Type>(column, array, top_level)
        }
        DataType::Decimal32(..) => check_decimal::<arrow::datatypes::Decimal32Type>(column, array, top_level),
        DataType::Decimal64(..) => check_decimal::<arrow::datatypes::Decimal64Type>(column, array, top_level),
        DataType::Decimal128(..) => check_decimal::<arrow::datatypes::Decimal128Type>(column, array, top_level),
        DataType::Decimal256(..) => check_decimal::<arrow::datatypes::Decimal256Type>(column, array, top_level),
        DataType::Struct(_) => array.as_struct().columns().iter().try_for_each(|child| match array.nulls() {
            // A child's slot under a NULL struct is no value: the writer prints `null` there.
            Some(nulls) => {
                let valid = arrow::buffer::NullBuffer::union(Some(nulls), child.nulls());
                let child = arrow::array::make_array(child.to_data().into_builder().nulls(valid).build()?);
                check_writable(column, child.as_ref(), top_level)
            }
            None => check_writable(column, child.as_ref(), top_level),
        }),
        DataType::List(_) => {
            let list = array.as_list::<i32>();
            let (first, last) = (list.value_offsets()[0].as_usize(), list.value_offsets()[list.len()].as_usize());
            check_writable(column, list.values().slice(first, last - first).as_ref(), false)
        }
        DataType::LargeList(_) => {
            let list = array.as_list::<i64>();
            let (first, last) = (list.value_offsets()[0].as_usize(), list.value_offsets()[list.len()].as_usize());
            check_writable(column, list.values().slice(first, last - first).as_ref(), false)
        }
        DataType::FixedSizeList(_, size) => {
            let list = array.as_fixed_size_list();
            let size = *size as usize;
            check_writable(column, list.values().slice(list.offset() * size, list.len() * size).as_ref(), false)
        }
        DataType::Map(_, _) => {
            let map = array.as_map();
            let (first, last) = (map.value_offsets()[0].as_usize(), map.value_offsets()[map.len()].as_usize());
            check_writable(column, &map.entries().slice(first, last - first), false)
        }
        DataType::Dictionary(_, _) => check_writable(column, array.as_any_dictionary().values().as_ref(), false),
        _ => Ok(()),
    }
}

/// A temporal column stored as `N` (i32 or i64): the values between its smallest and largest
/// are writable when those two are, as each type's writable values form one range.
fn check_temporal<N>(column: &str, array: &dyn arrow::array::Array, top_level: bool) -> Result<()>
where
    N: arrow::datatypes::ArrowPrimitiveType,
    N::Native: arrow::datatypes::ArrowNativeTypeOp + std::fmt::Display,
{
    use arrow::array::{Array, PrimitiveArray};
    use arrow::datatypes::DataType;
    let data_type = array.data_type();
    let raw = PrimitiveArray::<N>::from(array.to_data().into_builder().data_type(N::DATA_TYPE).build()?);
    let (Some(min), Some(max)) = (arrow::compute::min(&raw), arrow::compute::max(&raw)) else { return Ok(()) };
    let ends = PrimitiveArray::<N>::from_iter_values([min, max]).to_data().into_builder().data_type(data_type.clone()).build()?;
    if first_unwritable(&arrow::array::make_array(ends))?.is_none() {
        return Ok(());
    }
    let index = first_unwritable(array)?.expect("a value outside the range was found above");
    let place = if top_level { format!("row {index}") } else { format!("nested value {index}") };
    let holds = match data_type {
        DataType::Time32(_) | DataType::Time64(_) => "a time of day under 24 hours",
        DataType::Duration(_) => "at most 2^63 milliseconds either way",
        _ => "the years -262143..=262142",
    };
    Err(CoreError::invalid(format!(
        "column '{column}' {place}: the {data_type} value {} cannot be written as text (it holds {holds}); filter or CAST it in the query",
        raw.value(index)
    )))
}

/// A decimal column whose values all fit its precision. One that does not (a Parquet file or a
/// plugin can hold one) is printed by arrow's writers as its first digits only: 123456 in
/// decimal(4, 2) as `12.34`.
fn check_decimal<T>(column: &str, array: &dyn arrow::array::Array, top_level: bool) -> Result<()>
where
    T: arrow::datatypes::DecimalType,
    T::Native: std::fmt::Display,
{
    use arrow::array::{Array, AsArray};
    let values = array.as_primitive::<T>();
    let precision = values.precision();
    let Some(index) =
        (0..values.len()).find(|&i| values.is_valid(i) && T::validate_decimal_precision(values.value(i), precision, values.scale()).is_err())
    else {
        return Ok(());
    };
    let place = if top_level { format!("row {index}") } else { format!("nested value {index}") };
    Err(CoreError::invalid(format!(
        "column '{column}' {place}: the value {} has more digits than its type {} holds; CAST it to a wider decimal in the query",
        decimal_text(&values.value(index).to_string(), values.scale()),
        array.data_type()
    )))
}

/// An unscaled decimal's digits with the point where `scale` puts it, however many digits there
/// are (arrow's own formatting keeps only as many as the precision).
pub(crate) fn decimal_text(unscaled: &str, scale: i8) -> String {
    let (sign, digits) = unscaled.strip_prefix('-').map_or(("", unscaled), |digits| ("-", digits));
    if scale <= 0 {
        return format!("{sign}{digits}{}", "0".repeat(scale.unsigned_abs() as usize));
    }
    let scale = scale as usize;
    let digits = format!("{digits:0>width$}", width = scale + 1);
    let (integer, fraction) = digits.split_at(digits.len() - scale);
    format!("{sign}{integer}.{fraction}")
}

/// The first valid index of `array` its formatter refuses, if any.
fn first_unwritable(array: &dyn arrow::array::Array) -> Result<Option<usize>> {
    use std::fmt::Write as _;
    let strict = arrow::util::display::FormatOptions::new().with_display_error(false);
    let formatter = arrow::util::display::ArrayFormatter::try_new(array, &strict)?;
    let mut text = String::new();
    // A duration chrono cannot hold (beyond ±2^63 milliseconds) is no error to arrow: it writes
    // the text `<invalid>`.
    Ok((0..array.len()).find(|&row| {
        text.clear();
        array.is_valid(row) && (write!(text, "{}", formatter.value(row)).is_err() || text == "<invalid>")
    }))
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
        let batch = RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from(vec![7, 8])), Arc::new(StringArray::from(vec![Some("x\ny"), None]))])
            .unwrap();
        let options = EncodeOptions {
            format: EncodeFormat::Csv,
            header: true,
            record_offsets: true,
            key_columns: vec!["id".into()],
            exclude_columns: vec![],
            avro_schema: None,
            max_rows: None,
        };
        let out = encode_records(&batch, &options).unwrap();
        let record = |i: usize| &out.bytes[out.offsets[i] as usize..out.offsets[i + 1] as usize - 1];
        assert_eq!(record(0), b"7,\"x\ny\"");
        assert_eq!(record(1), b"8,");
        let key = |i: usize| &out.keys[out.key_offsets[i] as usize..out.key_offsets[i + 1] as usize - 1];
        assert_eq!((key(0), key(1)), (&b"7"[..], &b"8"[..]));
    }

    /// A key column of bytes that are not UTF-8 (a Kafka source's `_key`, say) used to be cast
    /// to text, which made each such key NULL and then empty: every row under one key. And a
    /// NULL key was written as an empty key; now it is none (length -1).
    #[test]
    fn binary_keys_keep_their_bytes_and_null_keys_are_none() {
        use arrow::array::{ArrayRef, BinaryArray, FixedSizeBinaryArray, LargeBinaryArray};
        let values: [Option<&[u8]>; 4] = [Some(b"\xff\x00\n"), None, Some(b""), Some(b"\xc3\x28")];
        let columns: Vec<ArrayRef> = vec![
            Arc::new(BinaryArray::from_iter(values)),
            Arc::new(LargeBinaryArray::from_iter(values)),
            Arc::new(StringArray::from(vec![Some("\u{e9}t\u{e9}"), None, Some(""), Some("x")])),
        ];
        for column in columns {
            let schema = Arc::new(Schema::new(vec![Field::new("k", column.data_type().clone(), true), Field::new("v", DataType::Int64, false)]));
            let batch = RecordBatch::try_new(schema, vec![column.clone(), Arc::new(Int64Array::from(vec![1, 2, 3, 4]))]).unwrap();
            let options = EncodeOptions { record_offsets: true, key_columns: vec!["k".into()], ..EncodeOptions::default() };
            let out = encode_records(&batch, &options).unwrap();
            let key = |i: usize| {
                let (start, end) = (out.key_offsets[i] as usize, out.key_offsets[i + 1] as usize);
                (end > start).then(|| out.keys[start..end - 1].to_vec())
            };
            let expected: Vec<Option<Vec<u8>>> = match column.data_type() {
                DataType::Utf8 => vec![Some("\u{e9}t\u{e9}".into()), None, Some(vec![]), Some(b"x".to_vec())],
                _ => values.iter().map(|v| v.map(<[u8]>::to_vec)).collect(),
            };
            assert_eq!((0..4).map(key).collect::<Vec<_>>(), expected, "{}", column.data_type());
        }
        let fixed: ArrayRef = Arc::new(FixedSizeBinaryArray::try_from_sparse_iter_with_size([Some(b"\xfe\xff"), None].into_iter(), 2).unwrap());
        let schema = Arc::new(Schema::new(vec![Field::new("k", fixed.data_type().clone(), true)]));
        let batch = RecordBatch::try_new(schema, vec![fixed]).unwrap();
        let out = encode_records(&batch, &EncodeOptions { record_offsets: true, key_columns: vec!["k".into()], ..EncodeOptions::default() }).unwrap();
        assert_eq!((&out.keys[..], &out.key_offsets[..]), (&b"\xfe\xff\n"[..], &[0i64, 3, 3][..]));
    }

    #[test]
    fn excluded_columns_stay_out_of_the_records() {
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false), Field::new("_op", DataType::Utf8, false)]));
        let batch = RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from(vec![7])), Arc::new(StringArray::from(vec!["d"]))]).unwrap();
        let options = EncodeOptions { record_offsets: true, exclude_columns: vec!["_op".into()], ..EncodeOptions::default() };
        assert_eq!(encode_records(&batch, &options).unwrap().bytes, b"{\"id\":7}\n");
    }

    #[test]
    fn max_rows_encodes_only_the_first_rows() {
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
        let batch = RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from(vec![1, 2, 3]))]).unwrap();
        let options = EncodeOptions { record_offsets: true, key_columns: vec!["id".into()], max_rows: Some(2), ..EncodeOptions::default() };
        let out = encode_records(&batch, &options).unwrap();
        assert_eq!(out.bytes, b"{\"id\":1}\n{\"id\":2}\n");
        assert_eq!((out.offsets.len(), out.key_offsets.len()), (3, 3));
        let all = EncodeOptions { record_offsets: true, max_rows: Some(5), ..EncodeOptions::default() };
        assert_eq!(encode_records(&batch, &all).unwrap().offsets.len(), 4);
    }

    /// JSON lines as arrow-json's own writer gives them, the reference for Sluice's encoders.
    fn arrow_json_lines(batch: &RecordBatch) -> Vec<u8> {
        let mut out = Vec::new();
        let mut writer = WriterBuilder::new().with_explicit_nulls(true).build::<_, LineDelimited>(&mut out);
        writer.write(batch).unwrap();
        writer.finish().unwrap();
        out
    }

    #[test]
    fn json_lines_with_explicit_nulls() {
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false), Field::new("s", DataType::Utf8, true)]));
        let batch = RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from(vec![1, 2])), Arc::new(StringArray::from(vec![Some("a\nb"), None]))])
            .unwrap();
        let out = encode(&batch, &EncodeOptions::default()).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "{\"id\":1,\"s\":\"a\\nb\"}\n{\"id\":2,\"s\":null}\n");
    }

    #[test]
    fn json_records_match_the_arrow_json_writer() {
        use arrow::array::{Float64Array, TimestampMicrosecondArray, TimestampMillisecondArray, TimestampNanosecondArray, TimestampSecondArray};
        // Around the epoch, leap days, fractions of every width, and years the fast path leaves to the fallback.
        let mut instants: Vec<i64> = vec![0, -1, 1, 999, 1_000, 86_399_999, 86_400_000, -86_400_001, 951_782_400_000, 4_107_542_399_999];
        instants.extend([-62_167_219_200_001, 253_402_300_800_000, i64::from(i32::MAX) * 1000, 1_780_000_000_123]);
        let mut seed = 7u64;
        for _ in 0..2000 {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            instants.push((seed >> 20) as i64 % 200_000_000_000_000 - 100_000_000_000_000);
        }
        let rows = instants.len();
        let nulls = |i: usize| i % 17 != 3;
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("s", DataType::Utf8, true),
            Field::new("x", DataType::Float64, true),
            Field::new("t_s", DataType::Timestamp(arrow::datatypes::TimeUnit::Second, None), true),
            Field::new("t_ms", DataType::Timestamp(arrow::datatypes::TimeUnit::Millisecond, None), true),
            Field::new("t_us", DataType::Timestamp(arrow::datatypes::TimeUnit::Microsecond, None), true),
            Field::new("t_ns", DataType::Timestamp(arrow::datatypes::TimeUnit::Nanosecond, None), true),
            Field::new("t_utc", DataType::Timestamp(arrow::datatypes::TimeUnit::Millisecond, Some("+00:00".into())), true),
        ]));
        let pick = |scale: i64| instants.iter().enumerate().map(|(i, v)| nulls(i).then(|| v.saturating_mul(scale) / 1000)).collect::<Vec<_>>();
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int64Array::from_iter_values(0..rows as i64)),
                Arc::new(StringArray::from_iter((0..rows).map(|i| nulls(i).then(|| format!("a\"b\n{i}"))))),
                Arc::new(Float64Array::from_iter((0..rows).map(|i| nulls(i).then(|| i as f64 / 3.0)))),
                Arc::new(TimestampSecondArray::from(pick(1))),
                Arc::new(TimestampMillisecondArray::from(pick(1000))),
                Arc::new(TimestampMicrosecondArray::from(pick(1_000_000).into_iter().map(|v| v.map(|v| v + 7_000)).collect::<Vec<_>>())),
                Arc::new(TimestampNanosecondArray::from(pick(1_000_000).into_iter().map(|v| v.map(|v| v * 1000 + 123)).collect::<Vec<_>>())),
                Arc::new(TimestampMillisecondArray::from(pick(1000)).with_timezone("+00:00")),
            ],
        )
        .unwrap();
        let expected = arrow_json_lines(&batch);
        let out = encode_records(&batch, &EncodeOptions { record_offsets: true, ..EncodeOptions::default() }).unwrap();
        for (row, (ours, theirs)) in out.bytes.split(|&b| b == b'\n').zip(expected.split(|&b| b == b'\n')).enumerate() {
            assert_eq!(String::from_utf8_lossy(ours), String::from_utf8_lossy(theirs), "row {row}");
        }
        assert_eq!(out.bytes, expected);
        assert_eq!(encode(&batch, &EncodeOptions::default()).unwrap(), expected);
        // JSON escapes newlines inside strings: every newline ends a record.
        let mut lines = vec![0i64];
        lines.extend(expected.iter().enumerate().filter(|(_, b)| **b == b'\n').map(|(i, _)| i as i64 + 1));
        assert_eq!(out.offsets, lines);
    }

    /// NaN and the infinities are written as strings on every JSON path (arrow-json writes
    /// `null`, a different value), and Sluice's JSON decoder reads them back as the same values.
    #[test]
    fn json_writes_nan_and_infinities_as_strings_the_decoder_reads_back() {
        use crate::decode::{DecoderOptions, Format, RecordDecoder};
        use arrow::array::{Array, AsArray, Float32Array, Float64Array, ListArray};
        use arrow::datatypes::{Float32Type, Float64Type};
        let f64s = vec![Some(1.5), Some(f64::NAN), Some(f64::INFINITY), Some(f64::NEG_INFINITY), None, Some(1e300)];
        let f32s = vec![Some(f32::NEG_INFINITY), Some(0.1), None, Some(f32::NAN), Some(f32::INFINITY), Some(-0.0)];
        let f16s = Float32Array::from(vec![Some(1.0), None, Some(f32::NAN), Some(0.5), Some(f32::INFINITY), Some(f32::NEG_INFINITY)]);
        let f16s = arrow::compute::cast(&f16s, &DataType::Float16).unwrap();
        let list = ListArray::from_iter_primitive::<Float64Type, _, _>([
            Some(vec![Some(f64::NAN), Some(2.0)]),
            None,
            Some(vec![]),
            Some(vec![None, Some(f64::NEG_INFINITY)]),
            Some(vec![Some(1.0)]),
            None,
        ]);
        let schema = Arc::new(Schema::new(vec![
            Field::new("d", DataType::Float64, true),
            Field::new("r", DataType::Float32, true),
            Field::new("h", DataType::Float16, true),
            Field::new("l", list.data_type().clone(), true),
        ]));
        let batch = RecordBatch::try_new(
            schema,
            vec![Arc::new(Float64Array::from(f64s.clone())), Arc::new(Float32Array::from(f32s.clone())), f16s, Arc::new(list)],
        )
        .unwrap();
        let expected = [
            r#"{"d":1.5,"r":"-Infinity","h":1.0,"l":["NaN",2.0]}"#,
            r#"{"d":"NaN","r":0.1,"h":null,"l":null}"#,
            r#"{"d":"Infinity","r":null,"h":"NaN","l":[]}"#,
            r#"{"d":"-Infinity","r":"NaN","h":0.5,"l":[null,"-Infinity"]}"#,
            r#"{"d":null,"r":"Infinity","h":"Infinity","l":[1.0]}"#,
            r#"{"d":1.0e300,"r":-0.0,"h":"-Infinity","l":null}"#,
        ];
        let lines = |bytes: &[u8]| String::from_utf8(bytes.to_vec()).unwrap().lines().map(str::to_string).collect::<Vec<_>>();
        assert_eq!(lines(&encode(&batch, &EncodeOptions::default()).unwrap()), expected);
        let records = encode_records(&batch, &EncodeOptions { record_offsets: true, ..EncodeOptions::default() }).unwrap();
        assert_eq!(lines(&records.bytes), expected);
        let array = encode(&batch, &EncodeOptions { format: EncodeFormat::JsonArray, ..EncodeOptions::default() }).unwrap();
        assert_eq!(String::from_utf8(array).unwrap(), format!("[{}]", expected.join(",")));
        // Finite columns are arrow-json's text, untouched.
        let finite = batch.project(&[0]).unwrap().slice(0, 1);
        assert_eq!(encode(&finite, &EncodeOptions::default()).unwrap(), arrow_json_lines(&finite));

        let floats = Arc::new(Schema::new(vec![Field::new("d", DataType::Float64, true), Field::new("r", DataType::Float32, true)]));
        let decoder = RecordDecoder::new(&DecoderOptions::of(Format::Json, ","), Some(floats)).unwrap();
        let written: Vec<&[u8]> = records.offsets.windows(2).map(|w| &records.bytes[w[0] as usize..w[1] as usize - 1]).collect();
        let decoded = decoder.decode(&written).unwrap();
        assert!(decoded.errors.is_none());
        let same_f64 = |a: Option<f64>, b: Option<f64>| a.map(f64::to_bits) == b.map(f64::to_bits);
        let d = decoded.batch.column(0).as_primitive::<Float64Type>();
        assert!(d.iter().zip(&f64s).all(|(a, b)| same_f64(a, *b)), "{d:?}");
        let r = decoded.batch.column(1).as_primitive::<Float32Type>();
        assert!(r.iter().zip(&f32s).all(|(a, b)| a.map(f32::to_bits) == b.map(f32::to_bits)), "{r:?}");
    }

    #[test]
    fn strings_match_the_arrow_json_writer() {
        use arrow::array::LargeStringArray;
        // Each byte JSON escapes, and some it does not (DEL, multi-byte UTF-8), at every position
        // of strings around the 8-byte words the escape check reads.
        let specials = ["\"", "\\", "\n", "\u{0}", "\u{1f}", "\u{7f}", "é", "€", "😀", "/", " "];
        let mut values: Vec<String> = vec![String::new(), "plain".into(), "https://www.nexmark.com/abc/def/item.htm?query=1".into()];
        for special in specials {
            for len in 0..20 {
                for at in 0..=len {
                    let mut text: String = "abcdefghijklmnopqrstu"[..len].into();
                    text.insert_str(at, special);
                    values.push(text);
                }
            }
        }
        let schema = Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, true), Field::new("l", DataType::LargeUtf8, true)]));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(StringArray::from_iter(values.iter().enumerate().map(|(i, v)| (i % 13 != 5).then_some(v.as_str())))),
                Arc::new(LargeStringArray::from_iter_values(values.iter().rev())),
            ],
        )
        .unwrap();
        // Slices too: the escape check over the value buffer must see only the slice's values.
        let plain_run = values.iter().position(|v| v == "plain").unwrap();
        for batch in [batch.clone(), batch.slice(1, 2), batch.slice(plain_run, 1), batch.slice(5, 300), batch.slice(batch.num_rows() - 7, 7)] {
            let expected = arrow_json_lines(&batch);
            let out = encode_records(&batch, &EncodeOptions { record_offsets: true, ..EncodeOptions::default() }).unwrap();
            assert_eq!(String::from_utf8(out.bytes).unwrap(), String::from_utf8(expected).unwrap());
        }
    }

    #[test]
    fn the_escape_check_finds_every_escaped_byte() {
        for byte in 0u8..=255 {
            let expected = byte < 0x20 || byte == b'"' || byte == b'\\';
            for len in 1..20 {
                for at in 0..len {
                    let mut bytes = vec![b'a'; len];
                    bytes[at] = byte;
                    assert_eq!(needs_json_escape(&bytes), expected, "byte {byte:#x} at {at} of {len}");
                }
            }
        }
    }

    #[test]
    fn raw_records_are_the_column_bytes() {
        let schema = Arc::new(Schema::new(vec![Field::new("k", DataType::Int64, false), Field::new("v", DataType::Utf8, true)]));
        let batch = RecordBatch::try_new(
            schema,
            vec![Arc::new(Int64Array::from(vec![1, 2, 3])), Arc::new(StringArray::from(vec![Some("ab"), None, Some("c\n")]))],
        )
        .unwrap();
        let options =
            EncodeOptions { format: EncodeFormat::Raw, exclude_columns: vec!["k".into()], key_columns: vec!["k".into()], ..EncodeOptions::default() };
        let out = encode_records(&batch, &options).unwrap();
        assert_eq!(out.bytes, b"abc\n");
        assert_eq!(out.offsets, vec![0, 2, 2, 4]);
        let sliced = batch.slice(2, 1);
        let out = encode_records(&sliced, &options).unwrap();
        assert_eq!((out.bytes.as_slice(), out.offsets.as_slice()), (&b"c\n"[..], &[0i64, 2][..]));
        let two_columns = EncodeOptions { format: EncodeFormat::Raw, ..EncodeOptions::default() };
        assert!(encode_records(&batch, &two_columns).err().unwrap().message.contains("exactly one column"));
    }

    #[test]
    fn avro_records_come_with_offsets() {
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false), Field::new("_op", DataType::Utf8, false)]));
        let batch = RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from(vec![1, -1])), Arc::new(StringArray::from(vec!["i", "d"]))]).unwrap();
        let options = EncodeOptions { format: EncodeFormat::Avro, exclude_columns: vec!["_op".into()], ..EncodeOptions::default() };
        let out = encode_records(&batch, &options).unwrap();
        // Avro longs are zig-zag varints: 1 -> 0x02, -1 -> 0x01.
        assert_eq!((out.bytes.as_slice(), out.offsets.as_slice()), (&[2u8, 1][..], &[0i64, 1, 2][..]));
    }

    #[test]
    fn temporal_values_text_cannot_hold_fail_the_batch_instead_of_writing_error_text() {
        use arrow::array::{
            ArrayRef, Date32Array, DurationMillisecondArray, DurationSecondArray, ListArray, Time32SecondArray, TimestampMicrosecondArray,
            TimestampSecondArray,
        };
        use arrow::datatypes::Int64Type;
        let text_formats = [EncodeFormat::Json, EncodeFormat::JsonArray, EncodeFormat::Csv];
        let encode_all = |column: ArrayRef| -> Vec<std::result::Result<String, String>> {
            let batch = RecordBatch::try_from_iter([("v", column)]).unwrap();
            let mut results: Vec<_> = text_formats
                .iter()
                .map(|&format| {
                    let options = EncodeOptions { format, ..EncodeOptions::default() };
                    encode(&batch, &options).map(|b| String::from_utf8(b).unwrap()).map_err(|e| e.to_string())
                })
                .collect();
            let options = EncodeOptions { format: EncodeFormat::Json, record_offsets: true, ..EncodeOptions::default() };
            results.push(encode_records(&batch, &options).map(|e| String::from_utf8(e.bytes).unwrap()).map_err(|e| e.to_string()));
            results
        };
        let refused: Vec<(ArrayRef, &str)> = vec![
            (Arc::new(TimestampSecondArray::from(vec![Some(0), None, Some(i64::MAX)])), "row 2: the Timestamp(s) value 9223372036854775807"),
            (Arc::new(TimestampMicrosecondArray::from(vec![i64::MIN]).with_timezone("+02:00")), "row 0: the Timestamp(µs, \"+02:00\") value"),
            (Arc::new(Date32Array::from(vec![0, i32::MAX])), "row 1: the Date32 value 2147483647"),
            (Arc::new(Time32SecondArray::from(vec![86_400])), "row 0: the Time32(s) value 86400 cannot be written as text (it holds a time of day"),
            (Arc::new(DurationSecondArray::from(vec![1, i64::MAX])), "row 1: the Duration(s) value 9223372036854775807"),
            (Arc::new(DurationMillisecondArray::from(vec![i64::MIN])), "row 0: the Duration(ms) value -9223372036854775808"),
        ];
        for (column, message) in refused {
            for result in encode_all(column.clone()) {
                let err = result.expect_err(message);
                assert!(err.contains("column 'v'") && err.contains(message), "{err}");
            }
            // Inside a list too.
            let list = ListArray::new(
                Arc::new(Field::new_list_field(column.data_type().clone(), true)),
                arrow::buffer::OffsetBuffer::from_lengths([column.len()]),
                column,
                None,
            );
            for result in encode_all(Arc::new(list)) {
                let err = result.unwrap_err();
                assert!(err.contains("column 'v' nested value"), "{err}");
            }
        }
        // Values in range, a NULL slot holding an unwritable value, and a list sliced past one.
        let null_slot = TimestampSecondArray::new(vec![253_402_300_799, i64::MAX, -62_167_219_200].into(), Some(vec![true, false, true].into()));
        let values = TimestampSecondArray::from(vec![i64::MAX, 1]);
        let sliced = ListArray::new(
            Arc::new(Field::new_list_field(DataType::Timestamp(arrow::datatypes::TimeUnit::Second, None), true)),
            arrow::buffer::OffsetBuffer::from_lengths([1, 1]),
            Arc::new(values),
            None,
        )
        .slice(1, 1);
        // A decimal with more digits than its precision: arrow's writers print its first digits.
        let wide = arrow::array::Decimal128Array::from(vec![Some(9999), None, Some(-123_456)]).with_precision_and_scale(4, 2).unwrap();
        for result in encode_all(Arc::new(wide)) {
            let err = result.unwrap_err();
            assert!(err.contains("column 'v' row 2: the value -1234.56 has more digits than its type Decimal128(4, 2) holds"), "{err}");
        }
        let small = arrow::array::Decimal128Array::from(vec![5, -7_000]).with_precision_and_scale(3, -2).unwrap();
        let err = encode_all(Arc::new(small))[0].clone().unwrap_err();
        assert!(err.contains("row 1: the value -700000 has more digits than its type Decimal128(3, -2)"), "{err}");
        assert_eq!(decimal_text("5", 3), "0.005");
        assert_eq!(decimal_text("-12345", 2), "-123.45");
        // A struct NULL at the struct level over an unwritable child's slot is written as null.
        let child: ArrayRef = Arc::new(TimestampSecondArray::from(vec![1, i64::MAX]));
        let fields = arrow::datatypes::Fields::from(vec![Field::new("t", child.data_type().clone(), true)]);
        let null_struct = arrow::array::StructArray::new(fields.clone(), vec![child.clone()], Some(vec![true, false].into()));
        let valid_struct = arrow::array::StructArray::new(fields, vec![child], None);
        let results = encode_all(Arc::new(valid_struct));
        for json in [&results[0], &results[1], &results[3]] {
            assert!(json.as_ref().unwrap_err().contains("column 'v' row 1: the Timestamp(s) value"), "{json:?}");
        }
        assert!(encode_all(Arc::new(null_struct.clone()))[0]
            .as_ref()
            .is_ok_and(|text| text == "{\"v\":{\"t\":\"1970-01-01T00:00:01\"}}\n{\"v\":null}\n"));
        for column in [
            Arc::new(null_slot) as ArrayRef,
            Arc::new(sliced),
            Arc::new(null_struct),
            Arc::new(DurationSecondArray::from(vec![9_223_372_036_854_775, -9_223_372_036_854_775])),
            Arc::new(
                arrow::array::Decimal128Array::new(vec![-9999, 123_456].into(), Some(vec![true, false].into()))
                    .with_precision_and_scale(4, 2)
                    .unwrap(),
            ),
            Arc::new(arrow::array::PrimitiveArray::<Int64Type>::from(vec![i64::MAX])),
        ] {
            for result in encode_all(column) {
                match result {
                    Ok(text) => assert!(!text.contains("ERROR") && !text.contains("invalid"), "{text}"),
                    Err(e) => assert!(e.contains("not supported in CSV"), "{e}"),
                }
            }
        }
    }
}
