//! SQL transforms: a query planned once against unbounded input tables, then driven batch by
//! batch without a runtime.
//!
//! Each upstream node is a table whose scan pops batches from an in-memory queue and answers
//! `Pending` when the queue is empty (it never ends). `push` puts one batch into its input and
//! polls every output partition with a no-op waker until all of them are `Pending`; because the
//! plan is single-partition, task-free and no operator holds rows back, that is everything the
//! batch produced, so a checkpoint barrier may follow at once.
//!
//! Besides its streaming inputs, a transform may read static side tables (`side_tables`),
//! loaded once at plan time; the stream may join them (a lookup), nothing else may be joined.

use std::collections::VecDeque;
use std::fmt;
use std::pin::Pin;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll};

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use datafusion::catalog::streaming::StreamingTable;
use datafusion::catalog::MemorySchemaProvider;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::TableReference;
use datafusion::datasource::source_as_provider;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_plan::execution_plan::reset_plan_states;
use datafusion::physical_plan::filter::FilterExec;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::streaming::PartitionStream;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::{SessionConfig, SessionContext};
use futures::executor::block_on;
use futures::Stream;

use crate::carried_key::with_carried_key;
use crate::cdata::conform;
use crate::checked_arithmetic::CheckedArithmetic;
use crate::checked_sum::checked_sum;
use crate::error::{CoreError, ErrorKind, Result};
use crate::functions::register_builtins;
use crate::plugin_udf::Functions;
use crate::side_tables::{isolate_lookup_joins, SideTable};

/// How many SQL plans this process has built; tests use it to prove "planned once".
static PLAN_COUNT: AtomicI64 = AtomicI64::new(0);

pub fn plan_count() -> i64 {
    PLAN_COUNT.load(Ordering::Relaxed)
}

/// A planned SQL transform over named unbounded inputs.
pub struct SqlTransform {
    inputs: Vec<InputHub>,
    plan: Arc<dyn ExecutionPlan>,
    /// The plan's schema, with the key its rows keep (carried_key.rs) in its metadata.
    output_schema: SchemaRef,
    task_ctx: Arc<TaskContext>,
    /// One stream per output partition (a UNION ALL has one per branch).
    streams: Vec<SendableRecordBatchStream>,
    ready: VecDeque<RecordBatch>,
}

impl SqlTransform {
    /// Plans `sql` once. `inputs` are the upstream node names (as the SQL refers to them) and
    /// the schema each one's batches will have.
    pub fn new(sql: &str, inputs: Vec<(String, SchemaRef)>) -> Result<SqlTransform> {
        Self::with_side_tables(sql, inputs, &[])
    }

    /// Plans `sql` over the streaming `inputs` and the static `side_tables`, which are read
    /// from their files now, once.
    pub fn with_side_tables(sql: &str, inputs: Vec<(String, SchemaRef)>, side_tables: &[SideTable]) -> Result<SqlTransform> {
        Self::with_functions(sql, inputs, side_tables, &Functions::default())
    }

