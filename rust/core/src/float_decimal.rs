//! Decimals meeting floats as PostgreSQL has them meet: as doubles.
//!
//! A literal such as `8.20` is a double in DataFusion, and DataFusion compares a decimal with a
//! double (and picks the type of `COALESCE`, `CASE`, `GREATEST`, … over both) as a decimal of
//! 15 fractional digits, casting the double by a multiplication that is not exact: `8.2` became
//! 8.199999999999999, so `price = 8.20` on a decimal(12, 2) column was false and dropped the row
//! (about one value in sixteen between 0.00 and 99.99), `COALESCE(d, 1.5e-20)` was 0, and a NaN
//! or a double beyond that decimal's range failed the batch. PostgreSQL compares numeric with
//! float8 as float8; [`FloatDecimal`] makes every such meeting cast the decimal side to a double
//! first. It runs before DataFusion's type coercion, so every CAST it sees is the query's own;
//! so does decimal division (`decimal_division.rs`), whose quotient's type the expressions
//! around it are coerced to.

use std::sync::Arc;

use arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result};
use datafusion::logical_expr::expr::{Between, BinaryExpr, Case, InList, ScalarFunction};
use datafusion::logical_expr::{Expr, ExprSchemable, LogicalPlan, Operator};
use datafusion::optimizer::analyzer::AnalyzerRule;

/// The analyzer rule; add it to a session before DataFusion's type coercion.
#[derive(Debug, Default)]
pub struct FloatDecimal;

impl AnalyzerRule for FloatDecimal {
    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        Ok(plan.transform_up_with_subqueries(rewrite_node)?.data)
    }

    fn name(&self) -> &str {
        "sluice_float_decimal"
    }
}

fn rewrite_node(node: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
    let node = match node {
        LogicalPlan::Join(join) => rewrite_join(join)?,
        LogicalPlan::Union(union) => rewrite_union(union)?,
        other => Transformed::no(other),
    };
    let (node, joined_or_united) = (node.data, node.transformed);
    let node = crate::checked_arithmetic::rewrite_expressions(node, rewrite_expr)?;
    if joined_or_united && !node.transformed {
        Ok(Transformed::yes(node.data.recompute_schema()?))
    } else {
        Ok(node)
    }
}

/// A join's equality keys (`ON a = b`, `USING (c)`) of a decimal and a float, as doubles.
fn rewrite_join(mut join: datafusion::logical_expr::Join) -> Result<Transformed<LogicalPlan>> {
    let (left, right) = (join.left.schema().clone(), join.right.schema().clone());
    let mut changed = false;
    for (l, r) in join.on.iter_mut() {
        let (lt, rt) = (l.get_type(&left)?, r.get_type(&right)?);
        if mixes(&[lt, rt]) {
            *l = l.clone().cast_to(&DataType::Float64, &left)?;
            *r = r.clone().cast_to(&DataType::Float64, &right)?;
            changed = true;
        }
    }
    let plan = LogicalPlan::Join(join);
    Ok(if changed { Transformed::yes(plan) } else { Transformed::no(plan) })
}

/// A UNION whose inputs give one column as a decimal and as a float: each input's as a double
/// (the union's type was a decimal(30, 15): 1.5e-20 became 0, 1e30 failed the batch).
fn rewrite_union(union: datafusion::logical_expr::Union) -> Result<Transformed<LogicalPlan>> {
    let columns = union.schema.fields().len();
    let mixed: Vec<usize> =
        (0..columns).filter(|&i| mixes(&union.inputs.iter().map(|input| input.schema().field(i).data_type().clone()).collect::<Vec<_>>())).collect();
    if mixed.is_empty() || union.inputs.iter().any(|input| input.schema().fields().len() != columns) {
        return Ok(Transformed::no(LogicalPlan::Union(union)));
    }
    let mut inputs = Vec::with_capacity(union.inputs.len());
    for input in &union.inputs {
        let schema = input.schema();
        let exprs = (0..columns)
            .map(|i| {
                let (qualifier, field) = schema.qualified_field(i);
                let column = Expr::Column(datafusion::common::Column::new(qualifier.cloned(), field.name()));
                if mixed.contains(&i) {
                    Ok(column.cast_to(&DataType::Float64, schema)?.alias(field.name()))
                } else {
                    Ok(column)
                }
            })
            .collect::<Result<Vec<_>>>()?;
        inputs.push(Arc::new(LogicalPlan::Projection(datafusion::logical_expr::Projection::try_new(exprs, Arc::clone(input))?)));
    }
    Ok(Transformed::yes(LogicalPlan::Union(datafusion::logical_expr::Union::try_new_with_loose_types(inputs)?)))
}

