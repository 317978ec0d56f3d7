//! Differential tests of the record codecs over random input. `RecordDecoder` with the flat fast
//! path and without it (arrow-json and the value guard) must give the same rows, the same
//! malformed-record errors and the same good positions for every batch of random records; and
//! wherever serde_json reads a record the fast path decoded, its strings and integers must be
//! the row's. Random batches encoded as the Kafka sink encodes them must be arrow-json's text
//! byte for byte and decode, on either path, to the batch they came from; so must batches of
//! the types only arrow-json reads, batches written and read as CSV (empty strings aside; also
//! as a CSV file read by its header, columns declared in another order) and as Avro (read back
//! with the Avro schema's types; under writer schemas of other types, unchanged or refused).
//!
//! Records are built from the pieces the fast path handles specially: field order, whitespace,
//! escaped names, unknown and repeated fields, integers at their type's bounds and past them,
//! floats of every shape, strings with escapes, surrogates, raw multi-byte and control
//! characters, naive timestamps valid and not, nulls where the schema allows them and where it
//! does not, and truncated records. Half the batches are clean (every record one the fast path
//! takes), so it is exercised whatever the other half does.
//!
//! `SLUICE_FUZZ_BATCHES` (default 3000 per schema) and `SLUICE_FUZZ_SEED` run it longer or
//! elsewhere: `SLUICE_FUZZ_BATCHES=300000 cargo test --release -p sluice-core codec_fuzz`.

use std::sync::Arc;

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{DataType, Field, Int64Type, Schema, SchemaRef, TimeUnit};

use crate::decode::{DecoderOptions, Format, RecordDecoder};

/// Random batches per test: `SLUICE_FUZZ_BATCHES`, 3000 by default.
pub(crate) fn fuzz_batches() -> usize {
    std::env::var("SLUICE_FUZZ_BATCHES").ok().and_then(|v| v.parse().ok()).unwrap_or(3000)
}