    /// As [`SqlTransform::with_side_tables`], with the pipeline's plugin functions callable by name.
    pub fn with_functions(sql: &str, inputs: Vec<(String, SchemaRef)>, side_tables: &[SideTable], functions: &Functions) -> Result<SqlTransform> {
        let ctx = streaming_context()?;
        functions.register(&ctx)?;
        let mut hubs = Vec::with_capacity(inputs.len());
        for (name, schema) in inputs {
            if functions.table_names().any(|t| t == name) {
                return Err(CoreError::config(format!("input '{name}' has the name of a dynamic table")));
            }
            let hub = InputHub::new(name, schema);
            register_input(&ctx, &hub)?;
            hubs.push(hub);
        }
        for table in side_tables {
            if hubs.iter().any(|hub| hub.name == table.name) || side_tables.iter().filter(|t| t.name == table.name).count() > 1 {
                return Err(CoreError::config(format!("side table '{}' has the name of another input or side table", table.name)));
            }
            table.register(&ctx)?;
        }
        let state = ctx.state();
        let logical = block_on(state.create_logical_plan(sql))?;
        reject_stateful(&logical)?;
        let physical = block_on(state.create_physical_plan(&logical)).map_err(|e| explain_planning_error(e, &logical))?;
        let plan = pass_batches_through(physical)?;
        reject_task_spawning(&plan)?;
        let plan = isolate_lookup_joins(plan)?;
        let output_schema = Arc::new(with_carried_key(&plan.schema(), &logical));
        let task_ctx = ctx.task_ctx();
        let mut transform = SqlTransform { inputs: hubs, plan, output_schema, task_ctx, streams: Vec::new(), ready: VecDeque::new() };
        transform.start_streams()?;
        PLAN_COUNT.fetch_add(1, Ordering::Relaxed);
        Ok(transform)
    }

    pub fn output_schema(&self) -> SchemaRef {
        Arc::clone(&self.output_schema)
    }

    pub fn input_schema(&self, input: usize) -> Result<&SchemaRef> {
        self.hub(input).map(|h| &h.schema)
    }

    /// Pushes one batch into input `input` and runs the plan until it would block. The output
    /// rows are then available from [`SqlTransform::next_output`]. A push that fails adds no
    /// output at all (a UNION ALL's other branches may have run already): the caller may push
    /// the batch's rows again, e.g. in parts, to set the failing rows aside.
    pub fn push(&mut self, input: usize, batch: RecordBatch) -> Result<()> {
        let hub = self.hub(input)?;
        let batch = conform(&batch, &hub.schema)?;
        hub.publish(batch);
        let before = self.ready.len();
        self.poll_outputs().inspect_err(|_| self.ready.truncate(before))
    }

    /// The next output batch produced by earlier pushes, or None when all were taken.
    pub fn next_output(&mut self) -> Option<RecordBatch> {
        self.ready.pop_front()
    }

    fn hub(&self, input: usize) -> Result<&InputHub> {
        self.inputs
            .get(input)
            .ok_or_else(|| CoreError::invalid(format!("input index {input} out of range (transform has {} inputs)", self.inputs.len())))
    }

    /// (Re)executes the planned tree: the plan is not rebuilt, only its streams.
    fn start_streams(&mut self) -> Result<()> {
        self.streams.clear();
        for hub in &self.inputs {
            hub.subscribers.lock().expect("input hub poisoned").clear();
        }
        let partitions = self.plan.properties().output_partitioning().partition_count();
        for partition in 0..partitions {
            self.streams.push(self.plan.execute(partition, Arc::clone(&self.task_ctx))?);
        }
        // Some operators open their inputs only when first polled (a scalar subquery runs
        // before its input is executed): poll once now, so every scan has subscribed to its
        // input before the first batch is published — or that batch would reach no one.
        for stream in &mut self.streams {
            poll_until_pending(stream, &mut self.ready)?;
        }
        Ok(())
    }

    fn poll_outputs(&mut self) -> Result<()> {
        for index in 0..self.streams.len() {
            if let Err(e) = poll_until_pending(&mut self.streams[index], &mut self.ready) {
                // The failed batch is dropped whole; fresh streams of the same plan take the
                // next one. The caller applies its on_error policy. The nodes are renewed first:
                // each execution registers metrics in its node that live as long as the node,
                // so restarting the same nodes would grow by kilobytes per failed batch
                // (tests/native_memory.rs).
                self.plan = reset_plan_states(Arc::clone(&self.plan))?;
                self.start_streams()?;
                return Err(e);
            }
        }
        // Every output is Pending: if an input still holds a batch, some operator is waiting
        // for more rows than we gave it, which would break barrier ordering.
        if self.inputs.iter().any(InputHub::has_queued) {
            return Err(CoreError::new(ErrorKind::Execution, "the SQL plan held rows back (an operator waits for more input)"));
        }
        Ok(())
    }
}

