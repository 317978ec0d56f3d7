//! Which key a SQL transform's output rows keep.
//!
//! A source that knows its rows' key says so in its schema's metadata (`sluice.primary_key`,
//! the host's `PrimaryKey`), and sinks key their writes by it: a PostgreSQL upsert replaces the
//! row of that key, a Kafka record is keyed (and compacted) by it. A key that survives a query
//! by name only is a wrong key: `SELECT name AS id` or a row repeated by UNNEST would make a
//! sink overwrite one entity's row with another's. So the key is carried only where the plan
//! proves it, row for row:
//! - a scan of a stream input with a key, or of a dynamic table (unique by its key);
//! - filters, aliases, sorts and limits keep their input's key;
//! - a projection keeps it when every key column passes through unchanged (renaming is fine;
//!   a CAST or any other expression is not: it may map two keys to one);
//! - an inner or left join keeps the left side's key when the right side is unique by the
//!   columns it is joined on (a lookup on a dynamic table's whole key), a right join the other
//!   way round; semi and anti joins keep their side's key;
//! - anything else (UNION, UNNEST, VALUES, aggregates, full joins) carries no key.
//!
//! Only a key that starts at a stream input counts for the output: a dynamic table's key
//! repeats across batches (every event joined to the same row), so it keys no output.

use std::collections::HashMap;

use arrow::datatypes::{Schema, SchemaRef};
use datafusion::catalog::streaming::StreamingTable;
use datafusion::common::JoinType;
use datafusion::datasource::source_as_provider;
use datafusion::logical_expr::expr::BinaryExpr;
use datafusion::logical_expr::utils::split_conjunction;
use datafusion::logical_expr::{Expr, LogicalPlan, Operator};

use crate::dynamic_tables::DynamicTableProvider;

/// The schema metadata key naming a schema's key columns, comma-separated (the host's
/// `PrimaryKey.METADATA_KEY`).
pub const PRIMARY_KEY: &str = "sluice.primary_key";

/// Columns (indices into a plan node's schema) by which the node's rows are unique.
#[derive(Clone, Debug, PartialEq)]
struct UniqueBy {
    columns: Vec<usize>,
    /// Whether the key started at a stream input (else at a dynamic table).
    from_stream: bool,
}

/// `schema` with its key set to what `plan` carries: the key's names in its metadata, or no
/// key at all. Whatever key the schema held before (DataFusion passes an input's metadata on
/// through projections) is replaced.
pub fn with_carried_key(schema: &SchemaRef, plan: &LogicalPlan) -> Schema {
    let mut metadata: HashMap<String, String> = schema.metadata().clone();
    metadata.remove(PRIMARY_KEY);
    if let Some(key) = unique_by(plan).filter(|key| key.from_stream) {
        let names: Vec<&str> = key.columns.iter().map(|&i| plan.schema().field(i).name().as_str()).collect();
        // The plan's schema and the physical one name columns alike; a name that is not
        // there (never seen) drops the key rather than name a wrong column.
        if names.iter().all(|name| schema.index_of(name).is_ok()) {
            metadata.insert(PRIMARY_KEY.to_string(), names.join(","));
        }
    }
    Schema::new_with_metadata(schema.fields().clone(), metadata)
}