/// The random generator's seed: `SLUICE_FUZZ_SEED`, a fixed one by default.
pub(crate) fn fuzz_seed() -> u64 {
    std::env::var("SLUICE_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x5EED_1CE5)
}

/// xorshift64*: small, seedable, and the same on every machine.
pub(crate) struct Rng(u64);

impl Rng {
    /// A generator whose stream depends on every bit of `seed` (mixed by splitmix64's
    /// finalizer): xorshift from a state of 0 gives nothing but zeros, and nearby seeds would
    /// start nearby.
    pub(crate) fn new(seed: u64) -> Self {
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Rng((z ^ (z >> 31)).max(1))
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub(crate) fn percent(&mut self, p: u64) -> bool {
        self.next() % 100 < p
    }

    pub(crate) fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }

    fn digits(&mut self, count: usize) -> String {
        (0..count).map(|i| char::from(b'0' + if i == 0 { 1 + self.below(9) as u8 } else { self.below(10) as u8 })).collect()
    }
}

/// Where a record may deviate from what the fast path takes (`clean` records never do).
struct Records {
    rng: Rng,
    clean: bool,
}

impl Records {
    fn whitespace(&mut self) -> &'static str {
        if self.rng.percent(75) {
            ""
        } else {
            self.rng.pick(&[" ", "\t", "\n", "\r", "  ", " \n"])
        }
    }

    fn name(&mut self, name: &str) -> String {
        if !self.rng.percent(5) {
            return format!("\"{name}\"");
        }
        // The same name with one character written as a \u escape.
        let at = self.rng.below(name.len());
        let (head, tail) = name.split_at(at);
        let mut chars = tail.chars();
        let c = chars.next().expect("a character at a char boundary");
        format!("\"{head}\\u{:04x}{}\"", c as u32, chars.as_str())
    }

    fn record(&mut self, schema: &Schema) -> Vec<u8> {
        let mut members: Vec<(String, String)> = Vec::new();
        for field in schema.fields() {
            if !self.rng.percent(85) && (field.is_nullable() || !self.clean) {
                continue;
            }
            let value = if self.rng.percent(8) && (field.is_nullable() || !self.clean) { "null".to_string() } else { self.value(field.data_type()) };
            members.push((self.name(field.name()), value));
        }
        if self.rng.percent(15) {
            let name = self.rng.pick(&["\"x\"", "\"extra_field\"", "\"\"", "\"I64\"", "\"s \""]).to_string();
            let value = self.unknown_value(3);
            members.push((name, value));
        }
        if !self.clean && self.rng.percent(3) && !members.is_empty() {
            let repeated = members[self.rng.below(members.len())].clone();
            members.push(repeated);
        }
        if self.rng.percent(30) {
            for i in (1..members.len()).rev() {
                members.swap(i, self.rng.below(i + 1));
            }
        }
        let mut text = String::new();
        text.push_str(self.whitespace());
        text.push('{');
        for (i, (name, value)) in members.iter().enumerate() {
            if i > 0 {
                text.push_str(self.whitespace());
                text.push(',');
            }
            text.push_str(self.whitespace());
            text.push_str(name);
            text.push_str(self.whitespace());
            text.push(':');
            text.push_str(self.whitespace());
            text.push_str(value);
        }
        text.push_str(self.whitespace());
        text.push('}');
        text.push_str(self.whitespace());
        let mut bytes = text.into_bytes();
        if !self.clean && self.rng.percent(2) {
            bytes.truncate(self.rng.below(bytes.len()));
        }
        bytes
    }

    fn value(&mut self, data_type: &DataType) -> String {
        match data_type {
            DataType::Int8 => self.integer(i8::MIN.into(), i8::MAX.into()),
            DataType::Int16 => self.integer(i16::MIN.into(), i16::MAX.into()),
            DataType::Int32 => self.integer(i32::MIN.into(), i32::MAX.into()),
            DataType::Int64 => self.integer(i64::MIN.into(), i64::MAX.into()),
            DataType::UInt8 => self.integer(0, u8::MAX.into()),
            DataType::UInt16 => self.integer(0, u16::MAX.into()),
            DataType::UInt32 => self.integer(0, u32::MAX.into()),
            DataType::UInt64 => self.integer(0, u64::MAX.into()),
            DataType::Float32 | DataType::Float64 => self.float(),
            DataType::Boolean => {
                if self.clean || self.rng.percent(90) {
                    self.rng.pick(&["true", "false"]).to_string()
                } else {
                    self.rng.pick(&["\"true\"", "1", "True", "tru"]).to_string()
                }
            }
            DataType::Utf8 | DataType::LargeUtf8 => {
                if !self.clean && self.rng.percent(2) {
                    self.rng.pick(&["1", "true", "[\"a\"]", "{\"a\":1}"]).to_string()
                } else {
                    self.string()
                }
            }
            DataType::Timestamp(unit, None) => self.timestamp(*unit),
            other => unreachable!("no generator for {other}"),
        }
    }

    /// An integer literal, mostly in `min..=max`; outside it, and in forms JSON or the exact
    /// path refuses, unless clean.
    fn integer(&mut self, min: i128, max: i128) -> String {
        let in_range = |v: i128| (min..=max).contains(&v);
        if !self.clean && self.rng.percent(10) {
            return self.rng.pick(&["-0", "01", "1.0", "1e2", "\"12\"", "+1", "-", "1-2", "0.5", "-1"]).to_string();
        }
        let candidate = match self.rng.below(4) {
            0 => self.rng.pick(&[min, max, min + 1, max - 1, 0, 1]),
            1 if !self.clean => self.rng.pick(&[min - 1, max + 1, max * 10, min * 10 - 1]),
            _ => {
                let digits = 1 + self.rng.below(20);
                let text = self.rng.digits(digits);
                let value = text.parse::<i128>().expect("digits");
                if min < 0 && self.rng.percent(40) {
                    -value
                } else {
                    value
                }
            }
        };
        if self.clean && !in_range(candidate) {
            return "0".to_string();
        }
        candidate.to_string()
    }

    fn float(&mut self) -> String {
        if !self.clean && self.rng.percent(5) {
            return self.rng.pick(&["NaN", "Infinity", "1e400", "-1e99999", ".5", "1.", "1e", "1.e5", "--1", "\"1.5\""]).to_string();
        }
        let mut text = String::new();
        if self.rng.percent(30) {
            text.push('-');
        }
        if self.rng.percent(20) {
            text.push('0');
        } else {
            // Clean floats stay finite as Float32 (below 1e25 before a one-digit exponent).
            let digits = 1 + self.rng.below(if self.clean { 15 } else { 22 });
            text.push_str(&self.rng.digits(digits));
        }
        if self.rng.percent(60) {
            text.push('.');
            let digits = 1 + self.rng.below(20);
            text.extend((0..digits).map(|_| char::from(b'0' + self.rng.below(10) as u8)));
        }
        if self.rng.percent(30) {
            text.push(self.rng.pick(&['e', 'E']));
            if self.rng.percent(50) {
                text.push(self.rng.pick(&['+', '-']));
            }
            let digits = if self.clean { 1 } else { 1 + self.rng.below(4) };
            text.extend((0..digits).map(|_| char::from(b'0' + self.rng.below(10) as u8)));
        }
        text
    }

    fn string(&mut self) -> String {
        let mut text = String::from("\"");
        for _ in 0..self.rng.below(40) {
            let roll = self.rng.below(1000);
            match roll {
                0..=499 => text.push(char::from(b'a' + self.rng.below(26) as u8)),
                500..=599 => text.push_str(self.rng.pick(&["\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t"])),
                600..=679 => {
                    let c = loop {
                        let code = self.rng.below(0x1_0000) as u32;
                        if let Some(c) = char::from_u32(code) {
                            break c;
                        }
                    };
                    text.push_str(&format!("\\u{:04X}", c as u32));
                }
                680..=709 => {
                    let c = char::from_u32(0x1_0000 + self.rng.below(0x10_0000) as u32).expect("a supplementary character");
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        text.push_str(&format!("\\u{:04x}", unit));
                    }
                }
                710..=879 => text.push(self.rng.pick(&['é', '中', '😀', 'ß', '\u{7f}', '\u{80}', '\u{10ffff}', ' ', '/'])),
                880..=899 => text.push(char::from(self.rng.below(0x20) as u8)),
                900..=994 => text.push(char::from(b'0' + self.rng.below(10) as u8)),
                _ if self.clean => text.push('z'),
                _ => text.push_str(self.rng.pick(&["\\ud800", "\\udc00", "\\x", "\\u12"])),
            }
        }
        text.push('"');
        text
    }

    /// A timestamp's text; clean ones hold no fraction finer than `unit` (refused, else cut).
    fn timestamp(&mut self, unit: TimeUnit) -> String {
        if self.rng.percent(10) {
            return self.integer(i64::MIN.into(), i64::MAX.into());
        }
        // Clean years fit nanoseconds in an i64 (1677-09-21 to 2262-04-11).
        let (year, month, day) = if self.clean {
            (1700 + self.rng.below(500), 1 + self.rng.below(12), 1 + self.rng.below(28))
        } else if self.rng.percent(80) {
            (1600 + self.rng.below(800), 1 + self.rng.below(12), 1 + self.rng.below(28))
        } else {
            (self.rng.below(10_000), self.rng.below(14), self.rng.below(33))
        };
        let mut text = format!("\"{year:04}-{month:02}-{day:02}");
        if self.rng.percent(80) {
            text.push(self.rng.pick(&['T', ' ', 't']));
            let limits = if self.clean || self.rng.percent(80) { (24, 60, 60) } else { (26, 62, 62) };
            text.push_str(&format!("{:02}:{:02}:{:02}", self.rng.below(limits.0), self.rng.below(limits.1), self.rng.below(limits.2)));
            let finest = crate::temporal_text::fraction_digits(unit);
            if self.rng.percent(60) && (finest > 0 || !self.clean) {
                let digits = if self.clean { 1 + self.rng.below(finest) } else { 1 + self.rng.below(10) };
                text.push('.');
                text.extend((0..digits).map(|_| char::from(b'0' + self.rng.below(10) as u8)));
            }
            if self.rng.percent(20) {
                text.push(self.rng.pick(&['Z', 'z']));
            } else if !self.clean && self.rng.percent(5) {
                text.push_str("+01:00");
            }
        }
        text.push('"');
        text
    }

    /// Any JSON value, nested up to `depth`, for fields the schema does not have.
    fn unknown_value(&mut self, depth: u32) -> String {
        match self.rng.below(if depth == 0 { 4 } else { 6 }) {
            0 => self.string(),
            1 => self.float(),
            2 => self.rng.pick(&["true", "false", "null"]).to_string(),
            3 => self.integer(i64::MIN.into(), i64::MAX.into()),
            4 => format!("[{}]", (0..self.rng.below(3)).map(|_| self.unknown_value(depth - 1)).collect::<Vec<_>>().join(",")),
            _ => {
                format!("{{{}}}", (0..self.rng.below(3)).map(|i| format!("\"k{i}\":{}", self.unknown_value(depth - 1))).collect::<Vec<_>>().join(","))
            }
        }
    }
}

