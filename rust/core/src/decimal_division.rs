//! Decimal division that keeps the digits a quotient needs, rounded.
//!
//! arrow divides decimals to the dividend's scale plus 4, cutting the rest: `1 / 30000` of two
//! `decimal(10, 0)` was `0.0000`, and `2 / 3` was `0.6666`. PostgreSQL's numeric keeps at least
//! 16 significant digits. A fixed-scale type cannot follow every value, so the quotient's type
//! is Spark's, the engines' common rule for fixed decimals: scale `max(6, s1 + p2 + 1)` (enough
//! for the smallest quotient of the operands' types to show its first digits), integer digits
//! `p1 - s1 + s2`, and past 38 digits in all the scale gives way down to 6. The last digit is
//! rounded half away from zero, as PostgreSQL and Spark round. A quotient beyond its type fails,
//! as other decimal arithmetic does.
//!
//! [`rewrite`] runs before DataFusion's type coercion (from `float_decimal.rs`'s rule), so that
//! the expressions around a quotient are typed from its type, not arrow's.

use std::sync::{Arc, LazyLock};

use arrow::array::{Array, ArrayRef, AsArray, Decimal128Array};
use arrow::datatypes::{i256, DataType, Decimal128Type, Field, FieldRef, DECIMAL128_MAX_PRECISION};
use datafusion::common::{exec_err, plan_err, DFSchema, Result, ScalarValue};
use datafusion::logical_expr::expr::{BinaryExpr, ScalarFunction};
use datafusion::logical_expr::{
    ColumnarValue, Expr, ExprSchemable, Operator, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

/// The UDF `a / b` of two decimals becomes.
static DECIMAL_DIVIDE: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| Arc::new(ScalarUDF::new_from_impl(DecimalDivide::default())));

/// `a / b` as a call of [`DECIMAL_DIVIDE`] when it divides decimals (an integer side as the
/// decimal coercion would make it), else None.
pub(crate) fn rewrite(expr: &Expr, schema: &DFSchema) -> Result<Option<Expr>> {
    let Expr::BinaryExpr(BinaryExpr { left, op: Operator::Divide, right }) = expr else {
        return Ok(None);
    };
    let (lt, rt) = (left.get_type(schema)?, right.get_type(schema)?);
    let decimal = |t: &DataType| precision_and_scale(t).is_some();
    if !(decimal(&lt) && (decimal(&rt) || rt.is_integer()) || decimal(&rt) && lt.is_integer()) {
        return Ok(None);
    }
    let as_decimal = |e: &Expr, t: &DataType| -> Result<Expr> {
        Ok(match (literal_digits(e), integer_as_decimal(t)) {
            // An integer literal counts its own digits (`price / 2` is not a division by a
            // bigint of 20), as in Spark.
            (Some(digits), Some(_)) => e.clone().cast_to(&DataType::Decimal128(digits, 0), schema)?,
            (None, Some(d)) => e.clone().cast_to(&d, schema)?,
            (_, None) => e.clone(),
        })
    };
    Ok(Some(Expr::ScalarFunction(ScalarFunction::new_udf(Arc::clone(&DECIMAL_DIVIDE), vec![as_decimal(left, &lt)?, as_decimal(right, &rt)?]))))
}

/// The digits of an integer literal, if `e` is one.
fn literal_digits(e: &Expr) -> Option<u8> {
    let Expr::Literal(value, _) = e else { return None };
    let digits = |v: u128| v.checked_ilog10().map_or(1, |d| d as u8 + 1);
    Some(match value {
        ScalarValue::Int8(Some(v)) => digits(v.unsigned_abs().into()),
        ScalarValue::Int16(Some(v)) => digits(v.unsigned_abs().into()),
        ScalarValue::Int32(Some(v)) => digits(v.unsigned_abs().into()),
        ScalarValue::Int64(Some(v)) => digits(v.unsigned_abs().into()),
        ScalarValue::UInt8(Some(v)) => digits((*v).into()),
        ScalarValue::UInt16(Some(v)) => digits((*v).into()),
        ScalarValue::UInt32(Some(v)) => digits((*v).into()),
        ScalarValue::UInt64(Some(v)) => digits((*v).into()),
        _ => return None,
    })
}

/// The decimal type DataFusion's coercion gives an integer type meeting a decimal.
fn integer_as_decimal(t: &DataType) -> Option<DataType> {
    Some(match t {
        DataType::Int8 | DataType::UInt8 => DataType::Decimal128(3, 0),
        DataType::Int16 | DataType::UInt16 => DataType::Decimal128(5, 0),
        DataType::Int32 | DataType::UInt32 => DataType::Decimal128(10, 0),
        DataType::Int64 | DataType::UInt64 => DataType::Decimal128(20, 0),
        _ => return None,
    })
}