fn unique_by(plan: &LogicalPlan) -> Option<UniqueBy> {
    match plan {
        LogicalPlan::TableScan(scan) => {
            let provider = source_as_provider(&scan.source).ok()?;
            let (names, from_stream) = if provider.downcast_ref::<StreamingTable>().is_some() {
                let names = provider.schema().metadata().get(PRIMARY_KEY)?.split(',').map(str::to_string).collect::<Vec<_>>();
                (names, true)
            } else if let Some(table) = provider.downcast_ref::<DynamicTableProvider>() {
                (table.0.key_names().into_iter().map(str::to_string).collect(), false)
            } else {
                return None;
            };
            if names.is_empty() {
                return None;
            }
            let table_schema = provider.schema();
            let mut columns = Vec::with_capacity(names.len());
            for name in &names {
                let index = table_schema.index_of(name).ok()?;
                columns.push(match &scan.projection {
                    Some(projection) => projection.iter().position(|&p| p == index)?,
                    None => index,
                });
            }
            Some(UniqueBy { columns, from_stream })
        }
        LogicalPlan::SubqueryAlias(alias) => unique_by(&alias.input),
        LogicalPlan::Filter(filter) => unique_by(&filter.input),
        LogicalPlan::Sort(sort) => unique_by(&sort.input),
        LogicalPlan::Limit(limit) => unique_by(&limit.input),
        LogicalPlan::Projection(projection) => {
            let key = unique_by(&projection.input)?;
            let input_schema = projection.input.schema();
            let mut columns = Vec::with_capacity(key.columns.len());
            for &wanted in &key.columns {
                let found = projection.expr.iter().position(|expr| match unaliased(expr) {
                    Expr::Column(column) => input_schema.index_of_column(column).ok() == Some(wanted),
                    _ => false,
                })?;
                columns.push(found);
            }
            Some(UniqueBy { columns, from_stream: key.from_stream })
        }
        LogicalPlan::Join(join) => {
            let left_width = join.left.schema().fields().len();
            // The equalities between the sides: DataFusion's `on` pairs, and before its
            // optimizer has run (as here) the `a = b` conjuncts of the ON condition.
            let column_of = |expr: &Expr, side: &LogicalPlan| match unaliased(expr) {
                Expr::Column(column) => side.schema().index_of_column(column).ok(),
                _ => None,
            };
            // An `on` pair has an expression of each side; a conjunct counts where it equates
            // a column of one side with an expression of the other's columns alone.
            let mut on_left: Vec<usize> = join.on.iter().filter_map(|(l, _)| column_of(l, &join.left)).collect();
            let mut on_right: Vec<usize> = join.on.iter().filter_map(|(_, r)| column_of(r, &join.right)).collect();
            let of_side =
                |expr: &Expr, side: &LogicalPlan| !expr.is_volatile() && expr.column_refs().iter().all(|c| side.schema().index_of_column(c).is_ok());
            if let Some(filter) = &join.filter {
                for conjunct in split_conjunction(filter) {
                    if let Expr::BinaryExpr(BinaryExpr { left: a, op: Operator::Eq, right: b }) = conjunct {
                        for (one, other) in [(a, b), (b, a)] {
                            if let Some(r) = column_of(one, &join.right).filter(|_| of_side(other, &join.left)) {
                                on_right.push(r);
                            }
                            if let Some(l) = column_of(one, &join.left).filter(|_| of_side(other, &join.right)) {
                                on_left.push(l);
                            }
                        }
                    }
                }
            }
            // Each row of the other side meets at most one row of `unique` when it is a dynamic
            // table matched on its whole key (a stream's key names an entity, not a row: one
            // batch may update it twice).
            let at_most_one_match = |unique: &LogicalPlan, on: &[usize]| -> bool {
                unique_by(unique).is_some_and(|key| !key.from_stream && key.columns.iter().all(|c| on.contains(c)))
            };
            match join.join_type {
                JoinType::LeftSemi | JoinType::LeftAnti | JoinType::LeftMark => unique_by(&join.left),
                JoinType::RightSemi | JoinType::RightAnti => unique_by(&join.right),
                JoinType::Inner | JoinType::Left if at_most_one_match(&join.right, &on_right) => unique_by(&join.left),
                JoinType::Inner | JoinType::Right if at_most_one_match(&join.left, &on_left) => {
                    unique_by(&join.right).map(|key| UniqueBy { columns: key.columns.iter().map(|c| c + left_width).collect(), ..key })
                }
                _ => None,
            }
        }
        _ => None,
    }
}