/// One nullable column of every type the fast path decodes, or the same with every third
/// column not nullable.
fn schema(every_third_required: bool) -> SchemaRef {
    let types = [
        ("i8", DataType::Int8),
        ("i16", DataType::Int16),
        ("i32", DataType::Int32),
        ("i64", DataType::Int64),
        ("u8", DataType::UInt8),
        ("u16", DataType::UInt16),
        ("u32", DataType::UInt32),
        ("u64", DataType::UInt64),
        ("f32", DataType::Float32),
        ("f64", DataType::Float64),
        ("flag", DataType::Boolean),
        ("text", DataType::Utf8),
        ("long_text", DataType::LargeUtf8),
        ("ts_s", DataType::Timestamp(TimeUnit::Second, None)),
        ("ts_ms", DataType::Timestamp(TimeUnit::Millisecond, None)),
        ("ts_us", DataType::Timestamp(TimeUnit::Microsecond, None)),
        ("ts_ns", DataType::Timestamp(TimeUnit::Nanosecond, None)),
    ];
    let fields: Vec<Field> =
        types.into_iter().enumerate().map(|(i, (name, data_type))| Field::new(name, data_type, !(every_third_required && i % 3 == 0))).collect();
    Arc::new(Schema::new(fields))
}

fn lossy(records: &[Vec<u8>]) -> Vec<String> {
    records.iter().map(|r| String::from_utf8_lossy(r).into_owned()).collect()
}

/// Where serde_json reads a record as an object, its string and Int64 members are the row's
/// values (an independent reading of escapes, surrogates and integer text).
fn assert_serde_agrees(batch: &RecordBatch, row: usize, record: &[u8]) {
    let Ok(serde_json::Value::Object(members)) = serde_json::from_slice::<serde_json::Value>(record) else { return };
    let text = batch.column_by_name("text").expect("text column").as_string::<i32>();
    let long_text = batch.column_by_name("long_text").expect("long_text column").as_string::<i64>();
    let i64s = batch.column_by_name("i64").expect("i64 column").as_primitive::<Int64Type>();
    let at = |array: &dyn Array| (!array.is_null(row)).then_some(row);
    let text_at = at(text).map(|r| text.value(r));
    let long_text_at = at(long_text).map(|r| long_text.value(r));
    let i64_at = at(i64s).map(|r| i64s.value(r));
    assert_eq!(members.get("text").and_then(|v| v.as_str()), text_at, "text of {:?}", String::from_utf8_lossy(record));
    assert_eq!(members.get("long_text").and_then(|v| v.as_str()), long_text_at, "long_text of {:?}", String::from_utf8_lossy(record));
    assert_eq!(members.get("i64").and_then(|v| v.as_i64()), i64_at, "i64 of {:?}", String::from_utf8_lossy(record));
}

