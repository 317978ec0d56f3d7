//! Sluice's built-in SQL functions, registered in every transform session next to DataFusion's
//! own and the JSON functions.
//!
//! * `count_char(string, character)` → BIGINT: how many times the first character of
//!   `character` occurs in `string`. It is the UDF of Nexmark's q14 (nexmark-flink's
//!   `CountChar`), with the same answers: a NULL string counts 0. A NULL `character` gives
//!   NULL, an empty one counts 0.
//!
//! [`rewrite`] corrects DataFusion's built-ins where they answer otherwise than PostgreSQL:
//! `to_hex` of an `int` (or `smallint`, `tinyint`) wrote a negative value's 64-bit two's
//! complement (`to_hex(-1)` was `ffffffffffffffff`); PostgreSQL writes 32 bits (`ffffffff`).

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Int64Array, StringArrayType};
use arrow::datatypes::DataType;
use datafusion::common::types::logical_string;
use datafusion::common::{exec_err, DFSchema, Result, ScalarValue};
use datafusion::logical_expr::expr::{BinaryExpr, ScalarFunction};
use datafusion::logical_expr::{lit, Expr, ExprSchemable, Operator};
use datafusion::logical_expr::{Coercion, ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, TypeSignatureClass, Volatility};
use datafusion::prelude::SessionContext;

/// Adds Sluice's built-in functions to a session.
pub fn register_builtins(ctx: &SessionContext) {
    ctx.register_udf(ScalarUDF::new_from_impl(CountChar::new()));
}

/// The expression that replaces `expr`, or None to keep it; called after type coercion (by the
/// checked-arithmetic rule, on every expression).
pub(crate) fn rewrite(expr: &Expr, schema: &DFSchema) -> Result<Option<Expr>> {
    match expr {
        Expr::ScalarFunction(ScalarFunction { func, args }) if func.name() == "to_hex" && args.len() == 1 => {
            if !matches!(args[0].get_type(schema)?, DataType::Int8 | DataType::Int16 | DataType::Int32) {
                return Ok(None);
            }
            // The value's 32 bits as a non-negative bigint, whose hex is PostgreSQL's.
            let bits = Expr::BinaryExpr(BinaryExpr::new(
                Box::new(args[0].clone().cast_to(&DataType::Int64, schema)?),
                Operator::BitwiseAnd,
                Box::new(lit(0xFFFF_FFFF_i64)),
            ));
            Ok(Some(Expr::ScalarFunction(ScalarFunction::new_udf(Arc::clone(func), vec![bits]))))
        }
        _ => Ok(None),
    }
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct CountChar {
    signature: Signature,
}

impl CountChar {
    fn new() -> Self {
        let string = || Coercion::new_exact(TypeSignatureClass::Native(logical_string()));
        CountChar { signature: Signature::coercible(vec![string(), string()], Volatility::Immutable) }
    }
}

impl ScalarUDFImpl for CountChar {
    fn name(&self) -> &str {
        "count_char"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Int64)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let [strings, characters] = args.args.as_slice() else {
            return exec_err!("count_char takes two arguments, got {}", args.args.len());
        };
        match (strings, characters) {
            // The usual shape, count_char(column, 'c'): one character for the whole batch.
            (ColumnarValue::Array(strings), ColumnarValue::Scalar(character)) => match scalar_char(character)? {
                Some(wanted) => Ok(ColumnarValue::Array(count_in_array(strings, wanted)?)),
                None => Ok(ColumnarValue::Scalar(ScalarValue::Int64(None))),
            },
            _ => {
                let rows = args.number_rows;
                let strings = strings.to_array(rows)?;
                let characters = characters.to_array(rows)?;
                let counts = count_rowwise(&strings, &characters)?;
                if matches!((&args.args[0], &args.args[1]), (ColumnarValue::Scalar(_), ColumnarValue::Scalar(_))) {
                    Ok(ColumnarValue::Scalar(ScalarValue::try_from_array(&counts, 0)?))
                } else {
                    Ok(ColumnarValue::Array(counts))
                }
            }
        }
    }
}

/// The character to count from a scalar argument: None for NULL, Some(None) for ''.
fn scalar_char(value: &ScalarValue) -> Result<Option<Option<char>>> {
    match value {
        ScalarValue::Utf8(s) | ScalarValue::LargeUtf8(s) | ScalarValue::Utf8View(s) => Ok(s.as_deref().map(|s| s.chars().next())),
        other => exec_err!("count_char: the character must be a string, not {}", other.data_type()),
    }
}

fn count_in_array(strings: &ArrayRef, wanted: Option<char>) -> Result<ArrayRef> {
    fn count<'a>(strings: impl StringArrayType<'a>, wanted: Option<char>) -> ArrayRef {
        let counts: Int64Array =
            (0..strings.len()).map(|i| Some(if strings.is_null(i) { 0 } else { wanted.map_or(0, |c| occurrences(strings.value(i), c)) })).collect();
        Arc::new(counts)
    }
    match strings.data_type() {
        DataType::Utf8 => Ok(count(strings.as_string::<i32>(), wanted)),
        DataType::LargeUtf8 => Ok(count(strings.as_string::<i64>(), wanted)),
        DataType::Utf8View => Ok(count(strings.as_string_view(), wanted)),
        other => exec_err!("count_char: the first argument must be a string, not {other}"),
    }
}