fn unaliased(expr: &Expr) -> &Expr {
    match expr {
        Expr::Alias(alias) => unaliased(&alias.expr),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::datatypes::{DataType, Field};

    use super::*;
    use crate::dynamic_tables::DynamicTable;
    use crate::plugin_udf::Functions;
    use crate::transform::SqlTransform;

    /// A stream `s` keyed by `id`, a stream `t` without a key, and a dynamic table `customers`
    /// keyed by `id`.
    fn key_after(sql: &str) -> Option<String> {
        let keyed = Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
            Field::new("cid", DataType::Int64, true),
            Field::new("tags", DataType::new_list(DataType::Utf8, true), true),
        ])
        .with_metadata(HashMap::from([(PRIMARY_KEY.to_string(), "id".to_string())]));
        let unkeyed = Schema::new(vec![Field::new("id", DataType::Int64, false), Field::new("name", DataType::Utf8, true)]);
        let customers = DynamicTable::new(
            serde_json::from_value(serde_json::json!({
                "name": "customers",
                "columns": [{"name": "id", "type": "Int64"}, {"name": "region", "type": "Utf8"}],
                "key": ["id"],
            }))
            .unwrap(),
        )
        .unwrap();
        let mut functions = Functions::default();
        functions.add_table(Arc::new(customers)).unwrap();
        let inputs = vec![("s".to_string(), Arc::new(keyed)), ("t".to_string(), Arc::new(unkeyed))];
        let transform = SqlTransform::with_functions(sql, inputs, &[], &functions).unwrap_or_else(|e| panic!("{sql}: {}", e.message));
        transform.output_schema().metadata().get(PRIMARY_KEY).cloned()
    }

    #[test]
    fn a_key_passed_through_unchanged_is_kept_under_its_output_name() {
        assert_eq!(key_after("SELECT * FROM s").as_deref(), Some("id"));
        assert_eq!(key_after("SELECT id, upper(name) AS name FROM s WHERE cid > 3").as_deref(), Some("id"));
        assert_eq!(key_after("SELECT name, id AS user_id FROM s").as_deref(), Some("user_id"));
        assert_eq!(key_after("SELECT x.id FROM (SELECT id, name FROM s) AS x").as_deref(), Some("id"));
        assert_eq!(key_after("SELECT id FROM s WHERE id IN (SELECT id FROM customers)").as_deref(), Some("id"));
        assert_eq!(key_after("SELECT id FROM s WHERE NOT EXISTS (SELECT 1 FROM customers c WHERE c.id = s.cid)").as_deref(), Some("id"));
    }

    #[test]
    fn a_column_that_only_has_the_key_s_name_is_no_key() {
        // The bug this module exists for: the sink keyed (and upserted) by `name`.
        assert_eq!(key_after("SELECT name AS id, cid FROM s"), None);
        assert_eq!(key_after("SELECT id % 10 AS id FROM s"), None);
        assert_eq!(key_after("SELECT CAST(id AS INT) AS id FROM s"), None);
        assert_eq!(key_after("SELECT name FROM s"), None);
        assert_eq!(key_after("SELECT * FROM t"), None);
    }

    #[test]
    fn rows_that_may_repeat_a_key_carry_none() {
        assert_eq!(key_after("SELECT id, unnest(tags) AS tag FROM s"), None);
        assert_eq!(key_after("SELECT id, name FROM s UNION ALL SELECT id, name FROM s"), None);
        assert_eq!(key_after("SELECT id, name FROM s UNION ALL SELECT id, name FROM t"), None);
        // customers is unique by id, not by region: one event may meet many customers.
        assert_eq!(key_after("SELECT s.id, c.id AS customer FROM s JOIN customers c ON s.name = c.region"), None);
    }

    #[test]
    fn a_lookup_on_a_dynamic_table_s_whole_key_keeps_the_stream_s_key_never_the_table_s() {
        assert_eq!(key_after("SELECT s.id, c.region FROM s JOIN customers c ON s.cid = c.id").as_deref(), Some("id"));
        assert_eq!(key_after("SELECT s.id AS event, c.region FROM s LEFT JOIN customers c ON s.cid = c.id").as_deref(), Some("event"));
        assert_eq!(key_after("SELECT s.id, c.region FROM customers c RIGHT JOIN s ON c.id = s.cid").as_deref(), Some("id"));
        assert_eq!(key_after("SELECT s.id, c.region FROM s JOIN customers c ON s.cid + 1 = c.id AND c.region <> s.name").as_deref(), Some("id"));
        // The table's key repeats across batches: every event of one customer has it.
        assert_eq!(key_after("SELECT c.id, c.region FROM s JOIN customers c ON s.cid = c.id"), None);
        assert_eq!(key_after("SELECT c.id, s.name FROM t AS s JOIN customers c ON s.id = c.id"), None);
    }
}