/// The first column and row where two batches of one schema differ, with its record.
fn first_difference(left: &RecordBatch, right: &RecordBatch, records: &[Vec<u8>]) -> String {
    if left.num_rows() != right.num_rows() {
        return format!("{} rows against {} for {:?}", left.num_rows(), right.num_rows(), lossy(records));
    }
    for (c, field) in left.schema().fields().iter().enumerate() {
        for row in 0..left.num_rows() {
            let (a, b) = (left.column(c).slice(row, 1), right.column(c).slice(row, 1));
            if a.as_ref() != b.as_ref() {
                let record = records.get(row).map(|r| String::from_utf8_lossy(r).into_owned());
                return format!("column {} row {row}: {a:?} against {b:?}; record {record:?}", field.name());
            }
        }
    }
    format!("batches differ outside their values: {left:?} against {right:?}")
}

#[test]
fn the_fast_path_decodes_random_records_as_arrow_json_does() {
    let (batches, seed) = (fuzz_batches(), fuzz_seed());
    for every_third_required in [false, true] {
        let schema = schema(every_third_required);
        let decoder = RecordDecoder::new(&DecoderOptions::of(Format::Json, ","), Some(schema.clone())).unwrap();
        assert!(decoder.has_fast_path());
        let reference = decoder.arrow_only();
        let flat = crate::flat_json::FlatJsonDecoder::try_new(schema.clone()).expect("a flat schema");
        let mut records = Records { rng: Rng::new(seed.wrapping_add(u64::from(every_third_required))), clean: false };
        let (mut clean_batches, mut fast_clean_batches, mut checked_rows) = (0, 0, 0);
        for _ in 0..batches {
            records.clean = records.rng.percent(50);
            let count = 1 + records.rng.below(12);
            let batch: Vec<Vec<u8>> = (0..count).map(|_| records.record(&schema)).collect();
            let slices: Vec<&[u8]> = batch.iter().map(Vec::as_slice).collect();
            let took_fast_path = flat.decode(&slices).is_some();
            if records.clean {
                clean_batches += 1;
                fast_clean_batches += usize::from(took_fast_path);
            }
            let (fast, arrow) = (decoder.decode(&slices), reference.decode(&slices));
            let (fast, arrow) = match (fast, arrow) {
                (Ok(fast), Ok(arrow)) => (fast, arrow),
                (Err(fast), Err(arrow)) => {
                    assert_eq!(fast.to_string(), arrow.to_string(), "{:?}", lossy(&batch));
                    continue;
                }
                (fast, arrow) => {
                    panic!("fast path {:?} against arrow-json {:?} for {:?}", fast.map(|d| d.batch), arrow.map(|d| d.batch), lossy(&batch))
                }
            };
            if fast.batch != arrow.batch {
                panic!("{}", first_difference(&fast.batch, &arrow.batch, &batch));
            }
            assert_eq!(fast.errors, arrow.errors, "errors of {:?}", lossy(&batch));
            assert_eq!(fast.good, arrow.good, "good rows of {:?}", lossy(&batch));
            if took_fast_path {
                for (row, record) in batch.iter().enumerate() {
                    assert_serde_agrees(&fast.batch, row, record);
                    checked_rows += 1;
                }
            }
        }
        // The clean half must reach the fast path, or the comparison above proves little.
        assert!(fast_clean_batches * 10 >= clean_batches * 9, "{fast_clean_batches} of {clean_batches} clean batches took the fast path");
        assert!(checked_rows > 0);
    }
}

