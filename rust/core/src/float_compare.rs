//! Floats compared as PostgreSQL compares them: -0.0 equals 0.0, and every NaN equals every
//! other NaN and sorts above every number.
//!
//! arrow's comparison kernels order floats by IEEE 754's totalOrder, in which the sign bit
//! counts: -0.0 is below 0.0, and a NaN with its sign bit set is below -infinity. DataFusion
//! corrects the zeros for the comparison operators but not for a simple `CASE x WHEN 0.0`,
//! an IN list long enough to be hashed, GREATEST or LEAST, and corrects no NaN. The NaN that x86
//! computes for `0.0 / 0.0`, `inf - inf` or `0 * inf` has its sign bit set, so `x / y < 0` was
//! true for 0 / 0, `x / y = 'NaN'` false, GREATEST(x / y, 1.0) 1.0 and `-0.0 IN (0.0, …)` false.
//!
//! [`rewrite`] (called by the checked-arithmetic analyzer rule on every expression, after type
//! coercion) wraps the float operands of those comparisons in [`CANONICAL`], which makes every
//! NaN the positive quiet NaN and -0.0 0.0; under totalOrder these then compare as PostgreSQL
//! says. An array with neither is returned as it is.

use std::sync::{Arc, LazyLock};

use arrow::array::{Array, ArrayRef, AsArray, PrimitiveArray};
use arrow::datatypes::{ArrowPrimitiveType, DataType, Field, FieldRef, Float32Type, Float64Type};
use datafusion::common::{DFSchema, Result, ScalarValue};
use datafusion::logical_expr::expr::{Between, BinaryExpr, Case, InList, InSubquery, ScalarFunction};
use datafusion::logical_expr::{
    ColumnarValue, Expr, ExprSchemable, Operator, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

use crate::checked_arithmetic::call;

/// The expression that replaces `expr`, or None to keep it.
pub(crate) fn rewrite(expr: &Expr, schema: &DFSchema) -> Result<Option<Expr>> {
    let is_float = |e: &Expr| -> Result<bool> { Ok(matches!(e.get_type(schema)?, DataType::Float32 | DataType::Float64)) };
    Ok(match expr {
        Expr::BinaryExpr(BinaryExpr { left, op, right }) if is_comparison(*op) && is_float(left)? && is_float(right)? => {
            if is_canonical(left) && is_canonical(right) {
                return Ok(None);
            }
            Some(Expr::BinaryExpr(BinaryExpr::new(Box::new(canonical(left)), *op, Box::new(canonical(right)))))
        }
        Expr::Between(Between { expr: value, negated, low, high }) if is_float(value)? && !is_canonical(value) => {
            Some(Expr::Between(Between::new(Box::new(canonical(value)), *negated, Box::new(canonical(low)), Box::new(canonical(high)))))
        }
        Expr::InList(InList { expr: value, list, negated }) if is_float(value)? && !is_canonical(value) => {
            Some(Expr::InList(InList::new(Box::new(canonical(value)), list.iter().map(canonical).collect(), *negated)))
        }
        Expr::Case(Case { expr: Some(base), when_then_expr, else_expr }) if is_float(base)? && !is_canonical(base) => {
            let when_then = when_then_expr.iter().map(|(when, then)| (Box::new(canonical(when)), then.clone())).collect();
            Some(Expr::Case(Case::new(Some(Box::new(canonical(base))), when_then, else_expr.clone())))
        }
        Expr::InSubquery(InSubquery { expr: value, subquery, negated }) if is_float(value)? && !is_canonical(value) => {
            Some(Expr::InSubquery(InSubquery::new(Box::new(canonical(value)), subquery.clone(), *negated)))
        }
        // NULLIF(a, b) is a when they differ: compared canonical, a kept as it is (a is evaluated
        // twice, so not when it is volatile: random() would be two numbers).
        Expr::ScalarFunction(ScalarFunction { func, args })
            if func.name() == "nullif" && args.len() == 2 && is_float(&args[0])? && !args[0].is_volatile() =>
        {
            let equal = Expr::BinaryExpr(BinaryExpr::new(Box::new(canonical(&args[0])), Operator::Eq, Box::new(canonical(&args[1]))));
            let null = Expr::Literal(ScalarValue::try_from(&args[0].get_type(schema)?)?, None);
            Some(Expr::Case(Case::new(None, vec![(Box::new(equal), Box::new(null))], Some(Box::new(args[0].clone())))))
        }
        Expr::ScalarFunction(ScalarFunction { func, args })
            if matches!(func.name(), "greatest" | "least") && is_float(expr)? && !args.iter().all(is_canonical) =>
        {
            Some(Expr::ScalarFunction(ScalarFunction::new_udf(Arc::clone(func), args.iter().map(canonical).collect())))
        }
        _ => None,
    })
}

fn is_comparison(op: Operator) -> bool {
    use Operator::*;
    matches!(op, Eq | NotEq | Lt | LtEq | Gt | GtEq | IsDistinctFrom | IsNotDistinctFrom)
}

fn is_canonical(expr: &Expr) -> bool {
    matches!(expr, Expr::ScalarFunction(ScalarFunction { func, .. }) if func.name() == CANONICAL.name())
}

fn canonical(expr: &Expr) -> Expr {
    if is_canonical(expr) {
        expr.clone()
    } else {
        call(&CANONICAL, vec![expr.clone()])
    }
}

/// A float with every NaN the positive quiet NaN and -0.0 as 0.0. Not registered by name.
static CANONICAL: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| Arc::new(ScalarUDF::new_from_impl(Canonical::default())));