fn count_rowwise(strings: &ArrayRef, characters: &ArrayRef) -> Result<ArrayRef> {
    let strings = arrow::compute::cast(strings, &DataType::Utf8)?;
    let characters = arrow::compute::cast(characters, &DataType::Utf8)?;
    let (strings, characters) = (strings.as_string::<i32>(), characters.as_string::<i32>());
    let counts: Int64Array = (0..strings.len())
        .map(|i| {
            if characters.is_null(i) {
                return None;
            }
            let wanted = characters.value(i).chars().next();
            Some(if strings.is_null(i) { 0 } else { wanted.map_or(0, |c| occurrences(strings.value(i), c)) })
        })
        .collect();
    Ok(Arc::new(counts))
}

/// Occurrences of `wanted` in `s`. An ASCII byte never occurs inside a multi-byte UTF-8
/// sequence, so ASCII characters are counted on the bytes (which the compiler vectorizes).
fn occurrences(s: &str, wanted: char) -> i64 {
    if wanted.is_ascii() {
        let byte = wanted as u8;
        s.as_bytes().iter().filter(|&&b| b == byte).count() as i64
    } else {
        s.chars().filter(|&c| c == wanted).count() as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transform::run_bounded_query;
    use arrow::array::{RecordBatch, StringArray};
    use arrow::datatypes::{Field, Schema};

    fn strings(values: Vec<Option<&str>>) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, true), Field::new("c", DataType::Utf8, true)]));
        let chars: Vec<Option<&str>> = values.iter().enumerate().map(|(i, _)| [Some("a"), Some("é"), None, Some("")][i % 4]).collect();
        RecordBatch::try_new(schema, vec![Arc::new(StringArray::from(values)), Arc::new(StringArray::from(chars))]).unwrap()
    }

    fn ints(batch: &RecordBatch, column: usize) -> Vec<Option<i64>> {
        batch.column(column).as_primitive::<arrow::datatypes::Int64Type>().iter().collect()
    }

    #[test]
    fn counts_a_constant_character_like_nexmark_count_char() {
        let batch = strings(vec![Some("abcabc"), Some("cccc"), None, Some(""), Some("éclair c'est ça")]);
        let out = run_bounded_query("SELECT count_char(s, 'c') AS n, count_char(s, 'cx') AS first_only FROM t", "t", batch).unwrap();
        // 'ç' is not 'c'.
        assert_eq!(ints(&out, 0), vec![Some(2), Some(4), Some(0), Some(0), Some(2)]);
        assert_eq!(ints(&out, 1), ints(&out, 0), "only the first character of the second argument counts");
    }

    #[test]
    fn counts_a_character_per_row_and_handles_nulls_and_non_ascii() {
        let batch = strings(vec![Some("banana"), Some("éé-é"), Some("x"), Some("x"), None]);
        // Characters per row: 'a', 'é', NULL, '', 'a'.
        let out = run_bounded_query(
            "SELECT count_char(s, c) AS n, count_char(s, NULL) AS none, count_char(arrow_cast(s, 'Utf8View'), 'a') AS v FROM t",
            "t",
            batch,
        )
        .unwrap();
        assert_eq!(ints(&out, 0), vec![Some(3), Some(3), None, Some(0), Some(0)]);
        assert_eq!(ints(&out, 1), vec![None; 5]);
        assert_eq!(ints(&out, 2), vec![Some(3), Some(0), Some(0), Some(0), Some(0)]);
    }

    #[test]
    fn is_known_to_every_streaming_session() {
        use datafusion::execution::FunctionRegistry;
        let ctx = crate::transform::streaming_context().unwrap();
        assert!(ctx.udf("count_char").is_ok());
    }

    /// PostgreSQL's to_hex writes an int's 32 bits: DataFusion wrote a negative one's 64.
    #[test]
    fn to_hex_of_an_int_writes_its_32_bits() {
        use arrow::array::{Int16Array, Int32Array};
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int32Array::from(vec![Some(-1), Some(i32::MIN), Some(255), None])),
            Arc::new(Int16Array::from(vec![Some(-32768), Some(-1), Some(16), None])),
            Arc::new(Int64Array::from(vec![Some(-1), Some(1), Some(i64::MIN), None])),
        ];
        let schema = Arc::new(arrow::datatypes::Schema::new(vec![
            arrow::datatypes::Field::new("i", DataType::Int32, true),
            arrow::datatypes::Field::new("s", DataType::Int16, true),
            arrow::datatypes::Field::new("b", DataType::Int64, true),
        ]));
        let batch = RecordBatch::try_new(schema, columns).unwrap();
        let out = run_bounded_query("SELECT to_hex(i) AS i, to_hex(s) AS s, to_hex(b) AS b FROM t", "t", batch).unwrap();
        let texts = |c: usize| out.column(c).as_string::<i32>().iter().map(|v| v.map(str::to_string)).collect::<Vec<_>>();
        let some = |v: &[&str]| v.iter().map(|s| Some(s.to_string())).chain([None]).collect::<Vec<_>>();
        assert_eq!(texts(0), some(&["ffffffff", "80000000", "ff"]));
        assert_eq!(texts(1), some(&["ffff8000", "ffffffff", "10"]));
        assert_eq!(texts(2), some(&["ffffffffffffffff", "1", "8000000000000000"]));
    }
}