/// A batch of `rows` random values of `schema`'s types (every column nullable), each value one
/// JSON can carry back exactly: finite floats, timestamps of the years 0001–9999, any string.
fn random_batch(rng: &mut Rng, schema: &SchemaRef, rows: usize) -> RecordBatch {
    use arrow::array::{
        ArrayRef, BooleanArray, Float32Array, Float64Array, Int16Array, Int32Array, Int64Array, Int8Array, LargeStringArray, StringArray,
        TimestampMicrosecondArray, TimestampMillisecondArray, TimestampNanosecondArray, TimestampSecondArray, UInt16Array, UInt32Array, UInt64Array,
        UInt8Array,
    };
    let columns: Vec<ArrayRef> = schema
        .fields()
        .iter()
        .map(|field| {
            // One random word per value (a tenth null), shaped into the column's type below.
            let bits: Vec<Option<u64>> = (0..rows).map(|_| (!rng.percent(10)).then(|| rng.next())).collect();
            // Seconds from 0001-01-01 to 9999-12-31, then the unit's fraction.
            let instant = |bits: u64, per_second: i64| {
                let seconds = (bits % 315_537_897_600) as i64 - 62_135_596_800;
                seconds.saturating_mul(per_second) + ((bits >> 40) as i64 % per_second)
            };
            let array: ArrayRef = match field.data_type() {
                DataType::Int8 => Arc::new(Int8Array::from_iter(bits.iter().map(|b| b.map(|b| b as i8)))),
                DataType::Int16 => Arc::new(Int16Array::from_iter(bits.iter().map(|b| b.map(|b| b as i16)))),
                DataType::Int32 => Arc::new(Int32Array::from_iter(bits.iter().map(|b| b.map(|b| b as i32)))),
                DataType::Int64 => Arc::new(Int64Array::from_iter(bits.iter().map(|b| b.map(|b| b as i64)))),
                DataType::UInt8 => Arc::new(UInt8Array::from_iter(bits.iter().map(|b| b.map(|b| b as u8)))),
                DataType::UInt16 => Arc::new(UInt16Array::from_iter(bits.iter().map(|b| b.map(|b| b as u16)))),
                DataType::UInt32 => Arc::new(UInt32Array::from_iter(bits.iter().map(|b| b.map(|b| b as u32)))),
                DataType::UInt64 => Arc::new(UInt64Array::from_iter(bits.iter().copied())),
                DataType::Float32 => {
                    Arc::new(Float32Array::from_iter(bits.iter().map(|b| b.map(|b| f32::from_bits(b as u32)).filter(|f| f.is_finite()))))
                }
                DataType::Float64 => Arc::new(Float64Array::from_iter(bits.iter().map(|b| b.map(f64::from_bits).filter(|f| f.is_finite())))),
                DataType::Boolean => Arc::new(BooleanArray::from_iter(bits.iter().map(|b| b.map(|b| b & 1 == 1)))),
                DataType::Utf8 => Arc::new(StringArray::from_iter(bits.iter().map(|b| b.map(random_text)))),
                DataType::LargeUtf8 => Arc::new(LargeStringArray::from_iter(bits.iter().map(|b| b.map(random_text)))),
                DataType::Timestamp(TimeUnit::Second, None) => {
                    Arc::new(TimestampSecondArray::from_iter(bits.iter().map(|b| b.map(|b| instant(b, 1)))))
                }
                DataType::Timestamp(TimeUnit::Millisecond, None) => {
                    Arc::new(TimestampMillisecondArray::from_iter(bits.iter().map(|b| b.map(|b| instant(b, 1_000)))))
                }
                DataType::Timestamp(TimeUnit::Microsecond, None) => {
                    Arc::new(TimestampMicrosecondArray::from_iter(bits.iter().map(|b| b.map(|b| instant(b, 1_000_000)))))
                }
                // Nanoseconds since the epoch fit an i64 only from 1677 to 2262.
                DataType::Timestamp(TimeUnit::Nanosecond, None) => {
                    Arc::new(TimestampNanosecondArray::from_iter(bits.iter().map(|b| b.map(|b| (b >> 1) as i64 - (1 << 62)))))
                }
                other => unreachable!("no generator for {other}"),
            };
            array
        })
        .collect();
    RecordBatch::try_new(schema.clone(), columns).expect("columns of the schema's types")
}

/// Text of up to 24 characters of every kind JSON escapes or carries raw, from `bits`.
fn random_text(bits: u64) -> String {
    let mut rng = Rng::new(bits);
    (0..rng.below(24))
        .map(|_| match rng.below(10) {
            0..=3 => char::from(b' ' + rng.below(95) as u8),
            4 => char::from(rng.below(0x20) as u8),
            5 => rng.pick(&['"', '\\', '/', '\u{7f}', '\u{2028}']),
            6 => char::from_u32(0x80 + rng.below(0xD800 - 0x80) as u32).expect("below the surrogates"),
            7 => char::from_u32(0xE000 + rng.below(0x2000) as u32).expect("above the surrogates"),
            _ => char::from_u32(0x1_0000 + rng.below(0x10_0000) as u32).expect("a supplementary character"),
        })
        .collect()
}

#[test]
fn random_batches_come_back_from_their_json_records_unchanged() {
    use crate::encode::{encode, encode_records, EncodeFormat, EncodeOptions};
    // Each of these batches is encoded and decoded: a tenth as many.
    let (batches, seed) = (fuzz_batches() / 10, fuzz_seed());
    let schema = schema(false);
    let decoder = RecordDecoder::new(&DecoderOptions::of(Format::Json, ","), Some(schema.clone())).unwrap();
    let mut rng = Rng::new(seed);
    for _ in 0..batches {
        let rows = 1 + rng.below(64);
        let batch = random_batch(&mut rng, &schema, rows);
        let options = EncodeOptions { format: EncodeFormat::Json, record_offsets: true, ..EncodeOptions::default() };
        let encoded = encode_records(&batch, &options).unwrap();
        // Byte for byte what arrow-json's writer gives.
        assert_eq!(encoded.bytes, encode(&batch, &EncodeOptions::default()).unwrap());
        let records = crate::decode::split_records(&encoded.bytes, &encoded.offsets).unwrap();
        for decoder in [decoder.clone(), decoder.arrow_only()] {
            let decoded = decoder.decode(&records).unwrap();
            assert!(decoded.errors.is_none(), "{:?}", decoded.errors);
            if decoded.batch != batch {
                let texts: Vec<Vec<u8>> = records.iter().map(|r| r.to_vec()).collect();
                panic!("{}", first_difference(&decoded.batch, &batch, &texts));
            }
        }
    }
}