/// Whether the types hold a float and a decimal.
fn mixes(types: &[DataType]) -> bool {
    types.iter().any(DataType::is_floating)
        && types.iter().any(|t| matches!(t, DataType::Decimal32(..) | DataType::Decimal64(..) | DataType::Decimal128(..) | DataType::Decimal256(..)))
}

/// Functions whose arguments take one common type, of which a float and a decimal make a double.
const ONE_TYPE_FUNCTIONS: [&str; 6] = ["coalesce", "nullif", "greatest", "least", "nvl", "ifnull"];

fn rewrite_expr(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    if let Some(quotient) = crate::decimal_division::rewrite(&expr, schema)? {
        return Ok(Transformed::yes(quotient));
    }
    Ok(match expr {
        Expr::BinaryExpr(BinaryExpr { left, op, right }) if is_comparison(op) => match as_doubles(&[&left, &right], schema)?.as_deref() {
            Some([l, r]) => Transformed::yes(Expr::BinaryExpr(BinaryExpr::new(Box::new(l.clone()), op, Box::new(r.clone())))),
            _ => Transformed::no(Expr::BinaryExpr(BinaryExpr { left, op, right })),
        },
        Expr::Between(Between { expr, negated, low, high }) => match as_doubles(&[&expr, &low, &high], schema)?.as_deref() {
            Some([e, l, h]) => Transformed::yes(Expr::Between(Between::new(Box::new(e.clone()), negated, Box::new(l.clone()), Box::new(h.clone())))),
            _ => Transformed::no(Expr::Between(Between { expr, negated, low, high })),
        },
        Expr::InList(InList { expr, list, negated }) => {
            let all: Vec<&Expr> = std::iter::once(expr.as_ref()).chain(list.iter()).collect();
            match as_doubles(&all, schema)? {
                Some(mut doubles) => {
                    let list = doubles.split_off(1);
                    Transformed::yes(Expr::InList(InList::new(Box::new(doubles.remove(0)), list, negated)))
                }
                None => Transformed::no(Expr::InList(InList { expr, list, negated })),
            }
        }
        Expr::ScalarFunction(ScalarFunction { func, args }) if ONE_TYPE_FUNCTIONS.contains(&func.name()) => {
            match as_doubles(&args.iter().collect::<Vec<_>>(), schema)? {
                Some(args) => Transformed::yes(Expr::ScalarFunction(ScalarFunction::new_udf(func, args))),
                None => Transformed::no(Expr::ScalarFunction(ScalarFunction { func, args })),
            }
        }
        Expr::Case(case) => rewrite_case(case, schema)?,
        Expr::InSubquery(datafusion::logical_expr::expr::InSubquery { expr, subquery, negated }) => {
            let inner = subquery.subquery.schema();
            let (outer_type, inner_type) = (expr.get_type(schema)?, inner.field(0).data_type().clone());
            if inner.fields().len() == 1 && mixes(&[outer_type, inner_type]) {
                let (qualifier, field) = inner.qualified_field(0);
                let column = Expr::Column(datafusion::common::Column::new(qualifier.cloned(), field.name()));
                let as_double = column.cast_to(&DataType::Float64, inner)?.alias(field.name());
                let plan = LogicalPlan::Projection(datafusion::logical_expr::Projection::try_new(vec![as_double], Arc::clone(&subquery.subquery))?);
                let subquery = datafusion::logical_expr::Subquery { subquery: Arc::new(plan), ..subquery };
                let expr = Box::new(expr.cast_to(&DataType::Float64, schema)?);
                Transformed::yes(Expr::InSubquery(datafusion::logical_expr::expr::InSubquery { expr, subquery, negated }))
            } else {
                Transformed::no(Expr::InSubquery(datafusion::logical_expr::expr::InSubquery { expr, subquery, negated }))
            }
        }
        other => Transformed::no(other),
    })
}

