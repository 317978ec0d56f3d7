//! `sum` that fails instead of giving a wrong number.
//!
//! DataFusion's `sum` adds integers, decimals, durations and intervals with wrapping arithmetic:
//! the sum of a bigint column holding 9223372036854775807 and 1 is -9223372036854775808, of a
//! `bigint unsigned` one holding its maximum and 1 is 0, and a `decimal(38, 0)` sum past 38 digits
//! is some other number. Every session of the core registers [`checked_sum`] in its place: the
//! same function (name, argument types, result type, state) whose additions, and subtractions
//! when a window frame slides, are checked, and whose decimal results are checked against their
//! precision. An overflow fails the query, naming the aggregate, as checked arithmetic does
//! (`checked_arithmetic.rs`). Float sums are DataFusion's (IEEE: past the range is infinity).
//!
//! Each group is summed by a row accumulator: DataFusion's vectorized group accumulator adds
//! with wrapping and cannot report an error. Aggregates run over bounded data only (the state
//! DB's queries, side tables; streams refuse them), so the slower path costs little. A running
//! sum that leaves its type midway fails too, in the rows' order (as in Spark's ANSI mode).

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use arrow::array::{Array, ArrayRef, ArrowNativeTypeOp, ArrowNumericType, AsArray};
use arrow::datatypes::*;
use arrow::error::ArrowError;
use datafusion::common::{DataFusionError, Result, ScalarValue};
use datafusion::functions_aggregate::sum::Sum;
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::AggregateOrderSensitivity;
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Documentation, GroupsAccumulator, ReversedUDAF, SetMonotonicity, Signature,
};

/// The checked `sum`, to register in a session in place of DataFusion's.
pub fn checked_sum() -> AggregateUDF {
    AggregateUDF::new_from_impl(CheckedSum::default())
}

/// DataFusion's `Sum` with checked accumulators for every result type that is not a float.
#[derive(Debug, Default, PartialEq, Eq, Hash)]
struct CheckedSum {
    builtin: Sum,
}

/// Whether a sum of this result type is summed here (else by DataFusion's accumulators).
fn is_checked(sum_type: &DataType) -> bool {
    !matches!(sum_type, DataType::Float16 | DataType::Float32 | DataType::Float64)
}

/// Calls `$make::<T>($args)` with the arrow type of the sum's result type.
macro_rules! by_sum_type {
    ($args:expr, $make:ident) => {{
        let args = $args;
        let sum_type = args.return_field.data_type().clone();
        match &sum_type {
            DataType::Int64 => $make::<Int64Type>(args),
            DataType::UInt64 => $make::<UInt64Type>(args),
            DataType::Decimal32(_, _) => $make::<Decimal32Type>(args),
            DataType::Decimal64(_, _) => $make::<Decimal64Type>(args),
            DataType::Decimal128(_, _) => $make::<Decimal128Type>(args),
            DataType::Decimal256(_, _) => $make::<Decimal256Type>(args),
            DataType::Duration(TimeUnit::Second) => $make::<DurationSecondType>(args),
            DataType::Duration(TimeUnit::Millisecond) => $make::<DurationMillisecondType>(args),
            DataType::Duration(TimeUnit::Microsecond) => $make::<DurationMicrosecondType>(args),
            DataType::Duration(TimeUnit::Nanosecond) => $make::<DurationNanosecondType>(args),
            DataType::Interval(IntervalUnit::YearMonth) => $make::<IntervalYearMonthType>(args),
            DataType::Interval(IntervalUnit::DayTime) => $make::<IntervalDayTimeType>(args),
            DataType::Interval(IntervalUnit::MonthDayNano) => $make::<IntervalMonthDayNanoType>(args),
            other => Err(DataFusionError::Plan(format!("sum is not defined for {other}"))),
        }
    }};
}

fn running<T: ArrowNumericType + std::fmt::Debug>(args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
    Ok(Box::new(RunningSum::<T>::new(&args)))
}

fn distinct<T: ArrowNumericType + std::fmt::Debug>(args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
    Ok(Box::new(DistinctSum::<T>::new(&args)))
}

impl AggregateUDFImpl for CheckedSum {
    fn name(&self) -> &str {
        self.builtin.name()
    }

