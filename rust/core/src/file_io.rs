//! File source and sink formats: JSON lines, CSV and Parquet, read and written in the core so
//! that the rows never become Java objects.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::compute::concat_batches;
use arrow::datatypes::SchemaRef;
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use parquet::arrow::ArrowWriter;
use serde::Deserialize;

use crate::decode::{error_schema, DecoderOptions, ErrorRows, Format, RecordDecoder};

/// The error of a blank line in the error rows of a read: skipped, not a malformed record
/// (the file source counts these as skipped).
pub const BLANK_LINE: &str = "blank line, skipped";

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
                let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| CoreError::from(e).context(path.display()))?;
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
                Arc::new(r.decoder.schema().as_ref().clone().with_metadata(metadata))
            }
            FileReader::Lines(r) => r.decoder.schema().clone(),
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

/// JSON lines or CSV: reads up to `batch_size` non-blank lines into one slab and decodes them
/// together, remembering each record's line number for dead letters. Blank lines are skipped
/// and reported with the errors (see [`BLANK_LINE`]).
pub struct LineReader {
    reader: BufReader<File>,
    decoder: RecordDecoder,
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
        let format = if options.format == FileFormat::Csv { Format::Csv } else { Format::Json };
        let delimiter = options.delimiter.as_bytes().first().copied().unwrap_or(b',');
        let context = options.path.display().to_string();
        let mut warnings = Vec::new();
        let mut text_coercion = false;
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
                    Format::Csv => arrow::csv::reader::Format::default()
                        .with_header(options.header)
                        .with_delimiter(delimiter)
                        .infer_schema(&mut reader, Some(options.infer_rows))
                        .map(|(schema, _)| schema)
                        .map_err(|e| cannot(e.to_string()))?,
                };
                reader.seek(SeekFrom::Start(0))?;
                Arc::new(inferred)
            }
        };
        let mut next_line = 1;
        if format == Format::Csv && options.header {
            let mut header = Vec::new();
            reader.read_until(b'\n', &mut header)?;
            next_line += 1;
        }
        let mut decoder = RecordDecoder::new(&DecoderOptions::of(format, &options.delimiter), Some(schema))?;
        if text_coercion {
            decoder = decoder.with_text_coercion();
        }
        Ok(LineReader { reader, decoder, batch_size: options.batch_size, next_line, slab: Vec::new(), ends: Vec::new(), lines: Vec::new(), warnings })
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
            let read = self.reader.read_until(b'\n', &mut self.slab)?;
            if read == 0 {
                break;
            }
            let line = self.next_line;
            self.next_line += 1;
            let content = &self.slab[start..];
            if content.iter().all(u8::is_ascii_whitespace) {
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
            return Ok(Some(ReadBatch { batch: RecordBatch::new_empty(self.decoder.schema().clone()), errors }));
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
        Ok(Some(ReadBatch { batch: decoded.batch, errors }))
    }
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
}

/// Writes batches to one file. JSON lines and CSV are created at open (an empty run leaves an
/// empty file); Parquet is created with the first batch, whose schema it takes.
pub struct FileWriter {
    options: WriterOptions,
    sink: WriterSink,
}

// One per writer: boxing the larger variant would add an indirection for no memory worth saving.
#[allow(clippy::large_enum_variant)]
enum WriterSink {
    Lines { out: BufWriter<File>, wrote_header: bool },
    Parquet(Option<ArrowWriter<File>>),
    Finished,
}

impl FileWriter {
    pub fn open(options: WriterOptions) -> Result<FileWriter> {
        let sink = match options.format {
            FileFormat::Parquet => WriterSink::Parquet(None),
            FileFormat::Json | FileFormat::Csv => {
                WriterSink::Lines { out: BufWriter::with_capacity(1 << 20, create(&options.path)?), wrote_header: false }
            }
        };
        Ok(FileWriter { options, sink })
    }

    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let context = self.options.path.display().to_string();
        match &mut self.sink {
            WriterSink::Lines { out, wrote_header } => {
                let format = if self.options.format == FileFormat::Csv { EncodeFormat::Csv } else { EncodeFormat::Json };
                let header = format == EncodeFormat::Csv && self.options.header && !*wrote_header;
                let bytes = encode(batch, &EncodeOptions { format, header, ..EncodeOptions::default() })?;
                out.write_all(&bytes).map_err(|e| CoreError::io(format!("writing {context}: {e}")))?;
                *wrote_header = true;
            }
            WriterSink::Parquet(writer) => {
                if writer.is_none() {
                    *writer = Some(ArrowWriter::try_new(create(&self.options.path)?, batch.schema(), None)?);
                }
                writer.as_mut().expect("created above").write(batch).map_err(|e| CoreError::from(e).context(&context))?;
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
        let mut writer = FileWriter::open(WriterOptions { path: parquet.clone(), format: FileFormat::Parquet, header: true }).unwrap();
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

    /// A column with mixed types is inferred as the widest type (or string), and reported.
    #[test]
    fn mixed_types_infer_the_widest_type() {
        let path = temp("mixed.jsonl");
        std::fs::write(&path, "{\"a\":1,\"b\":1,\"c\":\"x\"}\n{\"a\":\"two\",\"b\":2.5,\"c\":\"y\"}\n{\"a\":[3],\"b\":3,\"c\":\"z\"}\n").unwrap();
        let mut reader = FileReader::open(options(&path, FileFormat::Json, 10), None).unwrap();
        let schema = reader.schema();
        assert_eq!(schema.field_with_name("a").unwrap().data_type(), &arrow::datatypes::DataType::Utf8);
        assert_eq!(schema.field_with_name("b").unwrap().data_type(), &arrow::datatypes::DataType::Float64);
        assert_eq!(schema.field_with_name("c").unwrap().data_type(), &arrow::datatypes::DataType::Utf8);
        let warnings = reader.warnings().to_vec();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("'a'") && warnings[0].contains("mixed.jsonl"), "{warnings:?}");
        assert_eq!(schema.metadata().get(WARNINGS_KEY), Some(&warnings[0]));
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

    #[test]
    fn missing_file_names_the_path() {
        let err = FileReader::open(options(Path::new("/nonexistent/x.jsonl"), FileFormat::Json, 10), None).err().unwrap();
        assert!(err.message.contains("/nonexistent/x.jsonl"), "{}", err.message);
    }
}
