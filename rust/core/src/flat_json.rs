//! A single-pass JSON decoder for flat rows, used in front of arrow-json.
//!
//! arrow-json first tokenises a batch onto a tape and then decodes each column from the tape,
//! parsing timestamps through chrono. For rows whose columns are all numbers, booleans, strings
//! or naive timestamps, one pass per record straight into Arrow builders does the same work at a
//! fraction of the cost.
//!
//! The bail-out rule: [`FlatJsonDecoder::decode`] returns `None` for a whole batch as soon as
//! one record holds anything it is not certain to decode exactly as arrow-json would (with the
//! default options: unknown fields ignored, no coercion). The caller then decodes the batch with
//! arrow-json, which also reports the bad records. So this decoder accepts a strict subset of
//! what arrow-json accepts, and for that subset returns an identical batch:
//! - each record is one JSON object in strict JSON syntax, surrounded by optional whitespace;
//! - field names match exactly (after unescaping); unknown fields are skipped, whatever their
//!   value; a field named twice bails (arrow-json keeps the last one);
//! - a missing field or `null` is a null; bails for non-nullable fields;
//! - integer columns take integer literals in range (no fraction, exponent or leading zero);
//! - float columns take any JSON number with a finite value and an exponent of at most four
//!   digits (both sides parse correctly rounded, so the values agree);
//! - timestamp columns (no time zone) take integer literals, and the strings
//!   `YYYY-MM-DD`, `YYYY-MM-DD[T| ]HH:MM:SS[.f{1,9}][Z]` (seconds 00-59, no fraction finer than
//!   the column's unit: the value guard refuses those);
//! - strings may hold the standard escapes, `\uXXXX` included (surrogates only as valid pairs),
//!   and raw control characters (arrow-json keeps them as they are);
//! - a string that is not valid UTF-8 bails (arrow-json fails the batch).

use std::sync::Arc;

use crate::temporal_text;

use arrow::array::{ArrayRef, BooleanBuilder, LargeStringBuilder, PrimitiveBuilder, RecordBatch, StringBuilder};
use arrow::datatypes::{
    ArrowPrimitiveType, DataType, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, SchemaRef, TimeUnit, TimestampMicrosecondType,
    TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};

/// Nesting deeper than this inside an unknown field bails (arrow-json has no limit, but such
/// records are rare and recursion must stay bounded).
const MAX_SKIP_DEPTH: u32 = 64;

/// The column types the fast path decodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ColumnKind {
    Int8,
    Int16,
    Int32,
    Int64,
    UInt8,
    UInt16,
    UInt32,
    UInt64,
    Float32,
    Float64,
    Boolean,
    Utf8,
    LargeUtf8,
    Timestamp(TimeUnit),
}

impl ColumnKind {
    fn of(data_type: &DataType) -> Option<ColumnKind> {
        Some(match data_type {
            DataType::Int8 => ColumnKind::Int8,
            DataType::Int16 => ColumnKind::Int16,
            DataType::Int32 => ColumnKind::Int32,
            DataType::Int64 => ColumnKind::Int64,
            DataType::UInt8 => ColumnKind::UInt8,
            DataType::UInt16 => ColumnKind::UInt16,
            DataType::UInt32 => ColumnKind::UInt32,
            DataType::UInt64 => ColumnKind::UInt64,
            DataType::Float32 => ColumnKind::Float32,
            DataType::Float64 => ColumnKind::Float64,
            DataType::Boolean => ColumnKind::Boolean,
            DataType::Utf8 => ColumnKind::Utf8,
            DataType::LargeUtf8 => ColumnKind::LargeUtf8,
            DataType::Timestamp(unit, None) => ColumnKind::Timestamp(*unit),
            _ => return None,
        })
    }
}

/// Decodes batches of flat JSON records for one schema. Built once per stream.
#[derive(Debug)]
pub struct FlatJsonDecoder {
    schema: SchemaRef,
    kinds: Vec<ColumnKind>,
    names: Vec<Box<[u8]>>,
    /// Names written the same raw and unescaped, so a record's raw bytes can be matched as is.
    plain_names: Vec<bool>,
    name_patterns: Vec<NamePattern>,
    nullable: Vec<bool>,
}

impl FlatJsonDecoder {
    /// None unless every field has a type the fast path decodes (and names are distinct).
    pub fn try_new(schema: SchemaRef) -> Option<Self> {
        let fields = schema.fields();
        if fields.is_empty() {
            return None;
        }
        let kinds = fields.iter().map(|f| ColumnKind::of(f.data_type())).collect::<Option<Vec<_>>>()?;
        let names: Vec<Box<[u8]>> = fields.iter().map(|f| f.name().as_bytes().into()).collect();
        let distinct = names.iter().enumerate().all(|(i, name)| !names[..i].contains(name));
        if !distinct {
            return None;
        }
        let plain_names = names.iter().map(|n| n.iter().all(|&b| b != b'"' && b != b'\\')).collect();
        let nullable = fields.iter().map(|f| f.is_nullable()).collect();
        let name_patterns = names.iter().map(|n| NamePattern::new(n)).collect();
        Some(FlatJsonDecoder { schema, kinds, names, plain_names, name_patterns, nullable })
    }

    /// The batch arrow-json would decode from `records` (one JSON object each), or None when
    /// some record is outside what this decoder handles (see the module doc).
    pub fn decode(&self, records: &[&[u8]]) -> Option<RecordBatch> {
        if records.is_empty() {
            return None;
        }
        let total_bytes: usize = records.iter().map(|r| r.len()).sum();
        // Strings never outgrow their records; past i32 offsets a string builder would panic
        // where arrow-json returns an error.
        if total_bytes > i32::MAX as usize {
            return None;
        }
        let mut batch = BatchBuilder::new(self, records.len(), total_bytes);
        for record in records {
            batch.append_record(record)?;
        }
        batch.finish()
    }

    /// The position of the field called `name`, trying `expected` first (records usually list
    /// their fields in schema order).
    fn field_index(&self, name: &[u8], expected: usize) -> Option<usize> {
        if self.names.get(expected).is_some_and(|n| same_bytes(n, name)) {
            return Some(expected);
        }
        self.names.iter().position(|n| same_bytes(n, name))
    }
}

/// The columns of one batch being decoded, plus per-record bookkeeping.
struct BatchBuilder<'d> {
    decoder: &'d FlatJsonDecoder,
    columns: Vec<ColumnBuilder>,
    /// `seen[i] == record_number` when field `i` appeared in the current record.
    seen: Vec<u32>,
    record_number: u32,
    name_scratch: Vec<u8>,
    value_scratch: Vec<u8>,
    day_cache: DayCache,
}

impl<'d> BatchBuilder<'d> {
    fn new(decoder: &'d FlatJsonDecoder, rows: usize, total_bytes: usize) -> Self {
        let string_columns = decoder.kinds.iter().filter(|k| matches!(k, ColumnKind::Utf8 | ColumnKind::LargeUtf8)).count();
        let string_bytes = total_bytes / string_columns.max(1);
        let columns = decoder.kinds.iter().map(|&kind| ColumnBuilder::new(kind, rows, string_bytes)).collect();
        BatchBuilder {
            decoder,
            columns,
            seen: vec![0; decoder.kinds.len()],
            record_number: 0,
            name_scratch: Vec::new(),
            value_scratch: Vec::new(),
            day_cache: DayCache::default(),
        }
    }

    fn append_record(&mut self, record: &[u8]) -> Option<()> {
        self.record_number = self.record_number.checked_add(1)?;
        let mut cursor = Cursor::new(record);
        cursor.skip_whitespace();
        cursor.expect(b'{')?;
        cursor.skip_whitespace();
        let mut present = 0;
        if !cursor.eat(b'}') {
            let mut expected = 0;
            loop {
                if let Some(index) = self.member(&mut cursor, expected)? {
                    present += 1;
                    expected = index + 1;
                }
                cursor.skip_whitespace();
                match cursor.bump()? {
                    b',' => cursor.skip_whitespace(),
                    b'}' => break,
                    _ => return None,
                }
            }
        }
        cursor.skip_whitespace();
        if !cursor.at_end() {
            return None;
        }
        self.fill_missing(present)
    }

    /// Decodes one `"name": value` member into its column, or skips it if the name is unknown.
    /// `Some(column)` it filled, `Some(None)` for an unknown field, None to bail.
    fn member(&mut self, cursor: &mut Cursor, expected: usize) -> Option<Option<usize>> {
        cursor.expect(b'"')?;
        let index = match self.decoder.plain_names.get(expected) {
            Some(&true) if cursor.eat_name_pattern(&self.decoder.name_patterns[expected]) => Some(expected),
            _ => {
                let name = cursor.string_body(&mut self.name_scratch)?;
                self.decoder.field_index(name.as_bytes(), expected)
            }
        };
        cursor.skip_whitespace();
        cursor.expect(b':')?;
        cursor.skip_whitespace();
        let Some(index) = index else {
            cursor.skip_value(0, &mut self.value_scratch)?;
            return Some(None);
        };
        if self.seen[index] == self.record_number {
            return None; // arrow-json keeps the last value; rare enough to leave to it
        }
        self.seen[index] = self.record_number;
        if cursor.eat_literal(b"null") {
            if !self.decoder.nullable[index] {
                return None;
            }
            self.columns[index].append_null();
        } else {
            self.columns[index].append_value(cursor, &mut self.value_scratch, &mut self.day_cache)?;
        }
        Some(Some(index))
    }

    /// Nulls for the fields the record left out.
    fn fill_missing(&mut self, present: usize) -> Option<()> {
        if present == self.columns.len() {
            return Some(());
        }
        for (index, column) in self.columns.iter_mut().enumerate() {
            if self.seen[index] != self.record_number {
                if !self.decoder.nullable[index] {
                    return None;
                }
                column.append_null();
            }
        }
        Some(())
    }

    fn finish(self) -> Option<RecordBatch> {
        let columns: Vec<ArrayRef> = self.columns.into_iter().map(ColumnBuilder::finish).collect();
        RecordBatch::try_new(self.decoder.schema.clone(), columns).ok()
    }
}

/// A field name and its closing quote as two 8-byte words and their masks, for names of up to
/// 15 bytes (longer ones are compared byte for byte).
#[derive(Debug)]
struct NamePattern {
    name: Box<[u8]>,
    /// (value, mask) of bytes 0..8 and 8..16 of `name"`.
    words: Option<((u64, u64), (u64, u64))>,
}

impl NamePattern {
    fn new(name: &[u8]) -> Self {
        let mut quoted = name.to_vec();
        quoted.push(b'"');
        let words = (quoted.len() <= 16).then(|| {
            let mut bytes = [0u8; 16];
            let mut mask = [0u8; 16];
            bytes[..quoted.len()].copy_from_slice(&quoted);
            mask[..quoted.len()].fill(0xff);
            ((word(&bytes[..8]), word(&mask[..8])), (word(&bytes[8..]), word(&mask[8..])))
        });
        NamePattern { name: name.into(), words }
    }
}

