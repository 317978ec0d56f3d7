//! Arithmetic that fails instead of giving a wrong number.
//!
//! DataFusion's planner builds `+`, `-`, `*` and unary `-` on integers as wrapping operations:
//! `bigint 9223372036854775807 + 1` is `-9223372036854775808` and `smallint 32767 + 32767` is
//! `-2`, silently. Decimal arithmetic whose result precision is capped at the type's maximum
//! (38 digits for Decimal128) can hold values with more digits than the type says, which a
//! Parquet or Avro reader then rejects or misreads. A streaming engine must not emit either, so
//! every session of the core runs [`CheckedArithmetic`] after type coercion: it replaces integer
//! `+ - *` and negation with calls to checked kernels (arrow's `add`, `sub`, `mul`, `neg`, which
//! fail on overflow in a valid row), and wraps capped decimal arithmetic in a precision check.
//! `to_timestamp` of float seconds, which saturates (an epoch in milliseconds became 2262-04-11,
//! NaN 1970-01-01), gets its argument checked against the nanosecond range first. A CAST to a
//! float type that makes a finite value infinite (`CAST(1e300 AS REAL)`, `CAST('1e400' AS
//! DOUBLE)`) fails as a CAST to an integer type does (a TRY_CAST gives NULL); one to a coarser
//! timestamp unit, which arrow divides toward zero, is corrected to truncate toward the past.
//! `date_bin`, which gives NULL for an instant outside nanoseconds' years 1677 to 2262 (a
//! `timestamp(us)` of 9999-12-31), fails there instead.
//! Interval comparisons, `extract` from a duration and a date ± an interval are corrected by
//! the same rule (`temporal_sql.rs`), and so are comparisons of floats (`float_compare.rs`) and
//! `to_hex` of an int (`functions.rs`).
//! The failure names the values (`Arithmetic overflow: Overflow happened on: 9223372036854775807
//! + 1`) and, like a failed CAST, fails the batch and the run.

use std::sync::{Arc, LazyLock};

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::compute::kernels::numeric;
use arrow::datatypes::{DataType, Decimal128Type, Decimal256Type, Decimal32Type, Decimal64Type, DecimalType, Field, FieldRef};
use arrow::datatypes::{DECIMAL128_MAX_PRECISION, DECIMAL256_MAX_PRECISION, DECIMAL32_MAX_PRECISION, DECIMAL64_MAX_PRECISION};
use arrow::error::ArrowError;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{exec_err, DFSchema, DataFusionError, Result, ScalarValue};
use datafusion::logical_expr::expr::{BinaryExpr, Cast, ScalarFunction, TryCast};
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::utils::merge_schema;
use datafusion::logical_expr::{
    ColumnarValue, Expr, ExprSchemable, LogicalPlan, Operator, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use datafusion::optimizer::analyzer::AnalyzerRule;
use datafusion::physical_expr_common::datum::apply;

/// The analyzer rule; add it to a session after DataFusion's own (type coercion comes first).
#[derive(Debug, Default)]
pub struct CheckedArithmetic;

impl AnalyzerRule for CheckedArithmetic {
    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        Ok(plan.transform_up_with_subqueries(check_node)?.data)
    }

    fn name(&self) -> &str {
        "sluice_checked_arithmetic"
    }
}

fn check_node(node: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
    rewrite_expressions(node, check_expr)
}

/// Rewrites every expression of `node` bottom-up with `rewrite` (given the schema its columns
/// come from), keeping the expressions' names; the node's schema is worked out again if any
/// changed. The walk of this rule and of `float_decimal`'s.
pub(crate) fn rewrite_expressions(
    node: LogicalPlan,
    rewrite: impl Fn(Expr, &DFSchema) -> Result<Transformed<Expr>>,
) -> Result<Transformed<LogicalPlan>> {
    let mut schema = merge_schema(&node.inputs());
    if let LogicalPlan::TableScan(scan) = &node {
        schema.merge(&DFSchema::try_from_qualified_schema(scan.table_name.clone(), &scan.source.schema())?);
    }
    let names = NamePreserver::new(&node);
    let node = node.map_expressions(|expr| {
        let name = names.save(&expr);
        Ok(expr.transform_up(|e| rewrite(e, &schema))?.update_data(|e| name.restore(e)))
    })?;
    if node.transformed {
        node.map_data(|plan| plan.recompute_schema())
    } else {
        Ok(node)
    }
}