    fn signature(&self) -> &Signature {
        self.builtin.signature()
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        self.builtin.return_type(arg_types)
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        self.builtin.state_fields(args)
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        match (is_checked(args.return_field.data_type()), args.is_distinct) {
            (false, _) => self.builtin.accumulator(args),
            (true, false) => by_sum_type!(args, running),
            (true, true) => by_sum_type!(args, distinct),
        }
    }

    fn groups_accumulator_supported(&self, args: AccumulatorArgs) -> bool {
        !is_checked(args.return_field.data_type()) && self.builtin.groups_accumulator_supported(args)
    }

    fn create_groups_accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn GroupsAccumulator>> {
        self.builtin.create_groups_accumulator(args)
    }

    /// The checked accumulators retract too, so they serve sliding window frames as they are.
    fn create_sliding_accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        if is_checked(args.return_field.data_type()) {
            self.accumulator(args)
        } else {
            self.builtin.create_sliding_accumulator(args)
        }
    }

    fn reverse_expr(&self) -> ReversedUDAF {
        ReversedUDAF::Identical
    }

    fn order_sensitivity(&self) -> AggregateOrderSensitivity {
        self.builtin.order_sensitivity()
    }

    fn documentation(&self) -> Option<&Documentation> {
        self.builtin.documentation()
    }

    fn set_monotonicity(&self, data_type: &DataType) -> SetMonotonicity {
        self.builtin.set_monotonicity(data_type)
    }

    // Not delegated: `simplify_expr_op_literal` (rewrites `sum(x + 1)` into `sum(x) + 1 * count(x)`
    // with an unchecked `+`, after the checked-arithmetic rule has run) and `value_from_stats`.
}

/// What an overflow of the sum called `name` (of result type `sum_type`) is reported as.
fn overflow(name: &str, sum_type: &DataType, what: impl std::fmt::Display) -> DataFusionError {
    let hint = match sum_type {
        DataType::Int64 | DataType::UInt64 => "; CAST its argument to a wider type (DECIMAL(38, 0))",
        DataType::Decimal32(_, _) | DataType::Decimal64(_, _) | DataType::Decimal128(_, _) => "; CAST its argument to a wider type (DECIMAL(76, s))",
        _ => "",
    };
    DataFusionError::Execution(format!("Arithmetic overflow: {name} does not fit {sum_type}: {what}{hint}"))
}

/// An arrow arithmetic error as an overflow of the sum.
fn overflowed(name: &str, sum_type: &DataType, error: ArrowError) -> DataFusionError {
    match error {
        ArrowError::ArithmeticOverflow(what) => overflow(name, sum_type, what),
        other => DataFusionError::ArrowError(Box::new(other), None),
    }
}

/// `sum` as a value of the result type, or an overflow if a decimal has more digits than it.
fn result<T: ArrowNumericType>(sum: Option<T::Native>, name: &str, sum_type: &DataType) -> Result<ScalarValue> {
    let value = ScalarValue::new_primitive::<T>(sum, sum_type)?;
    let fits = match &value {
        ScalarValue::Decimal32(Some(v), p, _) => Decimal32Type::is_valid_decimal_precision(*v, *p),
        ScalarValue::Decimal64(Some(v), p, _) => Decimal64Type::is_valid_decimal_precision(*v, *p),
        ScalarValue::Decimal128(Some(v), p, _) => Decimal128Type::is_valid_decimal_precision(*v, *p),
        ScalarValue::Decimal256(Some(v), p, _) => Decimal256Type::is_valid_decimal_precision(*v, *p),
        _ => true,
    };
    if fits {
        Ok(value)
    } else {
        Err(overflow(name, sum_type, format_args!("the sum {value} has more digits than its precision")))
    }
}

/// A sum and the count of values in it; the count makes an emptied window frame NULL again.
#[derive(Debug)]
struct RunningSum<T: ArrowNumericType> {
    sum: T::Native,
    count: u64,
    name: String,
    sum_type: DataType,
}

impl<T: ArrowNumericType> RunningSum<T> {
    fn new(args: &AccumulatorArgs) -> Self {
        RunningSum { sum: T::Native::usize_as(0), count: 0, name: args.name.to_string(), sum_type: args.return_field.data_type().clone() }
    }

