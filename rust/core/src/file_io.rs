//! File source and sink formats: JSON lines, CSV and Parquet, read and written in the core so
//! that the rows never become Java objects.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::compute::concat_batches;
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use parquet::arrow::ArrowWriter;
use serde::Deserialize;

use crate::decode::{error_schema, DecoderOptions, ErrorRows, Format, RecordDecoder};

/// The error of a blank line in the error rows of a read: skipped, not a malformed record
/// (the file source counts these as skipped).
pub const BLANK_LINE: &str = "blank line, skipped";

/// The file's schema with its top-level INT96 timestamps (Spark, Hive and Impala write them) as
/// microseconds, if it has any. parquet-rs reads INT96 as nanoseconds with wrapping arithmetic,
/// so a date past 2262 (Spark's `9999-12-31` "no end") became a date in 1816, silently;
/// microseconds hold years 1 to 9999 and beyond.
fn int96_as_micros(metadata: &ArrowReaderMetadata) -> Option<SchemaRef> {
    use arrow::datatypes::{DataType, TimeUnit};
    let int96: Vec<String> = metadata
        .parquet_schema()
        .columns()
        .iter()
        .filter(|column| column.physical_type() == parquet::basic::Type::INT96 && column.path().parts().len() == 1)
        .map(|column| column.path().parts()[0].clone())
        .collect();
    if int96.is_empty() {
        return None;
    }
    let fields: Vec<arrow::datatypes::Field> = metadata
        .schema()
        .fields()
        .iter()
        .map(|field| match field.data_type() {
            DataType::Timestamp(TimeUnit::Nanosecond, zone) if int96.contains(field.name()) => {
                field.as_ref().clone().with_data_type(DataType::Timestamp(TimeUnit::Microsecond, zone.clone()))
            }
            _ => field.as_ref().clone(),
        })
        .collect();
    Some(Arc::new(arrow::datatypes::Schema::new_with_metadata(fields, metadata.schema().metadata().clone())))
}

