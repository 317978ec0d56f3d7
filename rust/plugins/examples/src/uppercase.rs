//! Transform `uppercase`: the input with the Utf8 (or LargeUtf8) columns named by `columns`
//! upper-cased (Unicode rules); every other column passes through unchanged.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, GenericStringArray, OffsetSizeTrait, RecordBatch};
use arrow::datatypes::{DataType, SchemaRef};
use sluice_plugin_sdk::{Error, InstanceInfo, OptionSpec, OptionType, Options, Result, Transform};

pub struct Uppercase {
    /// Indexes of the columns to upper-case.
    columns: Vec<usize>,
    panic_on: Option<String>,
    bad_data_on: Option<String>,
}

impl Transform for Uppercase {
    const NAME: &'static str = "uppercase";
    const DESCRIPTION: &'static str = "Upper-cases the Utf8 columns named by `columns`; other columns pass through. panic_on and \
         bad_data_on make it fail on a given value, for tests.";
    const OPTIONS: &'static [OptionSpec] = &[
        OptionSpec::new("columns", OptionType::List, "Names of Utf8 columns of the input to upper-case.").required(),
        OptionSpec::new("panic_on", OptionType::String, "Panic when a value of those columns equals this."),
        OptionSpec::new("bad_data_on", OptionType::String, "Report a bad record (SLUICE_PLUGIN_BAD_DATA) when a value equals this."),
    ];

    fn open(options: &Options, _instance: &InstanceInfo, input: SchemaRef) -> Result<(Self, SchemaRef)> {
        let names: Vec<String> = options.require_as("columns")?;
        if names.is_empty() {
            return Err(Error::invalid_options("uppercase: option 'columns' must name at least one column"));
        }
        let mut columns = Vec::with_capacity(names.len());
        for name in &names {
            let Ok(index) = input.index_of(name) else {
                let known: Vec<&str> = input.fields().iter().map(|f| f.name().as_str()).collect();
                return Err(Error::invalid_options(format!(
                    "uppercase: option 'columns': the input has no column '{name}' (columns: {})",
                    known.join(", ")
                )));
            };
            let data_type = input.field(index).data_type();
            if !matches!(data_type, DataType::Utf8 | DataType::LargeUtf8) {
                return Err(Error::invalid_options(format!("uppercase: option 'columns': column '{name}' is {data_type}, not Utf8")));
            }
            if !columns.contains(&index) {
                columns.push(index);
            }
        }
        let transform = Uppercase { columns, panic_on: options.get_as("panic_on")?, bad_data_on: options.get_as("bad_data_on")? };
        Ok((transform, input))
    }

    fn process(&mut self, batch: RecordBatch) -> Result<Vec<RecordBatch>> {
        let mut columns = batch.columns().to_vec();
        for &index in &self.columns {
            let column = &columns[index];
            columns[index] = match column.data_type() {
                DataType::LargeUtf8 => self.upper(column.as_string::<i64>())?,
                _ => self.upper(column.as_string::<i32>())?,
            };
        }
        Ok(vec![RecordBatch::try_new(batch.schema(), columns)?])
    }
}

impl Uppercase {
    fn upper<O: OffsetSizeTrait>(&self, strings: &GenericStringArray<O>) -> Result<ArrayRef> {
        let mut out = Vec::with_capacity(strings.len());
        for value in strings.iter() {
            if let Some(v) = value {
                if self.panic_on.as_deref() == Some(v) {
                    panic!("uppercase: panic requested on {v:?}");
                }
                if self.bad_data_on.as_deref() == Some(v) {
                    return Err(Error::bad_data(format!("uppercase: bad data requested on {v:?}")));
                }
            }
            out.push(value.map(str::to_uppercase));
        }
        Ok(Arc::new(GenericStringArray::<O>::from(out)))
    }
}

#[cfg(test)]
mod tests {
    use arrow::array::{Int64Array, LargeStringArray, StringArray};
    use arrow::datatypes::{Field, Schema};
    use serde_json::json;
    use sluice_plugin_sdk::ErrorKind;

    use super::*;

    fn input() -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("a", DataType::Utf8, true),
            Field::new("n", DataType::Int64, false),
            Field::new("b", DataType::LargeUtf8, false),
        ]));
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(StringArray::from(vec![Some("x"), Some("straße"), None, Some("ok")])),
                Arc::new(Int64Array::from(vec![1, 2, 3, 4])),
                Arc::new(LargeStringArray::from(vec!["p", "q", "r", "s"])),
            ],
        )
        .unwrap()
    }

    fn open(options: serde_json::Value) -> Result<Uppercase> {
        let options = Options::from_value(options)?;
        options.check(Uppercase::OPTIONS)?;
        Uppercase::open(&options, &InstanceInfo::default(), input().schema()).map(|(t, schema)| {
            assert_eq!(schema, input().schema());
            t
        })
    }

    #[test]
    fn upper_cases_the_named_columns_of_a_slice() {
        let mut t = open(json!({"columns": ["a", "b"]})).unwrap();
        let out = t.process(input().slice(1, 3)).unwrap();
        assert_eq!(out.len(), 1);
        let a: Vec<_> = out[0].column(0).as_string::<i32>().iter().collect();
        assert_eq!(a, vec![Some("STRASSE"), None, Some("OK")]);
        assert_eq!(out[0].column(1).as_ref(), &Int64Array::from(vec![2, 3, 4]) as &dyn Array);
        let b: Vec<_> = out[0].column(2).as_string::<i64>().iter().collect();
        assert_eq!(b, vec![Some("Q"), Some("R"), Some("S")]);
    }

    #[test]
    fn invalid_columns_are_invalid_options_naming_them() {
        let cases = [
            (json!({}), "option 'columns' is required"),
            (json!({"columns": []}), "uppercase: option 'columns' must name at least one column"),
            (json!({"columns": ["zz"]}), "uppercase: option 'columns': the input has no column 'zz' (columns: a, n, b)"),
            (json!({"columns": ["n"]}), "uppercase: option 'columns': column 'n' is Int64, not Utf8"),
            (json!({"columns": [1]}), "option 'columns': invalid type"),
            (json!({"columns": ["a"], "colour": 1}), "unknown option 'colour'"),
        ];
        for (options, expected) in cases {
            let error = open(options.clone()).err().unwrap();
            assert_eq!(error.kind(), ErrorKind::InvalidOptions);
            assert!(error.message().starts_with(expected), "{options}: {}", error.message());
        }
    }

    #[test]
    fn bad_data_and_panic_on_values() {
        let mut t = open(json!({"columns": ["a"], "bad_data_on": "ok", "panic_on": "x"})).unwrap();
        let error = t.process(input().slice(1, 3)).unwrap_err();
        assert_eq!((error.kind(), error.message()), (ErrorKind::BadData, "uppercase: bad data requested on \"ok\""));
        let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| t.process(input()))).unwrap_err();
        assert_eq!(sluice_plugin_sdk::panic_message(&*panic), "uppercase: panic requested on \"x\"");
    }
}