/// Polls one output (with a no-op waker) until it would block, keeping the batches it emits.
fn poll_until_pending(stream: &mut SendableRecordBatchStream, ready: &mut VecDeque<RecordBatch>) -> Result<()> {
    let mut cx = Context::from_waker(futures::task::noop_waker_ref());
    loop {
        match stream.as_mut().poll_next(&mut cx) {
            Poll::Ready(Some(Ok(batch))) => {
                if batch.num_rows() > 0 {
                    ready.push_back(batch);
                }
            }
            Poll::Ready(Some(Err(e))) => return Err(CoreError::from(e)),
            Poll::Ready(None) => {
                return Err(CoreError::new(ErrorKind::Execution, "the SQL plan ended although its inputs are unbounded"));
            }
            Poll::Pending => return Ok(()),
        }
    }
}

/// One input table. Each scan of it (a query may scan a table twice) subscribes a queue, and
/// every pushed batch is delivered to all of them.
struct InputHub {
    name: String,
    schema: SchemaRef,
    subscribers: Arc<Mutex<Vec<Weak<BatchQueue>>>>,
}

type BatchQueue = Mutex<VecDeque<RecordBatch>>;

impl InputHub {
    fn new(name: String, schema: SchemaRef) -> Self {
        InputHub { name, schema, subscribers: Arc::new(Mutex::new(Vec::new())) }
    }

    fn publish(&self, batch: RecordBatch) {
        let mut subscribers = self.subscribers.lock().expect("input hub poisoned");
        subscribers.retain(|queue| match queue.upgrade() {
            Some(queue) => {
                queue.lock().expect("input queue poisoned").push_back(batch.clone());
                true
            }
            None => false,
        });
    }

    fn has_queued(&self) -> bool {
        let subscribers = self.subscribers.lock().expect("input hub poisoned");
        subscribers.iter().filter_map(Weak::upgrade).any(|queue| !queue.lock().expect("input queue poisoned").is_empty())
    }

    fn partition(&self) -> Arc<dyn PartitionStream> {
        Arc::new(HubPartition { name: self.name.clone(), schema: self.schema.clone(), subscribers: Arc::clone(&self.subscribers) })
    }
}

/// The single partition of an input table, as DataFusion's `StreamingTable` sees it.
struct HubPartition {
    name: String,
    schema: SchemaRef,
    subscribers: Arc<Mutex<Vec<Weak<BatchQueue>>>>,
}

impl fmt::Debug for HubPartition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HubPartition({})", self.name)
    }
}

impl PartitionStream for HubPartition {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let queue = Arc::new(Mutex::new(VecDeque::new()));
        self.subscribers.lock().expect("input hub poisoned").push(Arc::downgrade(&queue));
        Box::pin(RecordBatchStreamAdapter::new(self.schema.clone(), QueueStream { queue }))
    }
}

/// Pops the queue; `Pending` when empty, never `Ready(None)` (that would end the plan).
struct QueueStream {
    queue: Arc<BatchQueue>,
}

impl Stream for QueueStream {
    type Item = datafusion::error::Result<RecordBatch>;

    fn poll_next(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        match self.queue.lock().expect("input queue poisoned").pop_front() {
            Some(batch) => Poll::Ready(Some(Ok(batch))),
            // No waker is registered: the driver polls again after the next push.
            None => Poll::Pending,
        }
    }
}

