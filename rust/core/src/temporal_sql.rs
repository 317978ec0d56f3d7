//! Interval comparisons, `extract` from a duration, and a date ± an interval, as PostgreSQL
//! defines them — where DataFusion's answers are wrong values without an error:
//! - arrow orders `Interval(MonthDayNano)` field by field (months, then days, then nanoseconds),
//!   so `t - u > INTERVAL '1 day'` was false for a three-day gap (a duration becomes an interval
//!   of nanoseconds only) and `INTERVAL '1 day' = INTERVAL '24 hours'` false. Comparisons of
//!   intervals compare their lengths instead, a month counting 30 days and a day 24 hours (as
//!   PostgreSQL compares them);
//! - `date_part` of a duration (`extract(epoch FROM t - u)`) computes in 32 bits: it dropped the
//!   fraction, wrapped past 2^31 and gave NULL for 70 years. A duration is read as the interval
//!   it is, whose parts DataFusion computes right;
//! - a date ± an interval with hours keeps the date type and drops them (`d - INTERVAL '1 hour'`
//!   was `d`). That fails, naming the interval, unless the interval is whole days;
//! - `CAST(text AS DATE)` of a time with an offset took the date of that instant in UTC
//!   (`'2024-01-01T23:00:00-05:00'` became 2024-01-02). The date is the one written, as
//!   PostgreSQL reads it ([`date_as_written`], called for every cast to a date).
//!
//! [`rewrite`] is called by the checked-arithmetic analyzer rule on every expression, after
//! type coercion.

use std::sync::{Arc, LazyLock};

use arrow::array::{Array, ArrayRef, AsArray, Decimal128Array};
use arrow::datatypes::{DataType, Field, FieldRef, IntervalDayTimeType, IntervalMonthDayNanoType, IntervalUnit, IntervalYearMonthType, TimeUnit};
use datafusion::common::{exec_err, DFSchema, Result, ScalarValue};

use crate::checked_arithmetic::call;
use datafusion::logical_expr::expr::{Between, BinaryExpr, ScalarFunction};
use datafusion::logical_expr::{
    ColumnarValue, Expr, ExprSchemable, Operator, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

const DAY_NANOS: i128 = 86_400_000_000_000;
const MONTH_NANOS: i128 = 30 * DAY_NANOS;

/// The expression that replaces `expr`, or None to keep it.
pub(crate) fn rewrite(expr: &Expr, schema: &DFSchema) -> Result<Option<Expr>> {
    let is_interval = |e: &Expr| -> Result<bool> { Ok(matches!(e.get_type(schema)?, DataType::Interval(_))) };
    let is_date = |e: &Expr| -> Result<bool> { Ok(matches!(e.get_type(schema)?, DataType::Date32 | DataType::Date64)) };
    Ok(match expr {
        Expr::BinaryExpr(BinaryExpr { left, op, right }) if is_comparison(*op) && (is_interval(left)? || is_interval(right)?) => {
            Some(Expr::BinaryExpr(BinaryExpr::new(Box::new(length(left)), *op, Box::new(length(right)))))
        }
        Expr::Between(Between { expr: value, negated, low, high }) if is_interval(value)? => {
            Some(Expr::Between(Between::new(Box::new(length(value)), *negated, Box::new(length(low)), Box::new(length(high)))))
        }
        Expr::BinaryExpr(BinaryExpr { left, op: op @ (Operator::Plus | Operator::Minus), right }) if is_date(left)? && is_interval(right)? => {
            let days = call(&DAYS_MOVED, vec![right.as_ref().clone()]);
            let shifted = Expr::BinaryExpr(BinaryExpr::new(left.clone(), *op, Box::new(days.clone())));
            Some(call(&WHOLE_DAYS, vec![shifted, days]))
        }
        Expr::BinaryExpr(BinaryExpr { left, op: Operator::Plus, right }) if is_interval(left)? && is_date(right)? => {
            let days = call(&DAYS_MOVED, vec![left.as_ref().clone()]);
            let shifted = Expr::BinaryExpr(BinaryExpr::new(Box::new(days.clone()), Operator::Plus, right.clone()));
            Some(call(&WHOLE_DAYS, vec![shifted, days]))
        }
        Expr::ScalarFunction(ScalarFunction { func, args })
            if func.name() == "date_part" && args.len() == 2 && matches!(args[1].get_type(schema)?, DataType::Duration(_)) =>
        {
            let interval = call(&AS_INTERVAL, vec![args[1].clone()]);
            Some(Expr::ScalarFunction(ScalarFunction::new_udf(Arc::clone(func), vec![args[0].clone(), interval])))
        }
        _ => None,
    })
}

fn is_comparison(op: Operator) -> bool {
    use Operator::*;
    matches!(op, Eq | NotEq | Lt | LtEq | Gt | GtEq | IsDistinctFrom | IsNotDistinctFrom)
}

/// `text` for a cast to a date (CAST, TRY_CAST or arrow_cast; from the checked-arithmetic
/// rule's casts): a timestamp's text cut to the date written, which the cast then reads.
pub(crate) fn date_as_written(text: Expr) -> Expr {
    call(&DATE_AS_WRITTEN, vec![text])
}

/// An interval's length in nanoseconds, as a Decimal128(38, 0) that compares right.
fn length(interval: &Expr) -> Expr {
    call(&LENGTH, vec![interval.clone()])
}

#[derive(Debug, PartialEq, Eq, Hash, Clone, Copy)]
enum Kind {
    /// An interval's (or a duration's) length in nanoseconds.
    Length,
    /// A date ± an interval (the first argument; the second is the interval), failing where the
    /// interval has a part smaller than a day.
    WholeDays,
    /// A duration as the interval PostgreSQL's `timestamp - timestamp` gives: whole days, and
    /// the rest as time (a plain CAST puts it all in nanoseconds, so `extract(day …)` was 0 and
    /// `extract(hour …)` 72 for three days).
    AsInterval,
    /// An interval with the whole days of its time part moved into its days: `date + 3` is
    /// planned as the date plus 72 hours, which the date arithmetic dropped (or refused).
    DaysMoved,
    /// A date or timestamp's text cut to its date (the first ten characters) where arrow reads
    /// the whole as a timestamp; other text as it is, for the cast to read or refuse.
    DateAsWritten,
}

static LENGTH: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| Temporal::udf(Kind::Length, 1));
static WHOLE_DAYS: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| Temporal::udf(Kind::WholeDays, 2));
static AS_INTERVAL: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| Temporal::udf(Kind::AsInterval, 1));
static DAYS_MOVED: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| Temporal::udf(Kind::DaysMoved, 1));
static DATE_AS_WRITTEN: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| Temporal::udf(Kind::DateAsWritten, 1));