    fn add(&mut self, values: &ArrayRef, sign: Sign) -> Result<()> {
        let values = values.as_primitive::<T>();
        let overflow = |e| overflowed(&self.name, &self.sum_type, e);
        let Some(batch_sum) = arrow::compute::sum_checked(values).map_err(overflow)? else { return Ok(()) };
        self.sum = match sign {
            Sign::Plus => self.sum.add_checked(batch_sum),
            Sign::Minus => self.sum.sub_checked(batch_sum),
        }
        .map_err(overflow)?;
        let count = (values.len() - values.null_count()) as u64;
        self.count = match sign {
            Sign::Plus => self.count + count,
            Sign::Minus => self.count - count,
        };
        Ok(())
    }
}

#[derive(Clone, Copy)]
enum Sign {
    Plus,
    Minus,
}

impl<T: ArrowNumericType + std::fmt::Debug> Accumulator for RunningSum<T> {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.add(&values[0], Sign::Plus)
    }

    fn retract_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.add(&values[0], Sign::Minus)
    }

    fn supports_retract_batch(&self) -> bool {
        true
    }

    /// The partial sum, unchecked against the precision: only the final result must fit.
    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![ScalarValue::new_primitive::<T>((self.count != 0).then_some(self.sum), &self.sum_type)?])
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        self.add(&states[0], Sign::Plus)
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        result::<T>((self.count != 0).then_some(self.sum), &self.name, &self.sum_type)
    }

    fn size(&self) -> usize {
        size_of_val(self) + self.name.capacity()
    }
}

/// A value as a hash key: by its bytes (no float is summed here, so equal means bit-equal).
#[derive(Debug, Clone, Copy)]
struct Key<N>(N);

impl<N: ArrowNativeTypeOp> Hash for Key<N> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.to_byte_slice().hash(state)
    }
}

impl<N: ArrowNativeTypeOp> PartialEq for Key<N> {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_byte_slice() == other.0.to_byte_slice()
    }
}

impl<N: ArrowNativeTypeOp> Eq for Key<N> {}

/// `sum(DISTINCT x)`: each distinct value with how many rows hold it (a sliding frame retracts
/// rows), summed when evaluated.
#[derive(Debug)]
struct DistinctSum<T: ArrowNumericType> {
    counts: HashMap<Key<T::Native>, u64>,
    name: String,
    sum_type: DataType,
}

impl<T: ArrowNumericType> DistinctSum<T> {
    fn new(args: &AccumulatorArgs) -> Self {
        DistinctSum { counts: HashMap::new(), name: args.name.to_string(), sum_type: args.return_field.data_type().clone() }
    }

    fn add(&mut self, values: &dyn Array) {
        for value in values.as_primitive::<T>().iter().flatten() {
            *self.counts.entry(Key(value)).or_default() += 1;
        }
    }
}