fn check_expr(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    if let Some(rewritten) = crate::temporal_sql::rewrite(&expr, schema)? {
        return Ok(Transformed::yes(rewritten));
    }
    if let Some(rewritten) = crate::float_compare::rewrite(&expr, schema)? {
        return Ok(Transformed::yes(rewritten));
    }
    if let Some(rewritten) = crate::functions::rewrite(&expr, schema)? {
        return Ok(Transformed::yes(rewritten));
    }
    if let Some((source, target, is_try)) = cast_of(&expr, schema)? {
        let from = source.get_type(schema)?;
        // arrow reads a timestamp's text as a date in UTC: '2024-01-01T23:00:00-05:00' was
        // 2024-01-02. The date written is PostgreSQL's.
        if matches!(target, DataType::Date32 | DataType::Date64) && matches!(from, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View) {
            let text = Box::new(crate::temporal_sql::date_as_written(source));
            return Ok(Transformed::yes(if is_try { Expr::TryCast(TryCast::new(text, target)) } else { Expr::Cast(Cast::new(text, target)) }));
        }
        // A cast to a coarser timestamp unit divides toward zero: 1969-12-31T23:59:59.999 became
        // 1970-01-01T00:00:00 as seconds. An instant truncates toward the past.
        if finer_timestamp(&from, &target) {
            return Ok(Transformed::yes(call(&TIMESTAMP_FLOORED, vec![expr, source])));
        }
        // arrow's decimal to double rounds twice (see float_decimal.rs).
        if target == DataType::Float64
            && matches!(from, DataType::Decimal32(..) | DataType::Decimal64(..) | DataType::Decimal128(..) | DataType::Decimal256(..))
        {
            return Ok(Transformed::yes(call(&crate::float_decimal::DECIMAL_AS_DOUBLE, vec![source])));
        }
        // A cast to a float type makes a finite value too large for it infinite (1e300 as REAL,
        // '1e400' as DOUBLE), where a cast to an integer or decimal type fails.
        if target.is_floating() && can_overflow_to_infinity(&from, &target) {
            let check = if is_try { &FLOAT_IN_RANGE_OR_NULL } else { &FLOAT_IN_RANGE };
            return Ok(Transformed::yes(call(check, vec![expr, source])));
        }
        return Ok(Transformed::no(expr));
    }
    match &expr {
        Expr::BinaryExpr(BinaryExpr { left, op, right }) if is_arithmetic(*op) => {
            let result = expr.get_type(schema)?;
            let integer_check = match op {
                Operator::Plus => Some(&*CHECKED_ADD),
                Operator::Minus => Some(&*CHECKED_SUB),
                Operator::Multiply => Some(&*CHECKED_MUL),
                _ => None, // integer division and remainder already fail on overflow
            };
            match integer_check {
                Some(checked) if result.is_integer() => {
                    // Coercion gives both sides the result's type; cast in case a rule did not.
                    let left = left.as_ref().clone().cast_to(&result, schema)?;
                    let right = right.as_ref().clone().cast_to(&result, schema)?;
                    Ok(Transformed::yes(call(checked, vec![left, right])))
                }
                _ if at_max_precision(&result) => Ok(Transformed::yes(call(&DECIMAL_IN_PRECISION, vec![expr]))),
                _ => Ok(Transformed::no(expr)),
            }
        }
        Expr::Negative(inner) if inner.get_type(schema)?.is_signed_integer() => {
            let inner = inner.as_ref().clone();
            Ok(Transformed::yes(call(&CHECKED_NEG, vec![inner])))
        }
        // date_bin computes in nanoseconds and gives NULL for an instant it cannot hold (a
        // timestamp(us) of 9999-12-31, a common "valid until" sentinel).
        Expr::ScalarFunction(ScalarFunction { func, args }) if func.name() == "date_bin" => {
            let checked = std::iter::once(expr.clone()).chain(args.iter().cloned()).collect();
            Ok(Transformed::yes(call(&DATE_BIN_DEFINED, checked)))
        }
        // A JSON number beyond a double's range (1e400) came out of json_get_float (and casts of
        // `->` to a float, which the JSON functions rewrite to it) as an infinity; JSON has none.
        Expr::ScalarFunction(ScalarFunction { func, args }) if func.name() == "json_get_float" && !args.is_empty() => {
            let checked = std::iter::once(expr.clone()).chain(args.iter().cloned()).collect();
            Ok(Transformed::yes(call(&JSON_FLOAT_FINITE, checked)))
        }
        // to_timestamp_seconds/_millis/_micros divide a finer timestamp toward zero, as a CAST
        // did (1969-12-31T23:59:59.9995 became 1970-01-01T00:00:00), and parse text to
        // nanoseconds first: floored like the CAST, from the finer value.
        Expr::ScalarFunction(ScalarFunction { func, args })
            if matches!(func.name(), "to_timestamp_seconds" | "to_timestamp_millis" | "to_timestamp_micros") && !args.is_empty() =>
        {
            let target = expr.get_type(schema)?;
            let source = match args[0].get_type(schema)? {
                from @ DataType::Timestamp(..) if finer_timestamp(&from, &target) => args[0].clone(),
                DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Expr::ScalarFunction(ScalarFunction::new_udf(
                    datafusion::functions::datetime::to_timestamp_nanos(&ConfigOptions::default()),
                    args.clone(),
                )),
                _ => return Ok(Transformed::no(expr)),
            };
            Ok(Transformed::yes(call(&TIMESTAMP_FLOORED, vec![expr, source])))
        }
        // to_timestamp(seconds as a float) converts to nanoseconds with a saturating `as i64`:
        // 1.7e12 (an epoch in milliseconds) became 2262-04-11, NaN 1970-01-01.
        Expr::ScalarFunction(ScalarFunction { func, args })
            if func.name() == "to_timestamp" && !args.is_empty() && args[0].get_type(schema)?.is_floating() =>
        {
            let mut args = args.clone();
            let seconds = args.remove(0);
            args.insert(0, call(&NANOSECONDS_IN_RANGE, vec![seconds]));
            Ok(Transformed::yes(Expr::ScalarFunction(ScalarFunction::new_udf(Arc::clone(func), args))))
        }
        // lpad/rpad to a negative length panicked in DataFusion ("capacity overflow"), failing
        // the run past on_error; PostgreSQL gives ''. A length below 0 counts as 0.
        Expr::ScalarFunction(ScalarFunction { func, args }) if matches!(func.name(), "lpad" | "rpad") && args.len() >= 2 => {
            let length = args[1].clone();
            let zero = Expr::Literal(ScalarValue::Int64(Some(0)), None).cast_to(&length.get_type(schema)?, schema)?;
            let at_least_zero = datafusion::logical_expr::when(length.clone().lt(zero.clone()), zero).otherwise(length)?;
            let mut args = args.clone();
            args[1] = at_least_zero;
            Ok(Transformed::yes(Expr::ScalarFunction(ScalarFunction::new_udf(Arc::clone(func), args))))
        }
        // DataFusion's `base64` leaves the padding out (`a` as `YQ`), which strict decoders
        // (Python's b64decode, Java's Base64.getDecoder) refuse; PostgreSQL, Flink and Spark
        // pad. `decode` reads either.
        Expr::ScalarFunction(ScalarFunction { func, args })
            if func.name() == "encode"
                && args.len() == 2
                && matches!(&args[1], Expr::Literal(ScalarValue::Utf8(Some(f)), _) if f.eq_ignore_ascii_case("base64")) =>
        {
            let args = vec![args[0].clone(), Expr::Literal(ScalarValue::Utf8(Some("base64pad".into())), None)];
            Ok(Transformed::yes(Expr::ScalarFunction(ScalarFunction::new_udf(Arc::clone(func), args))))
        }
        _ => Ok(Transformed::no(expr)),
    }
}

/// A conversion of one value to another type: CAST, TRY_CAST or `arrow_cast` (which the
/// optimizer turns into a CAST only after this rule). Its source, its type, and whether it is a
/// TRY_CAST.
fn cast_of(expr: &Expr, schema: &DFSchema) -> Result<Option<(Expr, DataType, bool)>> {
    Ok(match expr {
        Expr::Cast(Cast { expr: source, field }) => Some((source.as_ref().clone(), field.data_type().clone(), false)),
        Expr::TryCast(TryCast { expr: source, field }) => Some((source.as_ref().clone(), field.data_type().clone(), true)),
        Expr::ScalarFunction(ScalarFunction { func, args }) if func.name() == "arrow_cast" && !args.is_empty() => {
            Some((args[0].clone(), expr.get_type(schema)?, false))
        }
        _ => None,
    })
}

/// Whether `from` and `to` are timestamps and `to` has the coarser unit.
fn finer_timestamp(from: &DataType, to: &DataType) -> bool {
    match (from, to) {
        (DataType::Timestamp(from, _), DataType::Timestamp(to, _)) => units_per_second(from) > units_per_second(to),
        _ => false,
    }
}