#[derive(Debug, PartialEq, Eq, Hash)]
struct Canonical {
    signature: Signature,
}

impl Default for Canonical {
    fn default() -> Self {
        Canonical { signature: Signature::uniform(1, vec![DataType::Float32, DataType::Float64], Volatility::Immutable) }
    }
}

impl ScalarUDFImpl for Canonical {
    fn name(&self) -> &str {
        "sluice_float_canonical"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        Ok(arg_types[0].clone())
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let field = &args.arg_fields[0];
        Ok(Arc::new(Field::new(self.name(), field.data_type().clone(), field.is_nullable())))
    }

    fn is_strict(&self) -> bool {
        true
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        Ok(match &args.args[0] {
            ColumnarValue::Array(values) => ColumnarValue::Array(canonical_floats(values)),
            ColumnarValue::Scalar(value) => ColumnarValue::Scalar(match value {
                ScalarValue::Float64(Some(v)) => ScalarValue::Float64(Some(canonical_f64(*v))),
                ScalarValue::Float32(Some(v)) => ScalarValue::Float32(Some(canonical_f32(*v))),
                other => other.clone(),
            }),
        })
    }
}

fn canonical_f64(v: f64) -> f64 {
    if v.is_nan() {
        f64::NAN
    } else {
        v + 0.0 // -0.0 + 0.0 is 0.0; every other value is itself
    }
}

fn canonical_f32(v: f32) -> f32 {
    if v.is_nan() {
        f32::NAN
    } else {
        v + 0.0
    }
}

/// `values` with its floats canonical; the same array when they hold no NaN and no -0.0.
pub(crate) fn canonical_floats(values: &ArrayRef) -> ArrayRef {
    // Float operations only (is_nan compares a value with itself, copysign reads the sign), which
    // vectorize on every x86-64, where 64-bit integer comparisons need SSE4. Every NaN counts,
    // the positive one too: telling them apart needs the bits.
    match values.data_type() {
        DataType::Float64 => canonical_array::<Float64Type>(values, |v| v.is_nan() | ((v == 0.0) & (1.0f64.copysign(v) < 0.0)), canonical_f64),
        DataType::Float32 => canonical_array::<Float32Type>(values, |v| v.is_nan() | ((v == 0.0) & (1.0f32.copysign(v) < 0.0)), canonical_f32),
        _ => Arc::clone(values),
    }
}

fn canonical_array<T: ArrowPrimitiveType>(
    values: &ArrayRef,
    changes: impl Fn(T::Native) -> bool,
    canonical: impl Fn(T::Native) -> T::Native,
) -> ArrayRef {
    let floats = values.as_primitive::<T>();
    if !floats.values().chunks(256).any(|block| block.iter().fold(false, |any, &v| any | changes(v))) {
        return Arc::clone(values);
    }
    let out: PrimitiveArray<T> = floats.unary(canonical);
    Arc::new(out)
}

#[cfg(test)]
mod tests {
    use crate::transform::run_bounded_query;
    use arrow::array::{ArrayRef, Float32Array, Float64Array, Int64Array, RecordBatch};
    use std::sync::Arc;

    /// 0.0 / 0.0 on x86 is a NaN with its sign bit set; `-x` of a NaN is one too.
    const NEGATIVE_NAN: f64 = f64::from_bits(0xfff8_0000_0000_0000);