/// `CASE [operand] WHEN w THEN t … ELSE e END`: the operand and the `WHEN` values meet as in a
/// comparison, the `THEN` and `ELSE` values as the arguments of `COALESCE`.
fn rewrite_case(case: Case, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let Case { expr, when_then_expr, else_expr } = case;
    let mut changed = false;
    let (mut operand, mut whens) = (expr.map(|e| *e), when_then_expr.iter().map(|(w, _)| w.as_ref().clone()).collect::<Vec<_>>());
    if let Some(value) = &operand {
        let all: Vec<&Expr> = std::iter::once(value).chain(whens.iter()).collect();
        if let Some(mut doubles) = as_doubles(&all, schema)? {
            whens = doubles.split_off(1);
            operand = Some(doubles.remove(0));
            changed = true;
        }
    }
    let mut results: Vec<Expr> = when_then_expr.iter().map(|(_, t)| t.as_ref().clone()).chain(else_expr.iter().map(|e| e.as_ref().clone())).collect();
    if let Some(doubles) = as_doubles(&results.iter().collect::<Vec<_>>(), schema)? {
        results = doubles;
        changed = true;
    }
    let else_expr = else_expr.is_some().then(|| Box::new(results.pop().expect("the ELSE value")));
    let when_then_expr = whens.into_iter().zip(results).map(|(w, t)| (Box::new(w), Box::new(t))).collect();
    let case = Expr::Case(Case::new(operand.map(Box::new), when_then_expr, else_expr));
    Ok(if changed { Transformed::yes(case) } else { Transformed::no(case) })
}

/// The expressions, each as a double, when a float and a decimal are among them; else None.
fn as_doubles(exprs: &[&Expr], schema: &DFSchema) -> Result<Option<Vec<Expr>>> {
    let mut types = Vec::with_capacity(exprs.len());
    for e in exprs {
        types.push(e.get_type(schema)?);
    }
    let float = types.iter().any(DataType::is_floating);
    let decimal =
        types.iter().any(|t| matches!(t, DataType::Decimal32(..) | DataType::Decimal64(..) | DataType::Decimal128(..) | DataType::Decimal256(..)));
    if !(float && decimal) {
        return Ok(None);
    }
    exprs
        .iter()
        .zip(types)
        .map(|(e, t)| if t.is_numeric() { (*e).clone().cast_to(&DataType::Float64, schema) } else { Ok((*e).clone()) })
        .collect::<Result<Vec<_>>>()
        .map(Some)
}

fn is_comparison(op: Operator) -> bool {
    matches!(
        op,
        Operator::Eq
            | Operator::NotEq
            | Operator::Lt
            | Operator::LtEq
            | Operator::Gt
            | Operator::GtEq
            | Operator::IsDistinctFrom
            | Operator::IsNotDistinctFrom
    )
}

/// `CAST(decimal AS DOUBLE)` as the double nearest the decimal. arrow rounds the unscaled
/// integer to a double and then divides by the scale's power of ten — two roundings, a unit in
/// the last place off for about a quarter of decimal(38, 20) values (23.63 became
/// 23.630000000000003, and `amount = 23.63` was false). The checked-arithmetic rule calls this
/// for every such cast, the ones this rule and type coercion insert included.
pub(crate) static DECIMAL_AS_DOUBLE: std::sync::LazyLock<Arc<datafusion::logical_expr::ScalarUDF>> =
    std::sync::LazyLock::new(|| Arc::new(datafusion::logical_expr::ScalarUDF::new_from_impl(DecimalAsDouble::default())));