fn units_per_second(unit: &arrow::datatypes::TimeUnit) -> i64 {
    use arrow::datatypes::TimeUnit;
    match unit {
        TimeUnit::Second => 1,
        TimeUnit::Millisecond => 1_000,
        TimeUnit::Microsecond => 1_000_000,
        TimeUnit::Nanosecond => 1_000_000_000,
    }
}

/// Whether a value of `from` can be finite and still too large for the float type `to`.
fn can_overflow_to_infinity(from: &DataType, to: &DataType) -> bool {
    let width = |t: &DataType| match t {
        DataType::Float16 => 2,
        DataType::Float32 => 4,
        _ => 8,
    };
    match from {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => true,
        DataType::Float16 | DataType::Float32 | DataType::Float64 => width(from) > width(to),
        // Every integer fits f32's range (2^128); decimals up to 38 digits too.
        DataType::Decimal256(_, _) => to != &DataType::Float64,
        _ if from.is_numeric() => to == &DataType::Float16,
        _ => false,
    }
}

fn is_arithmetic(op: Operator) -> bool {
    matches!(op, Operator::Plus | Operator::Minus | Operator::Multiply | Operator::Divide | Operator::Modulo)
}

/// A decimal type at its maximum precision: where arrow caps a result's precision, so a value
/// may have more digits than the type holds.
fn at_max_precision(data_type: &DataType) -> bool {
    match data_type {
        DataType::Decimal32(p, _) => *p >= DECIMAL32_MAX_PRECISION,
        DataType::Decimal64(p, _) => *p >= DECIMAL64_MAX_PRECISION,
        DataType::Decimal128(p, _) => *p >= DECIMAL128_MAX_PRECISION,
        DataType::Decimal256(p, _) => *p >= DECIMAL256_MAX_PRECISION,
        _ => false,
    }
}

/// A call of `udf` on `args` (also the interval rewrites', `temporal_sql.rs`).
pub(crate) fn call(udf: &Arc<ScalarUDF>, args: Vec<Expr>) -> Expr {
    Expr::ScalarFunction(ScalarFunction::new_udf(Arc::clone(udf), args))
}

#[derive(Debug, PartialEq, Eq, Hash, Clone, Copy)]
enum Check {
    Add,
    Sub,
    Mul,
    Neg,
    DecimalInPrecision,
    /// Seconds (a float) whose nanoseconds fit an i64 timestamp.
    NanosecondsInRange,
    /// A CAST to a float type (the first argument; the second is its source) that made no finite
    /// value infinite: fails, or for a TRY_CAST, makes it NULL.
    FloatInRange,
    FloatInRangeOrNull,
    /// A CAST to a coarser timestamp unit (the first argument; the second is its source),
    /// corrected from toward zero to toward the past.
    TimestampFloored,
    /// A date_bin (the first argument; the others are its arguments), NULL only where one of its
    /// arguments is.
    DateBinDefined,
    /// A json_get_float (the first argument; the others are its arguments) infinite only where its
    /// value is a string naming an infinity (`"inf"`), which it parses; JSON numbers have none.
    JsonFloatFinite,
}

static CHECKED_ADD: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| Checked::udf(Check::Add));
static CHECKED_SUB: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| Checked::udf(Check::Sub));
static CHECKED_MUL: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| Checked::udf(Check::Mul));
static CHECKED_NEG: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| Checked::udf(Check::Neg));
static DECIMAL_IN_PRECISION: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| Checked::udf(Check::DecimalInPrecision));
static NANOSECONDS_IN_RANGE: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| Checked::udf(Check::NanosecondsInRange));
static FLOAT_IN_RANGE: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| Checked::udf(Check::FloatInRange));
static FLOAT_IN_RANGE_OR_NULL: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| Checked::udf(Check::FloatInRangeOrNull));
static TIMESTAMP_FLOORED: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| Checked::udf(Check::TimestampFloored));
static DATE_BIN_DEFINED: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| Checked::udf(Check::DateBinDefined));
static JSON_FLOAT_FINITE: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| Checked::udf(Check::JsonFloatFinite));

/// One checked operation as a scalar function. Not registered by name: only the rule calls it.
#[derive(Debug, PartialEq, Eq, Hash)]
struct Checked {
    check: Check,
    signature: Signature,
}

impl Checked {
    fn udf(check: Check) -> Arc<ScalarUDF> {
        let signature = match check {
            Check::Add | Check::Sub | Check::Mul | Check::FloatInRange | Check::FloatInRangeOrNull | Check::TimestampFloored => {
                Signature::any(2, Volatility::Immutable)
            }
            Check::DateBinDefined | Check::JsonFloatFinite => Signature::variadic_any(Volatility::Immutable),
            _ => Signature::any(1, Volatility::Immutable),
        };
        Arc::new(ScalarUDF::new_from_impl(Checked { check, signature }))
    }
}

impl ScalarUDFImpl for Checked {
    fn name(&self) -> &str {
        match self.check {
            Check::Add => "sluice_checked_add",
            Check::Sub => "sluice_checked_sub",
            Check::Mul => "sluice_checked_mul",
            Check::Neg => "sluice_checked_neg",
            Check::DecimalInPrecision => "sluice_decimal_in_precision",
            Check::NanosecondsInRange => "sluice_nanoseconds_in_range",
            Check::FloatInRange => "sluice_float_in_range",
            Check::FloatInRangeOrNull => "sluice_float_in_range_or_null",
            Check::TimestampFloored => "sluice_timestamp_floored",
            Check::DateBinDefined => "sluice_date_bin_defined",
            Check::JsonFloatFinite => "sluice_json_float_finite",
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        Ok(arg_types[0].clone())
    }

    /// Nullable exactly when an operand is, as the operator it replaces: a NOT NULL column stays
    /// NOT NULL in derived Avro and Parquet schemas.
    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let nullable = args.arg_fields.iter().any(|f| f.is_nullable());
        Ok(Arc::new(Field::new(self.name(), args.arg_fields[0].data_type().clone(), nullable)))
    }

    /// NULL in, NULL out, so optimizer rules still see filters on the result as null-rejecting.
    fn is_strict(&self) -> bool {
        true
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        self.compute(&args.args).map_err(|e| match e {
            DataFusionError::ArrowError(error, _) if matches!(*error, ArrowError::ArithmeticOverflow(_)) => DataFusionError::Execution(format!(
                "{error}: the result does not fit {}; CAST an operand to a wider type (BIGINT, DECIMAL(38, 0))",
                args.return_field.data_type()
            )),
            other => other,
        })
    }
}