/// A session whose plans are single-partition, deterministic and free of tokio tasks.
pub fn streaming_context() -> Result<SessionContext> {
    let mut config = SessionConfig::new().with_target_partitions(1).with_information_schema(false);
    {
        let options = config.options_mut();
        options.optimizer.enable_round_robin_repartition = false;
        options.optimizer.repartition_joins = false;
        options.optimizer.repartition_aggregations = false;
        options.optimizer.repartition_windows = false;
        options.optimizer.repartition_sorts = false;
        options.optimizer.repartition_file_scans = false;
        options.optimizer.prefer_existing_union = true;
        options.optimizer.allow_symmetric_joins_without_pruning = false;
        // Lookup joins run once per probe batch (side_tables.rs); a dynamic filter would wait
        // for build-side reports from every execution and cannot filter a stream scan anyway.
        options.optimizer.enable_join_dynamic_filter_pushdown = false;
        options.execution.coalesce_batches = false;
        // Identifiers keep their case, so Nexmark's camelCase columns (dateTime, itemName)
        // work unquoted, as in Flink SQL.
        options.sql_parser.enable_ident_normalization = false;
    }
    // Decimals meet floats as doubles (float_decimal.rs), decided before type coercion.
    let mut ctx = SessionContext::new_with_state(crate::float_decimal::first_analyzer_rule(SessionContext::new_with_config(config).state()));
    // Integer arithmetic fails on overflow instead of wrapping (checked_arithmetic.rs).
    ctx.add_analyzer_rule(Arc::new(CheckedArithmetic));
    // So does `sum` (checked_sum.rs), registered over DataFusion's.
    ctx.register_udaf(checked_sum());
    datafusion_functions_json::register_all(&mut ctx)?;
    register_builtins(&ctx);
    Ok(ctx)
}

/// Runs `sql` once over one in-memory table (bounded: any SQL, aggregations included) and
/// returns the result as one batch. For small data such as the state DB, not for streams.
/// Read-only: see [`run_bounded_query_with`].
pub fn run_bounded_query(sql: &str, table: &str, batch: RecordBatch) -> Result<RecordBatch> {
    run_bounded_query_with(sql, table, batch, false)
}

/// As [`run_bounded_query`]; unless `allow_writes`, statements that write or define anything
/// (`COPY … TO`, `INSERT`, `CREATE EXTERNAL TABLE`, which reads any file, `SET`, …) are refused
/// before they run: DataFusion's defaults would let a query read and write files.
pub fn run_bounded_query_with(sql: &str, table: &str, batch: RecordBatch, allow_writes: bool) -> Result<RecordBatch> {
    let ctx = streaming_context()?;
    let schema = batch.schema();
    let mem = datafusion::datasource::MemTable::try_new(schema, vec![vec![batch]])?;
    ctx.register_table(TableReference::bare(table), Arc::new(mem))?;
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    let plan = runtime.block_on(ctx.state().create_logical_plan(sql))?;
    if !allow_writes {
        datafusion::execution::context::SQLOptions::new()
            .with_allow_ddl(false)
            .with_allow_dml(false)
            .with_allow_statements(false)
            .verify_plan(&plan)
            .map_err(|e| {
                let why = match e {
                    datafusion::error::DataFusionError::Plan(message) => message,
                    other => other.to_string(),
                };
                CoreError::plan(format!("the query is read-only unless writes are allowed ({why})"))
            })?;
    }
    let (schema, batches) = runtime.block_on(async {
        let plan = ctx.execute_logical_plan(plan).await?.create_physical_plan().await?;
        // The executed plan's schema: the unanalyzed plan's may differ (UInt64 + Int64 is
        // Decimal128(20, 0) there, Decimal128(21, 0) once coerced).
        let schema = plan.schema();
        datafusion::physical_plan::collect(plan, ctx.task_ctx()).await.map(|batches| (schema, batches))
    })?;
    Ok(arrow::compute::concat_batches(&schema, &batches)?)
}

/// The names of the tables `sql` reads, as written (CTE names excluded).
pub fn table_references(sql: &str) -> Result<Vec<String>> {
    let ctx = streaming_context()?;
    let state = ctx.state();
    let dialect = state.config().options().sql_parser.dialect;
    let statement = state.sql_to_statement(sql, &dialect)?;
    let mut names: Vec<String> = Vec::new();
    for reference in state.resolve_table_references(&statement)? {
        let name = reference.to_string();
        if !names.contains(&name) {
            names.push(name);
        }
    }
    Ok(names)
}