    fn floats() -> RecordBatch {
        let x = Float64Array::from(vec![-0.0, 0.0, 1.5, f64::NAN, NEGATIVE_NAN, -1.0, f64::INFINITY]);
        let r = Float32Array::from(vec![-0.0, 0.0, 1.5, f32::NAN, -f32::NAN, -1.0, f32::INFINITY]);
        let id = Int64Array::from((0..x.len() as i64).collect::<Vec<_>>());
        RecordBatch::try_from_iter([("id", Arc::new(id) as ArrayRef), ("x", Arc::new(x) as ArrayRef), ("r", Arc::new(r) as ArrayRef)]).unwrap()
    }

    fn ids(sql: &str) -> Vec<i64> {
        let out = run_bounded_query(sql, "t", floats()).unwrap_or_else(|e| panic!("{sql}: {}", e.message));
        out.column(0).as_any().downcast_ref::<Int64Array>().unwrap().values().to_vec()
    }

    #[test]
    fn nans_are_equal_and_above_every_number() {
        // Both NaNs, whatever their sign bit, are NaN; neither is below a number.
        assert_eq!(ids("SELECT id FROM t WHERE x = CAST('NaN' AS DOUBLE) ORDER BY id"), [3, 4]);
        assert_eq!(ids("SELECT id FROM t WHERE x < 0 ORDER BY id"), [5]);
        assert_eq!(ids("SELECT id FROM t WHERE x > 1e308 ORDER BY id"), [3, 4, 6]);
        assert_eq!(ids("SELECT id FROM t WHERE r < 0 ORDER BY id"), [5]);
        assert_eq!(ids("SELECT id FROM t WHERE x BETWEEN -2 AND 0 ORDER BY id"), [0, 1, 5]);
        assert_eq!(ids("SELECT id FROM t WHERE (x IS NOT DISTINCT FROM -x) AND x <> 0 ORDER BY id"), [3, 4]);
        assert_eq!(ids("SELECT id FROM t WHERE isnan(GREATEST(x, 1.0)) ORDER BY id"), [3, 4]);
        assert_eq!(ids("SELECT id FROM t WHERE LEAST(x, 2.0) = 2.0 ORDER BY id"), [3, 4, 6]);
        assert_eq!(ids("SELECT id FROM t WHERE CASE x WHEN CAST('NaN' AS DOUBLE) THEN true ELSE false END ORDER BY id"), [3, 4]);
        assert_eq!(ids("SELECT id FROM t WHERE NULLIF(x, CAST('NaN' AS DOUBLE)) IS NULL ORDER BY id"), [3, 4]);
        assert_eq!(ids("SELECT id FROM t WHERE NULLIF(x, 0.0) IS NULL ORDER BY id"), [0, 1]);
        assert_eq!(ids("SELECT id FROM t WHERE x IN (SELECT CAST('NaN' AS DOUBLE)) ORDER BY id"), [3, 4]);
    }

    /// A simple CASE and a hashed IN list compared -0.0 and 0.0 as different numbers.
    #[test]
    fn negative_zero_is_zero() {
        assert_eq!(ids("SELECT id FROM t WHERE CASE x WHEN 0.0 THEN true ELSE false END ORDER BY id"), [0, 1]);
        assert_eq!(ids("SELECT id FROM t WHERE CASE r WHEN -0.0 THEN true ELSE false END ORDER BY id"), [0, 1]);
        let long_list = (10..40).map(|n| format!("{n}.0")).collect::<Vec<_>>().join(", ");
        assert_eq!(ids(&format!("SELECT id FROM t WHERE x IN (0.0, {long_list}) ORDER BY id")), [0, 1]);
        assert_eq!(ids(&format!("SELECT id FROM t WHERE x NOT IN (-0.0, {long_list}) ORDER BY id")), [2, 3, 4, 5, 6]);
        assert_eq!(ids(&format!("SELECT id FROM t WHERE r IN (0.0, {long_list}) ORDER BY id")), [0, 1]);
        assert_eq!(ids("SELECT id FROM t WHERE x = 0 ORDER BY id"), [0, 1]);
    }

    /// The values themselves pass unchanged: only what they are compared as is canonical.
    #[test]
    fn values_keep_their_bits() {
        let out = run_bounded_query("SELECT x FROM t WHERE x = 0 ORDER BY id", "t", floats()).unwrap();
        let x = out.column(0).as_any().downcast_ref::<Float64Array>().unwrap();
        assert!(x.value(0).is_sign_negative() && x.value(1).is_sign_positive());
    }
}