#[derive(Debug, PartialEq, Eq, Hash)]
struct DecimalAsDouble {
    signature: datafusion::logical_expr::Signature,
}

impl Default for DecimalAsDouble {
    fn default() -> Self {
        DecimalAsDouble { signature: datafusion::logical_expr::Signature::any(1, datafusion::logical_expr::Volatility::Immutable) }
    }
}

impl datafusion::logical_expr::ScalarUDFImpl for DecimalAsDouble {
    fn name(&self) -> &str {
        "sluice_decimal_as_double"
    }

    fn signature(&self) -> &datafusion::logical_expr::Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Float64)
    }

    fn return_field_from_args(&self, args: datafusion::logical_expr::ReturnFieldArgs) -> Result<arrow::datatypes::FieldRef> {
        Ok(Arc::new(arrow::datatypes::Field::new(self.name(), DataType::Float64, args.arg_fields[0].is_nullable())))
    }

    fn is_strict(&self) -> bool {
        true
    }

    fn invoke_with_args(&self, args: datafusion::logical_expr::ScalarFunctionArgs) -> Result<datafusion::logical_expr::ColumnarValue> {
        use datafusion::logical_expr::ColumnarValue;
        Ok(match &args.args[0] {
            ColumnarValue::Array(a) => ColumnarValue::Array(Arc::new(decimals_as_doubles(a)?)),
            ColumnarValue::Scalar(s) => {
                ColumnarValue::Scalar(datafusion::common::ScalarValue::try_from_array(&decimals_as_doubles(&s.to_array()?)?, 0)?)
            }
        })
    }
}

/// Each decimal of `decimals` as the double nearest it (any other array: arrow's cast).
pub(crate) fn decimals_as_doubles(decimals: &arrow::array::ArrayRef) -> Result<arrow::array::Float64Array> {
    use arrow::array::{Array, AsArray};
    use arrow::datatypes::{Decimal128Type, Decimal256Type, Decimal32Type, Decimal64Type};
    /// The nearest double: one correctly rounded division while both operands are exact
    /// doubles (|unscaled| ≤ 2^53, a power of ten ≤ 10^22), else through the decimal's text.
    fn nearest(unscaled: i128, text: impl FnOnce() -> String, scale: i8) -> f64 {
        const EXACT: i128 = 1 << 53;
        if (-EXACT..=EXACT).contains(&unscaled) && (-22..=22).contains(&scale) {
            let power = 10f64.powi(i32::from(scale.unsigned_abs()));
            let value = unscaled as f64;
            return if scale >= 0 { value / power } else { value * power };
        }
        format!("{}e{}", text(), -i32::from(scale)).parse().unwrap_or(f64::NAN)
    }
    let scale = match decimals.data_type() {
        DataType::Decimal32(_, s) | DataType::Decimal64(_, s) | DataType::Decimal128(_, s) | DataType::Decimal256(_, s) => *s,
        _ => return Ok(arrow::compute::cast(decimals, &DataType::Float64)?.as_primitive::<arrow::datatypes::Float64Type>().clone()),
    };
    Ok(match decimals.data_type() {
        DataType::Decimal32(..) => decimals.as_primitive::<Decimal32Type>().unary(|v| nearest(i128::from(v), || v.to_string(), scale)),
        DataType::Decimal64(..) => decimals.as_primitive::<Decimal64Type>().unary(|v| nearest(i128::from(v), || v.to_string(), scale)),
        DataType::Decimal128(..) => decimals.as_primitive::<Decimal128Type>().unary(|v| nearest(v, || v.to_string(), scale)),
        _ => decimals.as_primitive::<Decimal256Type>().unary(|v| nearest(v.to_i128().unwrap_or(i128::MAX), || v.to_string(), scale)),
    })
}

