//! Arrow → record bytes, for sinks. One slab per batch; Java only writes it out (or, for
//! Kafka, slices it by the record offsets).

use arrow::array::RecordBatch;
use arrow::json::writer::{JsonArray, LineDelimited, WriterBuilder};
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
}

#[derive(Clone, Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct EncodeOptions {
    #[serde(default)]
    pub format: EncodeFormat,
    /// CSV: write a header line first.
    #[serde(default)]
    pub header: bool,
}

/// Encodes a batch. JSON output writes nulls explicitly so every row has every column.
pub fn encode(batch: &RecordBatch, options: &EncodeOptions) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(batch.num_rows() * 64);
    match options.format {
        EncodeFormat::Json => {
            let mut writer = WriterBuilder::new().with_explicit_nulls(true).build::<_, LineDelimited>(&mut out);
            writer.write(batch)?;
            writer.finish()?;
        }
        EncodeFormat::JsonArray => {
            let mut writer = WriterBuilder::new().with_explicit_nulls(true).build::<_, JsonArray>(&mut out);
            writer.write(batch)?;
            writer.finish()?;
        }
        EncodeFormat::Csv => {
            let mut writer = arrow::csv::WriterBuilder::new().with_header(options.header).build(&mut out);
            writer.write(batch)?;
        }
    }
    Ok(out)
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
    fn json_lines_with_explicit_nulls() {
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false), Field::new("s", DataType::Utf8, true)]));
        let batch = RecordBatch::try_new(
            schema,
            vec![Arc::new(Int64Array::from(vec![1, 2])), Arc::new(StringArray::from(vec![Some("a\nb"), None]))],
        )
        .unwrap();
        let out = encode(&batch, &EncodeOptions::default()).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "{\"id\":1,\"s\":\"a\\nb\"}\n{\"id\":2,\"s\":null}\n");
    }
}
