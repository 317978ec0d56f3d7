//! Static side tables of SQL transforms: bounded tables read once from a file when the transform
//! is planned, which the streaming input may join (a lookup: every stream row is matched against
//! the whole table, as Nexmark's q13 does).
//!
//! DataFusion runs such a join as a join whose build side is the table and whose probe side is
//! the stream, but its join streams coalesce their output: the rows a probe batch produced may
//! wait inside the join until later batches fill an output batch, which would let them slip
//! past a checkpoint barrier. [`isolate_lookup_joins`] therefore wraps every such join in a
//! [`LookupJoinExec`] that executes the join once per probe batch over a one-batch input, so
//! the join's stream ends — and flushes — after each batch. The build side is collected once
//! and kept by the join node across those executions; when it reads a dynamic table
//! ([`crate::dynamic_tables`]) whose version moved since, the node is renewed first, so the
//! batch is joined against the table as it is now. A dynamic table in lookup mode (a cache of
//! a backend) is instead asked for the probe batch's keys before each execution, and its scan
//! yields just those rows.

use std::collections::HashMap;
use std::fmt;
use std::pin::Pin;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use arrow::array::{AsArray, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::JoinType;
use datafusion::datasource::MemTable;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, ChildrenPropertiesMode, EmissionType, ReplaceChildrenOptions};
use datafusion::physical_plan::joins::{CrossJoinExec, HashJoinExec, NestedLoopJoinExec, PartitionMode};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties};
use datafusion::prelude::SessionContext;
use futures::{Stream, StreamExt};
use serde::Deserialize;

use crate::dynamic_tables::{DynamicScanExec, DynamicTable};
use crate::error::{CoreError, Result};
use crate::file_io::{FileReader, ReaderOptions};

/// A side table as the engine describes it in the transform options:
/// `{"name": "side_input", "file": {"path": ..., "format": "csv", "header": false},
///   "columns": [{"name": "key", "type": "Int64"}, ...]}`. Column types are Arrow type names
/// as arrow-rs parses them (`Int64`, `Utf8`, `Timestamp(ms)`, `Decimal128(10, 2)`); without
/// `columns` the schema is inferred (JSON, CSV) or the Parquet file's own.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SideTable {
    pub name: String,
    pub file: ReaderOptions,
    #[serde(default)]
    pub columns: Option<Vec<SideColumn>>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SideColumn {
    pub name: String,
    #[serde(rename = "type")]
    pub data_type: String,
    #[serde(default = "nullable_by_default")]
    pub nullable: bool,
}

fn nullable_by_default() -> bool {
    true
}

impl SideTable {
    /// The declared schema, if any.
    pub fn schema(&self) -> Result<Option<SchemaRef>> {
        let Some(columns) = &self.columns else { return Ok(None) };
        Self::columns_schema(columns).map(Some).map_err(|e| self.error(e))
    }