/// Columns only arrow-json decodes (the flat fast path takes none of them), with random values:
/// decimals at and below their precision, dates and zoned timestamps of the years 0001–9999,
/// single floats, lists, structs and binary (hex in JSON).
fn random_general_batch(rng: &mut Rng, rows: usize) -> RecordBatch {
    use arrow::array::{
        ArrayRef, Date32Array, Decimal128Array, Float32Array, Int64Array, ListArray, StringArray, StructArray, TimestampMillisecondArray,
    };
    use arrow::datatypes::Int64Type as Int64;
    let present = |rng: &mut Rng| !rng.percent(10);
    let decimal = |rng: &mut Rng, precision: u32| {
        let digits = 1 + rng.below(precision as usize);
        let magnitude = rng.digits(digits).parse::<i128>().expect("digits");
        if rng.percent(40) {
            -magnitude
        } else {
            magnitude
        }
    };
    let d18 = Decimal128Array::from_iter((0..rows).map(|_| present(rng).then(|| decimal(rng, 18)))).with_precision_and_scale(18, 4).unwrap();
    let d38 = Decimal128Array::from_iter((0..rows).map(|_| present(rng).then(|| decimal(rng, 38)))).with_precision_and_scale(38, 10).unwrap();
    let days = Date32Array::from_iter((0..rows).map(|_| present(rng).then(|| rng.below(3_652_059) as i32 - 719_162)));
    let zoned =
        TimestampMillisecondArray::from_iter((0..rows).map(|_| present(rng).then(|| (rng.next() % 315_537_897_600_000) as i64 - 62_135_596_800_000)))
            .with_timezone("+00:00");
    let single = Float32Array::from_iter((0..rows).map(|_| present(rng).then(|| f32::from_bits(rng.next() as u32)).filter(|f| f.is_finite())));
    let lists = ListArray::from_iter_primitive::<Int64, _, _>(
        (0..rows).map(|_| present(rng).then(|| (0..rng.below(4)).map(|_| present(rng).then(|| rng.next() as i64)).collect::<Vec<_>>())),
    );
    let struct_fields = vec![Arc::new(Field::new("a", DataType::Int64, true)), Arc::new(Field::new("b", DataType::Utf8, true))];
    let a = Int64Array::from_iter((0..rows).map(|_| present(rng).then(|| rng.next() as i64)));
    let b = StringArray::from_iter((0..rows).map(|_| present(rng).then(|| random_text(rng.next()))));
    let structs = StructArray::new(struct_fields.into(), vec![Arc::new(a) as ArrayRef, Arc::new(b)], None);
    let binary = arrow::array::BinaryArray::from_iter((0..rows).map(|_| present(rng).then(|| rng.next().to_le_bytes()[..rng.below(8)].to_vec())));
    let columns: Vec<ArrayRef> =
        vec![Arc::new(d18), Arc::new(d38), Arc::new(days), Arc::new(zoned), Arc::new(single), Arc::new(lists), Arc::new(structs), Arc::new(binary)];
    let fields: Vec<Field> = ["d18", "d38", "day", "zoned", "single", "list", "nested", "bin"]
        .iter()
        .zip(&columns)
        .map(|(name, c)| Field::new(*name, c.data_type().clone(), true))
        .collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).expect("columns of the schema's types")
}

#[test]
fn random_batches_of_types_only_arrow_json_decodes_come_back_unchanged() {
    use crate::encode::{encode_records, EncodeFormat, EncodeOptions};
    // Each of these batches is encoded and decoded: a tenth as many.
    let (batches, seed) = (fuzz_batches() / 10, fuzz_seed());
    let mut rng = Rng::new(seed);
    for _ in 0..batches {
        let rows = 1 + rng.below(32);
        let batch = random_general_batch(&mut rng, rows);
        let decoder = RecordDecoder::new(&DecoderOptions::of(Format::Json, ","), Some(batch.schema())).unwrap();
        assert!(!decoder.has_fast_path());
        let options = EncodeOptions { format: EncodeFormat::Json, record_offsets: true, ..EncodeOptions::default() };
        let encoded = encode_records(&batch, &options).unwrap();
        let records = crate::decode::split_records(&encoded.bytes, &encoded.offsets).unwrap();
        let decoded = decoder.decode(&records).unwrap();
        let texts: Vec<Vec<u8>> = records.iter().map(|r| r.to_vec()).collect();
        assert!(decoded.errors.is_none(), "{:?} for {:?}", decoded.errors, lossy(&texts));
        if decoded.batch != batch {
            panic!("{}", first_difference(&decoded.batch, &batch, &texts));
        }
    }
}