/// One Arrow builder per column type.
enum ColumnBuilder {
    Int8(PrimitiveBuilder<Int8Type>),
    Int16(PrimitiveBuilder<Int16Type>),
    Int32(PrimitiveBuilder<Int32Type>),
    Int64(PrimitiveBuilder<Int64Type>),
    UInt8(PrimitiveBuilder<UInt8Type>),
    UInt16(PrimitiveBuilder<UInt16Type>),
    UInt32(PrimitiveBuilder<UInt32Type>),
    UInt64(PrimitiveBuilder<UInt64Type>),
    Float32(PrimitiveBuilder<Float32Type>),
    Float64(PrimitiveBuilder<Float64Type>),
    Boolean(BooleanBuilder),
    Utf8(StringBuilder),
    LargeUtf8(LargeStringBuilder),
    TimestampSecond(PrimitiveBuilder<TimestampSecondType>),
    TimestampMillisecond(PrimitiveBuilder<TimestampMillisecondType>),
    TimestampMicrosecond(PrimitiveBuilder<TimestampMicrosecondType>),
    TimestampNanosecond(PrimitiveBuilder<TimestampNanosecondType>),
}

fn primitive<T: ArrowPrimitiveType>(rows: usize) -> PrimitiveBuilder<T> {
    PrimitiveBuilder::with_capacity(rows)
}

/// Applies the same expression to the builder of whichever variant `self` is.
macro_rules! on_builder {
    ($self:expr, $b:ident => $e:expr) => {
        match $self {
            ColumnBuilder::Int8($b) => $e,
            ColumnBuilder::Int16($b) => $e,
            ColumnBuilder::Int32($b) => $e,
            ColumnBuilder::Int64($b) => $e,
            ColumnBuilder::UInt8($b) => $e,
            ColumnBuilder::UInt16($b) => $e,
            ColumnBuilder::UInt32($b) => $e,
            ColumnBuilder::UInt64($b) => $e,
            ColumnBuilder::Float32($b) => $e,
            ColumnBuilder::Float64($b) => $e,
            ColumnBuilder::Boolean($b) => $e,
            ColumnBuilder::Utf8($b) => $e,
            ColumnBuilder::LargeUtf8($b) => $e,
            ColumnBuilder::TimestampSecond($b) => $e,
            ColumnBuilder::TimestampMillisecond($b) => $e,
            ColumnBuilder::TimestampMicrosecond($b) => $e,
            ColumnBuilder::TimestampNanosecond($b) => $e,
        }
    };
}

impl ColumnBuilder {
    fn new(kind: ColumnKind, rows: usize, string_bytes: usize) -> Self {
        match kind {
            ColumnKind::Int8 => ColumnBuilder::Int8(primitive(rows)),
            ColumnKind::Int16 => ColumnBuilder::Int16(primitive(rows)),
            ColumnKind::Int32 => ColumnBuilder::Int32(primitive(rows)),
            ColumnKind::Int64 => ColumnBuilder::Int64(primitive(rows)),
            ColumnKind::UInt8 => ColumnBuilder::UInt8(primitive(rows)),
            ColumnKind::UInt16 => ColumnBuilder::UInt16(primitive(rows)),
            ColumnKind::UInt32 => ColumnBuilder::UInt32(primitive(rows)),
            ColumnKind::UInt64 => ColumnBuilder::UInt64(primitive(rows)),
            ColumnKind::Float32 => ColumnBuilder::Float32(primitive(rows)),
            ColumnKind::Float64 => ColumnBuilder::Float64(primitive(rows)),
            ColumnKind::Boolean => ColumnBuilder::Boolean(BooleanBuilder::with_capacity(rows)),
            ColumnKind::Utf8 => ColumnBuilder::Utf8(StringBuilder::with_capacity(rows, string_bytes)),
            ColumnKind::LargeUtf8 => ColumnBuilder::LargeUtf8(LargeStringBuilder::with_capacity(rows, string_bytes)),
            ColumnKind::Timestamp(TimeUnit::Second) => ColumnBuilder::TimestampSecond(primitive(rows)),
            ColumnKind::Timestamp(TimeUnit::Millisecond) => ColumnBuilder::TimestampMillisecond(primitive(rows)),
            ColumnKind::Timestamp(TimeUnit::Microsecond) => ColumnBuilder::TimestampMicrosecond(primitive(rows)),
            ColumnKind::Timestamp(TimeUnit::Nanosecond) => ColumnBuilder::TimestampNanosecond(primitive(rows)),
        }
    }

    fn append_null(&mut self) {
        on_builder!(self, b => b.append_null())
    }

    /// Parses the (non-null) value at `cursor` as this column's type and appends it.
    fn append_value(&mut self, cursor: &mut Cursor, scratch: &mut Vec<u8>, days: &mut DayCache) -> Option<()> {
        match self {
            ColumnBuilder::Int8(b) => b.append_value(i8::try_from(cursor.signed_integer()?).ok()?),
            ColumnBuilder::Int16(b) => b.append_value(i16::try_from(cursor.signed_integer()?).ok()?),
            ColumnBuilder::Int32(b) => b.append_value(i32::try_from(cursor.signed_integer()?).ok()?),
            ColumnBuilder::Int64(b) => b.append_value(cursor.signed_integer()?),
            ColumnBuilder::UInt8(b) => b.append_value(u8::try_from(cursor.unsigned_integer()?).ok()?),
            ColumnBuilder::UInt16(b) => b.append_value(u16::try_from(cursor.unsigned_integer()?).ok()?),
            ColumnBuilder::UInt32(b) => b.append_value(u32::try_from(cursor.unsigned_integer()?).ok()?),
            ColumnBuilder::UInt64(b) => b.append_value(cursor.unsigned_integer()?),
            ColumnBuilder::Float32(b) => b.append_value(cursor.float::<f32>()?),
            ColumnBuilder::Float64(b) => b.append_value(cursor.float::<f64>()?),
            ColumnBuilder::Boolean(b) => b.append_value(cursor.boolean()?),
            ColumnBuilder::Utf8(b) => b.append_value(cursor.string(scratch)?),
            ColumnBuilder::LargeUtf8(b) => b.append_value(cursor.string(scratch)?),
            ColumnBuilder::TimestampSecond(b) => b.append_value(cursor.timestamp(TimeUnit::Second, scratch, days)?),
            ColumnBuilder::TimestampMillisecond(b) => b.append_value(cursor.timestamp(TimeUnit::Millisecond, scratch, days)?),
            ColumnBuilder::TimestampMicrosecond(b) => b.append_value(cursor.timestamp(TimeUnit::Microsecond, scratch, days)?),
            ColumnBuilder::TimestampNanosecond(b) => b.append_value(cursor.timestamp(TimeUnit::Nanosecond, scratch, days)?),
        }
        Some(())
    }

    fn finish(mut self) -> ArrayRef {
        on_builder!(&mut self, b => Arc::new(b.finish()))
    }
}

/// A number literal in strict JSON syntax: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
struct NumberToken<'a> {
    text: &'a [u8],
    negative: bool,
    /// The integer digits, when there is neither fraction nor exponent.
    integer_digits: Option<&'a [u8]>,
    exponent_digits: usize,
}

/// Equality without a call to `memcmp`, which costs more than it saves on short names.
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (a_words, a_tail) = a.split_at(a.len() / 8 * 8);
    let (b_words, b_tail) = b.split_at(a_words.len());
    let words_equal = a_words.chunks_exact(8).zip(b_words.chunks_exact(8)).all(|(x, y)| word(x) == word(y));
    words_equal && a_tail.iter().zip(b_tail).all(|(x, y)| x == y)
}

fn word(eight: &[u8]) -> u64 {
    u64::from_le_bytes(eight.try_into().expect("eight bytes"))
}

/// The first `"` or `\` at or after `from`, and whether a byte before it is non-ASCII. Reads
/// eight bytes at a time: strings dominate records (sixteen at a time with SSE2 measured the same,
/// benchmarks/results/codec-ab-20261205T201544Z.md).
pub(crate) fn find_string_end(bytes: &[u8], from: usize) -> Option<(usize, bool)> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    // Bytes equal to zero get their high bit set; others above the first zero may too, which
    // is harmless: only the lowest flagged byte is used.
    let zero_bytes = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    let mut at = from;
    let mut seen = 0u64;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let eight = word(chunk);
        let found = zero_bytes(eight ^ (ONES * u64::from(b'"'))) | zero_bytes(eight ^ (ONES * u64::from(b'\\')));
        if found != 0 {
            // The lowest flag is the high bit of the end's byte: keep only the bytes below it.
            let before_end = eight & (((found & found.wrapping_neg()) >> 7) - 1);
            return Some((at + (found.trailing_zeros() / 8) as usize, (seen | before_end) & HIGHS != 0));
        }
        seen |= eight;
        at += 8;
    }
    // `from` may be past the end (a record that ends in a backslash): no string end there.
    let end = at + bytes.get(at..)?.iter().position(|&b| b == b'"' || b == b'\\')?;
    let non_ascii = seen & HIGHS != 0 || !bytes[at..end].is_ascii();
    Some((end, non_ascii))
}

/// `bytes` as text: validated unless known to be ASCII.
fn as_text(bytes: &[u8], maybe_non_ascii: bool) -> Option<&str> {
    if maybe_non_ascii {
        return std::str::from_utf8(bytes).ok();
    }
    debug_assert!(bytes.is_ascii());
    // SAFETY: every byte is ASCII (checked by `find_string_end`), so this is valid UTF-8.
    Some(unsafe { std::str::from_utf8_unchecked(bytes) })
}