    /// The schema declared by `columns` (also a dynamic table's).
    pub fn columns_schema(columns: &[SideColumn]) -> Result<SchemaRef> {
        let fields = columns
            .iter()
            .map(|c| {
                DataType::from_str(&c.data_type)
                    .map(|t| Field::new(&c.name, t, c.nullable))
                    .map_err(|e| CoreError::config(format!("column '{}': {e}", c.name)))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Arc::new(Schema::new(fields)))
    }

    /// Reads the whole file. A line that does not decode fails the table: a lookup against a
    /// silently shortened table would give wrong answers.
    pub fn load(&self) -> Result<MemTable> {
        let mut reader = FileReader::open(self.file.clone(), self.schema()?).map_err(|e| self.error(e))?;
        let schema = reader.schema();
        let mut batches = Vec::new();
        while let Some(read) = reader.next_batch().map_err(|e| self.error(e))? {
            if let Some(errors) = read.errors.filter(|e| e.num_rows() > 0) {
                let line = errors.column(0).as_primitive::<arrow::datatypes::Int64Type>().value(0);
                let why = errors.column(2).as_string::<i32>().value(0).to_string();
                return Err(self.error(CoreError::data(format!("line {line}: {why}"))));
            }
            batches.push(read.batch);
        }
        MemTable::try_new(schema, vec![batches]).map_err(|e| self.error(e.into()))
    }

    /// Loads the table and registers it under its name.
    pub fn register(&self, ctx: &SessionContext) -> Result<()> {
        if self.name.is_empty() || self.name.contains('.') {
            return Err(self.error(CoreError::config("a side table's name must be a plain SQL name (no dots)")));
        }
        ctx.register_table(self.name.as_str(), Arc::new(self.load()?))?;
        Ok(())
    }

    fn error(&self, cause: CoreError) -> CoreError {
        let message = format!("side table '{}' ({}): {}", self.name, self.file.path.display(), cause.message);
        CoreError::new(cause.kind, message)
    }
}

/// Wraps each join between a stream and bounded input in a [`LookupJoinExec`]. Joins the
/// streaming driver cannot run are refused with the reason: a join that would emit rows of the
/// side table only at the end of the stream (LEFT/FULL joins keeping unmatched table rows,
/// semi and anti joins over the table), and joins of two streams.
pub fn isolate_lookup_joins(plan: Arc<dyn ExecutionPlan>) -> Result<Arc<dyn ExecutionPlan>> {
    let mut refusal: Option<String> = None;
    plan.apply(|node| {
        if let Some((build, probe)) = stream_join_sides(node) {
            refusal = if build && probe {
                Some("a join between two streams keeps both sides in state".to_string())
            } else if build {
                Some(format!("the stream ended up on the build side of a {}; put the stream first in the FROM clause", node.name()))
            } else {
                lookup_join_refusal(node.as_ref())
            };
        }
        Ok(if refusal.is_some() { TreeNodeRecursion::Stop } else { TreeNodeRecursion::Continue })
    })?;
    if let Some(why) = refusal {
        return Err(CoreError::plan(format!("stateful SQL is not supported in a streaming transform: {why}")));
    }
    let rewritten = plan.transform_up(|node| match stream_join_sides(&node) {
        Some(_) => Ok(Transformed::new(LookupJoinExec::wrap(node)?, true, TreeNodeRecursion::Continue)),
        None => Ok(Transformed::no(node)),
    })?;
    // A lookup join hides its build side from this walk: a lookup table seen here is read
    // some other way, and would yield nothing.
    let mut stray = None;
    rewritten.data.apply(|node| {
        if let Some(scan) = node.downcast_ref::<DynamicScanExec>().filter(|scan| scan.table().is_lookup()) {
            stray = Some((scan.table().name().to_string(), scan.table().key_names().join(", ")));
        }
        Ok(TreeNodeRecursion::Continue)
    })?;
    if let Some((name, keys)) = stray {
        return Err(CoreError::plan(format!(
            "dynamic table '{name}' is looked up in its backend key by key: read it only in a join of the stream \
             with an equality on its key ({keys}), or with dynamic_contains"
        )));
    }
    Ok(rewritten.data)
}

/// For a join that reads a stream: whether its build side and its probe side are unbounded.
fn stream_join_sides(node: &Arc<dyn ExecutionPlan>) -> Option<(bool, bool)> {
    let children = node.children();
    if children.len() != 2 || !node.name().ends_with("JoinExec") {
        return None;
    }
    let sides = (is_unbounded(children[0]), is_unbounded(children[1]));
    (sides.0 || sides.1).then_some(sides)
}

fn is_unbounded(plan: &Arc<dyn ExecutionPlan>) -> bool {
    plan.properties().boundedness.is_unbounded()
}

/// Why a join with the side table as build side cannot run per probe batch, if it cannot.
fn lookup_join_refusal(join: &dyn ExecutionPlan) -> Option<String> {
    let join_type = if let Some(hash) = join.downcast_ref::<HashJoinExec>() {
        if *hash.partition_mode() != PartitionMode::CollectLeft {
            return Some(format!("a hash join in {:?} mode cannot look up a side table", hash.partition_mode()));
        }
        *hash.join_type()
    } else if let Some(nested) = join.downcast_ref::<NestedLoopJoinExec>() {
        *nested.join_type()
    } else if join.downcast_ref::<CrossJoinExec>().is_some() {
        JoinType::Inner
    } else {
        return Some(format!("this join plans a {}, which cannot look up a side table", join.name()));
    };
    match join_type {
        // Every output row is made from one probe row: it leaves with its batch.
        JoinType::Inner | JoinType::Right | JoinType::RightSemi | JoinType::RightAnti | JoinType::RightMark => None,
        other => Some(format!(
            "a {other} join with a side table would emit unmatched side-table rows only when the stream ends; \
             use an inner join, or a LEFT JOIN with the stream on the left"
        )),
    }
}

/// Runs a join (side table = build side, kept by the join node) once per probe batch, so that
/// everything a batch produces is emitted before the next batch is taken.
#[derive(Debug)]
pub struct LookupJoinExec {
    /// The join, its probe input replaced by `slots`.
    join: Arc<dyn ExecutionPlan>,
    /// The original probe input (the stream side).
    probe: Arc<dyn ExecutionPlan>,
    slots: Arc<ProbeSlots>,
    /// The original join's properties: its schema and partitioning, unbounded like the stream.
    properties: Arc<PlanProperties>,
    /// The dynamic tables the build side reads: a new version renews the join node.
    tables: Vec<Arc<DynamicTable>>,
    /// The lookup table the build side reads, if it reads one.
    lookup: Option<Arc<KeyLookup>>,
}

/// How a lookup join asks a lookup table for the rows of each probe batch.
#[derive(Debug)]
struct KeyLookup {
    table: Arc<DynamicTable>,
    /// The scan of the table in the build side, which yields what is put here.
    looked_up: Arc<Mutex<Option<RecordBatch>>>,
    /// The probe side's expressions equal to the key columns, in the table's key order.
    probe_keys: Vec<Arc<dyn PhysicalExpr>>,
}

impl KeyLookup {
    /// The lookup of the one lookup table `build` reads, if it reads one: the join must be a
    /// hash join with an equality on every key column of the table.
    fn of(join: &Arc<dyn ExecutionPlan>, build: &Arc<dyn ExecutionPlan>) -> datafusion::error::Result<Option<KeyLookup>> {
        let mut scans = Vec::new();
        build.apply(|node| {
            if let Some(scan) = node.downcast_ref::<DynamicScanExec>().filter(|scan| scan.table().is_lookup()) {
                scans.push((Arc::clone(scan.table()), scan.looked_up()));
            }
            Ok(TreeNodeRecursion::Continue)
        })?;
        let (table, looked_up) = match scans.len() {
            0 => return Ok(None),
            1 => scans.remove(0),
            _ => return datafusion::common::plan_err!("a join side may read one lookup table (backend: postgres), not several"),
        };
        let keys = table.key_names();
        let refusal = || {
            datafusion::common::plan_err!(
                "dynamic table '{}' is looked up in its backend key by key: join it to the stream with an equality on {} ({})",
                table.name(),
                if keys.len() == 1 { "its key column" } else { "every key column" },
                keys.join(", ")
            )
        };
        let Some(hash) = join.downcast_ref::<HashJoinExec>() else { return refusal() };
        let build_schema = build.schema();
        let mut probe_keys: Vec<Option<Arc<dyn PhysicalExpr>>> = vec![None; keys.len()];
        for (build_side, probe_side) in hash.on() {
            let Some(column) = build_side.downcast_ref::<Column>() else { continue };
            if let Some(at) = keys.iter().position(|k| *k == build_schema.field(column.index()).name()) {
                probe_keys[at] = Some(Arc::clone(probe_side));
            }
        }
        match probe_keys.into_iter().collect::<Option<Vec<_>>>() {
            Some(probe_keys) => Ok(Some(KeyLookup { table, looked_up, probe_keys })),
            None => refusal(),
        }
    }