/// Schema metadata key of the reader's warnings.
pub const WARNINGS_KEY: &str = "sluice.warnings";
use crate::encode::{encode, EncodeFormat, EncodeOptions};
use crate::error::{CoreError, Result};

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum FileFormat {
    Json,
    Csv,
    Parquet,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReaderOptions {
    pub path: PathBuf,
    pub format: FileFormat,
    #[serde(default = "default_batch_size")]
    pub batch_size: usize,
    /// CSV: the first line names the columns.
    #[serde(default = "default_true")]
    pub header: bool,
    #[serde(default = "default_delimiter")]
    pub delimiter: String,
    /// Lines read to infer a schema when none is declared (JSON, CSV).
    #[serde(default = "default_infer_rows")]
    pub infer_rows: usize,
}

fn default_batch_size() -> usize {
    8192
}
fn default_true() -> bool {
    true
}
fn default_delimiter() -> String {
    ",".into()
}
fn default_infer_rows() -> usize {
    1000
}

/// The outcome of one read: decoded rows and the lines that failed (`line`, `record`, `error`).
pub struct ReadBatch {
    pub batch: RecordBatch,
    pub errors: Option<RecordBatch>,
}

pub enum FileReader {
    Lines(LineReader),
    Parquet { reader: ParquetRecordBatchReader, schema: SchemaRef, path: PathBuf },
}

impl FileReader {
    /// Opens a file. `schema` is the declared schema; None infers it (JSON, CSV) or takes the
    /// file's own (Parquet).
    pub fn open(options: ReaderOptions, schema: Option<SchemaRef>) -> Result<FileReader> {
        if options.batch_size == 0 {
            return Err(CoreError::config("batch_size must be positive"));
        }
        let path = options.path.clone();
        let file = File::open(&path).map_err(|e| CoreError::io(format!("cannot open {}: {e}", path.display())))?;
        match options.format {
            FileFormat::Parquet => {
                let cannot_read = |e: parquet::errors::ParquetError| CoreError::from(e).context(path.display());
                let metadata = ArrowReaderMetadata::load(&file, ArrowReaderOptions::new()).map_err(cannot_read)?;
                let metadata = match int96_as_micros(&metadata) {
                    // The footer already read, taken again with the hint.
                    Some(hint) => {
                        ArrowReaderMetadata::try_new(metadata.metadata().clone(), ArrowReaderOptions::new().with_schema(hint)).map_err(cannot_read)?
                    }
                    None => metadata,
                };
                let builder = ParquetRecordBatchReaderBuilder::new_with_metadata(file, metadata);
                let file_schema = builder.schema().clone();
                if let Some(declared) = schema {
                    if declared.fields() != file_schema.fields() {
                        return Err(CoreError::config(format!(
                            "{}: the declared schema differs from the Parquet file's ({file_schema})",
                            path.display()
                        )));
                    }
                }
                let reader = builder.with_batch_size(options.batch_size).build()?;
                Ok(FileReader::Parquet { reader, schema: file_schema, path })
            }
            FileFormat::Json | FileFormat::Csv => Ok(FileReader::Lines(LineReader::open(options, file, schema)?)),
        }
    }

    /// The rows' schema. Warnings (see [`FileReader::warnings`]) ride along in its metadata,
    /// key [`WARNINGS_KEY`], one per line, for the Java side to print.
    pub fn schema(&self) -> SchemaRef {
        match self {
            FileReader::Lines(r) if !r.warnings.is_empty() => {
                let metadata = std::collections::HashMap::from([(WARNINGS_KEY.to_string(), r.warnings.join("\n"))]);
                Arc::new(r.schema.as_ref().clone().with_metadata(metadata))
            }
            FileReader::Lines(r) => r.schema.clone(),
            FileReader::Parquet { schema, .. } => schema.clone(),
        }
    }

    /// What the reader noticed while opening, such as columns of mixed types read as strings.
    pub fn warnings(&self) -> &[String] {
        match self {
            FileReader::Lines(r) => &r.warnings,
            FileReader::Parquet { .. } => &[],
        }
    }

    /// The next batch, or None at the end of the file.
    pub fn next_batch(&mut self) -> Result<Option<ReadBatch>> {
        match self {
            FileReader::Lines(r) => r.next_batch(),
            FileReader::Parquet { reader, path, .. } => match reader.next() {
                None => Ok(None),
                Some(Ok(batch)) => Ok(Some(ReadBatch { batch, errors: None })),
                Some(Err(e)) => Err(CoreError::from(e).context(path.display())),
            },
        }
    }
}

/// JSON lines or CSV: reads up to `batch_size` non-blank records into one slab and decodes them
/// together, remembering each record's line number for dead letters. A JSON record is one line;
/// a CSV record runs on over line breaks inside quoted fields, as RFC 4180 allows. Blank lines
/// are skipped and reported with the errors (see [`BLANK_LINE`]).
pub struct LineReader {
    reader: BufReader<File>,
    decoder: RecordDecoder,
    /// The rows' schema: the decoder's, or the declared columns picked from it by `projection`.
    schema: SchemaRef,
    /// CSV whose header has the declared columns in another order, or more columns: where each
    /// declared column is among the file's.
    projection: Option<Vec<usize>>,
    /// CSV: the delimiter, for finding where a record ends.
    csv_delimiter: Option<u8>,
    /// Only empty lines are blank (a CSV file of one column), not lines of spaces too.
    blank_only_if_empty: bool,
    context: String,
    batch_size: usize,
    next_line: i64,
    slab: Vec<u8>,
    ends: Vec<usize>,
    lines: Vec<i64>,
    warnings: Vec<String>,
}

impl LineReader {
    fn open(options: ReaderOptions, file: File, schema: Option<SchemaRef>) -> Result<LineReader> {
        let mut reader = BufReader::with_capacity(1 << 20, file);
        skip_byte_order_mark(&mut reader)?;
        let format = if options.format == FileFormat::Csv { Format::Csv } else { Format::Json };
        let delimiter = options.delimiter.as_bytes().first().copied().unwrap_or(b',');
        let context = options.path.display().to_string();
        let mut warnings = Vec::new();
        let mut text_coercion = false;
        let declared = schema.is_some();
        let schema = match schema {
            Some(schema) => schema,
            None => {
                let cannot =
                    |e: String| CoreError::data(format!("cannot infer a schema from the first {} lines: {e}", options.infer_rows)).context(&context);
                let inferred = match format {
                    Format::Json => {
                        let (schema, mixed) = infer_json_schema(&mut reader, options.infer_rows).map_err(|e| cannot(e.message))?;
                        text_coercion = !mixed.is_empty();
                        warnings = mixed.into_iter().map(|w| format!("{context}: {w}")).collect();
                        schema
                    }
                    Format::Raw | Format::Debezium | Format::Avro => unreachable!("files are read as json or csv"),
                    Format::Csv => {
                        let (schema, _) = arrow::csv::reader::Format::default()
                            .with_header(options.header)
                            .with_delimiter(delimiter)
                            .infer_schema(&mut reader, Some(options.infer_rows))
                            .map_err(|e| cannot(e.to_string()))?;
                        // Two columns of one name would be two keys of one name in a JSON row,
                        // of which readers keep one.
                        let names: Vec<&String> = schema.fields().iter().map(|f| f.name()).collect();
                        if let Some(twice) = names.iter().enumerate().find(|(i, n)| names[..*i].contains(n)).map(|(_, n)| n) {
                            return Err(CoreError::config(format!(
                                "{context}:1: the CSV header names the column '{twice}' twice; rename one in the file, or declare the \
                                 schema (its columns are matched to the header by name)"
                            )));
                        }
                        let (schema, inexact) = exact_csv_floats(&mut reader, schema, &options, delimiter).map_err(|e| cannot(e.message))?;
                        warnings = inexact.into_iter().map(|w| format!("{context}: {w}")).collect();
                        schema
                    }
                };
                reader.seek(SeekFrom::Start(0))?;
                skip_byte_order_mark(&mut reader)?;
                Arc::new(inferred)
            }
        };
        let csv_delimiter = (format == Format::Csv).then_some(delimiter);
        let mut next_line = 1;
        let (mut file_schema, mut projection) = (schema.clone(), None);
        if let (Some(delimiter), true) = (csv_delimiter, options.header) {
            let mut header = Vec::new();
            next_line += read_csv_record(&mut reader, &mut header, delimiter, &context, 1)?;
            check_header_line(&header, delimiter, &context)?;
            // An empty file has no header to match, and no rows.
            if declared && !header.is_empty() {
                let columns = columns_by_header(&schema, &header, delimiter, &context)?;
                (file_schema, projection) = (columns.file_schema, columns.projection);
                warnings.extend(columns.warning);
            }
        }
        // In a CSV file of one column a line of spaces is that column's value, not a blank line.
        let blank_only_if_empty = csv_delimiter.is_some() && file_schema.fields().len() == 1;
        let mut decoder = RecordDecoder::new(&DecoderOptions::of(format, &options.delimiter), Some(file_schema))?;
        if text_coercion {
            decoder = decoder.with_text_coercion();
        }
        Ok(LineReader {
            reader,
            decoder,
            schema,
            projection,
            csv_delimiter,
            blank_only_if_empty,
            context,
            batch_size: options.batch_size,
            next_line,
            slab: Vec::new(),
            ends: Vec::new(),
            lines: Vec::new(),
            warnings,
        })
    }

    fn next_batch(&mut self) -> Result<Option<ReadBatch>> {
        self.slab.clear();
        self.ends.clear();
        self.lines.clear();
        // Blank lines count towards the batch too, so a run of them cannot grow it without end.
        let mut blank = ErrorRows::default();
        let mut blank_lines = 0;
        while self.ends.len() + blank_lines < self.batch_size {
            let start = self.slab.len();
            let line = self.next_line;
            let lines = match self.csv_delimiter {
                Some(delimiter) => read_csv_record(&mut self.reader, &mut self.slab, delimiter, &self.context, line)?,
                None => i64::from(self.reader.read_until(b'\n', &mut self.slab)? > 0),
            };
            if lines == 0 {
                break;
            }
            self.next_line += lines;
            let content = &self.slab[start..];
            let is_blank = if self.blank_only_if_empty {
                content.iter().all(|b| matches!(b, b'\n' | b'\r'))
            } else {
                content.iter().all(u8::is_ascii_whitespace)
            };
            if is_blank {
                blank.push(line as usize, content, BLANK_LINE);
                blank_lines += 1;
                self.slab.truncate(start);
                continue;
            }
            // Drop the line terminator; records are separated by the decoder itself.
            let mut end = self.slab.len();
            while end > start && matches!(self.slab[end - 1], b'\n' | b'\r') {
                end -= 1;
            }
            self.slab.truncate(end);
            self.ends.push(end);
            self.lines.push(line);
        }
        if self.ends.is_empty() {
            if blank.is_empty() {
                return Ok(None);
            }
            let errors = blank.finish("line")?;
            return Ok(Some(ReadBatch { batch: RecordBatch::new_empty(self.schema.clone()), errors }));
        }
        let mut records = Vec::with_capacity(self.ends.len());
        let mut start = 0;
        for &end in &self.ends {
            records.push(&self.slab[start..end]);
            start = end;
        }
        let decoded = self.decoder.decode(&records)?;
        let errors = match decoded.errors {
            Some(errors) => merge_by_line(renumber_to_lines(errors, &self.lines)?, blank)?,
            None => blank.finish("line")?,
        };
        let batch = match &self.projection {
            None => decoded.batch,
            Some(projection) => {
                let columns = projection.iter().map(|&i| decoded.batch.column(i).clone()).collect();
                let options = arrow::array::RecordBatchOptions::new().with_row_count(Some(decoded.batch.num_rows()));
                RecordBatch::try_new_with_options(self.schema.clone(), columns, &options)?
            }
        };
        Ok(Some(ReadBatch { batch, errors }))
    }
}

/// A UTF-8 byte order mark at the start of a file is not part of its first line.
fn skip_byte_order_mark(reader: &mut BufReader<File>) -> Result<()> {
    if reader.fill_buf()?.starts_with(b"\xEF\xBB\xBF") {
        reader.consume(3);
    }
    Ok(())
}

/// `schema`, inferred by arrow from the first lines, with each float column that holds an
/// integer a double cannot hold exactly (arrow infers a float for integers mixed with
/// fractions: 9007199254740993 became 9007199254740992) read as a string instead, and a
/// warning naming each, as JSON inference does.
fn exact_csv_floats(reader: &mut BufReader<File>, schema: Schema, options: &ReaderOptions, delimiter: u8) -> Result<(Schema, Vec<String>)> {
    use arrow::array::AsArray;
    let floats: Vec<usize> = (0..schema.fields().len()).filter(|&i| schema.field(i).data_type() == &DataType::Float64).collect();
    if floats.is_empty() {
        return Ok((schema, Vec::new()));
    }
    reader.seek(SeekFrom::Start(0))?;
    skip_byte_order_mark(reader)?;
    let as_text = Schema::new(schema.fields().iter().map(|f| Field::new(f.name(), DataType::Utf8, true)).collect::<Vec<_>>());
    let sample = arrow::csv::ReaderBuilder::new(Arc::new(as_text))
        .with_header(options.header)
        .with_delimiter(delimiter)
        .with_batch_size(options.infer_rows.max(1))
        .build_buffered(reader)?
        .next()
        .transpose()?;
    let (mut fields, mut warnings) = (schema.fields().iter().map(|f| f.as_ref().clone()).collect::<Vec<_>>(), Vec::new());
    for i in floats {
        let values = sample.as_ref().map(|batch| batch.column(i).as_string::<i32>().iter().flatten().collect::<Vec<_>>()).unwrap_or_default();
        if let Some(value) = values.into_iter().find(|v| crate::decode::integer_beyond_a_double(v.as_bytes())) {
            let name = fields[i].name().clone();
            warnings.push(format!(
                "column '{name}' holds integers a double cannot hold exactly ({value}); it is read as a string, declare its type \
                 (bigint, decimal(38,0)) to read it otherwise"
            ));
            fields[i] = Field::new(&name, DataType::Utf8, true);
        }
    }
    Ok((Schema::new_with_metadata(fields, schema.metadata().clone()), warnings))
}

/// A quoted CSV field may hold line breaks, but one still open after this many bytes is taken
/// for an unbalanced quote: the read fails rather than hold the rest of the file as one record.
const MAX_CSV_RECORD_BYTES: usize = 16 << 20;

/// Appends one CSV record to `slab`, its line terminator included: its first line, and the
/// next ones while a quoted field is open. Returns the lines it spans, 0 at the end of the file.
/// A record still open at the end of the file is returned as it is, for the decoder to refuse.
fn read_csv_record(reader: &mut impl BufRead, slab: &mut Vec<u8>, delimiter: u8, context: &str, first_line: i64) -> Result<i64> {
    let start = slab.len();
    let mut quoted = false;
    let mut lines = 0;
    loop {
        let line_start = slab.len();
        if reader.read_until(b'\n', slab)? == 0 {
            return Ok(lines);
        }
        lines += 1;
        let content_end = slab.len() - usize::from(slab.last() == Some(&b'\n'));
        (quoted, _) = crate::decode::scan_csv(&slab[line_start..content_end], delimiter, quoted);
        if !quoted {
            return Ok(lines);
        }
        if slab.len() - start > MAX_CSV_RECORD_BYTES {
            return Err(CoreError::data(format!(
                "{context}:{first_line}: a quoted field opened on this line is still open {lines} lines and {} MiB later: \
                 an unbalanced quote? (a quoted field may hold line breaks, up to {} MiB)",
                (slab.len() - start) >> 20,
                MAX_CSV_RECORD_BYTES >> 20
            )));
        }
    }
}

/// Refuses a CSV header record that would take rows with it: one whose quote is never closed
/// (the whole file read as the header), or one holding a bare carriage return — lines ending in
/// `\r` alone (classic Mac, Excel's "CSV (Macintosh)") make the header the whole file, or its
/// first rows, and those rows were lost without a word.
fn check_header_line(header: &[u8], delimiter: u8, context: &str) -> Result<()> {
    let text = header.strip_suffix(b"\n").unwrap_or(header);
    let text = text.strip_suffix(b"\r").unwrap_or(text);
    if crate::decode::scan_csv(text, delimiter, false).0 {
        return Err(CoreError::data(format!(
            "{context}:1: the CSV header opens a quoted field that is never closed: every line after it would be read as the header"
        )));
    }
    // A carriage return inside a quoted name is part of the name, as a line feed there is.
    let mut quoted = false;
    let bare_return = text.iter().any(|&b| {
        if b == b'"' {
            quoted = !quoted;
        }
        b == b'\r' && !quoted
    });
    if bare_return {
        return Err(CoreError::data(format!(
            "{context}:1: the CSV header line holds a carriage return (\\r) that does not end it: the file's lines end in \\r \
             alone (or mix line ends), which Sluice does not read as line breaks, so rows would be read as the header; convert \
             its line ends to \\n or \\r\\n"
        )));
    }
    Ok(())
}

/// A declared schema matched to a CSV file's header.
struct HeaderColumns {
    /// The file's columns in its order: the declared type where declared, text elsewhere.
    file_schema: SchemaRef,
    /// Where each declared column is among the file's; None when they are the file's, in order.
    projection: Option<Vec<usize>>,
    /// Names the columns the header has and the schema does not declare (not read).
    warning: Option<String>,
}

/// Matches the declared columns to the header's by name — exactly, else ignoring ASCII case and
/// surrounding spaces when that picks one — so that a header in another order cannot put values
/// under the wrong column.
fn columns_by_header(declared: &SchemaRef, header: &[u8], delimiter: u8, context: &str) -> Result<HeaderColumns> {
    let names: Vec<String> = arrow::csv::reader::Format::default()
        .with_header(true)
        .with_delimiter(delimiter)
        .infer_schema(header, Some(0))
        .map_err(|e| CoreError::data(format!("{context}:1: cannot read the CSV header: {e}")))?
        .0
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let listed = || names.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(", ");
    let mut projection = Vec::with_capacity(declared.fields().len());
    for field in declared.fields() {
        let wanted = field.name();
        let exact: Vec<usize> = (0..names.len()).filter(|&i| &names[i] == wanted).collect();
        let candidates =
            if exact.is_empty() { (0..names.len()).filter(|&i| names[i].trim().eq_ignore_ascii_case(wanted.trim())).collect() } else { exact };
        match candidates[..] {
            [at] if !projection.contains(&at) => projection.push(at),
            [at] => {
                return Err(CoreError::config(format!(
                    "{context}:1: the CSV header's column '{}' matches two declared columns; the header has {}",
                    names[at],
                    listed()
                )))
            }
            [] => {
                return Err(CoreError::config(format!(
                    "{context}:1: the CSV header has no column '{wanted}' (it has {}): declare the columns by the header's \
                     names (rename them in SQL), or set header: false if the file has no header line",
                    listed()
                )))
            }
            _ => return Err(CoreError::config(format!("{context}:1: the CSV header names the column '{wanted}' twice (it has {})", listed()))),
        }
    }
    let in_order = projection.len() == names.len() && projection.iter().enumerate().all(|(i, &at)| i == at);
    if in_order {
        return Ok(HeaderColumns { file_schema: declared.clone(), projection: None, warning: None });
    }
    let fields: Vec<Field> = (0..names.len())
        .map(|i| match projection.iter().position(|&at| at == i) {
            Some(d) => declared.field(d).clone(),
            None => Field::new(names[i].clone(), DataType::Utf8, true),
        })
        .collect();
    let unread: Vec<String> = (0..names.len()).filter(|i| !projection.contains(i)).map(|i| format!("'{}'", names[i])).collect();
    let warning = (!unread.is_empty())
        .then(|| format!("{context}: the CSV header's columns {} are not in the declared schema and are not read", unread.join(", ")));
    Ok(HeaderColumns { file_schema: Arc::new(Schema::new(fields)), projection: Some(projection), warning })
}

/// Infers a schema from the first `rows` lines that are JSON objects; malformed lines are
/// left out here (they are reported when the file is read). Also returns warnings on columns
/// of mixed types.
fn infer_json_schema(reader: &mut BufReader<File>, rows: usize) -> Result<(arrow::datatypes::Schema, Vec<String>)> {
    let mut lines = Vec::new();
    let mut line = Vec::new();
    while lines.len() < rows {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        if !line.iter().all(u8::is_ascii_whitespace) {
            lines.push(line.clone());
        }
    }
    let records: Vec<&[u8]> = lines.iter().map(Vec::as_slice).collect();
    crate::decode::infer_json_schema_widening(&records)
}

/// The decoder's error rows and the blank lines of one read, in line order.
fn merge_by_line(errors: RecordBatch, blank: ErrorRows) -> Result<Option<RecordBatch>> {
    let Some(blank) = blank.finish("line")? else { return Ok(Some(errors)) };
    let both = concat_batches(&error_schema("line"), &[errors, blank])?;
    let order = arrow::compute::sort_to_indices(both.column(0), None, None)?;
    Ok(Some(arrow::compute::take_record_batch(&both, &order)?))
}

/// Turns the decoder's record indexes into file line numbers.
fn renumber_to_lines(errors: RecordBatch, lines: &[i64]) -> Result<RecordBatch> {
    use arrow::array::{Array, AsArray};
    let index = errors.column(0).as_primitive::<arrow::datatypes::Int64Type>();
    let records = errors.column(1).as_binary::<i32>();
    let messages = errors.column(2).as_string::<i32>();
    let mut rows = ErrorRows::default();
    for i in 0..errors.num_rows() {
        rows.push(lines[index.value(i) as usize] as usize, records.value(i), messages.value(i));
    }
    debug_assert!(index.null_count() == 0);
    Ok(rows.finish("line")?.unwrap_or_else(|| RecordBatch::new_empty(error_schema("line"))))
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriterOptions {
    pub path: PathBuf,
    pub format: FileFormat,
    /// CSV: write a header line.
    #[serde(default = "default_true")]
    pub header: bool,
    /// Continue the file of an earlier run instead of replacing it: cut it back to this length
    /// (what that run's last finalized checkpoint had made durable) and append after it. Not
    /// for Parquet (unless 0: nothing was written), whose footer is written once.
    #[serde(default)]
    pub continue_at: Option<u64>,
}

/// Writes batches to one file. JSON lines and CSV are created at open (an empty run leaves an
/// empty file); Parquet replaces an earlier file at open and is created with the first batch,
/// whose schema it takes (a run without rows writes one batch of none, see the file sink).
pub struct FileWriter {
    options: WriterOptions,
    sink: WriterSink,
}

// One per writer: boxing the larger variant would add an indirection for no memory worth saving.
#[allow(clippy::large_enum_variant)]
enum WriterSink {
    /// `continued_header`: the CSV header of the file a resumed run continues, until the first
    /// batch has been checked against it.
    Lines {
        out: BufWriter<File>,
        wrote_header: bool,
        continued_header: Option<Vec<u8>>,
    },
    Parquet(Option<ArrowWriter<File>>),
    Finished,
}

impl FileWriter {
    pub fn open(options: WriterOptions) -> Result<FileWriter> {
        if options.continue_at.is_some_and(|length| length > 0) && options.format == FileFormat::Parquet {
            return Err(CoreError::config(format!(
                "{}: a Parquet file cannot be continued by a resumed run (its footer is written once, at the end), \
                 and replacing it would lose the rows written before the checkpoint; point `path` at a new \
                 file to go on there, and from a source that resumes write Parquet as part files (`parts: true`, \
                 `path` a directory), one completed at each checkpoint",
                options.path.display()
            )));
        }
        let sink = match options.format {
            FileFormat::Parquet => {
                // The file is created with the first batch; an earlier run's file goes now, so
                // that a run that writes nothing (or fails first) never leaves its rows behind.
                match std::fs::remove_file(&options.path) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        return Err(CoreError::io(format!("cannot replace {}: {e}", options.path.display())));
                    }
                    _ => {}
                }
                WriterSink::Parquet(None)
            }
            FileFormat::Json | FileFormat::Csv => {
                // Nothing durable yet (a checkpoint before the first row): the same as a new file.
                let (file, wrote_header) = match options.continue_at {
                    Some(length) if length > 0 => (continue_at(&options.path, length)?, true),
                    _ => (create(&options.path)?, false),
                };
                let continued_header = match wrote_header && options.format == FileFormat::Csv && options.header {
                    true => Some(first_csv_record(&options.path)?),
                    false => None,
                };
                WriterSink::Lines { out: BufWriter::with_capacity(1 << 20, file), wrote_header, continued_header }
            }
        };
        Ok(FileWriter { options, sink })
    }

    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let context = self.options.path.display().to_string();
        match &mut self.sink {
            WriterSink::Lines { out, wrote_header, continued_header } => {
                let format = if self.options.format == FileFormat::Csv { EncodeFormat::Csv } else { EncodeFormat::Json };
                // A resumed run's columns must be the ones the file's header names, in its order:
                // rows of other columns appended under it are read under the wrong names.
                if let Some(found) = continued_header.take() {
                    let wanted = encode(&batch.slice(0, 0), &EncodeOptions { format, header: true, ..EncodeOptions::default() })?;
                    if found != wanted {
                        let text = |b: &[u8]| String::from_utf8_lossy(b).trim_end().to_string();
                        return Err(CoreError::config(format!(
                            "{context}: a resumed run would append rows of the columns `{}` under the file's CSV header `{}`; \
                             point `path` at a new file to go on there, or give the query the file's columns again",
                            text(&wanted),
                            text(&found)
                        )));
                    }
                }
                let header = format == EncodeFormat::Csv && self.options.header && !*wrote_header;
                let bytes = encode(batch, &EncodeOptions { format, header, ..EncodeOptions::default() })?;
                out.write_all(&bytes).map_err(|e| CoreError::io(format!("writing {context}: {e}")))?;
                *wrote_header = true;
            }
            WriterSink::Parquet(writer) => {
                let batch = parquet_types(batch)?;
                if writer.is_none() {
                    *writer = Some(ArrowWriter::try_new(create(&self.options.path)?, batch.schema(), None)?);
                }
                writer.as_mut().expect("created above").write(&batch).map_err(|e| CoreError::from(e).context(&context))?;
            }
            WriterSink::Finished => return Err(CoreError::invalid(format!("{context}: write after finish"))),
        }
        Ok(())
    }

    /// Makes everything written so far durable (JSON lines, CSV). Parquet closes its current
    /// row group; the file becomes readable only at finish, when the footer is written.
    pub fn flush(&mut self) -> Result<()> {
        match &mut self.sink {
            WriterSink::Lines { out, .. } => {
                out.flush()?;
                out.get_ref().sync_data()?;
            }
            WriterSink::Parquet(Some(writer)) => writer.flush()?,
            WriterSink::Parquet(None) | WriterSink::Finished => {}
        }
        Ok(())
    }

    /// Completes the file (Parquet footer) and syncs it. Idempotent.
    pub fn finish(&mut self) -> Result<()> {
        match std::mem::replace(&mut self.sink, WriterSink::Finished) {
            WriterSink::Lines { mut out, .. } => {
                out.flush()?;
                out.get_ref().sync_all()?;
            }
            WriterSink::Parquet(Some(writer)) => {
                let file = writer.into_inner()?;
                file.sync_all()?;
            }
            WriterSink::Parquet(None) | WriterSink::Finished => {}
        }
        Ok(())
    }
}