/// Registers an input; a dotted name such as `raw.transactions` becomes table `transactions`
/// in schema `raw`, so the SQL can say `FROM raw.transactions` as the pipeline file does.
fn register_input(ctx: &SessionContext, hub: &InputHub) -> Result<()> {
    let table = StreamingTable::try_new(hub.schema.clone(), vec![hub.partition()])?.with_infinite_table(true);
    let reference = match hub.name.split_once('.') {
        Some((schema, name)) if !name.contains('.') => {
            let catalog = ctx.catalog("datafusion").ok_or_else(|| CoreError::plan("default catalog missing"))?;
            if catalog.schema(schema).is_none() {
                catalog.register_schema(schema, Arc::new(MemorySchemaProvider::new()))?;
            }
            TableReference::partial(schema, name)
        }
        _ => TableReference::bare(hub.name.as_str()),
    };
    ctx.register_table(reference, Arc::new(table))?;
    Ok(())
}

/// Rejects SQL that needs state across batches, with the reason in the user's terms.
fn reject_stateful(plan: &LogicalPlan) -> Result<()> {
    if !matches!(
        plan,
        LogicalPlan::Projection(_)
            | LogicalPlan::Filter(_)
            | LogicalPlan::Union(_)
            | LogicalPlan::SubqueryAlias(_)
            | LogicalPlan::TableScan(_)
            | LogicalPlan::Unnest(_)
            | LogicalPlan::Values(_)
            | LogicalPlan::Sort(_)
            | LogicalPlan::Limit(_)
            | LogicalPlan::Aggregate(_)
            | LogicalPlan::Distinct(_)
            | LogicalPlan::Window(_)
            | LogicalPlan::Join(_)
    ) {
        return Err(CoreError::plan(format!(
            "a SQL transform must be a query (SELECT …), not {}",
            plan.display().to_string().split(':').next().unwrap_or("this statement")
        )));
    }
    let mut problem: Option<String> = None;
    plan.apply_with_subqueries(|node| {
        let why = match node {
            LogicalPlan::Aggregate(_) | LogicalPlan::Distinct(_) if reads_stream(node) => {
                Some("aggregation (GROUP BY, DISTINCT or an aggregate function) keeps per-key state across batches")
            }
            LogicalPlan::Window(_) if reads_stream(node) => Some("window functions (OVER …) keep state across batches"),
            LogicalPlan::Sort(_) if reads_stream(node) => Some("ORDER BY over a stream can never emit: the stream does not end"),
            LogicalPlan::Limit(_) if reads_stream(node) => Some("LIMIT/OFFSET over a stream counts rows across batches"),
            LogicalPlan::Join(join) if reads_stream(&join.left) && reads_stream(&join.right) => Some(JOIN_OF_STREAMS),
            _ if reads_stream(node) && subquery_reads_stream(node)? => Some(JOIN_OF_STREAMS),
            _ => None,
        };
        match why {
            Some(why) => {
                problem = Some(why.to_string());
                Ok(TreeNodeRecursion::Stop)
            }
            None => Ok(TreeNodeRecursion::Continue),
        }
    })?;
    match problem {
        Some(why) => Err(CoreError::plan(format!(
            "stateful SQL is not supported in a streaming transform: {why}. Sluice transforms are stateless: \
             WHERE, projections and computed columns, CAST, CASE, scalar functions, UNION ALL, UNNEST, \
             joins with static side tables"
        ))),
        None => Ok(()),
    }
}

const JOIN_OF_STREAMS: &str = "a join between two streams keeps both sides in state (IN, EXISTS and scalar subqueries over a stream are joins too)";