    /// Looks up the keys of `batch` and hands the rows to the table's scan.
    fn prepare(&self, batch: &RecordBatch) -> datafusion::error::Result<()> {
        let keys = self
            .probe_keys
            .iter()
            .map(|e| e.evaluate(batch).and_then(|v| v.into_array(batch.num_rows())))
            .collect::<datafusion::error::Result<Vec<_>>>()?;
        let rows = self.table.lookup(&keys).map_err(|e| datafusion::error::DataFusionError::Execution(e.message))?;
        *self.looked_up.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(rows);
        Ok(())
    }
}

/// Join executions after which a stream rebuilds its join node: DataFusion registers a fresh
/// set of metrics at every execution and never drops them, so the node is renewed (and the side
/// table's hash table rebuilt from memory) before they add up.
const EXECUTIONS_PER_JOIN_NODE: usize = 4096;

impl LookupJoinExec {
    fn wrap(join: Arc<dyn ExecutionPlan>) -> datafusion::error::Result<Arc<dyn ExecutionPlan>> {
        let children = join.children();
        let (build, probe) = (Arc::clone(children[0]), Arc::clone(children[1]));
        let properties = Arc::clone(join.properties());
        Self::over(&join, build, probe, properties)
    }

    fn over(
        join: &Arc<dyn ExecutionPlan>,
        build: Arc<dyn ExecutionPlan>,
        probe: Arc<dyn ExecutionPlan>,
        properties: Arc<PlanProperties>,
    ) -> datafusion::error::Result<Arc<dyn ExecutionPlan>> {
        let slots = Arc::new(ProbeSlots::new(&probe));
        let lookup = KeyLookup::of(join, &build)?.map(Arc::new);
        let mut tables = Vec::new();
        build.apply(|node| {
            if let Some(scan) = node.downcast_ref::<DynamicScanExec>() {
                tables.push(Arc::clone(scan.table()));
            }
            Ok(TreeNodeRecursion::Continue)
        })?;
        let children = vec![build, Arc::clone(&slots) as Arc<dyn ExecutionPlan>];
        let join = Arc::clone(join).replace_children(children, ReplaceChildrenOptions::new(ChildrenPropertiesMode::Recompute))?;
        Ok(Arc::new(LookupJoinExec { join, probe, slots, properties, tables, lookup }))
    }
}

impl DisplayAs for LookupJoinExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "LookupJoinExec: per probe batch, {}", self.join.name())
    }
}

