//! Side output `audit`: counts the rows its observed node emits and, at every checkpoint
//! barrier, appends one JSON line to the file `path`:
//! `{"node": "<observed node>", "epoch": N, "rows": <rows since the previous barrier>, "total": <all rows>}`,
//! then fsyncs it (and its directory after it was created). `open` leaves the file alone; the
//! first `observe` or `barrier` creates (or truncates) it.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use serde_json::Value;
use sluice_plugin_sdk::{Error, InstanceInfo, OptionSpec, OptionType, Options, Result, SideOutput};

pub struct Audit {
    path: PathBuf,
    observed: String,
    file: Option<File>,
    /// Rows observed since the previous barrier, and since the start.
    rows: u64,
    total: u64,
    /// The directory entry of the file just created is not yet durable.
    sync_dir: bool,
}

impl Audit {
    /// The file written (the option `path`, resolved against the pipeline's directory).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The audit line of the barrier of `epoch`, without its newline.
    pub fn line(observed: &str, epoch: i64, rows: u64, total: u64) -> String {
        format!("{{\"node\": {}, \"epoch\": {epoch}, \"rows\": {rows}, \"total\": {total}}}", Value::from(observed))
    }

    fn file(&mut self) -> Result<&mut File> {
        if self.file.is_none() {
            if let Some(dir) = self.path.parent() {
                // As the built-in file sink does: the output's directory is made when the run starts.
                std::fs::create_dir_all(dir).map_err(|e| Error::new(format!("audit: cannot create {}: {e}", dir.display())))?;
            }
            let file = File::create(&self.path).map_err(|e| Error::new(format!("audit: cannot create {}: {e}", self.path.display())))?;
            self.file = Some(file);
            self.sync_dir = true;
        }
        Ok(self.file.as_mut().expect("created above"))
    }
}

impl SideOutput for Audit {
    const NAME: &'static str = "audit";
    const DESCRIPTION: &'static str = "Counts the rows of the observed node and, at every checkpoint, appends one JSON line \
         {\"node\", \"epoch\", \"rows\" (since the previous checkpoint), \"total\"} to the file `path`, created or truncated \
         when the pipeline runs and fsynced at every checkpoint.";
    const OPTIONS: &'static [OptionSpec] =
        &[OptionSpec::new("path", OptionType::String, "The file to write; a relative path is resolved against the pipeline file's directory.")
            .required()];

    fn open(options: &Options, instance: &InstanceInfo, observed_node: &str, _schema: SchemaRef) -> Result<Self> {
        let path: String = options.require_as("path")?;
        if path.is_empty() {
            return Err(Error::invalid_options("audit: option 'path' must not be empty"));
        }
        Ok(Audit { path: instance.resolve_path(path), observed: observed_node.to_owned(), file: None, rows: 0, total: 0, sync_dir: false })
    }

    fn observe(&mut self, batch: &RecordBatch) -> Result<()> {
        self.file()?;
        let rows = batch.num_rows() as u64;
        self.rows += rows;
        self.total += rows;
        Ok(())
    }

    fn barrier(&mut self, epoch: i64) -> Result<()> {
        let line = Audit::line(&self.observed, epoch, self.rows, self.total) + "\n";
        let path = self.path.clone();
        let fail = |e: std::io::Error| Error::new(format!("audit: cannot write to {}: {e}", path.display()));
        let file = self.file()?;
        file.write_all(line.as_bytes()).map_err(fail)?;
        file.sync_data().map_err(fail)?;
        if self.sync_dir {
            let dir = match self.path.parent() {
                Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
                _ => PathBuf::from("."),
            };
            File::open(&dir).and_then(|d| d.sync_all()).map_err(fail)?;
            self.sync_dir = false;
        }
        self.rows = 0;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::Int64Array;
    use arrow::datatypes::{DataType, Field, Schema};
    use serde_json::json;
    use sluice_plugin_sdk::ErrorKind;

    use super::*;

    fn schema() -> SchemaRef {
        Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]))
    }

    fn batch(rows: i64) -> RecordBatch {
        RecordBatch::try_new(schema(), vec![Arc::new(Int64Array::from_iter_values(0..rows))]).unwrap()
    }

    fn open(options: serde_json::Value, dir: &Path, observed: &str) -> Result<Audit> {
        let options = Options::from_value(options)?;
        options.check(Audit::OPTIONS)?;
        Audit::open(&options, &InstanceInfo { pipeline_dir: dir.to_path_buf(), ..Default::default() }, observed, schema())
    }

    #[test]
    fn appends_one_line_per_barrier_relative_to_the_pipeline_dir() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("out")).unwrap();
        let path = dir.path().join("out/audit.jsonl");
        std::fs::write(&path, "old contents\n").unwrap();
        let mut audit = open(json!({"path": "out/audit.jsonl"}), dir.path(), "the \"orders\"").unwrap();
        assert_eq!(audit.path(), path);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old contents\n", "open must leave the file alone");

        audit.observe(&batch(3)).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "", "the first observe truncates");
        audit.observe(&batch(0)).unwrap();
        audit.observe(&batch(4).slice(1, 2)).unwrap();
        audit.barrier(1).unwrap();
        audit.barrier(2).unwrap();
        audit.observe(&batch(10)).unwrap();
        audit.barrier(3).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            "{\"node\": \"the \\\"orders\\\"\", \"epoch\": 1, \"rows\": 5, \"total\": 5}\n\
             {\"node\": \"the \\\"orders\\\"\", \"epoch\": 2, \"rows\": 0, \"total\": 5}\n\
             {\"node\": \"the \\\"orders\\\"\", \"epoch\": 3, \"rows\": 10, \"total\": 15}\n"
        );
        let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
        assert_eq!(last, json!({"node": "the \"orders\"", "epoch": 3, "rows": 10, "total": 15}));
    }

    #[test]
    fn a_barrier_first_creates_the_file_and_errors_name_the_option_or_path() {
        let dir = tempfile::tempdir().unwrap();
        let mut audit = open(json!({"path": dir.path().join("a.jsonl")}), Path::new("/nonexistent"), "n").unwrap();
        audit.barrier(7).unwrap();
        assert_eq!(std::fs::read_to_string(dir.path().join("a.jsonl")).unwrap(), "{\"node\": \"n\", \"epoch\": 7, \"rows\": 0, \"total\": 0}\n");

        let error = open(json!({}), dir.path(), "n").err().unwrap();
        assert_eq!((error.kind(), error.message()), (ErrorKind::InvalidOptions, "option 'path' is required"));
        let error = open(json!({"path": ""}), dir.path(), "n").err().unwrap();
        assert_eq!(error.kind(), ErrorKind::InvalidOptions);
        // open does not touch the file system: a missing directory is made only when it runs,
        // and a file in the way of one fails then.
        let mut audit = open(json!({"path": "missing/dir/a.jsonl"}), dir.path(), "n").unwrap();
        assert!(!dir.path().join("missing").exists());
        audit.observe(&batch(1)).unwrap();
        assert!(dir.path().join("missing/dir/a.jsonl").exists());
        std::fs::write(dir.path().join("blocker"), "").unwrap();
        let mut audit = open(json!({"path": "blocker/a.jsonl"}), dir.path(), "n").unwrap();
        assert!(audit.observe(&batch(1)).unwrap_err().message().starts_with("audit: cannot create"));
    }
}