/// `batch` with the columns Parquet has no type for in a type it has, exactly: timestamps in
/// seconds as milliseconds and Date64 as Date32 (days). arrow-rs writes a seconds timestamp as a
/// bare INT64, which other readers (pyarrow, Spark, DuckDB) take for an integer; only arrow-rs
/// reads its own schema back from the file's metadata.
fn parquet_types(batch: &RecordBatch) -> Result<RecordBatch> {
    let target = |t: &DataType| match t {
        DataType::Timestamp(arrow::datatypes::TimeUnit::Second, zone) => {
            Some(DataType::Timestamp(arrow::datatypes::TimeUnit::Millisecond, zone.clone()))
        }
        DataType::Date64 => Some(DataType::Date32),
        _ => None,
    };
    if !batch.schema().fields().iter().any(|f| target(f.data_type()).is_some()) {
        return Ok(batch.clone());
    }
    let mut fields = Vec::with_capacity(batch.num_columns());
    let mut columns = Vec::with_capacity(batch.num_columns());
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        match target(field.data_type()) {
            Some(to) => {
                // Seconds to milliseconds can overflow only past year 292 million; Date64 holds
                // whole days.
                let options = arrow::compute::CastOptions { safe: false, ..Default::default() };
                columns.push(arrow::compute::cast_with_options(column, &to, &options)?);
                fields.push(field.as_ref().clone().with_data_type(to));
            }
            None => {
                columns.push(column.clone());
                fields.push(field.as_ref().clone());
            }
        }
    }
    Ok(RecordBatch::try_new(Arc::new(Schema::new_with_metadata(fields, batch.schema().metadata().clone())), columns)?)
}