/// Random batches come back from their CSV records unchanged (empty strings aside): those of
/// the fast path's types, and decimals, dates, zoned timestamps, single floats and bytes (hex;
/// arrow-csv reads no binary, so a declared binary column made every record a dead letter).
#[test]
fn random_batches_come_back_from_their_csv_records_unchanged() {
    use crate::encode::{encode_records, EncodeFormat, EncodeOptions};
    // Each of these batches is encoded and decoded: a tenth as many.
    let (batches, seed) = (fuzz_batches() / 10, fuzz_seed());
    // arrow-csv reads no LargeUtf8.
    let all = schema(false);
    let schema = Arc::new(all.project(&(0..all.fields().len()).filter(|&i| all.field(i).name() != "long_text").collect::<Vec<_>>()).unwrap());
    let mut rng = Rng::new(seed);
    for i in 0..batches {
        let rows = 1 + rng.below(64);
        // arrow-csv writes no lists or structs.
        let batch = if i % 2 == 0 {
            random_batch(&mut rng, &schema, rows)
        } else {
            random_general_batch(&mut rng, rows).project(&[0, 1, 2, 3, 4, 7]).unwrap()
        };
        let decoder = RecordDecoder::new(&DecoderOptions::of(Format::Csv, ","), Some(batch.schema())).unwrap();
        let options = EncodeOptions { format: EncodeFormat::Csv, record_offsets: true, ..EncodeOptions::default() };
        let encoded = encode_records(&batch, &options).unwrap();
        let records = crate::decode::split_records(&encoded.bytes, &encoded.offsets).unwrap();
        let texts: Vec<Vec<u8>> = records.iter().map(|r| r.to_vec()).collect();
        let decoded = decoder.decode(&records).unwrap();
        if let Some(errors) = decoded.errors {
            let at = errors.column(0).as_primitive::<Int64Type>().value(0) as usize;
            panic!("record {:?}: {}", lossy(&texts[at..=at]), errors.column(2).as_string::<i32>().value(0));
        }
        // CSV has no null marker: an empty field is null, so an empty string comes back null.
        let expected = empty_strings_as_nulls(&batch);
        if decoded.batch != expected {
            panic!("{}", first_difference(&decoded.batch, &expected, &texts));
        }
    }
}

/// Random batches written to a CSV file by the file sink's writer come back from the file
/// source's reader whatever their text holds — line breaks, quotes and delimiters make quoted
/// fields, so records of several lines — read with the columns declared in another order and
/// some left out (matched to the header by name), at any batch size.
#[test]
fn random_batches_come_back_from_a_csv_file_by_its_header() {
    use crate::file_io::{FileFormat, FileReader, FileWriter, ReaderOptions, WriterOptions};
    // Each file holds up to four batches: a hundredth as many files.
    let (files, seed) = ((fuzz_batches() / 100).max(3), fuzz_seed());
    let all = schema(false);
    let schema = Arc::new(all.project(&(0..all.fields().len()).filter(|&i| all.field(i).name() != "long_text").collect::<Vec<_>>()).unwrap());
    let columns = schema.fields().len();
    let path = std::env::temp_dir().join(format!("sluice-csv-fuzz-{}.csv", std::process::id()));
    let mut rng = Rng::new(seed);
    for _ in 0..files {
        let written: Vec<RecordBatch> = (0..1 + rng.below(4))
            .map(|_| {
                let rows = 1 + rng.below(64);
                random_batch(&mut rng, &schema, rows)
            })
            .collect();
        let mut writer = FileWriter::open(WriterOptions { path: path.clone(), format: FileFormat::Csv, header: true, continue_at: None }).unwrap();
        written.iter().for_each(|batch| writer.write(batch).unwrap());
        writer.finish().unwrap();
        // A random order of a random part of the columns (Fisher-Yates).
        let mut declared: Vec<usize> = (0..columns).collect();
        for i in (1..columns).rev() {
            declared.swap(i, rng.below(i + 1));
        }
        declared.truncate(1 + rng.below(columns));
        let declared_schema = Arc::new(schema.project(&declared).unwrap());
        let options = ReaderOptions {
            path: path.clone(),
            format: FileFormat::Csv,
            batch_size: 1 + rng.below(50),
            header: true,
            delimiter: ",".into(),
            infer_rows: 1,
        };
        let mut reader = FileReader::open(options, Some(declared_schema.clone())).unwrap();
        assert_eq!(reader.warnings().len(), usize::from(declared.len() < columns), "{:?}", reader.warnings());
        let mut read = Vec::new();
        while let Some(next) = reader.next_batch().unwrap() {
            if let Some(errors) = next.errors {
                let line = errors.column(0).as_primitive::<Int64Type>().value(0);
                panic!("line {line}: {}\n{}", errors.column(2).as_string::<i32>().value(0), String::from_utf8_lossy(&std::fs::read(&path).unwrap()));
            }
            read.push(next.batch);
        }
        let got = arrow::compute::concat_batches(&declared_schema, &read).unwrap();
        // CSV has no null marker: an empty field is null, so an empty string comes back null.
        let expected = empty_strings_as_nulls(&arrow::compute::concat_batches(&schema, &written).unwrap()).project(&declared).unwrap();
        if got != expected {
            let lines: Vec<Vec<u8>> = std::fs::read(&path).unwrap().split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
            panic!("{}", first_difference(&got, &expected, &lines));
        }
    }
    std::fs::remove_file(&path).ok();
}

/// `batch` with each empty string of its Utf8 and Binary columns made null.
fn empty_strings_as_nulls(batch: &RecordBatch) -> RecordBatch {
    let columns = batch
        .columns()
        .iter()
        .map(|column| match column.data_type() {
            DataType::Utf8 => {
                Arc::new(column.as_string::<i32>().iter().map(|v| v.filter(|v| !v.is_empty())).collect::<arrow::array::StringArray>()) as _
            }
            DataType::Binary => {
                Arc::new(column.as_binary::<i32>().iter().map(|v| v.filter(|v| !v.is_empty())).collect::<arrow::array::BinaryArray>()) as _
            }
            _ => column.clone(),
        })
        .collect();
    RecordBatch::try_new(batch.schema(), columns).expect("the same schema")
}

