//! Sink `jsonl`: every row as one JSON object on a line of the file `path`. `open` leaves the
//! file alone; `start` creates (or truncates) it; `flush` makes everything written durable
//! (fsync of the file, and of its directory after it was created).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use arrow::json::writer::LineDelimited;
use arrow::json::{Writer, WriterBuilder};
use sluice_plugin_sdk::{Error, InstanceInfo, OptionSpec, OptionType, Options, Result, Sink};

pub struct Jsonl {
    path: PathBuf,
    writer: Option<Writer<BufWriter<File>, LineDelimited>>,
    /// The directory entry of a file `start` created is not yet durable.
    sync_dir: bool,
}

impl Jsonl {
    /// The file written (the option `path`, resolved against the pipeline's directory).
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    fn writer(&mut self, call: &str) -> Result<&mut Writer<BufWriter<File>, LineDelimited>> {
        self.writer.as_mut().ok_or_else(|| Error::new(format!("jsonl: {call} before start")))
    }
}

impl Sink for Jsonl {
    const NAME: &'static str = "jsonl";
    const DESCRIPTION: &'static str = "Writes every row as one JSON object per line (nulls written as null) to the file `path`, \
         created or truncated when the pipeline starts and fsynced at every checkpoint.";
    const OPTIONS: &'static [OptionSpec] =
        &[OptionSpec::new("path", OptionType::String, "The file to write; a relative path is resolved against the pipeline file's directory.")
            .required()];

    fn open(options: &Options, instance: &InstanceInfo, _schema: SchemaRef) -> Result<Self> {
        let path: String = options.require_as("path")?;
        if path.is_empty() {
            return Err(Error::invalid_options("jsonl: option 'path' must not be empty"));
        }
        Ok(Jsonl { path: instance.resolve_path(path), writer: None, sync_dir: false })
    }

    fn start(&mut self) -> Result<()> {
        if let Some(dir) = self.path.parent() {
            // As the built-in file sink does: the output's directory is made when the run starts.
            std::fs::create_dir_all(dir).map_err(|e| Error::new(format!("jsonl: cannot create {}: {e}", dir.display())))?;
        }
        let file = File::create(&self.path).map_err(|e| Error::new(format!("jsonl: cannot create {}: {e}", self.path.display())))?;
        self.writer = Some(WriterBuilder::new().with_explicit_nulls(true).build(BufWriter::with_capacity(64 * 1024, file)));
        self.sync_dir = true;
        Ok(())
    }

    fn write(&mut self, batch: RecordBatch) -> Result<()> {
        let path = self.path.clone();
        self.writer("write")?.write(&batch).map_err(|e| Error::new(format!("jsonl: cannot write to {}: {e}", path.display())))
    }

    fn flush(&mut self, _epoch: i64) -> Result<()> {
        let path = self.path.clone();
        let fail = |e: std::io::Error| Error::new(format!("jsonl: cannot flush {}: {e}", path.display()));
        let writer = self.writer("flush")?.get_mut();
        writer.flush().map_err(fail)?;
        writer.get_ref().sync_data().map_err(fail)?;
        if self.sync_dir {
            let dir = match self.path.parent() {
                Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
                _ => PathBuf::from("."),
            };
            File::open(&dir).and_then(|d| d.sync_all()).map_err(fail)?;
            self.sync_dir = false;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{Int64Array, StringArray};
    use arrow::datatypes::{DataType, Field, Schema};
    use serde_json::json;
    use sluice_plugin_sdk::ErrorKind;

    use super::*;

    fn schema() -> SchemaRef {
        Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false), Field::new("label", DataType::Utf8, true)]))
    }

    fn open(options: serde_json::Value, dir: &std::path::Path) -> Result<Jsonl> {
        let options = Options::from_value(options)?;
        options.check(Jsonl::OPTIONS)?;
        Jsonl::open(&options, &InstanceInfo { pipeline_dir: dir.to_path_buf(), ..Default::default() }, schema())
    }

    #[test]
    fn writes_rows_as_json_lines_relative_to_the_pipeline_dir() {
        let dir = tempfile::tempdir().unwrap();
        let mut sink = open(json!({"path": "out/rows.jsonl"}), dir.path()).unwrap();
        let path = dir.path().join("out/rows.jsonl");
        assert_eq!(sink.path(), path);
        std::fs::create_dir(dir.path().join("out")).unwrap();
        assert!(!path.exists(), "open must not create the file");
        assert_eq!(sink.write(RecordBatch::new_empty(schema())).unwrap_err().message(), "jsonl: write before start");

        std::fs::write(&path, "old contents\n").unwrap();
        sink.start().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "", "start truncates");
        let batch = RecordBatch::try_new(
            schema(),
            vec![Arc::new(Int64Array::from(vec![1, 2, 3])), Arc::new(StringArray::from(vec![Some("a\"b"), None, Some("c")]))],
        )
        .unwrap();
        sink.write(batch.slice(1, 2)).unwrap();
        sink.write(batch.slice(0, 1)).unwrap();
        sink.flush(1).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"id\":2,\"label\":null}\n{\"id\":3,\"label\":\"c\"}\n{\"id\":1,\"label\":\"a\\\"b\"}\n"
        );
        sink.flush(2).unwrap();
    }

    #[test]
    fn path_is_required_and_start_reports_io_errors() {
        let dir = tempfile::tempdir().unwrap();
        let error = open(json!({}), dir.path()).err().unwrap();
        assert_eq!((error.kind(), error.message()), (ErrorKind::InvalidOptions, "option 'path' is required"));
        // A missing directory is made at start; a file in the way of one is an I/O error.
        let mut sink = open(json!({"path": "new/dir/x.jsonl"}), dir.path()).unwrap();
        sink.start().unwrap();
        assert!(dir.path().join("new/dir/x.jsonl").exists());
        std::fs::write(dir.path().join("blocker"), "").unwrap();
        let mut sink = open(json!({"path": "blocker/x.jsonl"}), dir.path()).unwrap();
        assert!(sink.start().unwrap_err().message().starts_with("jsonl: cannot create"));
    }
}