/// The first record of a CSV file (its header), line end included.
fn first_csv_record(path: &Path) -> Result<Vec<u8>> {
    let file = File::open(path).map_err(|e| CoreError::io(format!("cannot read the header of {}: {e}", path.display())))?;
    let mut header = Vec::new();
    read_csv_record(&mut BufReader::new(file), &mut header, b',', &path.display().to_string(), 1)?;
    Ok(header)
}

/// Opens the file an earlier run wrote, cut back to `length` bytes, for appending. A file shorter
/// than that lost what the checkpoint counted on: refused rather than continued with a gap.
fn continue_at(path: &Path, length: u64) -> Result<File> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| CoreError::io(format!("cannot continue {} from the last checkpoint: {e}", path.display())))?;
    let found = file.metadata()?.len();
    if found < length {
        return Err(CoreError::io(format!(
            "cannot continue {} from the last checkpoint: it holds {found} bytes, but the checkpoint made {length} durable \
             (was it changed outside Sluice?); restore it, or point `path` at a new file to go on there",
            path.display()
        )));
    }
    file.set_len(length)?;
    file.seek(SeekFrom::End(0))?;
    Ok(file)
}

fn create(path: &Path) -> Result<File> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| CoreError::io(format!("cannot create directory {}: {e}", parent.display())))?;
    }
    File::create(path).map_err(|e| CoreError::io(format!("cannot create {}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Array, AsArray};

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("sluice-file-io-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    fn options_of(path: &Path) -> ReaderOptions {
        options(path, FileFormat::Csv, 10)
    }

    fn options(path: &Path, format: FileFormat, batch_size: usize) -> ReaderOptions {
        ReaderOptions { path: path.into(), format, batch_size, header: true, delimiter: ",".into(), infer_rows: 100 }
    }

    #[test]
    fn json_lines_with_bad_lines_report_line_numbers() {
        let path = temp("in.jsonl");
        std::fs::write(&path, "{\"a\":1}\n\n{\"a\":2}\nnot json\n{\"a\":4}\n").unwrap();
        let mut reader = FileReader::open(options(&path, FileFormat::Json, 10), None).unwrap();
        let read = reader.next_batch().unwrap().unwrap();
        assert_eq!(read.batch.num_rows(), 3);
        let errors = read.errors.unwrap();
        assert_eq!(errors.column(0).as_primitive::<arrow::datatypes::Int64Type>().values().to_vec(), vec![2, 4]);
        assert_eq!(errors.column(2).as_string::<i32>().value(0), BLANK_LINE);
        assert_eq!(errors.column(1).as_binary::<i32>().value(1), b"not json");
        assert!(reader.next_batch().unwrap().is_none());
    }

    #[test]
    fn csv_with_header_round_trips_through_parquet() {
        let csv = temp("in.csv");
        std::fs::write(&csv, "id,name\n1,a\n2,b\n3,c\n").unwrap();
        let mut reader = FileReader::open(options(&csv, FileFormat::Csv, 2), None).unwrap();
        let parquet = temp("out.parquet");
        let mut writer =
            FileWriter::open(WriterOptions { path: parquet.clone(), format: FileFormat::Parquet, header: true, continue_at: None }).unwrap();
        let mut batches = 0;
        while let Some(read) = reader.next_batch().unwrap() {
            assert!(read.errors.is_none());
            writer.write(&read.batch).unwrap();
            batches += 1;
        }
        assert_eq!(batches, 2);
        writer.finish().unwrap();
        let mut back = FileReader::open(options(&parquet, FileFormat::Parquet, 100), None).unwrap();
        let batch = back.next_batch().unwrap().unwrap().batch;
        assert_eq!(batch.num_rows(), 3);
        assert_eq!(batch.column(1).as_string::<i32>().value(2), "c");
        assert_eq!(batch.column(1).null_count(), 0);
    }

    /// A resumed run continues the file from its checkpoint: what came after (written by the run
    /// that crashed, replayed now) is cut off, the CSV header is not written twice, and a file
    /// shorter than the checkpoint or a Parquet file is refused.
    #[test]
    fn a_resumed_run_continues_the_file_from_its_checkpoint() {
        let ids = |values: Vec<i64>| {
            let schema = Arc::new(arrow::datatypes::Schema::new(vec![arrow::datatypes::Field::new("id", arrow::datatypes::DataType::Int64, true)]));
            RecordBatch::try_new(schema, vec![Arc::new(arrow::array::Int64Array::from(values))]).unwrap()
        };
        let path = temp("continued.csv");
        let open =
            |continue_at: Option<u64>, format: FileFormat| FileWriter::open(WriterOptions { path: path.clone(), format, header: true, continue_at });
        let mut first = open(None, FileFormat::Csv).unwrap();
        first.write(&ids(vec![1, 2])).unwrap();
        first.flush().unwrap();
        let checkpoint = std::fs::metadata(&path).unwrap().len();
        first.write(&ids(vec![3])).unwrap();
        first.finish().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "id\n1\n2\n3\n");

        let mut resumed = open(Some(checkpoint), FileFormat::Csv).unwrap();
        resumed.write(&ids(vec![3, 4])).unwrap();
        resumed.finish().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "id\n1\n2\n3\n4\n");
        // Rows of other columns under the file's header would be read under the wrong names.
        let length = std::fs::metadata(&path).unwrap().len();
        let mut other = open(Some(length), FileFormat::Csv).unwrap();
        let renamed = RecordBatch::try_new(
            Arc::new(Schema::new(vec![Field::new("label", DataType::Int64, true)])),
            vec![Arc::new(arrow::array::Int64Array::from(vec![5]))],
        )
        .unwrap();
        let err = other.write(&renamed).expect_err("other columns are refused");
        assert!(err.message.contains("append rows of the columns `label` under the file's CSV header `id`"), "{}", err.message);
        drop(other);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "id\n1\n2\n3\n4\n");

        let too_long = std::fs::metadata(&path).unwrap().len() + 1;
        let shorter = open(Some(too_long), FileFormat::Csv).err().expect("a file shorter than its checkpoint is refused");
        assert!(
            shorter.message.contains(&format!("it holds {} bytes, but the checkpoint made {too_long} durable", too_long - 1)),
            "{}",
            shorter.message
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "id\n1\n2\n3\n4\n", "a refused continuation leaves the file alone");
        let parquet = open(Some(1), FileFormat::Parquet).err().expect("a Parquet file cannot be continued");
        assert!(parquet.message.contains("a Parquet file cannot be continued"), "{}", parquet.message);
        std::fs::remove_file(&path).unwrap();
        let missing = open(Some(2), FileFormat::Json).err().expect("a missing file is refused");
        assert!(missing.message.contains("cannot continue"), "{}", missing.message);
        open(Some(0), FileFormat::Json).unwrap().finish().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "", "nothing durable yet: a new file");
    }

    /// Issue 10: the three records of the issue on three lines are three dead letters, with
    /// their line numbers; the good lines around them keep their values.
    #[test]
    fn glued_and_split_json_lines_are_dead_letters() {
        let path = temp("glued.jsonl");
        let issue = "{\"id\":2000001,\"v\":\"glued-a\"}{\"id\":2000002,\"v\":\"glued-b\"}\n{\"id\":2000003,\n\"v\":\"glued-c\"}\n";
        std::fs::write(&path, format!("{{\"id\":1,\"v\":\"a\"}}\n{issue}{{\"id\":5,\"v\":\"e\"}}\n")).unwrap();
        let schema = Arc::new(arrow::datatypes::Schema::new(vec![
            arrow::datatypes::Field::new("id", arrow::datatypes::DataType::Int64, true),
            arrow::datatypes::Field::new("v", arrow::datatypes::DataType::Utf8, true),
        ]));
        for file in [path.clone(), {
            let only = temp("glued-only.jsonl");
            std::fs::write(&only, issue).unwrap();
            only
        }] {
            let mut reader = FileReader::open(options(&file, FileFormat::Json, 100), Some(schema.clone())).unwrap();
            let read = reader.next_batch().unwrap().unwrap();
            let errors = read.errors.expect("dead letters");
            let lines: Vec<i64> = errors.column(0).as_primitive::<arrow::datatypes::Int64Type>().values().to_vec();
            if file == path {
                assert_eq!(read.batch.column(0).as_primitive::<arrow::datatypes::Int64Type>().values().to_vec(), vec![1, 5]);
                assert_eq!(read.batch.column(1).as_string::<i32>().value(1), "e");
                assert_eq!(lines, vec![2, 3, 4]);
            } else {
                assert_eq!(read.batch.num_rows(), 0);
                assert_eq!(lines, vec![1, 2, 3]);
            }
            assert!(reader.next_batch().unwrap().is_none());
        }
    }

    /// Blank lines are skipped, and reported (line, record, "blank line, skipped") with the
    /// errors so that the file source counts them; CSV's too.
    #[test]
    fn blank_lines_are_reported_as_skipped() {
        let path = temp("blank.jsonl");
        std::fs::write(&path, "{\"a\":1}\n\n  \n{\"a\":2}\r\n\r\n").unwrap();
        let mut reader = FileReader::open(options(&path, FileFormat::Json, 10), None).unwrap();
        let read = reader.next_batch().unwrap().unwrap();
        assert_eq!(read.batch.num_rows(), 2);
        let errors = read.errors.expect("the blank lines");
        assert_eq!(errors.column(0).as_primitive::<arrow::datatypes::Int64Type>().values().to_vec(), vec![2, 3, 5]);
        for i in 0..3 {
            assert!(errors.column(1).as_binary::<i32>().value(i).iter().all(u8::is_ascii_whitespace));
            assert_eq!(errors.column(2).as_string::<i32>().value(i), BLANK_LINE);
        }
        let csv = temp("blank.csv");
        std::fs::write(&csv, "a,b\n1,x\n\n2,y\n").unwrap();
        let mut reader = FileReader::open(options(&csv, FileFormat::Csv, 10), None).unwrap();
        let read = reader.next_batch().unwrap().unwrap();
        assert_eq!(read.batch.num_rows(), 2);
        assert_eq!(read.errors.unwrap().column(0).as_primitive::<arrow::datatypes::Int64Type>().values().to_vec(), vec![3]);
    }

    /// In a CSV file of one column a line of spaces or a tab is a value (the CSV writer writes
    /// it so, unquoted): read as a blank line it was a row lost between Sluice's own sink and
    /// source. Only an empty line is blank there.
    #[test]
    fn a_one_column_csv_keeps_its_values_of_spaces() {
        let csv = temp("spaces.csv");
        let batch = RecordBatch::try_new(
            Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, true)])),
            vec![Arc::new(arrow::array::StringArray::from(vec!["a", "   ", "\t", "b"]))],
        )
        .unwrap();
        let mut writer = FileWriter::open(WriterOptions { path: csv.clone(), format: FileFormat::Csv, header: true, continue_at: None }).unwrap();
        writer.write(&batch).unwrap();
        writer.finish().unwrap();
        let declared = Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, true)]));
        for schema in [Some(declared), None] {
            let mut reader = FileReader::open(options(&csv, FileFormat::Csv, 10), schema).unwrap();
            let read = reader.next_batch().unwrap().unwrap();
            assert_eq!(read.batch.column(0).as_string::<i32>().iter().collect::<Vec<_>>(), vec![Some("a"), Some("   "), Some("\t"), Some("b")]);
            assert!(read.errors.is_none());
        }
    }

    /// Parquet has no timestamp in seconds (arrow-rs writes a bare INT64, which pyarrow, Spark and
    /// DuckDB read as an integer) and no Date64: such columns are written as milliseconds and as
    /// days, with their logical types.
    #[test]
    fn parquet_gets_timestamps_and_dates_other_readers_know() {
        use arrow::array::{Date64Array, TimestampSecondArray};
        let path = temp("seconds.parquet");
        let batch = RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("t", DataType::Timestamp(arrow::datatypes::TimeUnit::Second, None), true),
                Field::new("d", DataType::Date64, true),
            ])),
            vec![
                Arc::new(TimestampSecondArray::from(vec![Some(1_704_067_200), Some(-1), None])),
                Arc::new(Date64Array::from(vec![Some(1_704_067_200_000), Some(-86_400_000), None])),
            ],
        )
        .unwrap();
        let mut writer =
            FileWriter::open(WriterOptions { path: path.clone(), format: FileFormat::Parquet, header: true, continue_at: None }).unwrap();
        writer.write(&batch).unwrap();
        writer.finish().unwrap();
        let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(&path).unwrap()).unwrap();
        let columns = builder.parquet_schema().columns();
        let types: Vec<String> = columns.iter().map(|c| format!("{:?}", c.logical_type_ref())).collect();
        assert!(types[0].contains("Timestamp") && types[0].contains("MILLIS"), "{types:?}");
        assert!(types[1].contains("Date"), "{types:?}");
        let back = builder.build().unwrap().next().unwrap().unwrap();
        let shown: Vec<String> = (0..3)
            .map(|row| {
                (0..2)
                    .map(|c| {
                        arrow::util::display::ArrayFormatter::try_new(back.column(c).as_ref(), &Default::default()).unwrap().value(row).to_string()
                    })
                    .collect::<Vec<_>>()
                    .join("|")
            })
            .collect();
        assert_eq!(shown, ["2024-01-01T00:00:00|2024-01-01", "1969-12-31T23:59:59|1969-12-31", "|"]);
    }

    /// An inferred CSV schema with two columns of one name would make rows with two keys of
    /// one name; refused like a declared schema matched to such a header.
    #[test]
    fn an_inferred_csv_header_naming_a_column_twice_is_refused() {
        let csv = temp("twice.csv");
        std::fs::write(&csv, "id,a,a\n1,first,second\n").unwrap();
        let err = FileReader::open(options(&csv, FileFormat::Csv, 10), None).err().expect("refused");
        assert!(err.message.contains("twice.csv:1: the CSV header names the column 'a' twice"), "{}", err.message);
    }

    /// Lines ending in a bare \r made the header the whole file (0 rows, no error), or took the
    /// first rows of a file of mixed line ends with it; an unclosed quote in the header did the
    /// same. Refused, declared schema or inferred; \r\n line ends read as before.
    #[test]
    fn a_csv_header_that_would_swallow_rows_is_refused() {
        let declared = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true), Field::new("name", DataType::Utf8, true)]));
        for (name, text) in [("mac.csv", "id,name\r1,alice\r2,bob\r"), ("mixed.csv", "id,name\r1,alice\n2,bob\n")] {
            let csv = temp(name);
            std::fs::write(&csv, text).unwrap();
            for schema in [Some(declared.clone()), None] {
                let err = FileReader::open(options(&csv, FileFormat::Csv, 10), schema).err().expect("refused");
                assert!(err.message.contains(&format!("{name}:1: the CSV header line holds a carriage return")), "{}", err.message);
            }
        }
        let csv = temp("open-quote.csv");
        std::fs::write(&csv, "id,\"name\n1,a\n2,b\n").unwrap();
        let err = FileReader::open(options(&csv, FileFormat::Csv, 10), None).err().expect("refused");
        assert!(err.message.contains("open-quote.csv:1: the CSV header opens a quoted field that is never closed"), "{}", err.message);
        // Inside quotes a carriage return belongs to the name; a header alone may end in \r.
        for (name, text) in [("quoted-cr.csv", "\"id\",\"na\rme\"\n1,a\n"), ("header-only.csv", "id,name\r")] {
            let csv = temp(name);
            std::fs::write(&csv, text).unwrap();
            FileReader::open(options(&csv, FileFormat::Csv, 10), None).unwrap_or_else(|e| panic!("{name}: {}", e.message));
        }
        let csv = temp("crlf.csv");
        std::fs::write(&csv, "id,name\r\n1,alice\r\n2,bob\r\n").unwrap();
        let mut reader = FileReader::open(options(&csv, FileFormat::Csv, 10), Some(declared)).unwrap();
        assert_eq!(reader.next_batch().unwrap().unwrap().batch.num_rows(), 2);
    }

    /// INT96 timestamps past 2262 (Spark's 9999-12-31) read as themselves, not as a wrapped
    /// date in 1816: as microseconds.
    #[test]
    fn int96_timestamps_of_every_year_read_as_themselves() {
        use arrow::array::{Array, AsArray};
        use parquet::data_type::{Int96, Int96Type};
        let path = temp("int96.parquet");
        let schema = Arc::new(parquet::schema::parser::parse_message_type("message m { required int96 t; optional int64 n; }").unwrap());
        let mut writer = parquet::file::writer::SerializedFileWriter::new(File::create(&path).unwrap(), schema, Default::default()).unwrap();
        // (days since 1970-01-01, nanoseconds of the day): 9999-12-31T23:59:59, 0001-01-01, 1970-01-01T00:00:00.000001.
        let instants: [(i64, u64); 3] = [(2_932_896, 86_399_000_000_000), (-719_162, 0), (0, 1_000)];
        let values: Vec<Int96> = instants
            .iter()
            .map(|&(days, nanos)| {
                let mut value = Int96::new();
                value.set_data(nanos as u32, (nanos >> 32) as u32, (2_440_588 + days) as u32);
                value
            })
            .collect();
        let mut row_group = writer.next_row_group().unwrap();
        let mut t = row_group.next_column().unwrap().unwrap();
        t.typed::<Int96Type>().write_batch(&values, None, None).unwrap();
        t.close().unwrap();
        let mut n = row_group.next_column().unwrap().unwrap();
        n.typed::<parquet::data_type::Int64Type>().write_batch(&[7], Some(&[1, 0, 0]), None).unwrap();
        n.close().unwrap();
        row_group.close().unwrap();
        writer.close().unwrap();
        let mut reader = FileReader::open(options(&path, FileFormat::Parquet, 100), None).unwrap();
        assert_eq!(reader.schema().field(0).data_type(), &DataType::Timestamp(arrow::datatypes::TimeUnit::Microsecond, None));
        let read = reader.next_batch().unwrap().unwrap();
        let t = read.batch.column(0).as_primitive::<arrow::datatypes::TimestampMicrosecondType>();
        assert_eq!(t.values().to_vec(), vec![253_402_300_799_000_000, -62_135_596_800_000_000, 1]);
        assert_eq!(read.batch.column(1).null_count(), 2);
    }

    /// arrow infers a CSV column of integers and fractions as a double, which rounded
    /// 9007199254740993 to 9007199254740992 without a word; it is text now, with a warning, as
    /// in JSON inference. A double column of exact values stays a double.
    #[test]
    fn csv_integers_a_double_cannot_hold_are_inferred_as_text() {
        let path = temp("big.csv");
        std::fs::write(&path, "b,f\n1.5,1.5\n9007199254740993,2\n").unwrap();
        let mut reader = FileReader::open(options(&path, FileFormat::Csv, 10), None).unwrap();
        let schema = reader.schema();
        assert_eq!(schema.field(0).data_type(), &DataType::Utf8);
        assert_eq!(schema.field(1).data_type(), &DataType::Float64);
        let warnings = reader.warnings().to_vec();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("big.csv: column 'b' holds integers a double cannot hold exactly (9007199254740993)"), "{warnings:?}");
        let read = reader.next_batch().unwrap().unwrap();
        assert_eq!(strings(&read.batch, 0), [Some("1.5".to_string()), Some("9007199254740993".to_string())]);
    }

    /// A column with mixed types is inferred as the widest type (or string), and reported.
    #[test]
    fn mixed_types_infer_the_widest_type() {
        let path = temp("mixed.jsonl");
        std::fs::write(
            &path,
            "{\"a\":1,\"b\":1,\"c\":\"x\",\"d\":{\"x\":1,\"y\":[1]}}\n{\"a\":\"two\",\"b\":2.5,\"c\":\"y\",\"d\":{\"x\":\"s\",\"y\":[true]}}\n{\"a\":[3],\"b\":3,\"c\":\"z\"}\n",
        )
        .unwrap();
        let mut reader = FileReader::open(options(&path, FileFormat::Json, 10), None).unwrap();
        let schema = reader.schema();
        assert_eq!(schema.field_with_name("a").unwrap().data_type(), &arrow::datatypes::DataType::Utf8);
        assert_eq!(schema.field_with_name("b").unwrap().data_type(), &arrow::datatypes::DataType::Float64);
        assert_eq!(schema.field_with_name("c").unwrap().data_type(), &arrow::datatypes::DataType::Utf8);
        // A clash inside a struct names its member: the struct itself is read as a struct.
        let d = schema.field_with_name("d").unwrap().data_type().to_string();
        assert!(d.starts_with("Struct(") && d.contains("\"x\": Utf8") && d.contains("\"y\": List(Utf8)"), "{d}");
        let warnings = reader.warnings().to_vec();
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        assert!(warnings[0].contains("column 'a'") && warnings[0].contains("mixed.jsonl"), "{warnings:?}");
        assert!(warnings[1].contains("column 'd.x'") && warnings[2].contains("column 'd.y[]'"), "{warnings:?}");
        assert_eq!(schema.metadata().get(WARNINGS_KEY), Some(&warnings.join("\n")));
        // Numbers become their text; a list is no string: that line is a dead letter.
        let read = reader.next_batch().unwrap().unwrap();
        let a = read.batch.column(0).as_string::<i32>();
        assert_eq!((a.len(), a.value(0), a.value(1)), (2, "1", "two"));
        assert_eq!(read.errors.unwrap().column(0).as_primitive::<arrow::datatypes::Int64Type>().values().to_vec(), vec![3]);
        // Inference errors say "Json error" once, if at all.
        let bad = temp("bad.jsonl");
        std::fs::write(&bad, "nope\n").unwrap();
        let err = FileReader::open(options(&bad, FileFormat::Json, 10), None).err().unwrap();
        assert!(!err.message.contains("Json error: Json error"), "{}", err.message);
    }

    fn text_schema(names: &[&str]) -> SchemaRef {
        Arc::new(Schema::new(names.iter().map(|n| Field::new(*n, DataType::Utf8, true)).collect::<Vec<_>>()))
    }

    fn strings(batch: &RecordBatch, column: usize) -> Vec<Option<String>> {
        batch.column(column).as_string::<i32>().iter().map(|v| v.map(str::to_string)).collect()
    }

    /// A declared schema takes its columns from a CSV header by name: a header in another order
    /// used to put each value under the declared column at its position, silently.
    #[test]
    fn declared_csv_columns_are_matched_to_the_header_by_name() {
        let path = temp("by-name.csv");
        std::fs::write(&path, "last,id,first,note\nSmith,1,Ann,x\nJones,2,Bob,y\n").unwrap();
        let declared = Arc::new(Schema::new(vec![
            Field::new("first", DataType::Utf8, true),
            Field::new("last", DataType::Utf8, true),
            Field::new("id", DataType::Int64, false),
        ]));
        let mut reader = FileReader::open(options(&path, FileFormat::Csv, 10), Some(declared.clone())).unwrap();
        assert_eq!(reader.schema().fields(), declared.fields());
        assert_eq!(reader.warnings().len(), 1);
        assert!(reader.warnings()[0].contains("'note'") && reader.warnings()[0].contains("by-name.csv"), "{:?}", reader.warnings());
        let read = reader.next_batch().unwrap().unwrap();
        assert!(read.errors.is_none());
        assert_eq!(read.batch.schema(), declared);
        assert_eq!(strings(&read.batch, 0), [Some("Ann".to_string()), Some("Bob".to_string())]);
        assert_eq!(strings(&read.batch, 1), [Some("Smith".to_string()), Some("Jones".to_string())]);
        assert_eq!(read.batch.column(2).as_primitive::<arrow::datatypes::Int64Type>().values().to_vec(), vec![1, 2]);

        // Case and surrounding spaces do not matter when that picks one column.
        std::fs::write(&path, "ID , Last,First\n1,Smith,Ann\n").unwrap();
        let mut reader = FileReader::open(options(&path, FileFormat::Csv, 10), Some(declared.clone())).unwrap();
        assert!(reader.warnings().is_empty());
        let batch = reader.next_batch().unwrap().unwrap().batch;
        assert_eq!((strings(&batch, 0), strings(&batch, 1)), (vec![Some("Ann".to_string())], vec![Some("Smith".to_string())]));

        // A declared column the header lacks, or names twice, fails the open with file and line.
        std::fs::write(&path, "last,id,given\nSmith,1,Ann\n").unwrap();
        let err = FileReader::open(options(&path, FileFormat::Csv, 10), Some(declared.clone())).err().unwrap();
        assert!(err.message.contains("by-name.csv:1: the CSV header has no column 'first' (it has 'last', 'id', 'given')"), "{}", err.message);
        std::fs::write(&path, "first,last,id,first\nAnn,Smith,1,Bob\n").unwrap();
        let err = FileReader::open(options(&path, FileFormat::Csv, 10), Some(declared.clone())).err().unwrap();
        assert!(err.message.contains("names the column 'first' twice"), "{}", err.message);

        // An empty file has no header, and no rows.
        std::fs::write(&path, "").unwrap();
        assert!(FileReader::open(options(&path, FileFormat::Csv, 10), Some(declared.clone())).unwrap().next_batch().unwrap().is_none());

        // Without a header the columns are positional, as declared.
        std::fs::write(&path, "Ann,Smith,1\n").unwrap();
        let no_header = ReaderOptions { header: false, ..options(&path, FileFormat::Csv, 10) };
        let batch = FileReader::open(no_header, Some(declared)).unwrap().next_batch().unwrap().unwrap().batch;
        assert_eq!(strings(&batch, 0), [Some("Ann".to_string())]);
    }

    /// RFC 4180 lets a quoted field hold line breaks (the CSV writer writes them so): such a
    /// record spans lines, and the line numbers after it stay the file's.
    #[test]
    fn quoted_csv_fields_hold_line_breaks() {
        let path = temp("multi-line.csv");
        std::fs::write(&path, "id,note\n1,\"two\nlines\"\n2,\"a \"\"quote\"\"\r\nand, more\"\r\n3,plain\nx4,\"never closed\n5,z\n").unwrap();
        let schema = text_schema(&["id", "note"]);
        for batch_size in [1, 2, 10] {
            let mut reader = FileReader::open(options(&path, FileFormat::Csv, batch_size), Some(schema.clone())).unwrap();
            let (mut rows, mut errors) = (Vec::new(), Vec::new());
            while let Some(read) = reader.next_batch().unwrap() {
                rows.extend(strings(&read.batch, 1));
                if let Some(e) = read.errors {
                    errors.extend(e.column(0).as_primitive::<arrow::datatypes::Int64Type>().values().iter().copied());
                }
            }
            assert_eq!(
                rows,
                [Some("two\nlines".to_string()), Some("a \"quote\"\r\nand, more".to_string()), Some("plain".to_string())],
                "batch size {batch_size}"
            );
            // The unclosed quote on line 7 runs to the end of the file: one record, refused.
            assert_eq!(errors, vec![7], "batch size {batch_size}");
        }
        // A quoted field open for more than MAX_CSV_RECORD_BYTES fails the read, naming its line.
        let line = "1,2\n".repeat(1 << 10);
        let text = format!("a,b\n1,2\n3,\"open\n{}", line.repeat(MAX_CSV_RECORD_BYTES / line.len() + 1));
        std::fs::write(&path, text).unwrap();
        let mut reader = FileReader::open(options(&path, FileFormat::Csv, 10), Some(text_schema(&["a", "b"]))).unwrap();
        let err = reader.next_batch().err().unwrap();
        assert!(err.message.contains("multi-line.csv:3: a quoted field opened on this line is still open"), "{}", err.message);
    }

    /// A UTF-8 byte order mark is no part of the first line or the header's first name.
    #[test]
    fn a_byte_order_mark_is_skipped() {
        let json = temp("bom.jsonl");
        std::fs::write(&json, "\u{feff}{\"a\":\"x\"}\n{\"a\":\"y\"}\n").unwrap();
        let csv = temp("bom.csv");
        std::fs::write(&csv, "\u{feff}a,b\nx,1\ny,2\n").unwrap();
        for (path, format) in [(json, FileFormat::Json), (csv, FileFormat::Csv)] {
            for schema in [None, Some(text_schema(&["a"]))] {
                let mut reader = FileReader::open(options(&path, format, 10), schema).unwrap();
                assert_eq!(reader.schema().field(0).name(), "a");
                let read = reader.next_batch().unwrap().unwrap();
                assert!(read.errors.is_none(), "{path:?}");
                assert_eq!(strings(&read.batch, 0), [Some("x".to_string()), Some("y".to_string())]);
            }
        }
    }

    /// A CSV file whose first value starts with U+FEFF (no header line) read that value back
    /// without it, as if it were a byte order mark; the writer quotes such a field.
    #[test]
    fn a_first_value_starting_with_u_feff_survives_a_round_trip() {
        use crate::encode::{encode, EncodeFormat, EncodeOptions};
        use arrow::array::{ArrayRef, StringArray};
        let path = temp("feff-value.csv");
        let values = vec![Some("\u{feff}x"), Some("\u{feff}")];
        let batch = RecordBatch::try_from_iter([("a", Arc::new(StringArray::from(values.clone())) as ArrayRef)]).unwrap();
        let options = EncodeOptions {
            format: EncodeFormat::Csv,
            header: false,
            record_offsets: false,
            key_columns: vec![],
            exclude_columns: vec![],
            avro_schema: None,
            max_rows: None,
        };
        std::fs::write(&path, encode(&batch, &options).unwrap()).unwrap();
        let mut reader = FileReader::open(ReaderOptions { header: false, ..options_of(&path) }, Some(text_schema(&["a"]))).unwrap();
        let read = reader.next_batch().unwrap().unwrap();
        assert_eq!(strings(&read.batch, 0), values.iter().map(|v| v.map(String::from)).collect::<Vec<_>>());
    }

    #[test]
    fn missing_file_names_the_path() {
        let err = FileReader::open(options(Path::new("/nonexistent/x.jsonl"), FileFormat::Json, 10), None).err().unwrap();
        assert!(err.message.contains("/nonexistent/x.jsonl"), "{}", err.message);
    }
}