impl Checked {
    fn compute(&self, args: &[ColumnarValue]) -> Result<ColumnarValue> {
        match (self.check, args) {
            (Check::Add, [l, r]) => apply(l, r, numeric::add),
            (Check::Sub, [l, r]) => apply(l, r, numeric::sub),
            (Check::Mul, [l, r]) => apply(l, r, numeric::mul),
            (Check::Neg, [ColumnarValue::Array(a)]) => Ok(ColumnarValue::Array(numeric::neg(a)?)),
            (Check::Neg, [ColumnarValue::Scalar(s)]) => Ok(ColumnarValue::Scalar(ScalarValue::try_from_array(&numeric::neg(&s.to_array()?)?, 0)?)),
            (Check::DecimalInPrecision, [value]) => {
                match value {
                    ColumnarValue::Array(a) => in_precision(a)?,
                    ColumnarValue::Scalar(s) => in_precision(&s.to_array()?)?,
                }
                Ok(value.clone())
            }
            (Check::NanosecondsInRange, [value]) => {
                match value {
                    ColumnarValue::Array(a) => nanoseconds_in_range(a)?,
                    ColumnarValue::Scalar(s) => nanoseconds_in_range(&s.to_array()?)?,
                }
                Ok(value.clone())
            }
            (Check::FloatInRange | Check::FloatInRangeOrNull, [cast, source]) => {
                let scalar = matches!(cast, ColumnarValue::Scalar(_));
                let (cast, source) = (cast.to_array(1)?, source.to_array(1)?);
                let out = match (first_overflow(&cast, &source)?, self.check) {
                    (None, _) => cast,
                    (Some(row), Check::FloatInRange) => {
                        let value = arrow::util::display::ArrayFormatter::try_new(source.as_ref(), &Default::default())?.value(row).to_string();
                        return exec_err!("Cast error: Can't cast value {value} to type {}: it is beyond the type's range", cast.data_type());
                    }
                    (Some(_), _) => arrow::compute::nullif(&cast, &overflows(&cast, &source)?)?,
                };
                Ok(if scalar { ColumnarValue::Scalar(ScalarValue::try_from_array(&out, 0)?) } else { ColumnarValue::Array(out) })
            }
            (Check::TimestampFloored, [cast, source]) => {
                let scalar = matches!(cast, ColumnarValue::Scalar(_));
                let (cast, source) = (cast.to_array(1)?, source.to_array(1)?);
                let out = floored(&cast, &source)?;
                Ok(if scalar { ColumnarValue::Scalar(ScalarValue::try_from_array(&out, 0)?) } else { ColumnarValue::Array(out) })
            }
            (Check::DateBinDefined, [result, inputs @ ..]) if inputs.len() >= 2 => {
                let rows = args.iter().find_map(|a| if let ColumnarValue::Array(a) = a { Some(a.len()) } else { None }).unwrap_or(1);
                let result_array = result.to_array(rows)?;
                if result_array.null_count() == 0 {
                    return Ok(result.clone());
                }
                let inputs = ColumnarValue::values_to_arrays(inputs)?;
                let unexplained = (0..rows).find(|&row| result_array.is_null(row) && inputs.iter().all(|a| a.is_valid(row)));
                if let Some(row) = unexplained {
                    let value = arrow::util::display::ArrayFormatter::try_new(inputs[1].as_ref(), &Default::default())?.value(row).to_string();
                    return exec_err!(
                        "date_bin has no result for {value}: it computes in nanoseconds, years 1677 to 2262; leave such instants out (CASE WHEN or WHERE)"
                    );
                }
                Ok(result.clone())
            }
            (Check::JsonFloatFinite, [value, document, path @ ..]) => {
                let rows = args.iter().find_map(|a| if let ColumnarValue::Array(a) = a { Some(a.len()) } else { None }).unwrap_or(1);
                let values = value.to_array(rows)?;
                let floats = arrow::compute::cast(&values, &DataType::Float64)?;
                let floats = floats.as_primitive::<arrow::datatypes::Float64Type>();
                if !floats.values().iter().any(|v| v.is_infinite()) {
                    return Ok(value.clone());
                }
                let document = document.to_array(rows)?;
                let path = path.iter().map(|p| p.to_array(rows)).collect::<Result<Vec<_>>>()?;
                for row in (0..rows).filter(|&row| floats.is_valid(row) && floats.value(row).is_infinite()) {
                    let text = arrow::util::display::ArrayFormatter::try_new(document.as_ref(), &Default::default())?.value(row).to_string();
                    let keys = path.iter().map(|a| ScalarValue::try_from_array(a.as_ref(), row)).collect::<Result<Vec<_>>>()?;
                    if !names_an_infinity(&text, &keys) {
                        let shown: String = text.chars().take(200).collect();
                        return exec_err!(
                            "json_get_float: a number in {shown} is beyond a double's range (it would be infinite); read it with json_get_str, or leave the row out"
                        );
                    }
                }
                Ok(value.clone())
            }
            (check, args) => exec_err!("{check:?} was called with {} arguments", args.len()),
        }
    }
}

/// Fails naming the first valid value of seconds (a float) that is not a finite number of
/// nanoseconds an i64 holds (years 1677 to 2262).
fn nanoseconds_in_range(values: &ArrayRef) -> Result<()> {
    let seconds = arrow::compute::cast(values, &DataType::Float64)?;
    let seconds = seconds.as_primitive::<arrow::datatypes::Float64Type>();
    // 2^63 exactly: nanoseconds at or past it do not fit.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    let fits = |s: f64| (-LIMIT..LIMIT).contains(&(s * 1e9));
    match (0..seconds.len()).find(|&row| seconds.is_valid(row) && !fits(seconds.value(row))) {
        Some(row) => exec_err!(
            "to_timestamp: {} seconds is no timestamp in nanoseconds (years 1677 to 2262); for an epoch in other units use to_timestamp_millis, _micros or _seconds",
            seconds.value(row)
        ),
        None => Ok(()),
    }
}

/// `cast` (timestamps divided toward zero from `source`'s finer unit) one unit earlier where the
/// source was before 1970 and not on a whole unit.
fn floored(cast: &ArrayRef, source: &ArrayRef) -> Result<ArrayRef> {
    let (DataType::Timestamp(to, _), DataType::Timestamp(from, _)) = (cast.data_type(), source.data_type()) else {
        return exec_err!("sluice_timestamp_floored of {} from {}", cast.data_type(), source.data_type());
    };
    let ratio = units_per_second(from) / units_per_second(to);
    let raw = |a: &ArrayRef| arrow::compute::cast(a, &DataType::Int64);
    let (truncated, finer) = (raw(cast)?, raw(source)?);
    let (truncated, finer) = (truncated.as_primitive::<arrow::datatypes::Int64Type>(), finer.as_primitive::<arrow::datatypes::Int64Type>());
    let out: arrow::array::Int64Array = arrow::compute::kernels::arity::binary(truncated, finer, |t, f| t - i64::from(f % ratio < 0))?;
    Ok(arrow::array::make_array(out.into_data().into_builder().data_type(cast.data_type().clone()).build()?))
}