/// Puts the rule before the session's first analyzer rule (DataFusion's type coercion among them).
pub(crate) fn first_analyzer_rule(state: datafusion::execution::SessionState) -> datafusion::execution::SessionState {
    let mut rules = state.analyzer().rules.clone();
    rules.insert(0, Arc::new(FloatDecimal));
    datafusion::execution::SessionStateBuilder::new_from_existing(state).with_analyzer_rules(rules).build()
}

#[cfg(test)]
mod tests {
    use crate::transform::run_bounded_query;
    use arrow::array::{ArrayRef, Decimal128Array, Float64Array, Int64Array, RecordBatch};
    use std::sync::Arc;

    fn prices() -> RecordBatch {
        let cents = [820_i64, 9_999_999, 29, 100_000_007, 407, 411, 803, 435];
        let price = Decimal128Array::from(cents.iter().map(|&c| c as i128).collect::<Vec<_>>()).with_precision_and_scale(12, 2).unwrap();
        let f = Float64Array::from(vec![8.2, 99999.99, 0.29, 1000000.07, f64::NAN, 1e300, 1.5e-20, 4.35]);
        let id = Int64Array::from((0..cents.len() as i64).collect::<Vec<_>>());
        RecordBatch::try_from_iter([("id", Arc::new(id) as ArrayRef), ("price", Arc::new(price) as ArrayRef), ("f", Arc::new(f) as ArrayRef)])
            .unwrap()
    }

    fn ids(sql: &str) -> Vec<i64> {
        let out = run_bounded_query(sql, "t", prices()).unwrap_or_else(|e| panic!("{sql}: {}", e.message));
        out.column(0).as_any().downcast_ref::<Int64Array>().unwrap().values().to_vec()
    }

    fn text(sql: &str) -> Vec<String> {
        let out = run_bounded_query(sql, "t", prices()).unwrap_or_else(|e| panic!("{sql}: {}", e.message));
        let format = arrow::util::display::ArrayFormatter::try_new(out.column(0).as_ref(), &Default::default()).unwrap();
        (0..out.num_rows()).map(|i| format.value(i).to_string()).collect()
    }

    /// `price = 8.20` compared 8.20 with 8.199999999999999 (the literal is a double, cast to a
    /// decimal inexactly) and dropped the row; so did `>=`, BETWEEN and IN, and a double column.
    #[test]
    fn decimals_compare_with_floats_as_doubles() {
        assert_eq!(ids("SELECT id FROM t WHERE price = 8.20 OR price = 99999.99 OR price = 0.29 OR price = 1000000.07 ORDER BY id"), [0, 1, 2, 3]);
        assert_eq!(ids("SELECT id FROM t WHERE price >= 4.07 AND price <= 4.11 ORDER BY id"), [4, 5]);
        assert_eq!(ids("SELECT id FROM t WHERE price BETWEEN 4.07 AND 8.2 ORDER BY id"), [0, 4, 5, 6, 7]);
        assert_eq!(ids("SELECT id FROM t WHERE price IN (8.03, 4.11, 1234567890.12) ORDER BY id"), [5, 6]);
        assert_eq!(ids("SELECT id FROM t WHERE price = f ORDER BY id"), [0, 1, 2, 3, 7]);
        assert_eq!(ids("SELECT id FROM t WHERE CASE price WHEN 8.2 THEN true ELSE false END ORDER BY id"), [0]);
        // A NaN or a double beyond decimal(30, 15) failed the batch; they compare as doubles
        // (NaN above every number, as in PostgreSQL).
        assert_eq!(ids("SELECT id FROM t WHERE f > price ORDER BY id"), [4, 5]);
        // Decimals among themselves stay exact.
        assert_eq!(ids("SELECT id FROM t WHERE price = CAST('8.20' AS DECIMAL(5, 2)) ORDER BY id"), [0]);
    }