/// True when an expression of `node` holds a subquery (IN, EXISTS, scalar) that reads a stream.
fn subquery_reads_stream(node: &LogicalPlan) -> datafusion::error::Result<bool> {
    let mut found = false;
    node.apply_subqueries(|subquery| {
        found = reads_stream(subquery);
        Ok(if found { TreeNodeRecursion::Stop } else { TreeNodeRecursion::Continue })
    })?;
    Ok(found)
}

fn reads_stream(node: &LogicalPlan) -> bool {
    node.exists(|n| Ok(is_stream_scan(n))).unwrap_or(true)
}

/// A scan of a streaming input; side tables (and VALUES) are bounded and may be joined.
fn is_stream_scan(node: &LogicalPlan) -> bool {
    match node {
        LogicalPlan::TableScan(scan) => match source_as_provider(&scan.source) {
            Ok(provider) => provider.downcast_ref::<StreamingTable>().is_some(),
            Err(_) => true,
        },
        _ => false,
    }
}

/// DataFusion's own check for unbounded inputs names operators; say what it means.
fn explain_planning_error(e: datafusion::error::DataFusionError, logical: &LogicalPlan) -> CoreError {
    let error = CoreError::from(e);
    if error.message.contains("non-prunable stream") {
        CoreError::plan(format!("stateful SQL is not supported in a streaming transform: {JOIN_OF_STREAMS}"))
    } else if error.message.contains("pipeline breaking") {
        // DataFusion names the operator, then prints its whole debug form (side tables' rows
        // included): keep the name only.
        let operator = error.message.split("operator: ").nth(1).and_then(|rest| rest.split([' ', '{']).next()).unwrap_or("an operator");
        if operator.contains("Join") {
            // NOT IN must see every row to answer NULL right, so DataFusion builds its hash table
            // on the stream; NOT EXISTS has no such rule and runs batch by batch.
            let hint = if has_not_in_subquery(logical) {
                ". `x NOT IN (SELECT k FROM table)` is such a join; `NOT EXISTS (SELECT 1 FROM table t WHERE t.k = x)` \
                 runs batch by batch (it differs only when k has NULLs, which make NOT IN answer no row)"
            } else {
                ""
            };
            CoreError::plan(format!(
                "stateful SQL is not supported in a streaming transform: this join ({operator}) could emit only when the stream \
                 ends. A side table can be joined on equality conditions (ON stream.a = table.b), as an inner join or as a \
                 LEFT JOIN with the stream on the left{hint}"
            ))
        } else {
            CoreError::plan(format!("this query cannot run over unbounded input: its {operator} needs all rows before it can emit any"))
        }
    } else {
        error
    }
}

/// Whether `plan` has a `NOT IN (subquery)` anywhere.
fn has_not_in_subquery(plan: &LogicalPlan) -> bool {
    plan.exists(|node| {
        Ok(node
            .expressions()
            .iter()
            .any(|e| e.exists(|e| Ok(matches!(e, datafusion::logical_expr::Expr::InSubquery(s) if s.negated))).unwrap_or(false)))
    })
    .unwrap_or(false)
}

/// Rebuilds every FilterExec with an output batch size of 1, which makes its internal
/// coalescer pass every filtered batch straight through instead of holding small ones back
/// until more input arrives (rows of batch N must leave before the barrier after N).
fn pass_batches_through(plan: Arc<dyn ExecutionPlan>) -> Result<Arc<dyn ExecutionPlan>> {
    let rewritten = plan.transform_up(|node| {
        if let Some(filter) = node.downcast_ref::<FilterExec>() {
            if filter.batch_size() != 1 {
                return Ok(Transformed::yes(Arc::new(filter.with_batch_size(1)?) as Arc<dyn ExecutionPlan>));
            }
        }
        Ok(Transformed::no(node))
    })?;
    Ok(rewritten.data)
}