/// Where a cast to a float type is infinite though its source is no infinity: a finite number,
/// or text other than `inf`/`infinity` (any case, with a sign).
fn overflows(cast: &ArrayRef, source: &ArrayRef) -> Result<arrow::array::BooleanArray> {
    let cast = arrow::compute::cast(cast, &DataType::Float64)?;
    let cast = cast.as_primitive::<arrow::datatypes::Float64Type>();
    let source_is_infinite: Box<dyn Fn(usize) -> bool> = match source.data_type() {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
            let text = arrow::compute::cast(source, &DataType::Utf8)?;
            let text = text.as_string::<i32>().clone();
            Box::new(move |row| {
                let word = text.value(row).trim().trim_start_matches(['+', '-']);
                word.eq_ignore_ascii_case("inf") || word.eq_ignore_ascii_case("infinity")
            })
        }
        DataType::Float16 | DataType::Float32 | DataType::Float64 => {
            let wide = arrow::compute::cast(source, &DataType::Float64)?;
            let wide = wide.as_primitive::<arrow::datatypes::Float64Type>().clone();
            Box::new(move |row| wide.value(row).is_infinite())
        }
        _ => Box::new(|_| false),
    };
    Ok((0..cast.len()).map(|row| Some(cast.is_valid(row) && cast.value(row).is_infinite() && !source_is_infinite(row))).collect())
}

/// Whether the value json_get_float read at `path` in `document` is a string naming an infinity
/// (`"inf"`, `"-Infinity"`), rather than a number (or a string of one) beyond a double's range.
/// Called only for rows it made infinite, so the second parse costs nothing in the common case.
fn names_an_infinity(document: &str, path: &[ScalarValue]) -> bool {
    let Ok(mut value) = serde_json::from_str::<serde_json::Value>(document) else {
        return false; // serde_json refuses a number beyond a double: that is what was read
    };
    for key in path {
        value = match (value, key) {
            (
                serde_json::Value::Object(mut members),
                ScalarValue::Utf8(Some(k)) | ScalarValue::LargeUtf8(Some(k)) | ScalarValue::Utf8View(Some(k)),
            ) => members.remove(k.as_str()).unwrap_or_default(),
            (serde_json::Value::Array(items), index) => {
                let Ok(ScalarValue::Int64(Some(i))) = index.cast_to(&DataType::Int64) else { return false };
                let i = if i < 0 { items.len() as i64 + i } else { i };
                usize::try_from(i).ok().and_then(|i| items.into_iter().nth(i)).unwrap_or_default()
            }
            _ => return false,
        };
    }
    let serde_json::Value::String(text) = value else { return false };
    let word = text.trim().trim_start_matches(['+', '-']);
    word.eq_ignore_ascii_case("inf") || word.eq_ignore_ascii_case("infinity")
}

/// The first row `overflows` finds; a cast without an infinite value (the common case) costs one
/// pass over its values.
fn first_overflow(cast: &ArrayRef, source: &ArrayRef) -> Result<Option<usize>> {
    use arrow::datatypes::{Float16Type, Float32Type, Float64Type};
    let any_infinite = match cast.data_type() {
        DataType::Float16 => cast.as_primitive::<Float16Type>().values().iter().any(|v| v.is_infinite()),
        DataType::Float32 => cast.as_primitive::<Float32Type>().values().iter().any(|v| v.is_infinite()),
        DataType::Float64 => cast.as_primitive::<Float64Type>().values().iter().any(|v| v.is_infinite()),
        _ => false,
    };
    if !any_infinite {
        return Ok(None);
    }
    Ok(overflows(cast, source)?.iter().position(|o| o == Some(true)))
}