/// A position in one record. Every method returns None where the input leaves the fast path.
/// Bytes outside strings must be JSON syntax (ASCII), so only strings need UTF-8 checks.
struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Cursor { bytes, pos: 0 }
    }

    /// Consumes a name and its closing quote if the string here is exactly that name, compared
    /// as one or two masked words when 16 bytes are there to read.
    fn eat_name_pattern(&mut self, pattern: &NamePattern) -> bool {
        let Some(words) = self.bytes.get(self.pos..self.pos + 16) else { return self.eat_name(&pattern.name) };
        let Some((low, high)) = pattern.words else { return self.eat_name(&pattern.name) };
        let found = word(&words[..8]) & low.1 == low.0 && word(&words[8..]) & high.1 == high.0;
        if found {
            self.pos += pattern.name.len() + 1;
        }
        found
    }

    /// Consumes `name` and its closing quote if the string here is exactly that (unescaped)
    /// name.
    fn eat_name(&mut self, name: &[u8]) -> bool {
        let end = self.pos + name.len();
        let found = self.bytes.get(end) == Some(&b'"') && same_bytes(&self.bytes[self.pos..end], name);
        if found {
            self.pos = end + 1;
        }
        found
    }

    fn at_end(&self) -> bool {
        self.pos >= self.bytes.len()
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn bump(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.pos += 1;
        Some(b)
    }

    /// JSON whitespace, the same four bytes arrow-json skips.
    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.peek() {
            self.pos += 1;
        }
    }

    fn eat(&mut self, b: u8) -> bool {
        let found = self.peek() == Some(b);
        self.pos += found as usize;
        found
    }

    fn expect(&mut self, b: u8) -> Option<()> {
        self.eat(b).then_some(())
    }

    fn eat_literal(&mut self, literal: &[u8]) -> bool {
        let found = self.bytes[self.pos..].starts_with(literal);
        if found {
            self.pos += literal.len();
        }
        found
    }

    fn boolean(&mut self) -> Option<bool> {
        if self.eat_literal(b"true") {
            Some(true)
        } else if self.eat_literal(b"false") {
            Some(false)
        } else {
            None
        }
    }

    /// A string value (the cursor on its opening quote).
    fn string<'s>(&mut self, scratch: &'s mut Vec<u8>) -> Option<&'s str>
    where
        'a: 's,
    {
        self.expect(b'"')?;
        self.string_body(scratch)
    }

    /// The rest of a string whose opening quote was consumed, unescaped. Borrows the record
    /// when there is no escape, else unescapes into `scratch`.
    fn string_body<'s>(&mut self, scratch: &'s mut Vec<u8>) -> Option<&'s str>
    where
        'a: 's,
    {
        let start = self.pos;
        let (end, non_ascii) = find_string_end(self.bytes, start)?;
        self.pos = end + 1;
        if self.bytes[end] == b'"' {
            return as_text(&self.bytes[start..end], non_ascii);
        }
        scratch.clear();
        scratch.extend_from_slice(&self.bytes[start..end]);
        self.unescape_rest(scratch)?;
        std::str::from_utf8(scratch).ok()
    }

    /// Unescapes from just after a backslash to the closing quote, appending to `out`.
    fn unescape_rest(&mut self, out: &mut Vec<u8>) -> Option<()> {
        loop {
            let escaped = match self.bump()? {
                b'"' => b'"',
                b'\\' => b'\\',
                b'/' => b'/',
                b'b' => 0x08,
                b'f' => 0x0c,
                b'n' => b'\n',
                b'r' => b'\r',
                b't' => b'\t',
                b'u' => {
                    let c = self.unicode_escape()?;
                    out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                    0
                }
                _ => return None,
            };
            if escaped != 0 {
                out.push(escaped);
            }
            let start = self.pos;
            let (end, _) = find_string_end(self.bytes, start)?;
            out.extend_from_slice(&self.bytes[start..end]);
            self.pos = end + 1;
            if self.bytes[end] == b'"' {
                return Some(());
            }
        }
    }

    /// The char of `XXXX` (after `\u`), reading a second `\uXXXX` for a surrogate pair.
    fn unicode_escape(&mut self) -> Option<char> {
        let first = self.hex4()?;
        if let Some(c) = char::from_u32(first) {
            return Some(c);
        }
        if !(0xD800..=0xDBFF).contains(&first) || !self.eat_literal(b"\\u") {
            return None;
        }
        let second = self.hex4()?;
        if !(0xDC00..=0xDFFF).contains(&second) {
            return None;
        }
        char::from_u32(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))
    }

    fn hex4(&mut self) -> Option<u32> {
        let digits = self.bytes.get(self.pos..self.pos + 4)?;
        self.pos += 4;
        digits.iter().try_fold(0u32, |acc, &b| Some(acc * 16 + (b as char).to_digit(16)?))
    }

    /// Scans a number literal in strict JSON syntax.
    fn number(&mut self) -> Option<NumberToken<'a>> {
        let start = self.pos;
        let negative = self.eat(b'-');
        let digits_start = self.pos;
        match self.bump()? {
            b'0' => {}
            b'1'..=b'9' => self.skip_digits(),
            _ => return None,
        }
        let digits_end = self.pos;
        let mut integral = true;
        if self.eat(b'.') {
            integral = false;
            self.one_or_more_digits()?;
        }
        let mut exponent_digits = 0;
        if matches!(self.peek(), Some(b'e' | b'E')) {
            integral = false;
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            let exponent_start = self.pos;
            self.one_or_more_digits()?;
            exponent_digits = self.pos - exponent_start;
        }
        // A digit right after a leading zero ("01") is not JSON; arrow-json would take it.
        if matches!(self.peek(), Some(b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-')) {
            return None;
        }
        Some(NumberToken {
            text: &self.bytes[start..self.pos],
            negative,
            integer_digits: integral.then(|| &self.bytes[digits_start..digits_end]),
            exponent_digits,
        })
    }

    fn skip_digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
    }

    fn one_or_more_digits(&mut self) -> Option<()> {
        let start = self.pos;
        self.skip_digits();
        (self.pos > start).then_some(())
    }

    /// An integer literal that fits an i64 (arrow-json's exact path; it would round others
    /// through f64).
    fn signed_integer(&mut self) -> Option<i64> {
        if let Some(value) = self.short_integer() {
            return Some(value);
        }
        let token = self.number()?;
        let magnitude = digits_value(token.integer_digits?)?;
        if token.negative {
            0i64.checked_sub_unsigned(magnitude)
        } else {
            i64::try_from(magnitude).ok()
        }
    }

    /// An integer literal of at most 18 digits followed by a byte that ends a number, in one
    /// pass; None (the cursor unmoved) for anything else, which `number` then reads in full.
    fn short_integer(&mut self) -> Option<i64> {
        let negative = self.peek()? == b'-';
        let start = self.pos + usize::from(negative);
        let first = *self.bytes.get(start)?;
        if !first.is_ascii_digit() {
            return None;
        }
        let mut end = start + 1;
        let mut value = i64::from(first - b'0');
        // A leading zero takes no more digits (a digit after it bails in `number`).
        if first != b'0' {
            while let Some(&digit @ b'0'..=b'9') = self.bytes.get(end) {
                if end - start == 18 {
                    return None;
                }
                value = value * 10 + i64::from(digit - b'0');
                end += 1;
            }
        }
        if matches!(self.bytes.get(end), Some(b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-')) {
            return None;
        }
        self.pos = end;
        Some(if negative { -value } else { value })
    }

    fn unsigned_integer(&mut self) -> Option<u64> {
        let token = self.number()?;
        if token.negative {
            return None;
        }
        digits_value(token.integer_digits?)
    }

    /// A finite float. Both std and lexical-core (arrow-json's parser) round correctly, so
    /// they agree on finite results; overflow and huge exponents are left to arrow-json.
    fn float<F: std::str::FromStr + IsFinite>(&mut self) -> Option<F> {
        let token = self.number()?;
        if token.exponent_digits > 4 {
            return None;
        }
        let value: F = std::str::from_utf8(token.text).ok()?.parse().ok()?;
        value.finite().then_some(value)
    }

    /// A timestamp: an integer literal (already in the column's unit) or a naive date-time
    /// string.
    fn timestamp(&mut self, unit: TimeUnit, scratch: &mut Vec<u8>, days: &mut DayCache) -> Option<i64> {
        if self.peek()? == b'"' {
            let text = self.string(scratch)?;
            return naive_timestamp(text.as_bytes(), unit, days);
        }
        self.signed_integer()
    }

    /// Skips any JSON value in strict syntax (an unknown field). Escapes and surrogates inside it
    /// are still checked: arrow-json fails a batch on bad ones, so accepting them would differ.
    fn skip_value(&mut self, depth: u32, scratch: &mut Vec<u8>) -> Option<()> {
        match self.peek()? {
            b'"' => self.string(scratch).map(drop),
            b'{' => self.skip_object(depth, scratch),
            b'[' => self.skip_array(depth, scratch),
            b't' | b'f' => self.boolean().map(drop),
            b'n' => self.eat_literal(b"null").then_some(()),
            _ => self.number().map(drop),
        }
    }

    fn skip_object(&mut self, depth: u32, scratch: &mut Vec<u8>) -> Option<()> {
        let depth = nested(depth)?;
        self.expect(b'{')?;
        self.skip_whitespace();
        if self.eat(b'}') {
            return Some(());
        }
        loop {
            self.string(scratch)?;
            self.skip_whitespace();
            self.expect(b':')?;
            self.skip_whitespace();
            self.skip_value(depth, scratch)?;
            self.skip_whitespace();
            match self.bump()? {
                b',' => self.skip_whitespace(),
                b'}' => return Some(()),
                _ => return None,
            }
        }
    }

    fn skip_array(&mut self, depth: u32, scratch: &mut Vec<u8>) -> Option<()> {
        let depth = nested(depth)?;
        self.expect(b'[')?;
        self.skip_whitespace();
        if self.eat(b']') {
            return Some(());
        }
        loop {
            self.skip_value(depth, scratch)?;
            self.skip_whitespace();
            match self.bump()? {
                b',' => self.skip_whitespace(),
                b']' => return Some(()),
                _ => return None,
            }
        }
    }
}

/// A decimal number written in text, read exactly: `±(int frac) × 10^(exponent - frac.len())`.
/// Reads `[+-]?d*[.d*]([eE][+-]?d+)?` with at least one digit, the forms arrow's integer, float
/// and decimal parsers take.
#[derive(Debug)]
pub(crate) struct ExactNumber<'a> {
    negative: bool,
    int: &'a [u8],
    frac: &'a [u8],
    exponent: i64,
}

impl<'a> ExactNumber<'a> {
    pub(crate) fn parse(text: &'a [u8]) -> Option<Self> {
        let (negative, rest) = match text.first()? {
            b'-' => (true, &text[1..]),
            b'+' => (false, &text[1..]),
            _ => (false, text),
        };
        let (int, rest) = rest.split_at(rest.iter().take_while(|b| b.is_ascii_digit()).count());
        let (frac, rest) = match rest.strip_prefix(b".") {
            Some(after) => after.split_at(after.iter().take_while(|b| b.is_ascii_digit()).count()),
            None => (&rest[..0], rest),
        };
        if int.is_empty() && frac.is_empty() {
            return None;
        }
        let mut exponent: i64 = 0;
        if let Some((&e, after)) = rest.split_first() {
            if e != b'e' && e != b'E' {
                return None;
            }
            let (sign, digits) = match after.first() {
                Some(b'-') => (-1, &after[1..]),
                Some(b'+') => (1, &after[1..]),
                _ => (1, after),
            };
            if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
                return None;
            }
            // Saturates far beyond any type's range, so huge exponents stay huge.
            exponent = sign * digits.iter().fold(0i64, |acc, d| (acc * 10 + i64::from(d - b'0')).min(1 << 40));
        }
        Some(ExactNumber { negative, int, frac, exponent })
    }

    fn digits(&self) -> impl DoubleEndedIterator<Item = &u8> + Clone {
        self.int.iter().chain(self.frac)
    }

    /// The value × 10^`shift` as an integer, when that is an integer of at most 38 digits.
    fn scaled(&self, shift: i64) -> Option<i128> {
        let lead = self.digits().take_while(|&&d| d == b'0').count();
        let total = self.int.len() + self.frac.len();
        if lead == total {
            return Some(0);
        }
        let trail = self.digits().rev().take_while(|&&d| d == b'0').count();
        let significant = total - lead - trail;
        let exponent = self.exponent - self.frac.len() as i64 + trail as i64 + shift;
        if exponent < 0 || significant as i64 + exponent > 38 {
            return None;
        }
        let mut value: i128 = 0;
        for d in self.digits().skip(lead).take(significant) {
            value = value * 10 + i128::from(d - b'0');
        }
        value *= 10i128.pow(exponent as u32);
        Some(if self.negative { -value } else { value })
    }

    /// The integer value, when the number is one (`1.0` and `1e2` are; `1.5` is not).
    pub(crate) fn integer(&self) -> Option<i128> {
        self.scaled(0)
    }

    /// The unscaled value of a `Decimal(precision, scale)`, when the number has at most `scale`
    /// fraction digits and `precision - scale` integer digits.
    pub(crate) fn decimal(&self, precision: u8, scale: i8) -> Option<i128> {
        let value = self.scaled(i64::from(scale))?;
        (value.unsigned_abs() < 10u128.pow(u32::from(precision.min(38)))).then_some(value)
    }
}