/// Operators that merge partitions with tokio tasks must not appear: there is no runtime, and
/// they would make "drain until Pending" incomplete.
fn reject_task_spawning(plan: &Arc<dyn ExecutionPlan>) -> Result<()> {
    const SPAWNING: [&str; 4] = ["RepartitionExec", "CoalescePartitionsExec", "SortPreservingMergeExec", "BufferExec"];
    let mut found: Option<String> = None;
    plan.apply(|node| {
        if SPAWNING.contains(&node.name()) {
            found = Some(node.name().to_string());
            return Ok(TreeNodeRecursion::Stop);
        }
        Ok(TreeNodeRecursion::Continue)
    })?;
    match found {
        Some(name) => Err(CoreError::plan(format!("this query plans a {name}, which a single-lane streaming transform cannot run"))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int64Array, StringArray};
    use arrow::datatypes::{DataType, Field, Schema};

    fn schema() -> SchemaRef {
        Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false), Field::new("name", DataType::Utf8, true)]))
    }

    fn batch(ids: &[i64]) -> RecordBatch {
        let names: Vec<String> = ids.iter().map(|i| format!("n{i}")).collect();
        RecordBatch::try_new(schema(), vec![Arc::new(Int64Array::from(ids.to_vec())), Arc::new(StringArray::from(names))]).unwrap()
    }

    fn drain(t: &mut SqlTransform) -> Vec<i64> {
        let mut ids = Vec::new();
        while let Some(b) = t.next_output() {
            ids.extend(b.column(0).as_any().downcast_ref::<Int64Array>().unwrap().values().iter());
        }
        ids
    }

    #[test]
    fn bounded_queries_may_aggregate() {
        let out = run_bounded_query("SELECT count(*) AS n, max(id) AS top FROM state WHERE id > 0", "state", batch(&[0, 1, 2, 3])).unwrap();
        assert_eq!(out.num_rows(), 1);
        assert_eq!(out.column(0).as_any().downcast_ref::<Int64Array>().unwrap().value(0), 3);
    }

    #[test]
    fn bounded_query_results_have_the_types_their_values_have() {
        let schema = Arc::new(Schema::new(vec![Field::new("u", DataType::UInt64, false), Field::new("a", DataType::Int64, false)]));
        let columns: Vec<arrow::array::ArrayRef> =
            vec![Arc::new(arrow::array::UInt64Array::from(vec![u64::MAX])), Arc::new(Int64Array::from(vec![i64::MAX]))];
        let out = run_bounded_query("SELECT u + a AS v FROM t", "t", RecordBatch::try_new(schema, columns).unwrap()).unwrap();
        // Both are coerced to Decimal128(20, 0); the unanalyzed plan typed their sum so as well.
        assert_eq!(out.schema().field(0).data_type(), &DataType::Decimal128(21, 0));
        let sum = out.column(0).as_any().downcast_ref::<arrow::array::Decimal128Array>().unwrap().value(0);
        assert_eq!(sum, i128::from(u64::MAX) + i128::from(i64::MAX));
    }

    #[test]
    fn bounded_queries_are_read_only_unless_writes_are_allowed() {
        let dir = std::env::temp_dir().join(format!("sluice-read-only-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let target = dir.join("copied.csv");
        let _ = std::fs::remove_file(&target);
        let copy = format!("COPY (SELECT id FROM state) TO '{}' STORED AS CSV", target.display());
        let secret = dir.join("secret.csv");
        std::fs::write(&secret, "a\n1\n").unwrap();
        let create = format!("CREATE EXTERNAL TABLE secret STORED AS CSV LOCATION '{}'", secret.display());
        for sql in [copy.as_str(), create.as_str(), "SET datafusion.execution.batch_size = 1"] {
            let err = run_bounded_query(sql, "state", batch(&[1, 2])).unwrap_err();
            assert!(err.to_string().contains("read-only"), "{sql}: {err}");
        }
        assert!(!target.exists(), "a refused COPY wrote its file");
        // Allowed, the same COPY writes: the refusal above is the option, not a missing feature.
        run_bounded_query_with(&copy, "state", batch(&[1, 2]), true).unwrap();
        assert!(target.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn small_filter_outputs_leave_with_their_batch() {
        let mut t = SqlTransform::new("SELECT id FROM s WHERE id % 100 = 7", vec![("s".into(), schema())]).unwrap();
        for round in 0..3 {
            let ids: Vec<i64> = (round * 1000..round * 1000 + 1000).collect();
            t.push(0, batch(&ids)).unwrap();
            assert_eq!(drain(&mut t).len(), 10, "round {round}: every matching row, now");
        }
    }

    #[test]
    fn union_all_and_self_union_see_every_batch() {
        let mut t = SqlTransform::new(
            "SELECT id FROM a WHERE id < 2 UNION ALL SELECT id FROM b UNION ALL SELECT id + 100 FROM a WHERE id = 0",
            vec![("a".into(), schema()), ("b".into(), schema())],
        )
        .unwrap();
        t.push(0, batch(&[0, 1, 2])).unwrap();
        let mut got = drain(&mut t);
        got.sort();
        assert_eq!(got, vec![0, 1, 100]);
        t.push(1, batch(&[5])).unwrap();
        assert_eq!(drain(&mut t), vec![5]);
    }

    #[test]
    fn stateful_sql_is_rejected() {
        for sql in [
            "SELECT name, count(*) FROM a GROUP BY name",
            "SELECT * FROM a ORDER BY id",
            "SELECT * FROM a LIMIT 1",
            "SELECT id FROM a WHERE id IN (SELECT id FROM b)",
            "SELECT a.id FROM a JOIN b ON a.id = b.id",
        ] {
            let err = SqlTransform::new(sql, vec![("a".into(), schema()), ("b".into(), schema())]).err().expect(sql);
            assert_eq!(err.kind, ErrorKind::Plan, "{sql}");
            assert!(err.message.starts_with("stateful SQL is not supported"), "{sql}: {}", err.message);
        }
    }

    /// A UNION ALL whose first branch ran before the second failed leaves no output of the
    /// failed push behind: pushing the good rows again (as on_error does) gives them once.
    #[test]
    fn a_failed_push_leaves_no_output() {
        let mut t = SqlTransform::new("SELECT id FROM s UNION ALL SELECT CAST(name AS BIGINT) FROM s", vec![("s".into(), schema())]).unwrap();
        let names = |names: Vec<&str>| {
            let ids: Vec<i64> = (1..=names.len() as i64).collect();
            RecordBatch::try_new(schema(), vec![Arc::new(Int64Array::from(ids)), Arc::new(StringArray::from(names))]).unwrap()
        };
        assert!(t.push(0, names(vec!["10", "x"])).is_err());
        assert_eq!(drain(&mut t), Vec::<i64>::new(), "the failed push's first branch left rows");
        t.push(0, names(vec!["10"])).unwrap();
        let mut got = drain(&mut t);
        got.sort();
        assert_eq!(got, vec![1, 10]);
    }

    #[test]
    fn a_failed_batch_does_not_poison_the_plan() {
        let mut t = SqlTransform::new("SELECT CAST(name AS BIGINT) AS v FROM s", vec![("s".into(), schema())]).unwrap();
        let bad = RecordBatch::try_new(schema(), vec![Arc::new(Int64Array::from(vec![1])), Arc::new(StringArray::from(vec!["x"]))]).unwrap();
        assert!(t.push(0, bad).is_err());
        let good = RecordBatch::try_new(schema(), vec![Arc::new(Int64Array::from(vec![1])), Arc::new(StringArray::from(vec!["42"]))]).unwrap();
        t.push(0, good).unwrap();
        assert_eq!(drain(&mut t), vec![42]);
    }
}