/// Random batches under writer schemas whose field types are random Avro types: whenever the
/// encoder takes a batch, a reader of that schema gets every value back unchanged (cast back to
/// the column's type); a value the field's type cannot hold must be refused, never changed.
#[test]
fn random_batches_under_other_avro_types_come_back_unchanged_or_are_refused() {
    use crate::avro::{encode, AvroFraming, AvroReader};
    let (batches, seed) = (fuzz_batches() / 10, fuzz_seed());
    let all = schema(false);
    let schema = Arc::new(all.project(&(0..all.fields().len()).filter(|&i| all.field(i).name() != "u64").collect::<Vec<_>>()).unwrap());
    let derived: serde_json::Value =
        serde_json::from_str(&arrow_avro::schema::AvroSchema::try_from(schema.as_ref()).expect("an Avro schema").json_string).unwrap();
    let types = [
        r#""int""#,
        r#""long""#,
        r#""float""#,
        r#""double""#,
        r#""string""#,
        r#""bytes""#,
        r#""boolean""#,
        r#"{"type":"int","logicalType":"date"}"#,
        r#"{"type":"long","logicalType":"timestamp-millis"}"#,
        r#"{"type":"long","logicalType":"timestamp-micros"}"#,
        r#"{"type":"long","logicalType":"local-timestamp-millis"}"#,
        r#"{"type":"long","logicalType":"local-timestamp-micros"}"#,
    ];
    let mut rng = Rng::new(seed);
    let (mut taken, mut refused) = (0, 0);
    for _ in 0..batches {
        // One field of another type per batch, so that most batches have one column to fit.
        let mut writer = derived.clone();
        let fields = writer["fields"].as_array_mut().unwrap();
        let changed = rng.below(fields.len());
        let other: serde_json::Value = serde_json::from_str(rng.pick(&types)).unwrap();
        fields[changed]["type"] = serde_json::json!(["null", other]);
        let writer = writer.to_string();
        let rows = 1 + rng.below(16);
        let batch = random_batch(&mut rng, &schema, rows);
        let Ok((bytes, offsets)) = encode(&batch, Some(&writer)) else {
            refused += 1;
            continue;
        };
        taken += 1;
        let records = crate::decode::split_records(&bytes, &offsets).unwrap();
        let read = AvroReader::new(&writer, AvroFraming::None, None).unwrap().decode(&records).unwrap();
        let strict = arrow::compute::CastOptions { safe: false, ..Default::default() };
        for ((column, original), field) in read.columns().iter().zip(batch.columns()).zip(schema.fields()) {
            let back = arrow::compute::cast_with_options(column, field.data_type(), &strict)
                .unwrap_or_else(|e| panic!("column {} read as {} does not cast back: {e}\n{writer}", field.name(), column.data_type()));
            let changed = arrow::compute::kernels::cmp::distinct(original, &back).unwrap();
            if let Some(row) = changed.iter().position(|d| d == Some(true)) {
                panic!("column {} row {row}: wrote {:?}, read {:?}\n{writer}", field.name(), original.slice(row, 1), back.slice(row, 1));
            }
        }
    }
    assert!(taken > 0 && refused > 0, "{taken} batches taken, {refused} refused");
}

#[test]
fn random_batches_come_back_from_their_avro_records_unchanged() {
    use crate::avro::{encode, AvroFraming, AvroReader};
    // Each of these batches is encoded and decoded: a tenth as many.
    let (batches, seed) = (fuzz_batches() / 10, fuzz_seed());
    // Avro has no unsigned 64-bit type: arrow-avro refuses UInt64 values past i64::MAX (with an error).
    let all = schema(false);
    let schema = Arc::new(all.project(&(0..all.fields().len()).filter(|&i| all.field(i).name() != "u64").collect::<Vec<_>>()).unwrap());
    let writer_schema = arrow_avro::schema::AvroSchema::try_from(schema.as_ref()).expect("an Avro schema for the columns").json_string;
    let reader = AvroReader::new(&writer_schema, AvroFraming::None, None).unwrap();
    let mut rng = Rng::new(seed);
    for _ in 0..batches {
        let rows = 1 + rng.below(64);
        let batch = random_batch(&mut rng, &schema, rows);
        let (bytes, offsets) = encode(&batch, Some(&writer_schema)).unwrap();
        let records = crate::decode::split_records(&bytes, &offsets).unwrap();
        // The reader's columns have the Avro schema's types (int for Int8): cast back to compare.
        let read = reader.decode(&records).unwrap();
        let columns = read.columns().iter().zip(schema.fields()).map(|(c, f)| arrow::compute::cast(c, f.data_type()).unwrap()).collect();
        let decoded = RecordBatch::try_new(schema.clone(), columns).unwrap();
        if decoded != batch {
            let texts: Vec<Vec<u8>> = records.iter().map(|r| r.to_vec()).collect();
            panic!("{}", first_difference(&decoded, &batch, &texts));
        }
    }
}