/// Checks, per record, what arrow-json would store wrongly rather than reject: integers that
/// do not fit their column (it converts them through f64, so `-9223372036854775809` becomes
/// i64::MIN and `1.5` becomes 1), decimals with more digits than the column holds (it drops
/// fraction digits) and floats that overflow to infinity. It walks each record the way
/// arrow-json's tape does (whitespace and commas between members are skipped alike), so it sees
/// every value arrow-json would store; where arrow-json would fail the record, it stops quietly.
#[derive(Debug)]
pub struct ValueGuard {
    root: Vec<(Box<[u8]>, Guard)>,
}

static SKIP: Guard = Guard::Skip;

/// The check on a string in a column of integer storage (see `temporal_text`).
#[derive(Debug, Clone, Copy)]
enum TextRule {
    None,
    Date,
    Timestamp(TimeUnit),
}

#[derive(Debug)]
enum Guard {
    Skip,
    /// Integer storage (integers, timestamps, dates, times, durations): range, type name, and
    /// what its text may hold (dates and timestamps).
    Integer(i128, i128, String, TextRule),
    Decimal(u8, i8),
    Float(bool),
    /// Binary, written as hex: arrow-json reads an odd number of digits as if the last one had
    /// a 0 before it (`"abc"` as 0xab 0x0c).
    Hex,
    Struct(Vec<(Box<[u8]>, Guard)>),
    List(Box<Guard>),
}

impl Guard {
    fn of(data_type: &DataType) -> Guard {
        use DataType::*;
        let range = |min: i128, max: i128| Guard::Integer(min, max, data_type.to_string(), TextRule::None);
        let (i32_range, i64_range) = ((i32::MIN.into(), i32::MAX.into()), (i64::MIN.into(), i64::MAX.into()));
        match data_type {
            Int8 => range(i8::MIN.into(), i8::MAX.into()),
            Int16 => range(i16::MIN.into(), i16::MAX.into()),
            Int32 | Time32(_) => range(i32_range.0, i32_range.1),
            Date32 => Guard::Integer(i32_range.0, i32_range.1, data_type.to_string(), TextRule::Date),
            Date64 => Guard::Integer(i64_range.0, i64_range.1, data_type.to_string(), TextRule::Date),
            Timestamp(unit, _) => Guard::Integer(i64_range.0, i64_range.1, data_type.to_string(), TextRule::Timestamp(*unit)),
            Int64 | Time64(_) | Duration(_) => range(i64_range.0, i64_range.1),
            UInt8 => range(0, u8::MAX.into()),
            UInt16 => range(0, u16::MAX.into()),
            UInt32 => range(0, u32::MAX.into()),
            UInt64 => range(0, u64::MAX.into()),
            Decimal32(p, s) | Decimal64(p, s) | Decimal128(p, s) | Decimal256(p, s) => Guard::Decimal(*p, *s),
            Float16 | Float32 => Guard::Float(true),
            Float64 => Guard::Float(false),
            Binary | LargeBinary | BinaryView | FixedSizeBinary(_) => Guard::Hex,
            Struct(fields) => fields_guard(fields).map_or(Guard::Skip, Guard::Struct),
            List(item) | LargeList(item) | FixedSizeList(item, _) => match Guard::of(item.data_type()) {
                Guard::Skip => Guard::Skip,
                guard => Guard::List(Box::new(guard)),
            },
            _ => Guard::Skip,
        }
    }
}

fn fields_guard(fields: &arrow::datatypes::Fields) -> Option<Vec<(Box<[u8]>, Guard)>> {
    let guards: Vec<(Box<[u8]>, Guard)> = fields.iter().map(|f| (f.name().as_bytes().into(), Guard::of(f.data_type()))).collect();
    guards.iter().any(|(_, g)| !matches!(g, Guard::Skip)).then_some(guards)
}

impl ValueGuard {
    /// None when no column of `schema` needs the check.
    pub fn try_new(schema: &SchemaRef) -> Option<Self> {
        fields_guard(schema.fields()).map(|root| ValueGuard { root })
    }

    /// Err(why) when a value of `record` does not fit its column, naming both.
    pub fn check(&self, record: &[u8]) -> Result<(), String> {
        let mut walk = Walk { cursor: Cursor::new(record), path: Vec::new(), scratch: Vec::new() };
        walk.cursor.skip_whitespace();
        if walk.cursor.peek() == Some(b'{') {
            walk.object(&self.root)?;
        }
        Ok(())
    }
}

/// One record being checked. The walk returns Ok(false) where arrow-json would fail the record.
struct Walk<'a, 'g> {
    cursor: Cursor<'a>,
    /// The names of the checked members around the cursor (only known fields are entered).
    path: Vec<&'g [u8]>,
    scratch: Vec<u8>,
}

impl<'g> Walk<'_, 'g> {
    /// Skips whitespace and commas, as arrow-json does between members and elements.
    fn separators(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t' | b',') = self.cursor.peek() {
            self.cursor.pos += 1;
        }
    }

    /// The object at the cursor, its members checked by `fields`; Ok(true) at its end.
    fn object(&mut self, fields: &'g [(Box<[u8]>, Guard)]) -> Result<bool, String> {
        self.cursor.pos += 1;
        // Members usually come in schema order: the one after the last match is tried first.
        let mut expected = 0;
        loop {
            self.separators();
            match self.cursor.bump() {
                Some(b'"') => {}
                Some(b'}') => return Ok(true),
                _ => return Ok(false),
            }
            // The expected name, raw, then any name unescaped.
            let plain = fields.get(expected).is_some_and(|(n, _)| !n.contains(&b'"') && !n.contains(&b'\\'));
            let known = if plain && self.cursor.eat_name(&fields[expected].0) {
                Some(expected)
            } else {
                let Some(name) = self.cursor.string_body(&mut self.scratch) else { return Ok(false) };
                fields.iter().position(|(n, _)| same_bytes(n, name.as_bytes()))
            };
            if let Some(index) = known {
                expected = index + 1;
            }
            let known = known.map(|index| &fields[index]);
            self.cursor.skip_whitespace();
            if !self.cursor.eat(b':') {
                return Ok(false);
            }
            let ok = match known {
                Some((name, guard)) => {
                    self.path.push(name);
                    let ok = self.value(guard)?;
                    self.path.pop();
                    ok
                }
                None => self.value(&SKIP)?,
            };
            if !ok {
                return Ok(false);
            }
        }
    }

    /// Checks the value at the cursor against `guard`.
    fn value(&mut self, guard: &'g Guard) -> Result<bool, String> {
        self.cursor.skip_whitespace();
        match (self.cursor.peek(), guard) {
            (None, _) => Ok(false),
            (Some(b'{'), Guard::Struct(fields)) => self.object(fields),
            (Some(b'['), Guard::List(item)) => {
                self.cursor.pos += 1;
                loop {
                    self.separators();
                    match self.cursor.peek() {
                        Some(b']') => {
                            self.cursor.pos += 1;
                            return Ok(true);
                        }
                        Some(_) if self.value(item)? => {}
                        _ => return Ok(false),
                    }
                }
            }
            (Some(b'-' | b'0'..=b'9'), _) => {
                let start = self.cursor.pos;
                // The token arrow-json takes as a number.
                while let Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') = self.cursor.peek() {
                    self.cursor.pos += 1;
                }
                self.number(&self.cursor.bytes[start..self.cursor.pos], guard, false)?;
                Ok(true)
            }
            (Some(b'"'), Guard::Decimal(..) | Guard::Float(_)) => {
                // arrow parses integers from strings exactly, but not decimals and floats.
                self.cursor.pos += 1;
                let Some(text) = self.cursor.string_body(&mut self.scratch) else { return Ok(false) };
                let text = text.as_bytes().to_vec();
                self.number(&text, guard, true)?;
                Ok(true)
            }
            (Some(b'"'), Guard::Integer(.., rule @ (TextRule::Date | TextRule::Timestamp(_)))) => {
                self.cursor.pos += 1;
                let Some(text) = self.cursor.string_body(&mut self.scratch) else { return Ok(false) };
                let problem = match rule {
                    TextRule::Date => temporal_text::date_problem(text),
                    TextRule::Timestamp(unit) => temporal_text::timestamp_problem(text, *unit),
                    TextRule::None => None,
                };
                match problem {
                    Some(why) => Err(format!("column '{}': {why}", self.column())),
                    None => Ok(true),
                }
            }
            (Some(b'"'), Guard::Hex) => {
                self.cursor.pos += 1;
                let Some(text) = self.cursor.string_body(&mut self.scratch) else { return Ok(false) };
                if text.len() % 2 == 1 {
                    let text = text.to_string();
                    return Err(format!("column '{}': \"{text}\" is no hex (binary is written as two hex digits per byte)", self.column()));
                }
                Ok(true)
            }
            _ => Ok(skip_lenient(&mut self.cursor)),
        }
    }

    /// The dotted name of the member at the cursor.
    fn column(&self) -> String {
        self.path.iter().map(|n| String::from_utf8_lossy(n)).collect::<Vec<_>>().join(".")
    }

    fn number(&self, token: &[u8], guard: &Guard, quoted: bool) -> Result<(), String> {
        let column = || self.column();
        let shown = || String::from_utf8_lossy(token).into_owned();
        match guard {
            Guard::Integer(min, max, name, _) => {
                // The common case first: a plain integer of up to 18 digits (always exact).
                let digits = token.strip_prefix(b"-").unwrap_or(token);
                if !digits.is_empty() && digits.len() <= 18 && digits.iter().all(u8::is_ascii_digit) {
                    let magnitude = digits.iter().fold(0i128, |acc, d| acc * 10 + i128::from(d - b'0'));
                    let value = if digits.len() < token.len() { -magnitude } else { magnitude };
                    if value < *min || value > *max {
                        return Err(format!("column '{}': {} is out of range for {name}", column(), shown()));
                    }
                    return Ok(());
                }
                let exact = ExactNumber::parse(token).ok_or_else(|| format!("column '{}': {} is not a number", column(), shown()))?;
                let value = exact.integer().ok_or_else(|| format!("column '{}': {} is not an integer ({name})", column(), shown()))?;
                if value < *min || value > *max {
                    return Err(format!("column '{}': {} is out of range for {name}", column(), shown()));
                }
                // arrow-json converts any literal but a plain integer through f64: exact only so far.
                let plain = token.iter().all(|b| b.is_ascii_digit() || *b == b'-');
                if !plain && value.unsigned_abs() > 1 << 53 {
                    return Err(format!("column '{}': {} cannot be read exactly as {name}; write it as a plain integer", column(), shown()));
                }
            }
            Guard::Decimal(precision, scale) => match ExactNumber::parse(token) {
                Some(exact) if exact.decimal(*precision, *scale).is_none() => {
                    return Err(format!("column '{}': {} does not fit Decimal({precision}, {scale})", column(), shown()));
                }
                None if !quoted => return Err(format!("column '{}': {} is not a number", column(), shown())),
                _ => {}
            },
            Guard::Float(single) => {
                // Words (NaN, inf) are IEEE values; numbers must stay finite.
                if ExactNumber::parse(token).is_some() {
                    let text = std::str::from_utf8(token).unwrap_or("");
                    let finite = if *single { text.parse::<f32>().map(f32::is_finite) } else { text.parse::<f64>().map(f64::is_finite) };
                    if finite == Ok(false) {
                        return Err(format!(
                            "column '{}': {} is out of range for {}",
                            column(),
                            shown(),
                            if *single { "Float32" } else { "Float64" }
                        ));
                    }
                }
            }
            // arrow-json fails a number in a binary column itself.
            Guard::Skip | Guard::Hex | Guard::Struct(_) | Guard::List(_) => {}
        }
        Ok(())
    }
}