impl ExecutionPlan for LookupJoinExec {
    fn name(&self) -> &str {
        "LookupJoinExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.probe]
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> datafusion::error::Result<TreeNodeRecursion>,
    ) -> datafusion::error::Result<TreeNodeRecursion> {
        self.join.apply_expressions(f)
    }

    fn with_new_children(self: Arc<Self>, mut children: Vec<Arc<dyn ExecutionPlan>>) -> datafusion::error::Result<Arc<dyn ExecutionPlan>> {
        match children.len() {
            1 => Self::over(&self.join, Arc::clone(self.join.children()[0]), children.remove(0), Arc::clone(&self.properties)),
            n => Err(datafusion::error::DataFusionError::Internal(format!("LookupJoinExec has one child, got {n}"))),
        }
    }

    fn execute(&self, partition: usize, context: Arc<TaskContext>) -> datafusion::error::Result<SendableRecordBatchStream> {
        let probe = self.probe.execute(partition, Arc::clone(&context))?;
        let stream = LookupJoinStream {
            // A fresh copy: the stream registers metrics in the node at every execution, and a
            // transform re-executes this plan after each failed batch (tests/native_memory.rs).
            join: Arc::clone(&self.join).reset_state()?,
            slots: Arc::clone(&self.slots),
            partition,
            context,
            probe,
            current: None,
            executions: 0,
            tables: self.tables.clone(),
            seen: None,
            lookup: self.lookup.clone(),
        };
        Ok(Box::pin(RecordBatchStreamAdapter::new(self.schema(), stream)))
    }
}

struct LookupJoinStream {
    join: Arc<dyn ExecutionPlan>,
    slots: Arc<ProbeSlots>,
    partition: usize,
    context: Arc<TaskContext>,
    probe: SendableRecordBatchStream,
    /// The join's stream over the current probe batch; it ends when that batch is done.
    current: Option<SendableRecordBatchStream>,
    executions: usize,
    tables: Vec<Arc<DynamicTable>>,
    /// The dynamic tables' versions when the join node last collected its build side.
    seen: Option<Vec<u64>>,
    lookup: Option<Arc<KeyLookup>>,
}

impl LookupJoinStream {
    fn start_join(&mut self, batch: RecordBatch) -> datafusion::error::Result<()> {
        // Read before the join executes: its build side then sees these versions or newer.
        let versions: Vec<u64> = self.tables.iter().map(|t| t.version()).collect();
        let mut changed = self.seen.as_ref().is_some_and(|seen| *seen != versions);
        if let Some(lookup) = &self.lookup {
            // The build side is this batch's rows of the table: collected anew every time.
            lookup.prepare(&batch)?;
            changed = true;
        }
        if changed || self.executions == EXECUTIONS_PER_JOIN_NODE {
            self.join = Arc::clone(&self.join).reset_state()?;
            self.executions = 0;
        }
        self.seen = Some(versions);
        self.executions += 1;
        self.slots.put(self.partition, batch);
        self.current = Some(self.join.execute(self.partition, Arc::clone(&self.context))?);
        Ok(())
    }
}