#[derive(Debug, PartialEq, Eq, Hash)]
struct Temporal {
    kind: Kind,
    signature: Signature,
}

impl Temporal {
    fn udf(kind: Kind, arguments: usize) -> Arc<ScalarUDF> {
        Arc::new(ScalarUDF::new_from_impl(Temporal { kind, signature: Signature::any(arguments, Volatility::Immutable) }))
    }
}

impl ScalarUDFImpl for Temporal {
    fn name(&self) -> &str {
        match self.kind {
            Kind::Length => "sluice_interval_length",
            Kind::WholeDays => "sluice_date_plus_whole_days",
            Kind::AsInterval => "sluice_duration_as_interval",
            Kind::DaysMoved => "sluice_interval_days_moved",
            Kind::DateAsWritten => "sluice_date_as_written",
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        Ok(match self.kind {
            Kind::Length => DataType::Decimal128(38, 0),
            Kind::WholeDays => arg_types[0].clone(),
            Kind::AsInterval => DataType::Interval(IntervalUnit::MonthDayNano),
            Kind::DaysMoved => arg_types[0].clone(),
            Kind::DateAsWritten => DataType::Utf8,
        })
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let nullable = args.arg_fields.iter().any(|f| f.is_nullable());
        let types: Vec<DataType> = args.arg_fields.iter().map(|f| f.data_type().clone()).collect();
        Ok(Arc::new(Field::new(self.name(), self.return_type(&types)?, nullable)))
    }

    fn is_strict(&self) -> bool {
        true
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let scalar = args.args.iter().all(|a| matches!(a, ColumnarValue::Scalar(_)));
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let out = match self.kind {
            Kind::Length => lengths(&arrays[0])?,
            Kind::AsInterval => {
                let nanos = lengths(&arrays[0])?;
                let intervals: arrow::array::IntervalMonthDayNanoArray = nanos.as_primitive::<arrow::datatypes::Decimal128Type>().unary(|n| {
                    // Within i64 nanoseconds: the days fit an i32, the rest is under a day.
                    arrow::datatypes::IntervalMonthDayNano::new(0, (n / DAY_NANOS) as i32, (n % DAY_NANOS) as i64)
                });
                Arc::new(intervals)
            }
            Kind::WholeDays => {
                whole_days(&arrays[1])?;
                Arc::clone(&arrays[0])
            }
            Kind::DaysMoved => days_moved(&arrays[0])?,
            Kind::DateAsWritten => dates_as_written(&arrays[0])?,
        };
        Ok(if scalar { ColumnarValue::Scalar(ScalarValue::try_from_array(&out, 0)?) } else { ColumnarValue::Array(out) })
    }
}

/// Each interval's (or duration's) length in nanoseconds.
fn lengths(values: &ArrayRef) -> Result<ArrayRef> {
    let out: Decimal128Array = match values.data_type() {
        DataType::Interval(IntervalUnit::MonthDayNano) => values
            .as_primitive::<IntervalMonthDayNanoType>()
            .unary(|v| i128::from(v.months) * MONTH_NANOS + i128::from(v.days) * DAY_NANOS + i128::from(v.nanoseconds)),
        DataType::Interval(IntervalUnit::DayTime) => {
            values.as_primitive::<IntervalDayTimeType>().unary(|v| i128::from(v.days) * DAY_NANOS + i128::from(v.milliseconds) * 1_000_000)
        }
        DataType::Interval(IntervalUnit::YearMonth) => {
            values.as_primitive::<IntervalYearMonthType>().unary(|months| i128::from(months) * MONTH_NANOS)
        }
        DataType::Duration(unit) => {
            let per_unit: i128 = match unit {
                TimeUnit::Second => 1_000_000_000,
                TimeUnit::Millisecond => 1_000_000,
                TimeUnit::Microsecond => 1_000,
                TimeUnit::Nanosecond => 1,
            };
            let raw = arrow::compute::cast(values, &DataType::Int64)?;
            raw.as_primitive::<arrow::datatypes::Int64Type>().unary(|v| i128::from(v) * per_unit)
        }
        other => return exec_err!("sluice_interval_length of {other}"),
    };
    Ok(Arc::new(out.with_precision_and_scale(38, 0)?))
}

/// Each interval with the whole days of its time part counted as days (72 hours as 3 days).
fn days_moved(intervals: &ArrayRef) -> Result<ArrayRef> {
    let days = |days: i32, more: i64| -> Result<i32> {
        i32::try_from(i64::from(days) + more).or_else(|_| exec_err!("a date ± an interval of {days} days and {more} more is beyond a date's range"))
    };
    Ok(match intervals.data_type() {
        DataType::Interval(IntervalUnit::MonthDayNano) => {
            let values = intervals.as_primitive::<IntervalMonthDayNanoType>();
            let day = DAY_NANOS as i64;
            let moved: arrow::array::IntervalMonthDayNanoArray = values
                .iter()
                .map(|v| {
                    v.map(|v| Ok(arrow::datatypes::IntervalMonthDayNano::new(v.months, days(v.days, v.nanoseconds / day)?, v.nanoseconds % day)))
                        .transpose()
                })
                .collect::<Result<_>>()?;
            Arc::new(moved)
        }
        DataType::Interval(IntervalUnit::DayTime) => {
            let values = intervals.as_primitive::<IntervalDayTimeType>();
            let day = 86_400_000;
            let moved: arrow::array::IntervalDayTimeArray = values
                .iter()
                .map(|v| {
                    v.map(|v| Ok(arrow::datatypes::IntervalDayTime::new(days(v.days, i64::from(v.milliseconds / day))?, v.milliseconds % day)))
                        .transpose()
                })
                .collect::<Result<_>>()?;
            Arc::new(moved)
        }
        _ => Arc::clone(intervals),
    })
}

/// Each text that arrow's date cast would read as a timestamp (longer than a date, no sign
/// before the year) and that is one, cut to its date; the rest as it is.
fn dates_as_written(texts: &ArrayRef) -> Result<ArrayRef> {
    let texts = arrow::compute::cast(texts, &DataType::Utf8)?;
    let texts = texts.as_string::<i32>();
    let utc: arrow::array::timezone::Tz = "+00:00".parse()?;
    let is_timestamp = |text: &str| {
        text.len() > 10
            && !text.starts_with(['+', '-'])
            && text.is_char_boundary(10)
            && arrow::compute::kernels::cast_utils::string_to_datetime(&utc, text).is_ok()
    };
    if !texts.iter().flatten().any(is_timestamp) {
        return Ok(Arc::new(texts.clone()));
    }
    let cut: arrow::array::StringArray = texts.iter().map(|t| t.map(|text| if is_timestamp(text) { &text[..10] } else { text })).collect();
    Ok(Arc::new(cut))
}

/// Fails naming the first interval with a part smaller than a day.
fn whole_days(intervals: &ArrayRef) -> Result<()> {
    let partial = (0..intervals.len()).find(|&row| {
        intervals.is_valid(row)
            && match intervals.data_type() {
                DataType::Interval(IntervalUnit::MonthDayNano) => intervals.as_primitive::<IntervalMonthDayNanoType>().value(row).nanoseconds != 0,
                DataType::Interval(IntervalUnit::DayTime) => intervals.as_primitive::<IntervalDayTimeType>().value(row).milliseconds != 0,
                _ => false,
            }
    });
    match partial {
        Some(row) => {
            let shown = arrow::util::display::ArrayFormatter::try_new(intervals.as_ref(), &Default::default())?.value(row).to_string();
            exec_err!("a date ± the interval {shown} would drop its hours (the result is a date); CAST the date AS TIMESTAMP to keep them")
        }
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use crate::transform::SqlTransform;
    use arrow::array::{Array, ArrayRef, Date32Array, RecordBatch, TimestampMicrosecondArray};
    use arrow::datatypes::{Field, Schema};
    use std::sync::Arc;

    fn run(sql: &str, batch: &RecordBatch) -> Result<RecordBatch, String> {
        let mut t = SqlTransform::new(sql, vec![("t".to_string(), batch.schema())]).map_err(|e| e.to_string())?;
        t.push(0, batch.clone()).map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        while let Some(b) = t.next_output() {
            out.push(b);
        }
        Ok(arrow::compute::concat_batches(&t.output_schema(), &out).unwrap())
    }

    fn shown(batch: &RecordBatch) -> Vec<String> {
        let formatters: Vec<_> =
            batch.columns().iter().map(|c| arrow::util::display::ArrayFormatter::try_new(c.as_ref(), &Default::default()).unwrap()).collect();
        (0..batch.num_rows()).map(|row| formatters.iter().map(|f| f.value(row).to_string()).collect::<Vec<_>>().join("|")).collect()
    }

    /// Two timestamps three days and twelve hours apart (PostgreSQL's answers in the comments).
    fn gaps() -> RecordBatch {
        let day = 86_400_000_000i64;
        let t: ArrayRef = Arc::new(TimestampMicrosecondArray::from(vec![Some(3 * day), Some(day / 2), None]));
        let u: ArrayRef = Arc::new(TimestampMicrosecondArray::from(vec![Some(0), Some(0), Some(0)]));
        RecordBatch::try_new(
            Arc::new(Schema::new(vec![Field::new("t", t.data_type().clone(), true), Field::new("u", u.data_type().clone(), true)])),
            vec![t, u],
        )
        .unwrap()
    }

    #[test]
    fn intervals_compare_by_their_length() {
        let out = run(
            "SELECT (t - u) > INTERVAL '1 day' AS longer, (t - u) = INTERVAL '3 days' AS three, (t - u) < INTERVAL '1 day' AS shorter, \
             (t - u) BETWEEN INTERVAL '1 hour' AND INTERVAL '13 hours' AS between, \
             INTERVAL '1 month' > INTERVAL '40 days' AS month, INTERVAL '1 day' = INTERVAL '24 hours' AS day FROM t",
            &gaps(),
        )
        .unwrap();
        // PostgreSQL: t, t, f, f, f, t | f, f, t, t, f, t | NULL …
        assert_eq!(shown(&out), ["true|true|false|false|false|true", "false|false|true|true|false|true", "||||false|true"]);
        let kept = run("SELECT t FROM t WHERE t - u > INTERVAL '1 day'", &gaps()).unwrap();
        assert_eq!(kept.num_rows(), 1);
    }

    #[test]
    fn extract_from_a_duration_is_exact() {
        let out = run(
            "SELECT extract(epoch FROM t - u) AS e, extract(day FROM t - u) AS d, extract(hour FROM t - u) AS h, \
             extract(epoch FROM u - t) AS back FROM t",
            &gaps(),
        )
        .unwrap();
        // PostgreSQL: 259200 | 3 | 0 | -259200, and 43200 | 0 | 12 | -43200.
        assert_eq!(shown(&out), ["259200.0|3|0|-259200.0", "43200.0|0|12|-43200.0", "|||"]);
        // 3.25 s lost its fraction, 70 years (past 2^31 s) gave NULL.
        let t: ArrayRef = Arc::new(TimestampMicrosecondArray::from(vec![3_250_000, 2_208_988_800_000_000]));
        let b = RecordBatch::try_new(Arc::new(Schema::new(vec![Field::new("t", t.data_type().clone(), true)])), vec![t]).unwrap();
        let out = run("SELECT extract(epoch FROM t - CAST(0 AS TIMESTAMP)) AS e FROM t", &b).unwrap();
        assert_eq!(shown(&out), ["3.25", "2208988800.0"]);
    }

    #[test]
    fn a_date_plus_an_interval_of_hours_fails_instead_of_dropping_them() {
        let d: ArrayRef = Arc::new(Date32Array::from(vec![Some(19_753), None]));
        let b = RecordBatch::try_new(Arc::new(Schema::new(vec![Field::new("d", d.data_type().clone(), true)])), vec![d]).unwrap();
        let out = run("SELECT d + INTERVAL '1 day' AS next, d - INTERVAL '1 month' AS before, INTERVAL '2 days' + d AS later FROM t", &b).unwrap();
        assert_eq!(shown(&out), ["2024-02-01|2023-12-31|2024-02-02", "||"]);
        for sql in [
            "SELECT d - INTERVAL '1 hour' AS v FROM t",
            "SELECT d + INTERVAL '1 day 1 second' AS v FROM t",
            "SELECT INTERVAL '25 hours' + d AS v FROM t",
        ] {
            let err = run(sql, &b).expect_err(sql);
            assert!(err.contains("would drop its hours") && err.contains("CAST the date AS TIMESTAMP"), "{sql}: {err}");
        }
        // An integer is that many days (PostgreSQL's date + integer); DataFusion plans it as
        // hours, which were refused as "72 hours" (or dropped).
        let days = run("SELECT d + 3 AS a, d - 1 AS b, d + INTERVAL '48 hours' AS c FROM t", &b).unwrap();
        assert_eq!(shown(&days), ["2024-02-03|2024-01-30|2024-02-02", "||"]);
        let kept = run("SELECT CAST(d AS TIMESTAMP) - INTERVAL '1 hour' AS v FROM t", &b).unwrap();
        assert_eq!(shown(&kept), ["2024-01-30T23:00:00", ""]);
    }

    /// arrow's cast read a date's text with a time and an offset as that instant's UTC date.
    #[test]
    fn a_text_cast_to_a_date_is_the_date_written() {
        let texts: ArrayRef = Arc::new(arrow::array::StringArray::from(vec![
            Some("2024-01-01T23:00:00-05:00"),
            Some("2024-01-01 01:30:00+09:00"),
            Some("2024-01-01T23:59:59.999999Z"),
            Some("2024-01-01"),
            Some("2024-01-01T10:00:00"),
            None,
        ]));
        let b = RecordBatch::try_new(Arc::new(Schema::new(vec![Field::new("s", texts.data_type().clone(), true)])), vec![texts]).unwrap();
        let out = run("SELECT CAST(s AS DATE) AS d, TRY_CAST(s AS DATE) AS t, arrow_cast(s, 'Date64') AS d64 FROM t", &b).unwrap();
        // PostgreSQL: '2024-01-01T23:00:00-05:00'::date is 2024-01-01, and so is each of the others.
        let day = "2024-01-01|2024-01-01|2024-01-01T00:00:00";
        assert_eq!(shown(&out), [day, day, day, day, day, "||"]);
        let literal = run("SELECT CAST('2024-01-01T23:00:00-05:00' AS DATE) AS d FROM t", &b).unwrap();
        assert_eq!(shown(&literal)[0], "2024-01-01");
        // Text that is no date still fails the cast, or is NULL under TRY_CAST.
        let bad: ArrayRef = Arc::new(arrow::array::StringArray::from(vec!["2024-01-01Tnoon and more"]));
        let b = RecordBatch::try_new(Arc::new(Schema::new(vec![Field::new("s", bad.data_type().clone(), true)])), vec![bad]).unwrap();
        assert!(run("SELECT CAST(s AS DATE) AS d FROM t", &b).is_err());
        assert_eq!(shown(&run("SELECT TRY_CAST(s AS DATE) AS d FROM t", &b).unwrap()), [""]);
    }
}