fn precision_and_scale(t: &DataType) -> Option<(u8, i8)> {
    match t {
        DataType::Decimal32(p, s) | DataType::Decimal64(p, s) | DataType::Decimal128(p, s) => Some((*p, *s)),
        _ => None,
    }
}

/// The quotient's type for a dividend `decimal(p1, s1)` and divisor `decimal(p2, s2)`.
fn quotient_type(p1: u8, s1: i8, p2: u8, s2: i8) -> (u8, i8) {
    let (p1, s1, p2, s2) = (i32::from(p1), i32::from(s1), i32::from(p2), i32::from(s2));
    let integer_digits = (p1 - s1 + s2).max(1);
    let scale = (s1 + p2 + 1).max(6);
    let max = i32::from(DECIMAL128_MAX_PRECISION);
    let (precision, scale) =
        if integer_digits + scale <= max { (integer_digits + scale, scale) } else { (max, (max - integer_digits).max(scale.min(6))) };
    (precision as u8, scale as i8)
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct DecimalDivide {
    signature: Signature,
}

impl Default for DecimalDivide {
    fn default() -> Self {
        DecimalDivide { signature: Signature::any(2, Volatility::Immutable) }
    }
}

impl ScalarUDFImpl for DecimalDivide {
    fn name(&self) -> &str {
        "sluice_decimal_divide"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        match (precision_and_scale(&arg_types[0]), precision_and_scale(&arg_types[1])) {
            (Some((p1, s1)), Some((p2, s2))) => {
                let (p, s) = quotient_type(p1, s1, p2, s2);
                Ok(DataType::Decimal128(p, s))
            }
            _ => plan_err!("sluice_decimal_divide of {} and {}", arg_types[0], arg_types[1]),
        }
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let nullable = args.arg_fields.iter().any(|f| f.is_nullable());
        let types: Vec<DataType> = args.arg_fields.iter().map(|f| f.data_type().clone()).collect();
        Ok(Arc::new(Field::new(self.name(), self.return_type(&types)?, nullable)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let scalar = args.args.iter().all(|a| matches!(a, ColumnarValue::Scalar(_)));
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let out = divide(&arrays[0], &arrays[1], args.return_field.data_type())?;
        Ok(if scalar { ColumnarValue::Scalar(ScalarValue::try_from_array(&out, 0)?) } else { ColumnarValue::Array(out) })
    }
}

fn as_decimal128(values: &ArrayRef) -> Result<(Decimal128Array, i8)> {
    let Some((p, s)) = precision_and_scale(values.data_type()) else {
        return exec_err!("sluice_decimal_divide of {}", values.data_type());
    };
    let wide = arrow::compute::cast(values, &DataType::Decimal128(p, s))?;
    Ok((wide.as_primitive::<Decimal128Type>().clone(), s))
}

fn divide(dividends: &ArrayRef, divisors: &ArrayRef, result: &DataType) -> Result<ArrayRef> {
    let &DataType::Decimal128(precision, scale) = result else {
        return exec_err!("sluice_decimal_divide to {result}");
    };
    let (left, s1) = as_decimal128(dividends)?;
    let (right, s2) = as_decimal128(divisors)?;
    // value = l / 10^s1 ÷ (r / 10^s2), as an integer of `scale`: l · 10^(scale - s1 + s2) / r.
    let shift = i32::from(scale) - i32::from(s1) + i32::from(s2);
    let ten = i256::from_i128(10);
    let power = |n: i32| ten.checked_pow(n as u32);
    let limit = i256::from_i128(10_i128.pow(u32::from(precision)));
    let mut out = Vec::with_capacity(left.len());
    for row in 0..left.len() {
        if left.is_null(row) || right.is_null(row) {
            out.push(None);
            continue;
        }
        let (l, r) = (i256::from_i128(left.value(row)), i256::from_i128(right.value(row)));
        if r == i256::ZERO {
            return exec_err!("Divide by zero error");
        }
        let (numerator, denominator) =
            if shift >= 0 { (power(shift).and_then(|p| l.checked_mul(p)), Some(r)) } else { (Some(l), power(-shift).and_then(|p| r.checked_mul(p))) };
        let (Some(numerator), Some(denominator)) = (numerator, denominator) else {
            return exec_err!("decimal division overflow: {} / {} does not fit decimal({precision}, {scale})", shown(&left, row), shown(&right, row));
        };
        let mut quotient = numerator / denominator;
        let remainder = numerator % denominator;
        // Half away from zero: the remainder at least half the divisor moves one unit outwards.
        if remainder.wrapping_abs().wrapping_mul(i256::from_i128(2)) >= denominator.wrapping_abs() {
            quotient = if (numerator < i256::ZERO) != (denominator < i256::ZERO) { quotient - i256::ONE } else { quotient + i256::ONE };
        }
        if quotient.wrapping_abs() >= limit {
            return exec_err!("decimal division overflow: {} / {} does not fit decimal({precision}, {scale})", shown(&left, row), shown(&right, row));
        }
        out.push(Some(quotient.as_i128()));
    }
    Ok(Arc::new(Decimal128Array::from(out).with_precision_and_scale(precision, scale)?))
}

fn shown(values: &Decimal128Array, row: usize) -> String {
    values.value_as_string(row)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transform::SqlTransform;
    use arrow::array::RecordBatch;
    use arrow::datatypes::Schema;

    fn run(sql: &str, columns: Vec<(&str, ArrayRef)>) -> std::result::Result<(Vec<String>, DataType), String> {
        let schema = Arc::new(Schema::new(columns.iter().map(|(n, a)| Field::new(*n, a.data_type().clone(), true)).collect::<Vec<_>>()));
        let batch = RecordBatch::try_new(Arc::clone(&schema), columns.into_iter().map(|(_, a)| a).collect()).unwrap();
        let mut t = SqlTransform::new(sql, vec![("t".to_string(), schema)]).map_err(|e| e.to_string())?;
        t.push(0, batch).map_err(|e| e.to_string())?;
        let mut shown = Vec::new();
        while let Some(b) = t.next_output() {
            let column = b.column(0);
            let f = arrow::util::display::ArrayFormatter::try_new(column.as_ref(), &Default::default()).unwrap();
            shown.extend((0..b.num_rows()).map(|row| f.value(row).to_string()));
        }
        Ok((shown, t.output_schema().field(0).data_type().clone()))
    }

    fn decimals(values: &[Option<i128>], p: u8, s: i8) -> ArrayRef {
        Arc::new(Decimal128Array::from(values.to_vec()).with_precision_and_scale(p, s).unwrap())
    }

    #[test]
    fn small_quotients_keep_their_digits_and_the_last_one_is_rounded() {
        let a = decimals(&[Some(2), Some(1), Some(-2), Some(0), None], 10, 0);
        let b = decimals(&[Some(3), Some(30000), Some(3), Some(7), Some(1)], 10, 0);
        let (out, t) = run("SELECT a / b AS q FROM t", vec![("a", a), ("b", b)]).unwrap();
        // PostgreSQL: 0.66666666666666666667, 0.000033333333333333333333, -0.66666666666666666667, 0.
        assert_eq!(t, DataType::Decimal128(21, 11));
        assert_eq!(out, ["0.66666666667", "0.00003333333", "-0.66666666667", "0.00000000000", ""]);
    }

    #[test]
    fn scales_of_both_sides_count() {
        // 1.00 / 3.00 and 26.75 / 3.00 (PostgreSQL 0.33333333333333333333, 8.9166666666666667).
        let p = decimals(&[Some(100), Some(2675)], 10, 2);
        let q = decimals(&[Some(300), Some(300)], 10, 2);
        let (out, t) = run("SELECT p / q AS r FROM t", vec![("p", p), ("q", q)]).unwrap();
        assert_eq!(t, DataType::Decimal128(23, 13));
        assert_eq!(out, ["0.3333333333333", "8.9166666666667"]);
        // A bigint divided by a decimal is a decimal division too (the bigint as decimal(20, 0)).
        let n: ArrayRef = Arc::new(arrow::array::Int64Array::from(vec![10]));
        let d = decimals(&[Some(3)], 5, 1);
        let (out, _) = run("SELECT n / d AS r FROM t", vec![("n", n), ("d", d)]).unwrap();
        assert_eq!(out, ["33.333333"]);
        // An integer literal as a decimal of its digits: decimal(5, 1) / decimal(1, 0).
        let d = decimals(&[Some(25)], 5, 1);
        let (out, t) = run("SELECT d / 2 AS half, d / -40 AS other FROM t", vec![("d", d)]).unwrap();
        assert_eq!((out, t), (vec!["1.250000".to_string()], DataType::Decimal128(10, 6)));
    }

    #[test]
    fn wide_types_give_up_scale_down_to_six_and_a_quotient_too_large_fails() {
        assert_eq!(quotient_type(38, 0, 38, 0), (38, 6));
        assert_eq!(quotient_type(38, 10, 10, 2), (38, 8));
        let big = decimals(&[Some(10_i128.pow(37))], 38, 0);
        let tiny = decimals(&[Some(1)], 38, 10);
        let err = run("SELECT a / b AS q FROM t", vec![("a", big), ("b", tiny)]).unwrap_err();
        assert!(err.contains("decimal division overflow"), "{err}");
        let zero = decimals(&[Some(0)], 10, 0);
        let one = decimals(&[Some(1)], 10, 0);
        assert!(run("SELECT a / b AS q FROM t", vec![("a", one), ("b", zero)]).unwrap_err().contains("Divide by zero"));
    }
}