/// The members of the JSON object `record` with each value's text as written, or None if it is
/// not one object. For valid JSON only (the caller checks it first).
pub(crate) fn raw_members(record: &[u8]) -> Option<Vec<(String, &[u8])>> {
    let mut cursor = Cursor::new(record);
    let mut scratch = Vec::new();
    cursor.skip_whitespace();
    cursor.expect(b'{')?;
    let mut members = Vec::new();
    loop {
        cursor.skip_whitespace();
        match cursor.bump()? {
            b'}' => return Some(members),
            b',' => continue,
            b'"' => {}
            _ => return None,
        }
        let name = cursor.string_body(&mut scratch)?.to_owned();
        cursor.skip_whitespace();
        cursor.expect(b':')?;
        cursor.skip_whitespace();
        let start = cursor.pos;
        if !skip_lenient(&mut cursor) {
            return None;
        }
        members.push((name, &record[start..cursor.pos]));
    }
}

/// Skips the value at the cursor as arrow-json's tape reads it: a string, a literal, a number
/// token, or brackets matched by depth (strings inside skipped whole). False where it fails.
fn skip_lenient(cursor: &mut Cursor) -> bool {
    match cursor.peek() {
        Some(b'"') => {
            cursor.pos += 1;
            skip_string_body(cursor)
        }
        Some(b'n') => cursor.eat_literal(b"null"),
        Some(b't') => cursor.eat_literal(b"true"),
        Some(b'f') => cursor.eat_literal(b"false"),
        Some(b'-' | b'0'..=b'9') => {
            while let Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') = cursor.peek() {
                cursor.pos += 1;
            }
            true
        }
        Some(b'{' | b'[') => {
            let mut depth = 0usize;
            while let Some(b) = cursor.bump() {
                match b {
                    b'"' if !skip_string_body(cursor) => return false,
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return true;
                        }
                    }
                    _ => {}
                }
            }
            false
        }
        _ => false,
    }
}

/// Skips to just after the closing quote of a string whose opening quote was consumed.
fn skip_string_body(cursor: &mut Cursor) -> bool {
    loop {
        let Some((end, _)) = find_string_end(cursor.bytes, cursor.pos) else { return false };
        cursor.pos = end + 1;
        if cursor.bytes[end] == b'"' {
            return true;
        }
        cursor.pos += 1; // the escaped byte
    }
}

fn nested(depth: u32) -> Option<u32> {
    (depth < MAX_SKIP_DEPTH).then_some(depth + 1)
}

/// The value of ASCII digits, None on u64 overflow.
fn digits_value(digits: &[u8]) -> Option<u64> {
    let digit = |d: &u8| u64::from(d - b'0');
    // Nineteen digits always fit, so the common case needs no overflow checks.
    if digits.len() <= 19 {
        return Some(digits.iter().fold(0, |acc, d| acc * 10 + digit(d)));
    }
    digits.iter().try_fold(0u64, |acc, d| acc.checked_mul(10)?.checked_add(digit(d)))
}

trait IsFinite {
    fn finite(&self) -> bool;
}

impl IsFinite for f32 {
    fn finite(&self) -> bool {
        self.is_finite()
    }
}

impl IsFinite for f64 {
    fn finite(&self) -> bool {
        self.is_finite()
    }
}

/// A time-zone-less date-time string in `unit`s since the epoch, for exactly the forms
/// `YYYY-MM-DD` and `YYYY-MM-DD[Tt ]HH:MM:SS[.f{1,9}][Zz]`, read the way arrow-cast's
/// `string_to_datetime` reads them for a UTC reader (a trailing Z changes nothing). Anything
/// else (offsets, leap seconds, compact times, over nine fraction digits) is None.
fn naive_timestamp(s: &[u8], unit: TimeUnit, cache: &mut DayCache) -> Option<i64> {
    let days = cache.days_of(s.get(..10)?)?;
    if s.len() == 10 {
        return to_unit(days * 86_400, 0, unit);
    }
    if !matches!(s[10], b'T' | b't' | b' ') {
        return None;
    }
    let (seconds_of_day, rest) = time_of_day(s.get(11..)?)?;
    let (nanos, rest) = fraction(rest)?;
    if !matches!(rest, b"" | b"Z" | b"z") {
        return None;
    }
    to_unit(days * 86_400 + seconds_of_day, nanos, unit)
}

/// The last date a timestamp column decoded: rows of a stream mostly fall on the same day.
struct DayCache {
    /// `YYYY-MM-DD` of a valid date, and its day number.
    text: [u8; 10],
    days: i64,
}

impl Default for DayCache {
    /// The epoch's day: a valid date with its own day number, so a lookup before the first
    /// decoded date is right too (zero bytes here would match a string of ten NULs).
    fn default() -> Self {
        DayCache { text: *b"1970-01-01", days: 0 }
    }
}

impl DayCache {
    /// Days since 1970-01-01 of `date` (`YYYY-MM-DD`), None when it is not a valid date.
    fn days_of(&mut self, date: &[u8]) -> Option<i64> {
        if date == self.text {
            return Some(self.days);
        }
        let days = date_days(date)?;
        self.text.copy_from_slice(date);
        self.days = days;
        Some(days)
    }
}

/// Days since 1970-01-01 of a valid proleptic Gregorian `YYYY-MM-DD`.
fn date_days(s: &[u8]) -> Option<i64> {
    if s[4] != b'-' || s[7] != b'-' {
        return None;
    }
    let year = two_digits(&s[0..2])? * 100 + two_digits(&s[2..4])?;
    let month = two_digits(&s[5..7])?;
    let day = two_digits(&s[8..10])?;
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    Some(days_from_civil(year, month, day))
}

/// Seconds of `HH:MM:SS` and what follows it.
fn time_of_day(s: &[u8]) -> Option<(i64, &[u8])> {
    let time = s.get(..8)?;
    if time[2] != b':' || time[5] != b':' {
        return None;
    }
    let (hour, minute, second) = (two_digits(&time[0..2])?, two_digits(&time[3..5])?, two_digits(&time[6..8])?);
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    Some((hour * 3600 + minute * 60 + second, &s[8..]))
}

/// Nanoseconds of an optional `.f{1,9}` and what follows it.
fn fraction(s: &[u8]) -> Option<(u32, &[u8])> {
    let Some(rest) = s.strip_prefix(b".") else { return Some((0, s)) };
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits > 9 {
        return None;
    }
    let value = rest[..digits].iter().fold(0u32, |acc, &d| acc * 10 + u32::from(d - b'0'));
    Some((value * 10u32.pow(9 - digits as u32), &rest[digits..]))
}