    /// arrow's CAST(decimal AS DOUBLE) rounds twice: decimal(38, 20) 23.63 became
    /// 23.630000000000003, so comparisons through the rule above still dropped rows.
    #[test]
    fn high_scale_decimals_become_the_nearest_double() {
        let cents: Vec<i128> = (0..100_000).collect();
        let amount = Decimal128Array::from(cents.iter().map(|c| c * 10_i128.pow(18)).collect::<Vec<_>>()).with_precision_and_scale(38, 20).unwrap();
        let big = Decimal128Array::from(vec![123_456_789_012_345_678_901_234_567_i128; cents.len()]).with_precision_and_scale(38, 10).unwrap();
        let f = Float64Array::from(cents.iter().map(|&c| format!("{}.{:02}", c / 100, c % 100).parse::<f64>().unwrap()).collect::<Vec<_>>());
        let id = Int64Array::from((0..cents.len() as i64).collect::<Vec<_>>());
        let b = RecordBatch::try_from_iter([
            ("id", Arc::new(id) as ArrayRef),
            ("amount", Arc::new(amount) as ArrayRef),
            ("big", Arc::new(big) as ArrayRef),
            ("f", Arc::new(f) as ArrayRef),
        ])
        .unwrap();
        let run = |sql: &str| run_bounded_query(sql, "t", b.clone()).unwrap_or_else(|e| panic!("{sql}: {}", e.message));
        let unequal = run("SELECT id FROM t WHERE amount <> f OR CAST(amount AS DOUBLE) <> f");
        assert_eq!(unequal.num_rows(), 0, "every decimal equals the double of its text");
        let matched = run("SELECT id FROM t WHERE amount = 23.63 OR amount IN (8.2, 590.31)");
        assert_eq!(matched.column(0).as_any().downcast_ref::<Int64Array>().unwrap().values().to_vec(), [820, 2363, 59031]);
        let wide = run("SELECT CAST(big AS DOUBLE) AS v FROM t LIMIT 1");
        assert_eq!(wide.column(0).as_any().downcast_ref::<Float64Array>().unwrap().value(0), 12345678901234567.8901234567_f64);
    }

    /// IN (SELECT …), a join's keys and UNION ALL met a decimal and a double as decimal(30, 15).
    #[test]
    fn subqueries_joins_and_unions_of_a_decimal_and_a_float_are_doubles() {
        assert_eq!(ids("SELECT id FROM t WHERE price IN (SELECT f FROM t) ORDER BY id"), [0, 1, 2, 3, 7]);
        assert_eq!(ids("SELECT a.id FROM t a JOIN t b ON a.price = b.f ORDER BY a.id"), [0, 1, 2, 3, 7]);
        assert_eq!(ids("SELECT a.id FROM (SELECT id, price AS k FROM t) a JOIN (SELECT f AS k FROM t) b USING (k) ORDER BY a.id"), [0, 1, 2, 3, 7]);
        assert_eq!(
            text("SELECT v FROM (SELECT price AS v FROM t WHERE id = 0 UNION ALL SELECT f FROM t WHERE id IN (5, 6)) ORDER BY v"),
            ["1.5e-20", "8.2", "1e300"]
        );
    }

    /// COALESCE of a decimal and a double was a decimal(30, 15): 1.5e-20 became 0.
    #[test]
    fn one_type_of_a_decimal_and_a_float_is_a_double() {
        assert_eq!(text("SELECT COALESCE(CAST(NULL AS DECIMAL(12, 2)), f) FROM t WHERE id = 6"), ["1.5e-20"]);
        assert_eq!(text("SELECT GREATEST(price, f) FROM t WHERE id = 6"), ["8.03"]);
        assert_eq!(text("SELECT CASE WHEN id = 6 THEN f ELSE price END FROM t WHERE id = 6"), ["1.5e-20"]);
    }
}