impl Stream for LookupJoinStream {
    type Item = datafusion::error::Result<RecordBatch>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            if let Some(current) = self.current.as_mut() {
                match current.poll_next_unpin(cx) {
                    Poll::Ready(None) => self.current = None,
                    Poll::Ready(Some(Err(e))) => {
                        self.current = None;
                        return Poll::Ready(Some(Err(e)));
                    }
                    other => return other,
                }
            }
            match self.probe.poll_next_unpin(cx) {
                Poll::Ready(Some(Ok(batch))) => {
                    if let Err(e) = self.start_join(batch) {
                        return Poll::Ready(Some(Err(e)));
                    }
                }
                other => return other,
            }
        }
    }
}

/// The join's probe input inside a [`LookupJoinExec`]: each execution yields the one batch put
/// into its partition's slot, then ends.
#[derive(Debug)]
struct ProbeSlots {
    schema: SchemaRef,
    slots: Mutex<HashMap<usize, RecordBatch>>,
    properties: Arc<PlanProperties>,
}

impl ProbeSlots {
    fn new(probe: &Arc<dyn ExecutionPlan>) -> Self {
        let schema = probe.schema();
        let partitioning = probe.properties().output_partitioning().clone();
        // A hash join keeps its probe side's row order only when that side declares an ordering
        // (else a LEFT join's unmatched rows go to the end of the batch: a delete emitted before
        // the insert it follows). The declared ordering is not true of the values; only the join
        // node, whose properties stay inside the LookupJoinExec, ever sees it.
        let in_order = schema
            .fields()
            .first()
            .map(|first| datafusion::physical_expr::PhysicalSortExpr::new_default(Arc::new(Column::new(first.name(), 0)) as Arc<dyn PhysicalExpr>));
        let properties = PlanProperties::new(
            EquivalenceProperties::new_with_orderings(Arc::clone(&schema), in_order.map(|o| vec![o])),
            partitioning.clone(),
            EmissionType::Incremental,
            Boundedness::Bounded,
        );
        ProbeSlots { schema, slots: Mutex::new(HashMap::new()), properties: Arc::new(properties) }
    }

    fn put(&self, partition: usize, batch: RecordBatch) {
        self.slots.lock().expect("probe slots poisoned").insert(partition, batch);
    }
}

impl DisplayAs for ProbeSlots {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "ProbeSlots")
    }
}

impl ExecutionPlan for ProbeSlots {
    fn name(&self) -> &str {
        "ProbeSlots"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> datafusion::error::Result<TreeNodeRecursion>,
    ) -> datafusion::error::Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(self: Arc<Self>, _children: Vec<Arc<dyn ExecutionPlan>>) -> datafusion::error::Result<Arc<dyn ExecutionPlan>> {
        Ok(self)
    }