fn two_digits(s: &[u8]) -> Option<i64> {
    match s {
        [a @ b'0'..=b'9', b @ b'0'..=b'9'] => Some(i64::from(a - b'0') * 10 + i64::from(b - b'0')),
        _ => None,
    }
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_from_march = (month + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// Whole seconds plus nanoseconds in `unit`; None when nanoseconds overflow i64 (arrow-json
/// fails those) or when the fraction is finer than the unit (the value guard refuses those, where
/// arrow-json would cut them).
fn to_unit(seconds: i64, nanos: u32, unit: TimeUnit) -> Option<i64> {
    let nanos = i64::from(nanos);
    match unit {
        TimeUnit::Second => (nanos == 0).then_some(seconds),
        TimeUnit::Millisecond => (nanos % 1_000_000 == 0).then(|| seconds * 1_000 + nanos / 1_000_000),
        TimeUnit::Microsecond => (nanos % 1_000 == 0).then(|| seconds * 1_000_000 + nanos / 1_000),
        TimeUnit::Nanosecond => i64::try_from(i128::from(seconds) * 1_000_000_000 + i128::from(nanos)).ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::{split_records, DecoderOptions, Format, RecordDecoder};
    use crate::encode::{encode_records, EncodeFormat, EncodeOptions};
    use crate::nexmark::{Entity, GeneratorConfig, NexmarkGenerator};
    use arrow::array::{Array, AsArray};
    use arrow::datatypes::{Field, Schema};
    use arrow::error::ArrowError;

    /// What arrow-json decodes from `records`, the way `RecordDecoder` drives it.
    fn arrow_decode(schema: &SchemaRef, records: &[&[u8]]) -> Result<RecordBatch, ArrowError> {
        let mut decoder = arrow::json::ReaderBuilder::new(schema.clone()).with_batch_size(records.len() + 1).build_decoder()?;
        for record in records {
            assert_eq!(decoder.decode(record)?, record.len());
            decoder.decode(b"\n")?;
        }
        let batch = decoder.flush()?.ok_or_else(|| ArrowError::JsonError("no rows".into()))?;
        assert_eq!(batch.num_rows(), records.len(), "arrow-json row count");
        Ok(batch)
    }

    /// `find_string_end` byte by byte, the way its doc says.
    fn string_end_by_bytes(bytes: &[u8], from: usize) -> Option<(usize, bool)> {
        let end = from + bytes[from..].iter().position(|&b| b == b'"' || b == b'\\')?;
        Some((end, !bytes[from..end].is_ascii()))
    }

    #[test]
    fn integers_of_every_length_and_ending_decode_as_arrow_json_does() {
        // Every digit count up to and past the one-pass path's 18, both signs, leading zeros,
        // each byte that may follow, and the value at different distances from the record's end.
        let schema = wide_schema();
        let mut decodable = 0;
        for digits in 1..=19 {
            for lead in ["1", "9", "0", "5"] {
                let number = format!("{lead}{}", "7".repeat(digits - 1));
                for sign in ["", "-"] {
                    for (after, padding) in [("}", ""), (" }", ""), (",\"s\":\"x\"}", ""), ("}", "        "), ("\t}", " ")] {
                        let record = format!("{padding}{{\"i64\":{sign}{number}{after}");
                        let bytes = record.as_bytes();
                        // arrow-json also takes leading zeros, and rounds 19 digits through f64:
                        // the fast path leaves both to it.
                        let strict = !(lead == "0" && digits > 1) && digits < 19;
                        match (arrow_decode(&schema, &[bytes]), fast_decode(&schema, &[bytes])) {
                            (Ok(arrow), Some(fast)) => {
                                assert_eq!(fast, arrow, "{record}");
                                decodable += 1;
                            }
                            (Ok(_), None) => assert!(!strict, "the fast path bailed on {record}"),
                            (Err(_), fast) => assert!(fast.is_none(), "{record}"),
                        }
                    }
                    for bad_end in [".5}", "e3}", "E3}", "+}", "-}", "0}"] {
                        let record = format!("{{\"i64\":{sign}{number}{bad_end}");
                        if let Some(fast) = fast_decode(&schema, &[record.as_bytes()]) {
                            assert_eq!(fast, arrow_decode(&schema, &[record.as_bytes()]).unwrap(), "{record}");
                        }
                    }
                }
            }
        }
        assert!(decodable > 300, "{decodable}");
    }

    #[test]
    fn the_string_end_and_its_ascii_flag_match_a_byte_by_byte_scan_at_every_offset() {
        // Every start offset, end position and place of one non-ASCII byte over lengths that
        // cross the 8- and 16-byte steps; a non-ASCII byte after the end must not count.
        for len in 0..50 {
            for end in 0..=len {
                for terminator in [b'"', b'\\'] {
                    for non_ascii_at in (0..len).map(Some).chain([None]) {
                        let mut bytes = vec![b'a'; len];
                        if let Some(i) = non_ascii_at {
                            bytes[i] = 0xC3;
                        }
                        if end < len {
                            bytes[end] = terminator;
                        }
                        for from in 0..=end.min(len) {
                            let found = find_string_end(&bytes, from);
                            let expected = string_end_by_bytes(&bytes, from);
                            match (found, expected) {
                                (Some((at, flag)), Some((want, non_ascii))) => {
                                    assert_eq!(at, want, "{bytes:?} from {from}");
                                    assert_eq!(flag, non_ascii, "{bytes:?} from {from}: the ASCII flag");
                                }
                                (found, expected) => assert_eq!(found, expected, "{bytes:?} from {from}"),
                            }
                        }
                    }
                }
            }
        }
    }

    fn fast_decode(schema: &SchemaRef, records: &[&[u8]]) -> Option<RecordBatch> {
        FlatJsonDecoder::try_new(schema.clone()).expect("a flat schema").decode(records)
    }

    /// The fast path decodes `records` and gives exactly arrow-json's batch.
    fn assert_same(schema: &SchemaRef, records: &[&[u8]]) {
        let fast = fast_decode(schema, records).unwrap_or_else(|| panic!("fast path bailed on {:?}", lossy(records)));
        let arrow = arrow_decode(schema, records).unwrap();
        assert_eq!(fast.schema(), arrow.schema());
        for (i, field) in schema.fields().iter().enumerate() {
            assert_eq!(fast.column(i).to_data(), arrow.column(i).to_data(), "column {} of {:?}", field.name(), lossy(records));
        }
        assert_eq!(fast, arrow);
    }

    fn lossy(records: &[&[u8]]) -> Vec<String> {
        records.iter().map(|r| String::from_utf8_lossy(r).into_owned()).collect()
    }

    fn field(name: &str, data_type: DataType) -> Field {
        Field::new(name, data_type, true)
    }

    /// One nullable column of every supported type.
    fn wide_schema() -> SchemaRef {
        Arc::new(Schema::new(vec![
            field("i8", DataType::Int8),
            field("i16", DataType::Int16),
            field("i32", DataType::Int32),
            field("i64", DataType::Int64),
            field("u8", DataType::UInt8),
            field("u16", DataType::UInt16),
            field("u32", DataType::UInt32),
            field("u64", DataType::UInt64),
            field("f32", DataType::Float32),
            field("f64", DataType::Float64),
            field("b", DataType::Boolean),
            field("s", DataType::Utf8),
            field("ls", DataType::LargeUtf8),
            field("ts_s", DataType::Timestamp(TimeUnit::Second, None)),
            field("ts_ms", DataType::Timestamp(TimeUnit::Millisecond, None)),
            field("ts_us", DataType::Timestamp(TimeUnit::Microsecond, None)),
            field("ts_ns", DataType::Timestamp(TimeUnit::Nanosecond, None)),
        ]))
    }

    fn bid_schema() -> SchemaRef {
        NexmarkGenerator::schema(Entity::Bid)
    }

    /// Bid records as the Kafka sink writes them (arrow-json's encoder, ISO `T` timestamps).
    fn generated_bids(rows: usize) -> (Vec<u8>, Vec<i64>) {
        let mut generator = NexmarkGenerator::new(GeneratorConfig { entity: Entity::Bid, ..GeneratorConfig::default() });
        let options = EncodeOptions { format: EncodeFormat::Json, record_offsets: true, ..EncodeOptions::default() };
        let (mut slab, mut offsets) = (Vec::new(), vec![0i64]);
        while offsets.len() <= rows {
            let batch = generator.next_batch((rows + 1 - offsets.len()).min(8192)).unwrap();
            let encoded = encode_records(&batch, &options).unwrap();
            let base = slab.len() as i64;
            slab.extend_from_slice(&encoded.bytes);
            // Records without their newline, back to back with the newline as whitespace of the next.
            offsets.extend(encoded.offsets[1..].iter().map(|o| base + o));
        }
        (slab, offsets)
    }

    /// Bid records written by hand in the `2015-07-15 00:00:00.000` style.
    fn spaced_bids(rows: usize) -> Vec<Vec<u8>> {
        let mut generator = NexmarkGenerator::new(GeneratorConfig { entity: Entity::Bid, ..GeneratorConfig::default() });
        let batch = generator.next_batch(rows).unwrap();
        let int = |c: usize| batch.column(c).as_primitive::<Int64Type>().clone();
        let (auction, bidder, price) = (int(0), int(1), int(2));
        let text = |c: usize| batch.column(c).as_string::<i32>().clone();
        let (channel, url, extra) = (text(3), text(4), text(6));
        let times = batch.column(5).as_primitive::<TimestampMillisecondType>();
        (0..batch.num_rows())
            .map(|i| {
                let time = arrow::temporal_conversions::timestamp_ms_to_datetime(times.value(i)).unwrap();
                format!(
                    r#"{{"auction":{},"bidder":{},"price":{},"channel":"{}","url":"{}","dateTime":"{}","extra":"{}"}}"#,
                    auction.value(i),
                    bidder.value(i),
                    price.value(i),
                    channel.value(i),
                    url.value(i),
                    time.format("%Y-%m-%d %H:%M:%S%.3f"),
                    extra.value(i)
                )
                .into_bytes()
            })
            .collect()
    }

    #[test]
    fn generated_nexmark_bids_decode_as_arrow_json_does() {
        let (slab, offsets) = generated_bids(3000);
        let records = split_records(&slab, &offsets).unwrap();
        assert_same(&bid_schema(), &records);
        let spaced = spaced_bids(3000);
        let records: Vec<&[u8]> = spaced.iter().map(Vec::as_slice).collect();
        assert_same(&bid_schema(), &records);
    }

    #[test]
    fn the_brief_example_bid_decodes() {
        let record: &[u8] = br#"{"auction":1000,"bidder":1001,"price":2147,"channel":"Google","url":"https://www.nexmark.com/abc/def/item.htm?query=1","dateTime":"2015-07-15 00:00:00.000","extra":"xyz"}"#;
        assert_same(&bid_schema(), &[record]);
    }

    const EDGE_CASES: &[&str] = &[
        // Layout: whitespace everywhere, any order, nothing at all.
        " \t\r\n{ \n\"i64\" :\t1 ,\r\n \"s\" : \"a\" } \n ",
        r#"{"s":"b","ts_ms":"2015-07-15 00:00:00.000","i64":2,"b":true,"f64":0.5,"u8":7}"#,
        r#"{}"#,
        r#"{ }"#,
        // Unknown fields of every shape, also between known ones.
        r#"{"x":{"a":[1,2,{"b":"c\"d\u00e9\\"}],"e":null,"f":{}},"i64":3,"y":[[],{},"\\",true,false,null,-1.5e-3,0]}"#,
        r#"{"z":"\ud83d\ude00 \/ \b\f\n\r\t","s":"ok","w":-0.0E+12,"v":[{"k":[{"k":[[[]]]}]}],"I64":9}"#,
        r#"{"":1,"S":"case matters","s ":"so do spaces","i64":4}"#,
        // Explicit nulls in every column.
        r#"{"i8":null,"i16":null,"i32":null,"i64":null,"u8":null,"u16":null,"u32":null,"u64":null,"f32":null,"f64":null,"b":null,"s":null,"ls":null,"ts_s":null,"ts_ms":null,"ts_us":null,"ts_ns":null}"#,
        // Integer bounds.
        r#"{"i8":-128,"i16":-32768,"i32":-2147483648,"i64":-9223372036854775808,"u8":0,"u16":0,"u32":0,"u64":0}"#,
        r#"{"i8":127,"i16":32767,"i32":2147483647,"i64":9223372036854775807,"u8":255,"u16":65535,"u32":4294967295,"u64":18446744073709551615}"#,
        r#"{"i8":-0,"i16":-1,"i32":0,"i64":-0,"u8":1,"u16":10,"u32":100,"u64":1000}"#,
        // Floats.
        r#"{"f32":0.1,"f64":0.1}"#,
        r#"{"f32":-0.0,"f64":-0.0}"#,
        r#"{"f32":-0,"f64":-0}"#,
        r#"{"f32":1e5,"f64":1E+5}"#,
        r#"{"f32":1.5E-5,"f64":1.5e-5}"#,
        r#"{"f32":3.4028235e38,"f64":1.7976931348623157e308}"#,
        r#"{"f32":1e-45,"f64":5e-324}"#,
        r#"{"f32":1e-46,"f64":2e-324}"#,
        r#"{"f32":1e-400,"f64":-1e-400}"#,
        r#"{"f32":0e9999,"f64":0.0e-9999}"#,
        r#"{"f32":1e-9999,"f64":-1e-9999}"#,
        r#"{"f32":16777217,"f64":9007199254740993}"#,
        r#"{"f32":123456789012345678901234567890,"f64":123456789012345678901234567890}"#,
        r#"{"f32":0.30000000000000004,"f64":0.30000000000000004}"#,
        r#"{"f64":2.2250738585072011e-308}"#,
        r#"{"f64":2.2250738585072014e-308}"#,
        r#"{"f64":1.00000000000000011102230246251565404236316680908203125}"#,
        r#"{"f64":1.00000000000000011102230246251565404236316680908203124}"#,
        r#"{"f64":0.000000000000000000000000000000000000000000000000000000000000000000000000000000000001}"#,
        r#"{"f64":7.2057594037927933e16,"f32":7.038531e-26}"#,
        r#"{"f64":-12345.6789e-3,"f32":-12345.6789e-3}"#,
        // Booleans and strings.
        r#"{"b":true,"s":"","ls":""}"#,
        r#"{"b":false,"s":"é 中文 😀","ls":"naïve"}"#,
        r#"{"s":"\"\\\/\b\f\n\r\t\u0041\u00e9\u4e2d\ud83d\ude00\u0000","ls":"a\u00E9b\uD83D\uDE00c"}"#,
        "{\"s\":\"raw\ttab and \u{1} control\",\"ls\":\"x\"}",
        r#"{"i\u0036\u0034":5,"\u0073":"escaped names match"}"#,
        // Timestamps: date only, 0/1/3/6/9 fraction digits (none finer than the unit: those are
        // refused, see `a_fraction_finer_than_the_unit_is_refused_not_cut`), both separators, Z.
        r#"{"ts_s":"2015-07-15","ts_ms":"2015-07-15","ts_us":"2015-07-15","ts_ns":"2015-07-15"}"#,
        r#"{"ts_s":"2015-07-15 01:02:03","ts_ms":"2015-07-15T01:02:03","ts_us":"2015-07-15t01:02:03","ts_ns":"2015-07-15 01:02:03"}"#,
        r#"{"ts_s":"2015-07-15 01:02:03.0","ts_ms":"2015-07-15T01:02:03.5","ts_us":"2015-07-15 01:02:03.5","ts_ns":"2015-07-15 01:02:03.5"}"#,
        r#"{"ts_s":"2015-07-15 01:02:03.000","ts_ms":"2015-07-15 01:02:03.123","ts_us":"2015-07-15 01:02:03.123","ts_ns":"2015-07-15T01:02:03.123"}"#,
        r#"{"ts_s":"2015-07-15 01:02:03","ts_ms":"2015-07-15 01:02:03.123000","ts_us":"2015-07-15 01:02:03.123456","ts_ns":"2015-07-15 01:02:03.123456"}"#,
        r#"{"ts_s":"2015-07-15 01:02:03","ts_ms":"2015-07-15 01:02:03.123","ts_us":"2015-07-15 01:02:03.123456000","ts_ns":"2015-07-15 01:02:03.123456789"}"#,
        r#"{"ts_s":"2015-07-15 01:02:03.00","ts_ms":"2015-07-15 01:02:03.12","ts_us":"2015-07-15 01:02:03.12345","ts_ns":"2015-07-15 01:02:03.0000001"}"#,
        r#"{"ts_s":"2015-07-15T01:02:03Z","ts_ms":"2015-07-15T01:02:03.999z","ts_us":"2015-07-15 01:02:03.000001Z","ts_ns":"2015-07-15T23:59:59.999999999Z"}"#,
        // Days that change from record to record and back (the decoder caches the last date).
        r#"{"ts_s":"2015-07-16 00:00:00","ts_ms":"2015-07-15 00:00:00","ts_us":"2016-02-29T12:00:00","ts_ns":"2015-07-16"}"#,
        r#"{"ts_s":"2015-07-15 00:00:00","ts_ms":"2015-07-16 23:59:59","ts_us":"2016-03-01T12:00:00","ts_ns":"2015-07-15"}"#,
        // Integers on either side of the 18 digits read in one pass.
        r#"{"i64":999999999999999999,"u64":999999999999999999,"i32":-0,"i16":0}"#,
        r#"{"i64":-999999999999999999,"u64":1000000000000000000,"i32":-1,"i16":-10}"#,
        r#"{"i64":1000000000000000000,"u64":10000000000000000000}"#,
        r#"{"i64":-1000000000000000000}"#,
        r#"{"ts_s":"1969-12-31 23:59:59","ts_ms":"1969-12-31 23:59:59.999","ts_us":"1969-12-31T23:59:59.999999","ts_ns":"1969-12-31 23:59:59.999999999"}"#,
        r#"{"ts_s":"0000-01-01","ts_ms":"0000-02-29 12:00:00","ts_us":"0001-03-01 00:00:00.5","ts_ns":"1900-03-01"}"#,
        r#"{"ts_s":"9999-12-31 23:59:59","ts_ms":"9999-12-31 23:59:59.999","ts_us":"2000-02-29T12:34:56.789","ts_ns":"2262-04-11 23:47:16.854775807"}"#,
        r#"{"ts_s":"1600-02-29","ts_ms":"2100-02-28 00:00:00","ts_us":"1400-12-31 23:59:59","ts_ns":"1677-09-21T00:12:43.145224192"}"#,
        r#"{"ts_s":1700000000,"ts_ms":1700000000000,"ts_us":-1,"ts_ns":-9223372036854775808}"#,
        r#"{"ts_s":0,"ts_ms":-0,"ts_us":9223372036854775807,"ts_ns":1}"#,
    ];

    /// arrow-json cuts `01:02:03.5` to `01:02:03` in a seconds column: the fast path leaves such
    /// a record, and the value guard in front of arrow-json refuses it, as it does a leap second
    /// and a date column's value with a time of day (which arrow would move to UTC and cut).
    #[test]
    fn a_fraction_finer_than_the_unit_is_refused_not_cut() {
        let schema = wide_schema();
        let guard = ValueGuard::try_new(&schema).expect("guarded columns");
        for (record, why) in [
            (r#"{"ts_s":"2015-07-15 01:02:03.5"}"#, "finer than timestamp(s)"),
            (r#"{"ts_ms":"1969-12-31T23:59:59.9995"}"#, "finer than timestamp(ms)"),
            (r#"{"ts_us":"2015-07-15T01:02:03.1234567Z"}"#, "finer than timestamp(us)"),
            (r#"{"ts_ns":"2015-07-15T01:02:03.1234567891"}"#, "finer than timestamp(ns)"),
            (r#"{"ts_ms":"2024-01-01T23:59:60"}"#, "leap second"),
        ] {
            assert!(fast_decode(&schema, &[record.as_bytes()]).is_none(), "{record}");
            let error = guard.check(record.as_bytes()).expect_err(record);
            assert!(error.contains(why), "{record}: {error}");
        }
        let dated = Arc::new(Schema::new(vec![field("d", DataType::Date32), field("d64", DataType::Date64)]));
        let guard = ValueGuard::try_new(&dated).expect("guarded columns");
        assert_eq!(guard.check(br#"{"d":"2024-02-29","d64":"2024-02-29"}"#), Ok(()));
        for record in [r#"{"d":"2024-01-01T00:00:00+05:30"}"#, r#"{"d64":"2024-01-01 23:00:00"}"#] {
            let error = guard.check(record.as_bytes()).expect_err(record);
            assert!(error.contains("has a time of day, which a date column would drop"), "{record}: {error}");
        }
    }

    #[test]
    fn edge_cases_decode_as_arrow_json_does() {
        let schema = wide_schema();
        for case in EDGE_CASES {
            assert_same(&schema, &[case.as_bytes()]);
        }
        let all: Vec<&[u8]> = EDGE_CASES.iter().map(|c| c.as_bytes()).collect();
        assert_same(&schema, &all);
    }

    #[test]
    fn edge_cases_back_to_back_in_one_slab_decode_as_arrow_json_does() {
        // The records back to back in one slab, as `RecordDecoder` usually sees them.
        let slab: Vec<u8> = EDGE_CASES.concat().into_bytes();
        let mut offsets = vec![0i64];
        for case in EDGE_CASES {
            offsets.push(offsets.last().unwrap() + case.len() as i64);
        }
        let records = split_records(&slab, &offsets).unwrap();
        assert_same(&wide_schema(), &records);
    }

    const BAIL_CASES: &[&[u8]] = &[
        // Not exactly one object.
        b"",
        b"   ",
        b"[1]",
        b"1",
        b"null",
        br#""s""#,
        br#"{"i64":1}{"i64":2}"#,
        br#"{"i64":1} x"#,
        br#"{"i64":1"#,
        br#"{"i64":1,"#,
        // Syntax arrow-json tolerates but JSON does not.
        br#"{"i64":1,}"#,
        br#"{,"i64":1}"#,
        br#"{"i64":1 "s":"a"}"#,
        br#"{"i64":1,,"s":"a"}"#,
        br#"{'i64':1}"#,
        // A field twice.
        br#"{"i64":1,"i64":2}"#,
        br#"{"i64":1,"i\u0036\u0034":2}"#,
        br#"{"i16":1,"i8":2,"i16":3}"#,
        // Numbers outside the exact integer path.
        br#"{"i64":"1"}"#,
        br#"{"f64":"1.5"}"#,
        br#"{"i64":1.0}"#,
        br#"{"i64":1e2}"#,
        br#"{"i64":01}"#,
        br#"{"i64":-}"#,
        br#"{"i64":+1}"#,
        br#"{"i64":1-2}"#,
        br#"{"i64":9223372036854775808}"#,
        // Not a date, whatever the decoder cached before (ten NULs, unescaped and raw).
        br#"{"ts_ms":"\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000"}"#,
        b"{\"ts_ms\":\"\0\0\0\0\0\0\0\0\0\0\"}",
        br#"{"i64":-9223372036854775809}"#,
        br#"{"i64":99999999999999999999999}"#,
        br#"{"i8":128}"#,
        br#"{"i8":-129}"#,
        br#"{"u8":256}"#,
        br#"{"u8":-1}"#,
        br#"{"u64":-0}"#,
        br#"{"u64":18446744073709551616}"#,
        br#"{"f64":1e400}"#,
        br#"{"f64":-1e400}"#,
        br#"{"f32":1e39}"#,
        br#"{"f64":1e99999}"#,
        br#"{"f64":.5}"#,
        br#"{"f64":1.}"#,
        br#"{"f64":1.e5}"#,
        br#"{"f64":1e}"#,
        br#"{"f64":NaN}"#,
        br#"{"f64":Infinity}"#,
        br#"{"f64":true}"#,
        // Timestamps outside the naive forms.
        br#"{"ts_ms":"2015-07-15T00:00:00+01:00"}"#,
        br#"{"ts_ms":"2015-07-15 00:00:00 +01"}"#,
        br#"{"ts_ms":"2015-07-15 000000"}"#,
        br#"{"ts_ms":"2015-07-15 00:00:60"}"#,
        br#"{"ts_ms":"2015-07-15 24:00:00"}"#,
        br#"{"ts_ms":"2015-07-15 00:60:00"}"#,
        br#"{"ts_ms":"2015-02-29"}"#,
        br#"{"ts_ms":"2015-13-01"}"#,
        br#"{"ts_ms":"2015-00-01"}"#,
        br#"{"ts_ms":"2015-04-31"}"#,
        br#"{"ts_ms":"2015-07-00"}"#,
        br#"{"ts_ms":"2015-07-15 00:00:00.1234567890"}"#,
        br#"{"ts_ms":"2015-07-15 00:00:00."}"#,
        br#"{"ts_ms":"2015-07-15 00:00"}"#,
        br#"{"ts_ms":"2015-07-15Z"}"#,
        br#"{"ts_ms":"2015-07-15X00:00:00"}"#,
        br#"{"ts_ms":"2015-7-15"}"#,
        br#"{"ts_ms":"15-07-15"}"#,
        br#"{"ts_ms":" 2015-07-15"}"#,
        br#"{"ts_ms":"2015-07-15 00:00:00ZZ"}"#,
        br#"{"ts_ms":""}"#,
        br#"{"ts_ms":1.5}"#,
        br#"{"ts_ms":1e3}"#,
        br#"{"ts_ms":true}"#,
        br#"{"ts_ns":"2262-04-11 23:47:16.854775808"}"#,
        br#"{"ts_ns":"1677-09-21T00:12:43.145224191"}"#,
        br#"{"ts_ns":"9999-12-31"}"#,
        // Strings, booleans and nesting in the wrong places.
        br#"{"s":1}"#,
        br#"{"s":true}"#,
        br#"{"s":{"a":1}}"#,
        br#"{"s":[1]}"#,
        br#"{"b":1}"#,
        br#"{"b":"true"}"#,
        br#"{"b":True}"#,
        br#"{"i64":[1]}"#,
        br#"{"i64":{}}"#,
        br#"{"i64":nul}"#,
        br#"{"i64":nullx}"#,
        // Bad escapes and bad UTF-8, in known and unknown fields and in names.
        br#"{"s":"\x"}"#,
        br#"{"s":"\ud800"}"#,
        br#"{"s":"\ud800x"}"#,
        br#"{"s":"\udc00\ud800"}"#,
        br#"{"s":"\ud800\u0041"}"#,
        br#"{"s":"\u12"}"#,
        br#"{"s":"\u12g4"}"#,
        b"{\"s\":\"\xff\"}",
        b"{\"s\":\"\xc3\"}",
        b"{\"x\":\"\xff\",\"s\":\"a\"}",
        b"{\"\xff\":1}",
        br#"{"x":"\q","s":"a"}"#,
        br#"{"x":"\udfff"}"#,
        // Unknown fields arrow-json might take but strict JSON does not.
        br#"{"x":[1,,2]}"#,
        br#"{"x":[1,]}"#,
        br#"{"x":-}"#,
        br#"{"x":1.2.3}"#,
        br#"{"x":01}"#,
        br#"{"x":tru}"#,
        br#"{"x":{"a"}}"#,
        br#"{"x":{"a":1,}}"#,
        br#"{"x":{1:2}}"#,
        br#"{"x":[}"#,
        br#"{"x"}"#,
        br#"{"x":}"#,
    ];

    #[test]
    fn unsupported_records_bail_out() {
        let schema = wide_schema();
        let good: &[u8] = br#"{"i64":1,"s":"a"}"#;
        for case in BAIL_CASES {
            assert!(fast_decode(&schema, &[case]).is_none(), "accepted {:?}", String::from_utf8_lossy(case));
            // One bad record sends the whole batch to arrow-json.
            assert!(fast_decode(&schema, &[good, case, good]).is_none());
        }
    }

    /// The word-at-a-time string scan, with the interesting byte at every offset of strings
    /// shorter and longer than a word, in known and unknown fields.
    #[test]
    fn string_scanning_is_right_at_every_offset() {
        let schema = wide_schema();
        for len in 0..40 {
            for at in 0..=len {
                let (head, tail) = ("a".repeat(at), "b".repeat(len - at));
                for middle in ["", "é", "😀", "\\\"", "\\\\", "\\u00e9", "\\ud83d\\ude00", "\\n"] {
                    let known = format!(r#"{{"s":"{head}{middle}{tail}","ls":"{tail}{middle}"}}"#);
                    let unknown = format!(r#"{{"x":"{head}{middle}{tail}","{middle}":1,"s":"{head}"}}"#);
                    assert_same(&schema, &[known.as_bytes(), unknown.as_bytes()]);
                }
                for bad in [&b"\xff"[..], b"\xc3", b"\xed\xa0\x80", b"\\x", b"\\ud800"] {
                    for name in ["s", "x"] {
                        let record = [format!(r#"{{"{name}":"{head}"#).as_bytes(), bad, format!(r#"{tail}"}}"#).as_bytes()].concat();
                        assert!(fast_decode(&schema, &[&record]).is_none(), "accepted {record:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn deep_unknown_values_bail_out_and_shallow_ones_do_not() {
        let schema = wide_schema();
        let nested = |depth: usize| format!(r#"{{"x":{}1{},"i64":1}}"#, "[".repeat(depth), "]".repeat(depth)).into_bytes();
        assert_same(&schema, &[&nested(MAX_SKIP_DEPTH as usize)]);
        assert!(fast_decode(&schema, &[&nested(MAX_SKIP_DEPTH as usize + 1)]).is_none());
        assert!(arrow_decode(&schema, &[&nested(1000)]).is_ok());
    }

    #[test]
    fn non_nullable_fields_bail_when_missing_or_null() {
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false), field("name", DataType::Utf8)]));
        assert_same(&schema, &[br#"{"id":1}"#, br#"{"id":2,"name":null}"#]);
        for case in [&br#"{}"#[..], br#"{"id":null}"#, br#"{"name":"a"}"#] {
            assert!(fast_decode(&schema, &[case]).is_none());
        }
    }

    #[test]
    fn only_flat_schemas_of_supported_types_get_a_decoder() {
        let one = |data_type: DataType| Arc::new(Schema::new(vec![field("a", data_type)]));
        assert!(FlatJsonDecoder::try_new(one(DataType::Int64)).is_some());
        let unsupported = [
            DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
            DataType::Utf8View,
            DataType::Date32,
            DataType::Float16,
            DataType::Binary,
            DataType::Decimal128(10, 2),
            DataType::List(Arc::new(field("item", DataType::Int64))),
            DataType::Struct(vec![field("b", DataType::Int64)].into()),
        ];
        for data_type in unsupported {
            assert!(FlatJsonDecoder::try_new(one(data_type.clone())).is_none(), "{data_type}");
        }
        let twice = Arc::new(Schema::new(vec![field("a", DataType::Int64), field("a", DataType::Utf8)]));
        assert!(FlatJsonDecoder::try_new(twice).is_none());
        assert!(FlatJsonDecoder::try_new(Arc::new(Schema::empty())).is_none());
        assert!(fast_decode(&one(DataType::Int64), &[]).is_none());
    }

    /// `RecordDecoder` with the fast path gives what it gives without it: rows, error rows and
    /// the positions of the good records.
    fn assert_record_decoder_unchanged(schema: &SchemaRef, records: &[&[u8]]) {
        let decoder = RecordDecoder::new(&DecoderOptions::of(Format::Json, ","), Some(schema.clone())).unwrap();
        assert!(decoder.has_fast_path());
        let fast = decoder.decode(records).unwrap();
        let arrow = decoder.arrow_only().decode(records).unwrap();
        assert_eq!(fast.batch, arrow.batch, "{:?}", lossy(records));
        assert_eq!(fast.errors, arrow.errors, "{:?}", lossy(records));
        assert_eq!(fast.good, arrow.good, "{:?}", lossy(records));
    }

    #[test]
    fn record_decoder_results_are_unchanged_by_the_fast_path() {
        let schema = wide_schema();
        let good: &[u8] = br#"{"i64":1,"s":"a","ts_ms":"2015-07-15 00:00:00.000"}"#;
        for case in BAIL_CASES {
            assert_record_decoder_unchanged(&schema, &[good, case, good]);
            assert_record_decoder_unchanged(&schema, &[case]);
        }
        for case in EDGE_CASES {
            assert_record_decoder_unchanged(&schema, &[good, case.as_bytes()]);
        }
        let (slab, offsets) = generated_bids(500);
        let records = split_records(&slab, &offsets).unwrap();
        assert_record_decoder_unchanged(&bid_schema(), &records);
        let mut with_bad = records.clone();
        with_bad[7] = b"{oops";
        with_bad[9] = br#"{"auction":"x"}"#;
        assert_record_decoder_unchanged(&bid_schema(), &with_bad);
    }

    #[test]
    fn debezium_rows_take_the_fast_path_too() {
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false), field("name", DataType::Utf8)]));
        let decoder = RecordDecoder::new(&DecoderOptions::of(Format::Debezium, ","), Some(schema)).unwrap();
        assert!(decoder.has_fast_path());
        let records: Vec<&[u8]> =
            vec![br#"{"op":"c","after":{"id":1,"name":"a"}}"#, br#"{"op":"c","after":{"id":"bad"}}"#, br#"{"op":"d","before":{"id":3}}"#];
        let fast = decoder.decode(&records).unwrap();
        let arrow = decoder.arrow_only().decode(&records).unwrap();
        assert_eq!((fast.batch, fast.errors, fast.good), (arrow.batch, arrow.errors, arrow.good));
    }

    /// Decodes ~500k generated bids both ways and prints rows/s. Run with
    /// `cargo test --release -p sluice-core flat_json -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn timing_fast_path_against_arrow_json() {
        const ROWS: usize = 500_000;
        const BATCH: usize = 4096;
        let schema = bid_schema();
        let (slab, offsets) = generated_bids(ROWS);
        let records = split_records(&slab, &offsets).unwrap();
        let decoder = FlatJsonDecoder::try_new(schema.clone()).unwrap();
        let arrow_slab = |batch: &[&[u8]]| {
            // The whole-slab call `RecordDecoder::decode_all` makes.
            let start = batch[0].as_ptr() as usize - slab.as_ptr() as usize;
            let end = batch[batch.len() - 1].as_ptr_range().end as usize - slab.as_ptr() as usize;
            let mut d = arrow::json::ReaderBuilder::new(schema.clone()).with_batch_size(batch.len() + 1).build_decoder().unwrap();
            assert_eq!(d.decode(&slab[start..end]).unwrap(), end - start);
            d.flush().unwrap().unwrap()
        };
        for round in 0..3 {
            let started = std::time::Instant::now();
            let mut rows = 0;
            for batch in records.chunks(BATCH) {
                rows += decoder.decode(batch).unwrap().num_rows();
            }
            let fast = rows as f64 / started.elapsed().as_secs_f64();
            let started = std::time::Instant::now();
            let mut rows = 0;
            for batch in records.chunks(BATCH) {
                rows += arrow_slab(batch).num_rows();
            }
            let arrow = rows as f64 / started.elapsed().as_secs_f64();
            println!(
                "round {round}: fast path {fast:.0} rows/s, arrow-json {arrow:.0} rows/s, {:.2}x ({} bytes/record)",
                fast / arrow,
                slab.len() / ROWS
            );
        }
    }
}