/// Fails naming the first valid value with more digits than its decimal type's precision.
fn in_precision(values: &ArrayRef) -> Result<(), ArrowError> {
    fn check<T: DecimalType>(values: &ArrayRef) -> Result<(), ArrowError> {
        let values = values.as_primitive::<T>();
        values.validate_decimal_precision(values.precision())
    }
    match values.data_type() {
        DataType::Decimal32(_, _) => check::<Decimal32Type>(values),
        DataType::Decimal64(_, _) => check::<Decimal64Type>(values),
        DataType::Decimal128(_, _) => check::<Decimal128Type>(values),
        DataType::Decimal256(_, _) => check::<Decimal256Type>(values),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transform::{run_bounded_query, SqlTransform};
    use arrow::array::{Decimal128Array, Int16Array, Int32Array, Int64Array, UInt32Array};
    use arrow::datatypes::{Field, Schema};
    use arrow::record_batch::RecordBatch;

    /// lpad/rpad to a negative length panicked in the core; PostgreSQL gives ''.
    #[test]
    fn padding_to_a_negative_length_is_empty() {
        let b = batch(vec![
            ("s", Arc::new(arrow::array::StringArray::from(vec!["abc"])) as ArrayRef),
            ("n", Arc::new(Int64Array::from(vec![-2])) as ArrayRef),
        ]);
        let out = transform_over("SELECT lpad(s, n, 'x') AS l, rpad(s, -1) AS r, lpad(s, 5, '-') AS p FROM t", &b).unwrap();
        let text = |c: usize| arrow::compute::cast(out[0].column(c), &DataType::Utf8).unwrap().as_string::<i32>().value(0).to_string();
        assert_eq!([text(0), text(1), text(2)], ["", "", "--abc"]);
    }

    /// `encode(x, 'base64')` left the padding out: `a` was `YQ`, which strict decoders refuse.
    #[test]
    fn base64_is_padded_and_decodes_back() {
        let b = batch(vec![("s", Arc::new(arrow::array::StringArray::from(vec!["a", "ab", "abc"])) as ArrayRef)]);
        let out = transform_over("SELECT encode(s, 'base64') AS e, CAST(decode(encode(s, 'base64'), 'base64') AS VARCHAR) AS d FROM t", &b).unwrap();
        let e = arrow::compute::cast(out[0].column(0), &DataType::Utf8).unwrap();
        let d = arrow::compute::cast(out[0].column(1), &DataType::Utf8).unwrap();
        let e: Vec<_> = e.as_string::<i32>().iter().map(|v| v.unwrap().to_string()).collect();
        let d: Vec<_> = d.as_string::<i32>().iter().map(|v| v.unwrap().to_string()).collect();
        assert_eq!(e, ["YQ==", "YWI=", "YWJj"]);
        assert_eq!(d, ["a", "ab", "abc"]);
    }

    fn transform_over(sql: &str, batch: &RecordBatch) -> Result<Vec<RecordBatch>, String> {
        let mut t = SqlTransform::new(sql, vec![("t".to_string(), batch.schema())]).map_err(|e| e.to_string())?;
        t.push(0, batch.clone()).map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        while let Some(b) = t.next_output() {
            out.push(b);
        }
        Ok(out)
    }

    fn batch(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
        let fields: Vec<Field> = columns.iter().map(|(n, a)| Field::new(*n, a.data_type().clone(), true)).collect();
        RecordBatch::try_new(Arc::new(Schema::new(fields)), columns.into_iter().map(|(_, a)| a).collect()).unwrap()
    }

    #[test]
    fn integer_overflow_fails_instead_of_wrapping() {
        let b = batch(vec![
            ("a", Arc::new(Int64Array::from(vec![Some(i64::MAX), Some(1)])) as ArrayRef),
            ("n", Arc::new(Int64Array::from(vec![Some(i64::MIN), None])) as ArrayRef),
            ("s", Arc::new(Int16Array::from(vec![i16::MAX, 1])) as ArrayRef),
            ("i", Arc::new(Int32Array::from(vec![50_000, 1])) as ArrayRef),
            ("u", Arc::new(UInt32Array::from(vec![0, 1])) as ArrayRef),
        ]);
        for sql in [
            "SELECT a + 1 FROM t",
            "SELECT a * 2 AS v FROM t",
            "SELECT n - 1 AS v FROM t",
            "SELECT -n AS v FROM t",
            "SELECT s + s AS v FROM t",
            "SELECT i * i AS v FROM t",
            "SELECT u - CAST(1 AS INT UNSIGNED) AS v FROM t",
            "SELECT v FROM (SELECT a + 1 AS v FROM t) WHERE v > 0",
            "SELECT a FROM t WHERE a + 1 > 0",
            "SELECT CASE WHEN a > 0 THEN abs(a) + 1 END AS v FROM t",
        ] {
            let err = transform_over(sql, &b).expect_err(sql);
            assert!(err.contains("Overflow happened on") && err.contains("does not fit"), "{sql}: {err}");
        }
        // Bounded queries (the state DB's) share the session: subqueries, joins and aggregates.
        for sql in [
            "SELECT a FROM t WHERE a IN (SELECT a + 1 FROM t)",
            "SELECT x.a FROM t x JOIN t y ON x.a + 1 = y.a",
            "SELECT a + 1, count(*) FROM t GROUP BY a + 1",
            "SELECT sum(s + s) FROM t",
        ] {
            let err = run_bounded_query(sql, "t", b.clone()).expect_err(sql).to_string();
            assert!(err.contains("Overflow happened on"), "{sql}: {err}");
        }
    }

    #[test]
    fn arithmetic_that_fits_keeps_its_values_names_and_types() {
        let b = batch(vec![
            ("a", Arc::new(Int64Array::from(vec![Some(i64::MAX - 1), None, Some(-7)])) as ArrayRef),
            ("s", Arc::new(Int16Array::from(vec![Some(16_000), Some(3), None])) as ArrayRef),
        ]);
        // A NULL row's slot may hold anything; it must not count as an overflow.
        let out = transform_over("SELECT a + 1, s + s, -a AS neg, a * 1 - 2 AS m FROM t", &b).unwrap();
        let out = arrow::compute::concat_batches(&out[0].schema(), &out).unwrap();
        let names: Vec<_> = out.schema().fields().iter().map(|f| (f.name().clone(), f.data_type().clone())).collect();
        assert_eq!(
            names,
            vec![
                ("t.a + Int64(1)".to_string(), DataType::Int64),
                ("t.s + t.s".to_string(), DataType::Int16),
                ("neg".to_string(), DataType::Int64),
                ("m".to_string(), DataType::Int64)
            ]
        );
        assert_eq!(out.column(0).as_primitive::<arrow::datatypes::Int64Type>(), &Int64Array::from(vec![Some(i64::MAX), None, Some(-6)]));
        assert_eq!(out.column(1).as_primitive::<arrow::datatypes::Int16Type>(), &Int16Array::from(vec![Some(32_000), Some(6), None]));
        assert_eq!(out.column(2).as_primitive::<arrow::datatypes::Int64Type>(), &Int64Array::from(vec![Some(-(i64::MAX - 1)), None, Some(7)]));
        assert_eq!(out.column(3).as_primitive::<arrow::datatypes::Int64Type>(), &Int64Array::from(vec![Some(i64::MAX - 3), None, Some(-9)]));
        let grouped = run_bounded_query("SELECT s + s, count(*) AS n FROM t GROUP BY s + s ORDER BY 1", "t", b).unwrap();
        assert_eq!(grouped.schema().field(0).name(), "t.s + t.s");
        assert_eq!(grouped.column(0).as_primitive::<arrow::datatypes::Int16Type>(), &Int16Array::from(vec![Some(6), Some(32_000), None]));
    }

    #[test]
    fn not_null_columns_stay_not_null() {
        let schema = Arc::new(Schema::new(vec![Field::new("a", DataType::Int64, false), Field::new("b", DataType::Int64, true)]));
        let t = SqlTransform::new("SELECT a + 1 AS x, -a AS y, a * b AS z FROM t", vec![("t".to_string(), schema)]).unwrap();
        let nullable: Vec<bool> = t.output_schema().fields().iter().map(|f| f.is_nullable()).collect();
        assert_eq!(nullable, vec![false, false, true]);
    }

    #[test]
    fn constant_overflow_fails_at_planning() {
        let b = batch(vec![("a", Arc::new(Int64Array::from(vec![1])) as ArrayRef)]);
        let err = transform_over("SELECT a, 9223372036854775807 + 1 AS v FROM t", &b).expect_err("folded constant");
        assert!(err.contains("Overflow happened on"), "{err}");
    }

    /// The README says so: `^` is DataFusion's bitwise XOR, not PostgreSQL's power.
    #[test]
    fn caret_is_bitwise_xor() {
        let b = batch(vec![("a", Arc::new(Int64Array::from(vec![2])) as ArrayRef)]);
        let out = transform_over("SELECT a ^ 3 AS x, CAST(power(a, 3) AS BIGINT) AS p FROM t", &b).unwrap();
        assert_eq!(out[0].column(0).as_primitive::<arrow::datatypes::Int64Type>().value(0), 1);
        assert_eq!(out[0].column(1).as_primitive::<arrow::datatypes::Int64Type>().value(0), 8);
    }

    #[test]
    fn json_numbers_beyond_a_double_fail_instead_of_becoming_infinite() {
        let docs = arrow::array::StringArray::from(vec![Some(r#"{"a": 1.5, "b": "inf"}"#), None, Some(r#"{"a": -1e400}"#)]);
        let b = batch(vec![("doc", Arc::new(docs) as ArrayRef)]);
        for sql in ["SELECT json_get_float(doc, 'a') AS v FROM t", "SELECT CAST(doc->'a' AS DOUBLE) AS v FROM t"] {
            let err = transform_over(sql, &b).expect_err(sql);
            assert!(err.contains(r#"json_get_float: a number in {"a": -1e400} is beyond a double's range"#), "{sql}: {err}");
        }
        let out =
            transform_over("SELECT json_get_float(doc, 'a') AS v, json_get_float(doc, 'b') AS s FROM t WHERE doc IS NULL OR doc LIKE '%1.5%'", &b)
                .unwrap();
        let out = arrow::compute::concat_batches(&out[0].schema(), &out).unwrap();
        let v = out.column(0).as_primitive::<arrow::datatypes::Float64Type>();
        assert_eq!((v.value(0), v.is_null(1)), (1.5, true));
        // A string naming an infinity is one (json_get_float parses strings); a string of a
        // number beyond the range is not.
        assert_eq!(out.column(1).as_primitive::<arrow::datatypes::Float64Type>().value(0), f64::INFINITY);
        let nested = batch(vec![("doc", Arc::new(arrow::array::StringArray::from(vec![r#"{"x": [1, {"y": "-Infinity"}, "1e400"]}"#])) as ArrayRef)]);
        let ok = transform_over("SELECT json_get_float(doc, 'x', 1, 'y') AS v FROM t", &nested).unwrap();
        assert_eq!(ok[0].column(0).as_primitive::<arrow::datatypes::Float64Type>().value(0), f64::NEG_INFINITY);
        let err = transform_over("SELECT json_get_float(doc, 'x', 2) AS v FROM t", &nested).expect_err("a string of 1e400");
        assert!(err.contains("beyond a double's range"), "{err}");
    }

    #[test]
    fn float_seconds_past_nanosecond_timestamps_fail() {
        let b = batch(vec![("f", Arc::new(arrow::array::Float64Array::from(vec![Some(1.5), None, Some(1.7e12), Some(f64::NAN)])) as ArrayRef)]);
        let err = transform_over("SELECT to_timestamp(f) AS v FROM t", &b).expect_err("1.7e12 seconds");
        assert!(err.contains("to_timestamp: 1700000000000 seconds is no timestamp"), "{err}");
        let nan = transform_over("SELECT to_timestamp(f) AS v FROM t WHERE f IS NULL OR f <> 1.7e12", &b).expect_err("NaN");
        assert!(nan.contains("NaN seconds"), "{nan}");
        let out = transform_over("SELECT to_timestamp(f) AS v FROM t WHERE f < 100", &b).unwrap();
        assert_eq!(out[0].column(0).as_primitive::<arrow::datatypes::TimestampNanosecondType>().value(0), 1_500_000_000);
        // Integers are seconds through a cast that already fails past the range.
        let ints = batch(vec![("i", Arc::new(Int64Array::from(vec![1_700_000_000_000])) as ArrayRef)]);
        assert!(transform_over("SELECT to_timestamp(i) AS v FROM t", &ints).is_err());
    }

    #[test]
    fn casts_to_a_float_type_fail_past_its_range() {
        use arrow::array::{Float32Array, Float64Array, StringArray};
        use arrow::datatypes::{Float32Type, Float64Type};
        let b = batch(vec![
            ("d", Arc::new(Float64Array::from(vec![Some(1e300), Some(1.5), Some(f64::INFINITY), Some(f64::NAN), None, Some(-1e39)])) as ArrayRef),
            ("s", Arc::new(StringArray::from(vec![Some("1e400"), Some("2.5"), Some(" -inf"), Some("Infinity"), Some("nan"), None])) as ArrayRef),
        ]);
        for (sql, value) in [
            ("SELECT CAST(d AS REAL) AS v FROM t", "Can't cast value 1e300 to type Float32"),
            ("SELECT CAST(d AS REAL) AS v FROM t WHERE d IS NULL OR d < 1e300", "Can't cast value -1e39 to type Float32"),
            ("SELECT CAST(s AS DOUBLE) AS v FROM t", "Can't cast value 1e400 to type Float64"),
            ("SELECT CAST(s AS REAL) AS v FROM t", "Can't cast value 1e400 to type Float32"),
            ("SELECT d FROM t WHERE CAST(s AS DOUBLE) > 0", "Can't cast value 1e400 to type Float64"),
            ("SELECT CAST('-1e40' AS REAL) AS v FROM t", "Can't cast value -1e40 to type Float32"),
            ("SELECT arrow_cast(d, 'Float32') AS v FROM t", "Can't cast value 1e300 to type Float32"),
        ] {
            let err = transform_over(sql, &b).expect_err(sql);
            assert!(err.contains(value) && err.contains("beyond the type's range"), "{sql}: {err}");
        }
        // Infinities and NaN stay what they were; finite values that fit are cast as before.
        let out = transform_over(
            "SELECT CAST(d AS REAL) AS r, CAST(s AS DOUBLE) AS x FROM t WHERE d IS NULL OR abs(d) < 1e30 OR isnan(d) OR d = 'inf'",
            &b,
        )
        .unwrap();
        let r: Vec<_> = out[0].column(0).as_primitive::<Float32Type>().iter().map(|v| v.map(f32::to_bits)).collect();
        let expected: Vec<_> =
            Float32Array::from(vec![Some(1.5), Some(f32::INFINITY), Some(f32::NAN), None]).iter().map(|v| v.map(f32::to_bits)).collect();
        assert_eq!(r, expected);
        let x: Vec<_> = out[0].column(1).as_primitive::<Float64Type>().iter().map(|v| v.map(|v| v.to_string())).collect();
        assert_eq!(x, vec![Some("2.5".into()), Some("-inf".into()), Some("inf".into()), Some("NaN".into())]);
        // TRY_CAST makes what does not fit NULL, as it does for the other types.
        let tried = transform_over("SELECT TRY_CAST(d AS REAL) AS r, TRY_CAST(s AS DOUBLE) AS x FROM t", &b).unwrap();
        assert_eq!(tried[0].column(0).null_count(), 3, "1e300, -1e39 and the NULL");
        assert_eq!(tried[0].column(1).null_count(), 2, "'1e400' and the NULL");
        assert!(tried[0].column(0).as_primitive::<Float32Type>().value(2).is_infinite());
        // Widening casts are not checked (and need not be); an unnamed column keeps its name.
        let widened = transform_over("SELECT CAST(CAST(d AS REAL) AS DOUBLE), CAST(s AS DOUBLE) FROM t WHERE d = 1.5", &b).unwrap();
        assert_eq!(widened[0].column(0).as_primitive::<Float64Type>().value(0), 1.5);
        let names: Vec<_> = widened[0].schema().fields().iter().map(|f| f.name().clone()).collect();
        assert_eq!(names, vec!["t.d", "t.s"]);
    }

    #[test]
    fn date_bin_fails_where_it_has_no_result() {
        use arrow::array::TimestampMicrosecondArray;
        let hour_and_a_half = 5_400_000_000; // 1970-01-01T01:30:00 in microseconds
        let sentinel = 253_402_214_400_000_000; // 9999-12-31T00:00:00, past nanoseconds' 2262
        let times = |values: Vec<Option<i64>>| batch(vec![("t", Arc::new(TimestampMicrosecondArray::from(values)) as ArrayRef)]);
        let in_range = times(vec![Some(hour_and_a_half), None, Some(-hour_and_a_half)]);
        let out = transform_over("SELECT date_bin(INTERVAL '1 hour', t) AS b FROM t", &in_range).unwrap();
        let binned: Vec<Option<i64>> = out[0].column(0).as_primitive::<arrow::datatypes::TimestampMicrosecondType>().iter().collect();
        assert_eq!(binned, vec![Some(3_600_000_000), None, Some(-7_200_000_000)]);
        let with_sentinel = times(vec![Some(hour_and_a_half), Some(sentinel)]);
        for sql in [
            "SELECT date_bin(INTERVAL '1 hour', t) AS b FROM t",
            "SELECT date_bin(INTERVAL '1 day', t, TIMESTAMP '2000-01-01') AS b FROM t",
            "SELECT t FROM t WHERE date_bin(INTERVAL '1 hour', t) IS NULL",
        ] {
            let err = transform_over(sql, &with_sentinel).expect_err(sql);
            assert!(err.contains("date_bin has no result for 9999-12-31T00:00:00"), "{sql}: {err}");
        }
    }

    #[test]
    fn casts_to_a_coarser_timestamp_unit_truncate_toward_the_past() {
        use arrow::array::{TimestampMillisecondArray, TimestampNanosecondArray};
        use arrow::datatypes::{TimestampMicrosecondType, TimestampSecondType};
        let b = batch(vec![
            ("t", Arc::new(TimestampMillisecondArray::from(vec![Some(-1), Some(-1000), Some(-1001), Some(1999), None, Some(i64::MIN)])) as ArrayRef),
            ("n", Arc::new(TimestampNanosecondArray::from(vec![Some(-1), Some(-1000), Some(-1001), Some(1999), None, Some(0)])) as ArrayRef),
            (
                "z",
                Arc::new(
                    TimestampMillisecondArray::from(vec![Some(-1), Some(-1000), Some(-1001), Some(1999), None, Some(i64::MIN)])
                        .with_timezone("+02:00"),
                ) as ArrayRef,
            ),
        ]);
        let seconds = [Some(-1), Some(-1), Some(-2), Some(1), None, Some(i64::MIN / 1000 - 1)];
        for sql in [
            "SELECT arrow_cast(t, 'Timestamp(Second, None)') AS v FROM t",
            "SELECT CAST(t AS TIMESTAMP(0)) AS v FROM t",
            "SELECT TRY_CAST(t AS TIMESTAMP(0)) AS v FROM t",
        ] {
            let out = transform_over(sql, &b).unwrap();
            assert_eq!(out[0].column(0).as_primitive::<TimestampSecondType>().iter().collect::<Vec<_>>(), seconds, "{sql}");
        }
        let out = transform_over("SELECT arrow_cast(n, 'Timestamp(Microsecond, None)') AS v FROM t", &b).unwrap();
        assert_eq!(
            out[0].column(0).as_primitive::<TimestampMicrosecondType>().iter().collect::<Vec<_>>(),
            vec![Some(-1), Some(-1), Some(-2), Some(1), None, Some(0)]
        );
        // With a time zone too (the stored instant is UTC either way).
        let out = transform_over("SELECT arrow_cast(z, 'Timestamp(Second, Some(\"+02:00\"))') AS v FROM t", &b).unwrap();
        assert_eq!(out[0].column(0).as_primitive::<TimestampSecondType>().iter().collect::<Vec<_>>(), seconds);
        // to_timestamp_seconds and _millis divide the same way, from timestamps and from text.
        let out = transform_over("SELECT to_timestamp_seconds(t) AS v FROM t", &b).unwrap();
        assert_eq!(out[0].column(0).as_primitive::<TimestampSecondType>().iter().collect::<Vec<_>>(), seconds);
        let out = transform_over("SELECT to_timestamp_millis(n) AS v FROM t", &b).unwrap();
        assert_eq!(
            out[0].column(0).as_primitive::<arrow::datatypes::TimestampMillisecondType>().iter().collect::<Vec<_>>(),
            vec![Some(-1), Some(-1), Some(-1), Some(0), None, Some(0)]
        );
        let text = batch(vec![(
            "s",
            Arc::new(arrow::array::StringArray::from(vec![Some("1969-12-31T23:59:59.9995"), Some("1960-01-01T00:00:00.5"), None])) as ArrayRef,
        )]);
        let out = transform_over("SELECT to_timestamp_seconds(s) AS v, to_timestamp_millis(s) AS m FROM t", &text).unwrap();
        assert_eq!(out[0].column(0).as_primitive::<TimestampSecondType>().iter().collect::<Vec<_>>(), vec![Some(-1), Some(-315_619_200), None]);
        assert_eq!(
            out[0].column(1).as_primitive::<arrow::datatypes::TimestampMillisecondType>().iter().collect::<Vec<_>>(),
            vec![Some(-1), Some(-315_619_199_500), None]
        );
    }

    #[test]
    fn decimals_past_their_precision_fail() {
        let big = Decimal128Array::from(vec![Some(10i128.pow(37) * 6), None]).with_precision_and_scale(38, 0).unwrap();
        let b = batch(vec![("d", Arc::new(big) as ArrayRef)]);
        // 6e37 + 6e37 fits i128 but has 39 digits: Decimal128(38, 0) cannot hold it.
        let err = transform_over("SELECT d + d AS v FROM t", &b).expect_err("39 digits");
        assert!(err.contains("too large to store in a Decimal128 of precision 38"), "{err}");
        let out = transform_over("SELECT d - d AS v, d * CAST(1 AS DECIMAL(38, 0)) AS w FROM t", &b).unwrap();
        assert_eq!(out[0].column(0).as_primitive::<Decimal128Type>().value(0), 0);
        assert_eq!(out[0].column(1).as_primitive::<Decimal128Type>().value(0), 6 * 10i128.pow(37));
    }
}