impl<T: ArrowNumericType + std::fmt::Debug> Accumulator for DistinctSum<T> {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.add(&values[0]);
        Ok(())
    }

    fn retract_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        for value in values[0].as_primitive::<T>().iter().flatten() {
            if let Some(count) = self.counts.get_mut(&Key(value)) {
                *count -= 1;
                if *count == 0 {
                    self.counts.remove(&Key(value));
                }
            }
        }
        Ok(())
    }

    fn supports_retract_batch(&self) -> bool {
        true
    }

    /// The distinct values as a list, the state DataFusion's `sum(DISTINCT)` declares.
    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        let values = self.counts.keys().map(|k| ScalarValue::new_primitive::<T>(Some(k.0), &self.sum_type)).collect::<Result<Vec<_>>>()?;
        Ok(vec![ScalarValue::List(ScalarValue::new_list_nullable(&values, &self.sum_type))])
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        for list in states[0].as_list::<i32>().iter().flatten() {
            self.add(&list);
        }
        Ok(())
    }

    /// Sums the smallest remaining value while the sum is not negative, else the largest: the
    /// partial sums then stay within the type whenever the total does, in any hash order.
    fn evaluate(&mut self) -> Result<ScalarValue> {
        let mut values: Vec<T::Native> = self.counts.keys().map(|k| k.0).collect();
        values.sort_by(|a, b| a.compare(*b));
        let zero = T::Native::usize_as(0);
        let (mut sum, mut low, mut high) = (zero, 0, values.len());
        while low < high {
            let next = if sum.is_ge(zero) {
                low += 1;
                values[low - 1]
            } else {
                high -= 1;
                values[high]
            };
            sum = sum.add_checked(next).map_err(|e| overflowed(&self.name, &self.sum_type, e))?;
        }
        result::<T>((!values.is_empty()).then_some(sum), &self.name, &self.sum_type)
    }

    fn size(&self) -> usize {
        size_of_val(self) + self.name.capacity() + self.counts.capacity() * (size_of::<Key<T::Native>>() + size_of::<u64>())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{Decimal128Array, DurationSecondArray, Float64Array, Int32Array, Int64Array, RecordBatch, UInt64Array};
    use arrow::datatypes::{DataType, Field, Schema};

    use crate::transform::run_bounded_query;

    /// k: row order; a: bigint; u: bigint unsigned; d, h: decimal(38, 0) (two d are past i128, two h
    /// within it but past 38 digits); e: decimal(30, 0) (sums as decimal(38, 0)); s: a duration in
    /// seconds; f: double; i: int (sums as bigint).
    fn table(a: &[Option<i64>]) -> RecordBatch {
        let n = a.len();
        let columns: Vec<(&str, Arc<dyn arrow::array::Array>)> = vec![
            ("k", Arc::new(Int64Array::from_iter_values(0..n as i64))),
            ("a", Arc::new(Int64Array::from(a.to_vec()))),
            ("u", Arc::new(UInt64Array::from_iter_values((0..n).map(|i| if i == 0 { u64::MAX } else { 1 })))),
            ("d", Arc::new(Decimal128Array::from_iter_values((0..n).map(|_| 9 * 10i128.pow(37))).with_precision_and_scale(38, 0).unwrap())),
            ("h", Arc::new(Decimal128Array::from_iter_values((0..n).map(|_| 6 * 10i128.pow(37))).with_precision_and_scale(38, 0).unwrap())),
            ("e", Arc::new(Decimal128Array::from_iter_values((0..n).map(|_| 10i128.pow(30) - 1)).with_precision_and_scale(30, 0).unwrap())),
            ("s", Arc::new(DurationSecondArray::from_iter_values((0..n).map(|i| if i == 0 { i64::MAX } else { 1 })))),
            ("f", Arc::new(Float64Array::from_iter_values((0..n).map(|_| 1e308)))),
            ("i", Arc::new(Int32Array::from_iter_values((0..n).map(|_| i32::MAX)))),
        ];
        let fields: Vec<Field> = columns.iter().map(|(name, c)| Field::new(*name, c.data_type().clone(), true)).collect();
        RecordBatch::try_new(Arc::new(Schema::new(fields)), columns.into_iter().map(|(_, c)| c).collect()).unwrap()
    }

    fn query(sql: &str, t: &RecordBatch) -> Result<RecordBatch, String> {
        run_bounded_query(sql, "t", t.clone()).map_err(|e| e.to_string())
    }

    fn int64s(out: &RecordBatch, column: usize) -> Vec<Option<i64>> {
        out.column(column).as_any().downcast_ref::<Int64Array>().unwrap().iter().collect()
    }

    #[test]
    fn sums_that_do_not_fit_fail_instead_of_wrapping() {
        let t = table(&[Some(i64::MAX), Some(1), Some(1)]);
        for sql in [
            "SELECT sum(a) FROM t",
            "SELECT sum(a) FROM t GROUP BY k % 1",
            "SELECT sum(a) FILTER (WHERE a > 0) FROM t",
            "SELECT sum(DISTINCT a) FROM t",
            "SELECT sum(a) OVER () FROM t",
            "SELECT sum(a) OVER (ORDER BY k ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t",
            "SELECT sum(DISTINCT a) OVER (ORDER BY k ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t",
            "SELECT sum(u) FROM t",
            "SELECT sum(d) FROM t",
            "SELECT sum(DISTINCT d + k) FROM t WHERE k < 2",
            "SELECT sum(s) FROM t",
            "SELECT n FROM (SELECT sum(a) AS n FROM t) WHERE n IS NOT NULL",
        ] {
            let err = query(sql, &t).expect_err(sql);
            assert!(err.contains("Arithmetic overflow: sum(") && err.contains("does not fit"), "{sql}: {err}");
        }
        // Within i128 but past the 38 digits of its result type.
        for sql in ["SELECT sum(h) FROM t WHERE k < 2", "SELECT sum(DISTINCT h + k) FROM t WHERE k < 2"] {
            let err = query(sql, &t).expect_err(sql);
            assert!(err.contains("12000000000000000000000000000000000000") && err.contains("has more digits than its precision"), "{sql}: {err}");
        }
    }

    #[test]
    fn sums_that_fit_keep_their_values_types_and_nulls() {
        let t = table(&[Some(i64::MAX), Some(-1), None, Some(1), Some(-1)]);
        let out = query(
            "SELECT sum(a) AS total, sum(DISTINCT a) AS distinct_total, sum(i) AS ints, sum(f) AS floats, sum(a) FILTER (WHERE a < 0) AS negatives, \
             sum(a) FILTER (WHERE a IS NULL) AS none FROM t",
            &t,
        )
        .unwrap();
        assert_eq!(int64s(&out, 0), vec![Some(i64::MAX - 1)]);
        assert_eq!(int64s(&out, 1), vec![Some(i64::MAX)]);
        assert_eq!(int64s(&out, 2), vec![Some(i64::from(i32::MAX) * 5)]);
        assert_eq!(out.column(3).as_any().downcast_ref::<Float64Array>().unwrap().value(0), f64::INFINITY, "floats are IEEE sums");
        assert_eq!(int64s(&out, 4), vec![Some(-2)]);
        assert_eq!(int64s(&out, 5), vec![None]);
        let types: Vec<DataType> = out.schema().fields().iter().map(|f| f.data_type().clone()).collect();
        assert_eq!(types, vec![DataType::Int64, DataType::Int64, DataType::Int64, DataType::Float64, DataType::Int64, DataType::Int64]);

        // Sliding frames add the row entering and retract the one leaving; an empty frame is NULL.
        let out = query(
            "SELECT sum(a) OVER (ORDER BY k ROWS BETWEEN 1 PRECEDING AND CURRENT ROW), \
             sum(a) OVER (ORDER BY k ROWS BETWEEN 2 PRECEDING AND 1 PRECEDING), \
             sum(DISTINCT a) OVER (ORDER BY k ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM t ORDER BY k",
            &t,
        )
        .unwrap();
        assert_eq!(int64s(&out, 0), vec![Some(i64::MAX), Some(i64::MAX - 1), Some(-1), Some(1), Some(0)]);
        assert_eq!(int64s(&out, 1), vec![None, Some(i64::MAX), Some(i64::MAX - 1), Some(-1), Some(1)]);
        assert_eq!(int64s(&out, 2), vec![Some(i64::MAX), Some(i64::MAX - 1), Some(i64::MAX - 1), Some(0), Some(0)]);

        let grouped = query("SELECT k % 2 AS g, sum(a) AS n FROM t GROUP BY k % 2 ORDER BY g", &t).unwrap();
        assert_eq!(int64s(&grouped, 1), vec![Some(i64::MAX - 1), Some(0)]);
        let decimals = query("SELECT sum(e) AS n FROM t WHERE k < 2", &t).unwrap();
        assert_eq!(decimals.schema().field(0).data_type(), &DataType::Decimal128(38, 0));
        let value = decimals.column(0).as_any().downcast_ref::<Decimal128Array>().unwrap().value(0);
        assert_eq!(value, 2 * (10i128.pow(30) - 1));
        // The wider type the error suggests for decimal(38) sums holds them.
        let wide = query("SELECT sum(CAST(d AS DECIMAL(76, 0))) AS n FROM t", &t).unwrap();
        assert_eq!(wide.schema().field(0).data_type(), &DataType::Decimal256(76, 0));
        assert_eq!(arrow::util::display::array_value_to_string(wide.column(0), 0).unwrap(), format!("45{}", "0".repeat(37)));
        let empty = query("SELECT sum(a) AS n, sum(DISTINCT a) AS m FROM t WHERE k > 99", &t).unwrap();
        assert_eq!((int64s(&empty, 0), int64s(&empty, 1)), (vec![None], vec![None]));
    }
}