    fn execute(&self, partition: usize, _context: Arc<TaskContext>) -> datafusion::error::Result<SendableRecordBatchStream> {
        let batch = self.slots.lock().expect("probe slots poisoned").remove(&partition);
        let stream = futures::stream::iter(batch.map(Ok));
        Ok(Box::pin(RecordBatchStreamAdapter::new(Arc::clone(&self.schema), stream)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::file_io::FileFormat;
    use crate::transform::SqlTransform;
    use arrow::array::{Array, Int64Array, StringArray};
    use std::path::PathBuf;

    fn stream_schema() -> SchemaRef {
        Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false), Field::new("name", DataType::Utf8, true)]))
    }

    fn batch(ids: &[i64]) -> RecordBatch {
        let names: Vec<String> = ids.iter().map(|i| format!("n{i}")).collect();
        RecordBatch::try_new(stream_schema(), vec![Arc::new(Int64Array::from(ids.to_vec())), Arc::new(StringArray::from(names))]).unwrap()
    }

    /// A CSV side table `key,value` (no header) with keys 0..keys and values "v<key>".
    fn side_csv(test: &str, keys: i64) -> PathBuf {
        let path = std::env::temp_dir().join(format!("sluice-side-{test}-{}.csv", std::process::id()));
        let lines: String = (0..keys).map(|k| format!("{k},v{k}\n")).collect();
        std::fs::write(&path, lines).unwrap();
        path
    }

    fn side_table(path: PathBuf) -> SideTable {
        serde_json::from_value(serde_json::json!({
            "name": "side",
            "file": {"path": path, "format": "csv", "header": false},
            "columns": [{"name": "key", "type": "Int64"}, {"name": "value", "type": "Utf8"}],
        }))
        .unwrap()
    }

    fn plan(sql: &str, table: SideTable) -> Result<SqlTransform> {
        SqlTransform::with_side_tables(sql, vec![("s".into(), stream_schema())], &[table])
    }

    /// Rows of the drained output as (first column, second column as text or NULL).
    fn drain(t: &mut SqlTransform) -> Vec<(i64, Option<String>)> {
        let mut rows = drain_in_order(t);
        rows.sort();
        rows
    }

    fn drain_in_order(t: &mut SqlTransform) -> Vec<(i64, Option<String>)> {
        let mut rows = Vec::new();
        while let Some(b) = t.next_output() {
            let ids = b.column(0).as_primitive::<arrow::datatypes::Int64Type>();
            let texts = arrow::compute::cast(b.column(1), &DataType::Utf8).unwrap();
            let texts = texts.as_string::<i32>();
            for i in 0..b.num_rows() {
                rows.push((ids.value(i), (!texts.is_null(i)).then(|| texts.value(i).to_string())));
            }
        }
        rows
    }

    fn looked_up(ids: &[i64], keys: i64) -> Vec<(i64, Option<String>)> {
        let mut rows: Vec<_> = ids.iter().map(|&i| (i, Some(format!("v{}", i % keys)))).collect();
        rows.sort();
        rows
    }

    #[test]
    fn every_batch_leaves_the_lookup_join_with_all_its_matches() {
        let keys = 100;
        let mut t = plan("SELECT s.id, t.value FROM s JOIN side t ON s.id % 100 = t.key", side_table(side_csv("each", keys))).unwrap();
        // Sizes below, at and above the session batch size: DataFusion's join would hold the
        // small outputs back in its coalescer without the per-batch execution.
        for (round, size) in [1i64, 3, 5000, 8192, 20000, 2].into_iter().enumerate() {
            let ids: Vec<i64> = (round as i64 * 100_000..round as i64 * 100_000 + size).collect();
            t.push(0, batch(&ids)).unwrap();
            assert_eq!(drain(&mut t), looked_up(&ids, keys), "round {round}: every match of the batch, right away");
        }
    }

    #[test]
    fn the_join_node_is_renewed_without_losing_rows() {
        let mut t = plan("SELECT s.id, t.value FROM s JOIN side t ON s.id = t.key", side_table(side_csv("renew", 10))).unwrap();
        for round in 0..EXECUTIONS_PER_JOIN_NODE + 3 {
            t.push(0, batch(&[round as i64 % 10, 10])).unwrap();
            assert_eq!(drain(&mut t), looked_up(&[round as i64 % 10], 10), "round {round}");
        }
    }

    #[test]
    fn the_lookup_join_works_on_after_failed_batches() {
        // A failed batch restarts the plan's streams, each from a renewed copy of the join.
        let sql = "SELECT s.id, t.value, 10 / (s.id - 5) AS r FROM s JOIN side t ON s.id = t.key";
        let mut t = plan(sql, side_table(side_csv("failed", 10))).unwrap();
        for round in 0..3 {
            let err = t.push(0, batch(&[4, 5])).expect_err("division by zero");
            assert_eq!(err.kind, ErrorKind::Execution, "round {round}: {}", err.message);
            assert_eq!(drain(&mut t), vec![], "round {round}: nothing of the failed batch");
            t.push(0, batch(&[1, 2, 11])).unwrap();
            assert_eq!(drain(&mut t), looked_up(&[1, 2], 10), "round {round}");
        }
    }

    #[test]
    fn left_joins_from_the_stream_semi_joins_and_join_filters_emit_at_once() {
        let path = side_csv("kinds", 5);
        let mut left = plan("SELECT s.id, t.value FROM s LEFT JOIN side t ON s.id = t.key", side_table(path.clone())).unwrap();
        left.push(0, batch(&[1, 7])).unwrap();
        assert_eq!(drain(&mut left), vec![(1, Some("v1".into())), (7, None)]);
        // Unmatched rows stay where they were in the batch (they went to its end).
        left.push(0, batch(&[7, 1, 8, 2, 9])).unwrap();
        assert_eq!(drain_in_order(&mut left), vec![(7, None), (1, Some("v1".into())), (8, None), (2, Some("v2".into())), (9, None)]);

        let mut semi = plan("SELECT id, name FROM s WHERE id IN (SELECT key FROM side)", side_table(path.clone())).unwrap();
        semi.push(0, batch(&[1, 4, 5, 9])).unwrap();
        assert_eq!(drain(&mut semi), vec![(1, Some("n1".into())), (4, Some("n4".into()))]);

        let mut with_filter = plan("SELECT s.id, t.value FROM s JOIN side t ON s.id = t.key AND t.value <> 'v3'", side_table(path.clone())).unwrap();
        with_filter.push(0, batch(&[2, 3])).unwrap();
        assert_eq!(drain(&mut with_filter), vec![(2, Some("v2".into()))]);

        let mut scalar = plan("SELECT id, name FROM s WHERE id > (SELECT max(key) FROM side)", side_table(path)).unwrap();
        scalar.push(0, batch(&[3, 4, 5, 6])).unwrap();
        assert_eq!(drain(&mut scalar), vec![(5, Some("n5".into())), (6, Some("n6".into()))]);
    }

    #[test]
    fn joins_that_would_emit_side_table_rows_at_the_end_are_refused() {
        let path = side_csv("refused", 5);
        for sql in [
            "SELECT t.key, s.name FROM side t LEFT JOIN s ON s.id = t.key",
            "SELECT t.key, s.name FROM s FULL JOIN side t ON s.id = t.key",
            "SELECT key, value FROM side WHERE key NOT IN (SELECT id FROM s)",
            // DataFusion runs joins without equality conditions as nested loops that need the
            // whole probe side.
            "SELECT s.id, t.value FROM s JOIN side t ON s.id > t.key",
        ] {
            let err = plan(sql, side_table(path.clone())).err().expect(sql);
            assert_eq!(err.kind, ErrorKind::Plan, "{sql}");
            assert!(err.message.starts_with("stateful SQL is not supported"), "{sql}: {}", err.message);
        }
    }

    #[test]
    fn file_and_schema_problems_name_the_table_and_the_file() {
        let missing = side_table(std::env::temp_dir().join("sluice-no-such-side-table.csv"));
        let err = plan("SELECT id FROM s", missing).err().unwrap();
        assert_eq!(err.kind, ErrorKind::Io);
        assert!(err.message.contains("side table 'side'") && err.message.contains("sluice-no-such-side-table.csv"), "{}", err.message);

        let mut bad_type = side_table(side_csv("type", 1));
        bad_type.columns.as_mut().unwrap()[0].data_type = "Integer64".into();
        let err = plan("SELECT id FROM s", bad_type).err().unwrap();
        assert_eq!(err.kind, ErrorKind::Config);
        assert!(err.message.contains("side table 'side'") && err.message.contains("column 'key'"), "{}", err.message);

        let bad_line = std::env::temp_dir().join(format!("sluice-side-bad-{}.csv", std::process::id()));
        std::fs::write(&bad_line, "1,a\nnot-a-number,b\n").unwrap();
        let err = plan("SELECT id FROM s", side_table(bad_line)).err().unwrap();
        assert!(err.message.contains("side table 'side'") && err.message.contains("line 2"), "{}", err.message);
    }

    #[test]
    fn a_side_table_may_not_shadow_an_input() {
        let mut table = side_table(side_csv("shadow", 1));
        table.name = "s".into();
        let err = plan("SELECT id FROM s", table).err().unwrap();
        assert_eq!(err.kind, ErrorKind::Config);
        assert!(err.message.contains("name of another input"), "{}", err.message);
    }

    #[test]
    fn json_side_tables_load_with_an_inferred_schema() {
        let json = std::env::temp_dir().join(format!("sluice-side-{}.jsonl", std::process::id()));
        std::fs::write(&json, "{\"key\": 2, \"value\": \"two\"}\n").unwrap();
        let mut table = side_table(json);
        table.file.format = FileFormat::Json;
        table.columns = None; // inferred
        let mut t = plan("SELECT s.id, t.value FROM s JOIN side t ON s.id = t.key", table).unwrap();
        t.push(0, batch(&[1, 2])).unwrap();
        assert_eq!(drain(&mut t), vec![(2, Some("two".into()))]);
    }
}
