//! Dynamic tables: keyed tables that a pipeline's SQL transforms consult while the stream runs,
//! and that change under them. The engine fills one from a node of the pipeline (each row an
//! upsert by key, or a delete when its `_op` is `d`); every transform of the pipeline sees the
//! same table, by name, in lookup joins and through `dynamic_contains(name, value)`.
//!
//! Visibility: a transform reads the table's current version when a batch enters a lookup join
//! or calls `dynamic_contains`, so a change applied before a batch is pushed is visible to that
//! batch and every later one ([`crate::side_tables::LookupJoinExec`] rebuilds its hash table
//! when the version moved).
//!
//! Storage: the batches as they arrived (projected and cast to the table's columns) with a
//! liveness flag per row and an index from the key (Arrow's row format) to the live row. An
//! update or delete only clears a flag; newer batches are merged into older ones as they grow
//! ([`DynamicTable::merge_newest`]) and the table is compacted into one batch when dead rows
//! outnumber live ones, so memory stays proportional to the live rows.
//!
//! Lookup mode: a table given a [`Loader`] (a backend such as a PostgreSQL table) holds only a
//! bounded cache of the backend's rows. A lookup join asks it for the keys of each probe batch
//! ([`DynamicTable::lookup`]); keys it does not hold, present or known absent, are loaded with
//! one loader call per batch, and the oldest cached keys are evicted beyond `max_rows` and
//! `max_bytes`. [`DynamicTable::forget`] drops keys whose backend rows changed, so the next
//! batch that needs them loads them again.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray, RecordBatch, RecordBatchOptions, UInt32Array};
use arrow::compute::{cast_with_options, concat_batches, filter_record_batch, interleave_record_batch, take, CastOptions};
use arrow::datatypes::{DataType, Field, FieldRef, Schema, SchemaRef};
use arrow::row::{RowConverter, SortField};
use async_trait::async_trait;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{exec_err, plan_err, HashMap, Result as DfResult, ScalarValue};
use datafusion::datasource::TableType;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::{ColumnarValue, Expr, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDFImpl, Signature, Volatility};
use datafusion::physical_expr::{EquivalenceProperties, Partitioning, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties};
use serde::Deserialize;

use crate::error::{CoreError, Result};
use crate::side_tables::SideColumn;

/// The column that says what a row does: `d` deletes its key, `i`, `u`, `c`, `r` or NULL
/// upsert it, `t` empties the table (its other columns are ignored) — Debezium's letters, which
/// Sluice's own change streams use too.
pub const OP_COLUMN: &str = "_op";

/// At most this many stored batches (the geometric merging keeps far fewer; a bound anyway).
const MAX_STORED_BATCHES: usize = 64;
/// A stored batch with at least this many live rows is not merged into an older one (unless the
/// batches reach `MAX_STORED_BATCHES`): big batches cost the join nothing extra apart, and
/// merging them would copy and re-index most of the table (a restore applies 100 000-row chunks).
const MERGE_BELOW_ROWS: usize = 65_536;
/// Dead rows below this count never trigger a compaction on their own.
const MIN_DEAD_TO_COMPACT: usize = 1024;

/// A dynamic table as the engine describes it:
/// `{"name": "customers", "columns": [{"name": "id", "type": "Int64"}, ...], "key": ["id"],
///   "max_rows": 1000000, "max_bytes": 268435456}`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableOptions {
    pub name: String,
    pub columns: Vec<SideColumn>,
    pub key: Vec<String>,
    #[serde(default)]
    pub max_rows: Option<u64>,
    #[serde(default)]
    pub max_bytes: Option<u64>,
}

/// The size of a table, for the engine's metrics and tests, and in lookup mode how its keys
/// were found: `hits` held (present or known absent), `misses` loaded, in `loads` loader calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableStats {
    pub rows: u64,
    pub bytes: u64,
    pub version: u64,
    pub hits: u64,
    pub misses: u64,
    pub loads: u64,
}

/// Loads the rows of keys a lookup table does not hold: given a batch of distinct keys (the key
/// columns, the table's types), the table's rows of those keys that exist, at most one per key,
/// in any order (`None` when none does). It runs on the thread of the transform asking, without
/// the table's lock.
pub type Loader = Box<dyn Fn(RecordBatch) -> Result<Option<RecordBatch>> + Send + Sync>;

pub struct DynamicTable {
    name: String,
    schema: SchemaRef,
    /// Indices of the key columns in `schema`.
    key: Vec<usize>,
    max_rows: Option<u64>,
    max_bytes: Option<u64>,
    /// Bumped by every apply that changed something; read without the lock by lookup joins.
    version: AtomicU64,
    state: Mutex<TableState>,
    /// Set once, before transforms are planned: the table is then a cache of its backend.
    loader: OnceLock<Loader>,
    hits: AtomicU64,
    misses: AtomicU64,
    loads: AtomicU64,
}

struct TableState {
    converter: RowConverter,
    stored: Vec<Stored>,
    index: HashMap<Box<[u8]>, Slot>,
    stored_rows: usize,
    /// The live rows of `version`, built on first use after a change.
    view: Option<(u64, Arc<[RecordBatch]>)>,
    cache: LookupCache,
}

/// What a lookup table knows beyond its rows: which keys its backend lacks, and in which order
/// keys were cached (for eviction).
#[derive(Default)]
struct LookupCache {
    /// Keys the backend had no row for when last loaded.
    absent: HashSet<Box<[u8]>>,
    /// Every cached key (held or absent) with the stamp it was cached under.
    stamps: HashMap<Box<[u8]>, u64>,
    /// Cached keys, oldest first; an entry whose stamp is no longer the key's is stale.
    order: VecDeque<(Box<[u8]>, u64)>,
    next_stamp: u64,
    /// Bumped by every `forget`: a load that began before one does not cache what it read.
    generation: u64,
}

struct Stored {
    batch: RecordBatch,
    live: Vec<bool>,
    live_count: usize,
}

#[derive(Clone, Copy)]
struct Slot {
    batch: usize,
    row: usize,
}

impl fmt::Debug for DynamicTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DynamicTable({})", self.name)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Upsert,
    Delete,
    Truncate,
}

impl DynamicTable {
    pub fn new(options: TableOptions) -> Result<DynamicTable> {
        let error = |why: String| CoreError::config(format!("dynamic table '{}': {why}", options.name));
        if options.name.is_empty() || options.name.contains('.') {
            return Err(error("a dynamic table's name must be a plain SQL name (no dots)".into()));
        }
        if options.columns.is_empty() {
            return Err(error("it has no columns".into()));
        }
        let probe = crate::side_tables::SideTable::columns_schema(&options.columns).map_err(|e| error(e.message))?;
        if probe.fields().iter().any(|f| f.name() == OP_COLUMN) {
            return Err(error(format!("'{OP_COLUMN}' says what a change does; it is not a column of the table")));
        }
        if options.key.is_empty() {
            return Err(error("it needs a key: the columns that identify a row".into()));
        }
        let mut key = Vec::with_capacity(options.key.len());
        for name in &options.key {
            let index = probe.index_of(name).map_err(|_| error(format!("key column '{name}' is not one of its columns")))?;
            if key.contains(&index) {
                return Err(error(format!("key column '{name}' is named twice")));
            }
            key.push(index);
        }
        // Every column is nullable in the schema: `apply` refuses NULL keys itself, and a truncate
        // row (which never becomes live) has none.
        let fields: Vec<Field> = probe.fields().iter().map(|f| f.as_ref().clone().with_nullable(true)).collect();
        let schema = Arc::new(Schema::new(fields));
        let converter = RowConverter::new(key.iter().map(|&i| SortField::new(schema.field(i).data_type().clone())).collect())
            .map_err(|e| error(format!("its key cannot be indexed: {e}")))?;
        Ok(DynamicTable {
            name: options.name,
            schema,
            key,
            max_rows: options.max_rows,
            max_bytes: options.max_bytes,
            version: AtomicU64::new(0),
            state: Mutex::new(TableState {
                converter,
                stored: Vec::new(),
                index: HashMap::new(),
                stored_rows: 0,
                view: None,
                cache: LookupCache::default(),
            }),
            loader: OnceLock::new(),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            loads: AtomicU64::new(0),
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    /// The names of the key columns, in key order.
    pub fn key_names(&self) -> Vec<&str> {
        self.key.iter().map(|&i| self.schema.field(i).name().as_str()).collect()
    }

    /// Makes the table a cache of the backend `loader` reads (lookup mode). Only before any
    /// transform reading the table is planned: the planner wires lookup joins differently.
    pub fn set_loader(&self, loader: Loader) -> Result<()> {
        if self.version() > 0 {
            return Err(self.error("a table that was filled by changes cannot become a lookup table"));
        }
        self.loader.set(loader).map_err(|_| self.error("it has a loader already"))
    }

    /// Whether the table is a cache of a backend, filled by lookups.
    pub fn is_lookup(&self) -> bool {
        self.loader.get().is_some()
    }

    pub fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    fn state(&self) -> MutexGuard<'_, TableState> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn error(&self, why: impl fmt::Display) -> CoreError {
        CoreError::data(format!("dynamic table '{}': {why}", self.name))
    }

    /// Applies a batch of changes in row order: the last change of a key wins. The whole batch
    /// is checked before the table changes (missing columns, values that do not fit, NULL keys,
    /// unknown `_op` letters), so a refused batch leaves the table as it was. Going over
    /// `max_rows` or `max_bytes` fails after the batch was applied: the caller fails the run,
    /// and a restart restores the last checkpoint's table.
    pub fn apply(&self, changes: &RecordBatch) -> Result<()> {
        if self.is_lookup() {
            return Err(self.error("it is filled by lookups in its backend, not by the changes of a node"));
        }
        let ops = self.ops(changes)?;
        let rows = self.conform(changes, &ops)?;
        let mut state = self.state();
        self.apply_rows(&mut state, rows, ops)?;
        self.check_limits(&mut state)
    }

    /// Applies conformed rows (see [`Self::apply`]) under the lock, limits not checked.
    fn apply_rows(&self, state: &mut TableState, rows: RecordBatch, ops: Vec<Op>) -> Result<()> {
        let rows_in = rows.num_rows();
        let keys =
            state.converter.convert_columns(&self.key.iter().map(|&i| Arc::clone(rows.column(i))).collect::<Vec<_>>()).map_err(|e| self.error(e))?;
        let mut batch_index = state.stored.len();
        let mut live = vec![false; rows.num_rows()];
        for (row, op) in ops.into_iter().enumerate() {
            if op == Op::Truncate {
                state.stored.clear();
                state.index.clear();
                state.stored_rows = 0;
                live.fill(false);
                batch_index = 0;
                continue;
            }
            let key = keys.row(row);
            if let Some(old) = state.index.remove(key.as_ref()) {
                if old.batch == batch_index {
                    live[old.row] = false;
                } else {
                    let stored = &mut state.stored[old.batch];
                    stored.live[old.row] = false;
                    stored.live_count -= 1;
                }
            }
            if let Op::Upsert = op {
                state.index.insert(key.as_ref().into(), Slot { batch: batch_index, row });
                live[row] = true;
            }
        }
        let live_count = live.iter().filter(|l| **l).count();
        if live_count > 0 {
            state.stored_rows += rows.num_rows();
            state.stored.push(Stored { batch: rows, live, live_count });
        }
        if rows_in > 0 {
            self.changed(state);
        }
        self.tidy(state)
    }

    fn changed(&self, state: &mut TableState) {
        state.view = None;
        self.version.fetch_add(1, Ordering::AcqRel);
    }

    /// Compacts when dead rows outnumber live ones, else merges small newest batches.
    fn tidy(&self, state: &mut TableState) -> Result<()> {
        let dead = state.stored_rows - state.index.len();
        if dead > state.index.len() && dead >= MIN_DEAD_TO_COMPACT {
            self.compact(state)
        } else {
            self.merge_newest(state)
        }
    }

    /// Keeps the small stored batches few, their sizes falling geometrically, oldest first (the
    /// logarithmic method): while the newest batch is small and has at least half the live rows
    /// of the one before it, the two become one. So a row is copied O(log n) times over its life,
    /// and a stream of one-row changes never rewrites the whole table.
    fn merge_newest(&self, state: &mut TableState) -> Result<()> {
        while let [.., older, newer] = &state.stored[..] {
            let settled = older.live_count > 2 * newer.live_count || newer.live_count >= MERGE_BELOW_ROWS;
            if settled && state.stored.len() <= MAX_STORED_BATCHES {
                break;
            }
            let merged = [older, newer].iter().map(|s| live_rows(s)).collect::<Vec<_>>();
            let batch = concat_batches(&self.schema, merged.iter()).map_err(|e| self.error(e))?;
            let removed = older.batch.num_rows() + newer.batch.num_rows();
            state.stored.truncate(state.stored.len() - 2);
            let at = state.stored.len();
            let keys = state
                .converter
                .convert_columns(&self.key.iter().map(|&i| Arc::clone(batch.column(i))).collect::<Vec<_>>())
                .map_err(|e| self.error(e))?;
            for row in 0..batch.num_rows() {
                state.index.insert(keys.row(row).as_ref().into(), Slot { batch: at, row });
            }
            state.stored_rows = state.stored_rows - removed + batch.num_rows();
            if batch.num_rows() > 0 {
                let rows = batch.num_rows();
                state.stored.push(Stored { batch, live: vec![true; rows], live_count: rows });
            }
        }
        Ok(())
    }

    fn check_limits(&self, state: &mut TableState) -> Result<()> {
        let rows = state.index.len() as u64;
        if let Some(max) = self.max_rows.filter(|max| rows > *max) {
            return Err(self.error(format!("it holds {rows} rows, more than max_rows = {max}; raise the limit or filter what fills it")));
        }
        if let Some(max) = self.max_bytes {
            if bytes(state) > max && state.stored_rows > state.index.len() {
                self.compact(state)?;
            }
            let size = bytes(state);
            if size > max {
                return Err(self.error(format!("it holds {size} bytes, more than max_bytes = {max}; raise the limit or filter what fills it")));
            }
        }
        Ok(())
    }

    /// The table's columns of `changes`, cast to the table's types. A value that does not fit
    /// is an error, never a NULL.
    fn conform(&self, changes: &RecordBatch, ops: &[Op]) -> Result<RecordBatch> {
        let strict = CastOptions { safe: false, ..Default::default() };
        let mut columns = Vec::with_capacity(self.schema.fields().len());
        for (i, field) in self.schema.fields().iter().enumerate() {
            let Some(column) = changes.column_by_name(field.name()) else {
                return Err(self.error(format!("its input has no column '{}'", field.name())));
            };
            let column = if column.data_type() == field.data_type() {
                Arc::clone(column)
            } else {
                cast_with_options(column, field.data_type(), &strict)
                    .map_err(|e| self.error(format!("column '{}': {} does not fit {}: {e}", field.name(), column.data_type(), field.data_type())))?
            };
            let column = if self.key.contains(&i) { canonical_key(column)? } else { column };
            // A truncate row carries no key.
            if let Some(row) = (0..column.len()).find(|r| self.key.contains(&i) && column.is_null(*r) && ops[*r] != Op::Truncate) {
                return Err(self.error(format!("key column '{}' is NULL in row {} of the batch", field.name(), row + 1)));
            }
            columns.push(column);
        }
        let options = RecordBatchOptions::new().with_row_count(Some(changes.num_rows()));
        RecordBatch::try_new_with_options(Arc::clone(&self.schema), columns, &options).map_err(|e| self.error(e))
    }

    fn ops(&self, changes: &RecordBatch) -> Result<Vec<Op>> {
        let Some(column) = changes.column_by_name(OP_COLUMN) else {
            return Ok((0..changes.num_rows()).map(|_| Op::Upsert).collect());
        };
        let text = arrow::compute::cast(column, &DataType::Utf8).map_err(|e| self.error(format!("{OP_COLUMN}: {e}")))?;
        let text = text.as_string::<i32>();
        (0..text.len())
            .map(|row| match (!text.is_null(row)).then(|| text.value(row)) {
                None | Some("i" | "u" | "c" | "r") => Ok(Op::Upsert),
                Some("d") => Ok(Op::Delete),
                Some("t") => Ok(Op::Truncate),
                Some(other) => Err(self.error(format!(
                    "row {} of the batch has {OP_COLUMN} = '{other}'; a change is i, u, c or r (upsert), d (delete) or t (truncate)",
                    row + 1
                ))),
            })
            .collect()
    }

    /// Re-points the index after stored batches were removed.
    fn reindex(&self, state: &mut TableState) -> Result<()> {
        state.index.clear();
        state.stored_rows = 0;
        let TableState { converter, stored, index, stored_rows, .. } = state;
        for (batch_index, s) in stored.iter().enumerate() {
            let keys =
                converter.convert_columns(&self.key.iter().map(|&i| Arc::clone(s.batch.column(i))).collect::<Vec<_>>()).map_err(|e| self.error(e))?;
            for (row, live) in s.live.iter().enumerate() {
                if *live {
                    index.insert(keys.row(row).as_ref().into(), Slot { batch: batch_index, row });
                }
            }
            *stored_rows += s.batch.num_rows();
        }
        Ok(())
    }

    /// Rewrites the live rows as one batch.
    fn compact(&self, state: &mut TableState) -> Result<()> {
        let live = self.view_of(state);
        let batch = concat_batches(&self.schema, live.iter()).map_err(|e| self.error(e))?;
        let rows = batch.num_rows();
        state.stored = if rows == 0 { Vec::new() } else { vec![Stored { batch, live: vec![true; rows], live_count: rows }] };
        self.reindex(state)
    }

    fn view_of(&self, state: &mut TableState) -> Arc<[RecordBatch]> {
        let version = self.version();
        if let Some((seen, view)) = &state.view {
            if *seen == version {
                return Arc::clone(view);
            }
        }
        let view: Arc<[RecordBatch]> = state.stored.iter().filter(|s| s.live_count > 0).map(live_rows).collect();
        state.view = Some((version, Arc::clone(&view)));
        view
    }

    /// The live rows now (shared with later readers until the next change).
    pub fn view(&self) -> Arc<[RecordBatch]> {
        let mut state = self.state();
        self.view_of(&mut state)
    }

    /// Every live row as one batch: what a checkpoint stores and a restart applies again.
    pub fn snapshot(&self) -> Result<RecordBatch> {
        let view = self.view();
        concat_batches(&self.schema, view.iter()).map_err(|e| self.error(e))
    }

    pub fn stats(&self) -> TableStats {
        let state = self.state();
        TableStats {
            rows: state.index.len() as u64,
            bytes: bytes(&state),
            version: self.version(),
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            loads: self.loads.load(Ordering::Relaxed),
        }
    }

    /// Lookup mode: the rows of the distinct keys of `keys` (the key columns in key order; cast
    /// to the key's types, a value that cannot be one matches nothing, as NULL does), in no
    /// particular order. Keys the table does not hold are loaded with one call of its loader and
    /// cached, evicting the oldest cached keys beyond the limits.
    pub fn lookup(&self, keys: &[ArrayRef]) -> Result<RecordBatch> {
        let Some(loader) = self.loader.get() else {
            return Err(self.error("it is no lookup table (it has no backend to load keys from)"));
        };
        if keys.len() != self.key.len() {
            return Err(self.error(format!("a lookup gives {} key columns; its key has {}", keys.len(), self.key.len())));
        }
        let keys = keys
            .iter()
            .zip(&self.key)
            .map(|(values, &i)| {
                let key_type = self.schema.field(i).data_type();
                if values.data_type() == key_type {
                    Ok(Arc::clone(values))
                } else {
                    // Not strict: a value that is no key of this type becomes NULL and matches nothing.
                    arrow::compute::cast(values, key_type).map_err(|e| self.error(format!("key '{}': {e}", self.schema.field(i).name())))
                }
                .and_then(|cast| canonical_key(cast).map_err(|e| self.error(e.message)))
            })
            .collect::<Result<Vec<_>>>()?;
        let (held, missing, asked_keys, generation) = {
            let state = self.state();
            let rows = state.converter.convert_columns(&keys).map_err(|e| self.error(e))?;
            let mut seen = HashSet::new();
            let mut slots = Vec::new();
            let mut missing = Vec::new();
            let mut missing_keys = Vec::new();
            for i in 0..rows.num_rows() {
                if keys.iter().any(|k| k.is_null(i)) || !seen.insert(rows.row(i)) {
                    continue;
                }
                let key = rows.row(i);
                if let Some(slot) = state.index.get(key.as_ref()) {
                    slots.push((slot.batch, slot.row));
                } else if !state.cache.absent.contains(key.as_ref()) {
                    missing.push(i as u32);
                    missing_keys.push(Box::<[u8]>::from(key.as_ref()));
                }
            }
            self.hits.fetch_add((seen.len() - missing.len()) as u64, Ordering::Relaxed);
            self.misses.fetch_add(missing.len() as u64, Ordering::Relaxed);
            // Copied out now: an eviction after the lock is released may drop these rows.
            let held = if slots.is_empty() {
                RecordBatch::new_empty(Arc::clone(&self.schema))
            } else {
                let batches: Vec<&RecordBatch> = state.stored.iter().map(|s| &s.batch).collect();
                interleave_record_batch(&batches, &slots).map_err(|e| self.error(e))?
            };
            (held, missing, missing_keys, state.cache.generation)
        };
        if missing.is_empty() {
            return Ok(held);
        }
        let indices = UInt32Array::from(missing);
        let asked_columns = keys.iter().map(|k| take(k, &indices, None)).collect::<std::result::Result<Vec<_>, _>>().map_err(|e| self.error(e))?;
        let key_fields: Vec<Field> = self.key.iter().map(|&i| self.schema.field(i).clone()).collect();
        let asked = RecordBatch::try_new(Arc::new(Schema::new(key_fields)), asked_columns).map_err(|e| self.error(e))?;
        self.loads.fetch_add(1, Ordering::Relaxed);
        let asked_rows = asked.num_rows();
        let loaded = loader(asked)
            .map_err(|e| CoreError::new(e.kind, format!("dynamic table '{}': loading {asked_rows} keys: {}", self.name, e.message)))?
            .unwrap_or_else(|| RecordBatch::new_empty(Arc::clone(&self.schema)));
        let ops = vec![Op::Upsert; loaded.num_rows()];
        let loaded = self.conform(&loaded, &ops)?;
        let mut state = self.state();
        let found = self.check_loaded(&state, &asked_keys, &loaded)?;
        if state.cache.generation == generation {
            self.cache_loaded(&mut state, asked_keys, loaded.clone(), ops, &found)?;
        }
        drop(state);
        concat_batches(&self.schema, [&held, &loaded]).map_err(|e| self.error(e))
    }

    /// The keys of `loaded`, in row format, after checking each was asked for, once.
    fn check_loaded(&self, state: &TableState, asked: &[Box<[u8]>], loaded: &RecordBatch) -> Result<HashSet<Box<[u8]>>> {
        let asked: HashSet<&[u8]> = asked.iter().map(|k| k.as_ref()).collect();
        let keys = state
            .converter
            .convert_columns(&self.key.iter().map(|&i| Arc::clone(loaded.column(i))).collect::<Vec<_>>())
            .map_err(|e| self.error(e))?;
        let mut found = HashSet::new();
        for i in 0..keys.num_rows() {
            let key = keys.row(i).data();
            if !asked.contains(key) {
                return Err(self.error(format!("its loader returned a row (row {}) for a key that was not asked for", i + 1)));
            }
            if !found.insert(Box::from(key)) {
                return Err(self.error(format!("its loader returned a key twice (row {})", i + 1)));
            }
        }
        Ok(found)
    }

    /// Caches what a load found, and which asked keys it did not find, then evicts.
    fn cache_loaded(
        &self,
        state: &mut TableState,
        asked: Vec<Box<[u8]>>,
        loaded: RecordBatch,
        ops: Vec<Op>,
        found: &HashSet<Box<[u8]>>,
    ) -> Result<()> {
        for key in asked {
            if found.contains(&key) {
                state.cache.absent.remove(&key);
            } else {
                // Another batch may have loaded it meanwhile: the newer answer wins.
                self.forget_key(state, &key);
                state.cache.absent.insert(key.clone());
            }
            let stamp = state.cache.next_stamp;
            state.cache.next_stamp += 1;
            state.cache.stamps.insert(key.clone(), stamp);
            state.cache.order.push_back((key, stamp));
        }
        self.apply_rows(state, loaded, ops)?;
        self.evict(state)
    }

    /// Drops one cached key (held or known absent).
    fn forget_key(&self, state: &mut TableState, key: &[u8]) {
        state.cache.stamps.remove(key);
        state.cache.absent.remove(key);
        if let Some(old) = state.index.remove(key) {
            let stored = &mut state.stored[old.batch];
            stored.live[old.row] = false;
            stored.live_count -= 1;
        }
    }

    /// Evicts the oldest cached keys until the table is within `max_rows` (held and absent keys
    /// count) and `max_bytes`.
    fn evict(&self, state: &mut TableState) -> Result<()> {
        let max_rows = self.max_rows.map_or(usize::MAX, |m| m as usize);
        let mut evicted = false;
        while state.cache.stamps.len() > max_rows && self.evict_oldest(state) {
            evicted = true;
        }
        if let Some(max) = self.max_bytes {
            while bytes(state) > max && !state.cache.stamps.is_empty() {
                // An eighth at a time: bytes only fall once the dead rows are compacted away.
                for _ in 0..(state.cache.stamps.len() / 8).max(1) {
                    evicted |= self.evict_oldest(state);
                }
                self.compact(state)?;
            }
        }
        if state.cache.order.len() > 2 * state.cache.stamps.len() + 1024 {
            let LookupCache { stamps, order, .. } = &mut state.cache;
            order.retain(|(key, stamp)| stamps.get(key) == Some(stamp));
        }
        if evicted {
            self.changed(state);
            self.tidy(state)?;
        }
        Ok(())
    }

    fn evict_oldest(&self, state: &mut TableState) -> bool {
        while let Some((key, stamp)) = state.cache.order.pop_front() {
            if state.cache.stamps.get(&key) == Some(&stamp) {
                self.forget_key(state, &key);
                return true;
            }
        }
        false
    }

    /// Lookup mode: drops the cached rows of `keys` (one array per key column, in the key's
    /// order, each cast to its column's type; a key with a NULL part is skipped), or of every key
    /// when `None`, so the next batch that needs them loads them again. A value that is not NULL
    /// but cannot be its column's type (text "abc" for a bigint) names no key the cache could
    /// hold under that value, so everything is dropped rather than keeping a row that may be
    /// stale. A load running meanwhile does not cache what it read.
    pub fn forget(&self, keys: Option<&[ArrayRef]>) -> Result<()> {
        let mut state = self.state();
        state.cache.generation += 1;
        let cast = match keys {
            None => None,
            Some(columns) => {
                if columns.len() != self.key.len() {
                    return Err(self.error(format!("forgetting keys of {} columns; the table's key has {}", columns.len(), self.key.len())));
                }
                let values = columns
                    .iter()
                    .zip(&self.key)
                    .map(|(values, &key)| {
                        let target = self.schema.field(key).data_type();
                        match target {
                            DataType::Binary | DataType::LargeBinary | DataType::BinaryView | DataType::FixedSizeBinary(_)
                                if values.data_type() == &DataType::Utf8 =>
                            {
                                arrow::compute::cast(&bytea_from_text(values.as_string::<i32>()), target)
                            }
                            _ => arrow::compute::cast(values, target),
                        }
                    })
                    .collect::<std::result::Result<Vec<_>, _>>()
                    .map_err(|e| self.error(e))?;
                let lost = columns.iter().zip(&values).any(|(given, cast)| cast.null_count() > given.null_count());
                (!lost).then_some(values)
            }
        };
        match cast {
            None => {
                let generation = state.cache.generation;
                state.cache = LookupCache { generation, ..LookupCache::default() };
                state.stored.clear();
                state.index.clear();
                state.stored_rows = 0;
            }
            Some(values) => {
                let rows = state.converter.convert_columns(&values).map_err(|e| self.error(e))?;
                let count = values.first().map_or(0, |v| v.len());
                for i in (0..count).filter(|i| values.iter().all(|v| !v.is_null(*i))) {
                    self.forget_key(&mut state, rows.row(i).data());
                }
            }
        }
        self.changed(&mut state);
        self.tidy(&mut state)
    }

    /// Whether each value of `values` is a key of the table (NULL for a NULL value). The table
    /// must have a single key column; `values` is cast to its type, and text that cannot be one
    /// (text that is no number) casts to NULL, so its answer is NULL — unknown, not false. A value
    /// of another type that the cast changes (2.5 to the int 2, noon to its date, a number beyond
    /// the type's range) equals no key: false.
    pub fn contains(&self, values: &ArrayRef) -> Result<BooleanArray> {
        let [key] = self.key[..] else {
            return Err(self.error("dynamic_contains needs a table with a single key column"));
        };
        let key_type = self.schema.field(key).data_type();
        let decimal =
            matches!(values.data_type(), DataType::Decimal32(..) | DataType::Decimal64(..) | DataType::Decimal128(..) | DataType::Decimal256(..));
        let cast = if values.data_type() == key_type {
            Arc::clone(values)
        } else if decimal && key_type == &DataType::Float64 {
            // As SQL compares them (float_decimal.rs): the double nearest the decimal.
            Arc::new(crate::float_decimal::decimals_as_doubles(values).map_err(|e| self.error(e))?)
        } else {
            // Not strict: a value that is no key of this type becomes NULL.
            arrow::compute::cast(values, key_type).map_err(|e| self.error(format!("dynamic_contains: {e}")))?
        };
        let changed = changed_by_cast(values, &cast).map_err(|e| self.error(format!("dynamic_contains: {e}")))?;
        let cast = canonical_key(cast).map_err(|e| self.error(e.message))?;
        let state_found: HashSet<Vec<u8>>;
        let state = if self.is_lookup() {
            let found = self.lookup(&[Arc::clone(values)])?;
            let state = self.state();
            let found = state.converter.convert_columns(&[Arc::clone(found.column(key))]).map_err(|e| self.error(e))?;
            state_found = (0..found.num_rows()).map(|i| found.row(i).data().to_vec()).collect();
            state
        } else {
            state_found = HashSet::new();
            self.state()
        };
        let rows = state.converter.convert_columns(&[Arc::clone(&cast)]).map_err(|e| self.error(e))?;
        Ok((0..values.len())
            .map(|i| match (values.is_null(i), changed[i], cast.is_null(i)) {
                (true, _, _) => None,
                (false, true, _) => Some(false),
                (false, false, true) => None,
                (false, false, false) if self.is_lookup() => Some(state_found.contains(rows.row(i).data())),
                (false, false, false) => Some(state.index.contains_key(rows.row(i).as_ref())),
            })
            .collect())
    }
}

/// A float key column with -0.0 as 0.0 and every NaN as one NaN: SQL's equality holds them
/// equal, the key index's bytes did not (a table held both as two keys, a row joined twice, a
/// delete of 0.0 left -0.0; the NaN of 0/0, whose sign bit is set, was another key than 'NaN').
fn canonical_key(column: ArrayRef) -> Result<ArrayRef> {
    Ok(match column.data_type() {
        DataType::Float16 => {
            let wider = canonical_key(arrow::compute::cast(&column, &DataType::Float32)?)?;
            arrow::compute::cast(&wider, &DataType::Float16)?
        }
        DataType::Float32 | DataType::Float64 => crate::float_compare::canonical_floats(&column),
        _ => column,
    })
}

/// Which values of a type other than text the cast to a key's type changed: 2.5 to the int 2, a
/// timestamp at noon to its date, a number beyond the type's range to NULL. Text is parsed, not
/// compared back (`'02'` is the key 2). Floats are compared as numbers (-0.0 is the key 0).
fn changed_by_cast(values: &ArrayRef, cast: &ArrayRef) -> std::result::Result<Vec<bool>, arrow::error::ArrowError> {
    let text = matches!(values.data_type(), DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View);
    // A decimal is compared with a double key as the double nearest it, as SQL compares them.
    let decimal_as_double = cast.data_type().is_floating()
        && matches!(values.data_type(), DataType::Decimal32(..) | DataType::Decimal64(..) | DataType::Decimal128(..) | DataType::Decimal256(..));
    if text || decimal_as_double || values.data_type() == cast.data_type() {
        return Ok(vec![false; values.len()]);
    }
    // Between timestamps only the unit can change a value: the way back keeps the value's zone
    // (arrow reads a zoneless instant in the target's zone one way and as UTC the other).
    let (cast, back_type) = match (values.data_type(), cast.data_type()) {
        (DataType::Timestamp(_, zone), DataType::Timestamp(unit, _)) => {
            let same_zone = DataType::Timestamp(*unit, zone.clone());
            (arrow::compute::cast(values, &same_zone)?, values.data_type().clone())
        }
        _ => (Arc::clone(cast), values.data_type().clone()),
    };
    let back = arrow::compute::cast(&cast, &back_type)?;
    if values.data_type().is_floating() {
        let given = arrow::compute::cast(values, &DataType::Float64)?;
        let back = arrow::compute::cast(&back, &DataType::Float64)?;
        let (given, back) = (given.as_primitive::<arrow::datatypes::Float64Type>(), back.as_primitive::<arrow::datatypes::Float64Type>());
        return Ok((0..values.len()).map(|i| !given.is_null(i) && (back.is_null(i) || given.value(i) != back.value(i))).collect());
    }
    let distinct = arrow::compute::kernels::cmp::distinct(values, &back)?;
    Ok((0..values.len()).map(|i| !values.is_null(i) && distinct.value(i)).collect())
}

/// The live rows of a stored batch.
/// A notified binary key as PostgreSQL writes a bytea as text (`\x0005`), decoded to its bytes;
/// NULL for text of another form (which then drops the whole cache). A plain cast took the text's
/// own bytes, which match no cached key: a deleted or changed row went on being served.
fn bytea_from_text(text: &arrow::array::StringArray) -> ArrayRef {
    let decoded = text.iter().map(|value| crate::decode::hex_bytes(value?.strip_prefix("\\x")?));
    Arc::new(arrow::array::BinaryArray::from_iter(decoded))
}

fn live_rows(stored: &Stored) -> RecordBatch {
    if stored.live_count == stored.batch.num_rows() {
        stored.batch.clone()
    } else {
        filter_record_batch(&stored.batch, &BooleanArray::from(stored.live.clone())).expect("a filter of the batch's own length")
    }
}

fn bytes(state: &TableState) -> u64 {
    state.stored.iter().map(|s| s.batch.get_array_memory_size() as u64).sum()
}

// -- SQL: the table, its scan and dynamic_contains ------------------------------------------------

/// What a session sees of a dynamic table: a bounded table whose scan reads the current version.
#[derive(Debug)]
pub struct DynamicTableProvider(pub Arc<DynamicTable>);

#[async_trait]
impl TableProvider for DynamicTableProvider {
    fn schema(&self) -> SchemaRef {
        self.0.schema()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    async fn scan(
        &self,
        _state: &dyn Session,
        projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        _limit: Option<usize>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        Ok(Arc::new(DynamicScanExec::new(Arc::clone(&self.0), projection.cloned())))
    }
}

/// Scans a dynamic table's version current at execution; for a lookup table, the rows the
/// lookup join looked up for its current probe batch.
#[derive(Debug)]
pub struct DynamicScanExec {
    table: Arc<DynamicTable>,
    projection: Option<Vec<usize>>,
    properties: Arc<PlanProperties>,
    looked_up: Arc<Mutex<Option<RecordBatch>>>,
}

impl DynamicScanExec {
    fn new(table: Arc<DynamicTable>, projection: Option<Vec<usize>>) -> Self {
        let full = table.schema();
        let schema = match &projection {
            Some(p) => Arc::new(full.project(p).expect("DataFusion projects existing columns")),
            None => full,
        };
        let properties = PlanProperties::new(
            EquivalenceProperties::new(schema),
            Partitioning::UnknownPartitioning(1),
            EmissionType::Incremental,
            Boundedness::Bounded,
        );
        DynamicScanExec { table, projection, properties: Arc::new(properties), looked_up: Arc::default() }
    }

    pub fn table(&self) -> &Arc<DynamicTable> {
        &self.table
    }

    /// Where a lookup join puts the rows this scan yields for a lookup table (whole rows).
    pub fn looked_up(&self) -> Arc<Mutex<Option<RecordBatch>>> {
        Arc::clone(&self.looked_up)
    }
}

impl DisplayAs for DynamicScanExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "DynamicScanExec: {}", self.table.name)
    }
}

impl ExecutionPlan for DynamicScanExec {
    fn name(&self) -> &str {
        "DynamicScanExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![]
    }

    fn apply_expressions(&self, _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> DfResult<TreeNodeRecursion>) -> DfResult<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(self: Arc<Self>, _children: Vec<Arc<dyn ExecutionPlan>>) -> DfResult<Arc<dyn ExecutionPlan>> {
        Ok(self)
    }

    fn execute(&self, _partition: usize, _context: Arc<TaskContext>) -> DfResult<SendableRecordBatchStream> {
        let view = if self.table.is_lookup() {
            let rows = self.looked_up.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone();
            Arc::from(rows.into_iter().collect::<Vec<_>>())
        } else {
            self.table.view()
        };
        let batches: Vec<DfResult<RecordBatch>> = view
            .iter()
            .map(|b| match &self.projection {
                Some(p) => b.project(p).map_err(Into::into),
                None => Ok(b.clone()),
            })
            .collect();
        Ok(Box::pin(RecordBatchStreamAdapter::new(self.properties.eq_properties.schema().clone(), futures::stream::iter(batches))))
    }
}

/// `dynamic_contains('table', value)`: whether `value` is a key of the dynamic table now.
#[derive(Debug)]
pub struct DynamicContains {
    tables: BTreeMap<String, Arc<DynamicTable>>,
    signature: Signature,
}

impl DynamicContains {
    pub fn new(tables: &[Arc<DynamicTable>]) -> Self {
        DynamicContains {
            tables: tables.iter().map(|t| (t.name.clone(), Arc::clone(t))).collect(),
            // Volatile: the answer changes with the table, so the planner must not fold it.
            signature: Signature::any(2, Volatility::Volatile),
        }
    }

    fn table(&self, name: Option<&ScalarValue>) -> DfResult<&Arc<DynamicTable>> {
        let name = match name {
            Some(ScalarValue::Utf8(Some(n)) | ScalarValue::LargeUtf8(Some(n)) | ScalarValue::Utf8View(Some(n))) => n,
            _ => return plan_err!("dynamic_contains: the first argument must be a dynamic table's name as a string literal"),
        };
        match self.tables.get(name) {
            Some(table) => Ok(table),
            None => plan_err!(
                "dynamic_contains: no dynamic table '{name}' (the pipeline's tables: {})",
                self.tables.keys().cloned().collect::<Vec<_>>().join(", ")
            ),
        }
    }
}

impl PartialEq for DynamicContains {
    fn eq(&self, other: &Self) -> bool {
        self.tables.len() == other.tables.len() && self.tables.values().zip(other.tables.values()).all(|(a, b)| Arc::ptr_eq(a, b))
    }
}

impl Eq for DynamicContains {}

impl Hash for DynamicContains {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.tables.keys().for_each(|k| k.hash(state));
    }
}

impl ScalarUDFImpl for DynamicContains {
    fn name(&self) -> &str {
        "dynamic_contains"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> DfResult<DataType> {
        Ok(DataType::Boolean)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> DfResult<FieldRef> {
        let table = self.table(args.scalar_arguments.first().copied().flatten())?;
        if table.key.len() != 1 {
            return plan_err!("dynamic_contains: table '{}' has a key of {} columns; it needs one", table.name, table.key.len());
        }
        Ok(Arc::new(Field::new(self.name(), DataType::Boolean, true)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let table = match &args.args[0] {
            ColumnarValue::Scalar(name) => self.table(Some(name))?,
            ColumnarValue::Array(_) => return exec_err!("dynamic_contains: the first argument must be a string literal"),
        };
        let values = args.args[1].to_array(args.number_rows)?;
        let found = table.contains(&values).map_err(|e| datafusion::error::DataFusionError::Execution(e.message))?;
        Ok(ColumnarValue::Array(Arc::new(found)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int64Array, StringArray};

    fn table(max_rows: Option<u64>) -> DynamicTable {
        DynamicTable::new(
            serde_json::from_value(serde_json::json!({
                "name": "customers",
                "columns": [{"name": "id", "type": "Int64"}, {"name": "name", "type": "Utf8"}],
                "key": ["id"],
                "max_rows": max_rows,
            }))
            .unwrap(),
        )
        .unwrap()
    }

    fn changes(ids: &[i64], names: &[&str], ops: Option<&[&str]>) -> RecordBatch {
        let mut fields = vec![Field::new("id", DataType::Int64, false), Field::new("name", DataType::Utf8, true)];
        let mut columns: Vec<ArrayRef> = vec![Arc::new(Int64Array::from(ids.to_vec())), Arc::new(StringArray::from(names.to_vec()))];
        if let Some(ops) = ops {
            fields.push(Field::new(OP_COLUMN, DataType::Utf8, false));
            columns.push(Arc::new(StringArray::from(ops.to_vec())));
        }
        RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap()
    }

    fn rows(t: &DynamicTable) -> Vec<(i64, String)> {
        let b = t.snapshot().unwrap();
        let ids = b.column(0).as_primitive::<arrow::datatypes::Int64Type>();
        let names = b.column(1).as_string::<i32>();
        let mut rows: Vec<_> = (0..b.num_rows()).map(|i| (ids.value(i), names.value(i).to_string())).collect();
        rows.sort();
        rows
    }

    #[test]
    fn upserts_and_deletes_apply_in_order_and_the_last_change_of_a_key_wins() {
        let t = table(None);
        t.apply(&changes(&[1, 2, 3], &["a", "b", "c"], None)).unwrap();
        t.apply(&changes(&[2, 1, 4, 4, 3, 3], &["B", "x", "d", "D", "", "C"], Some(&["u", "d", "i", "u", "d", "i"]))).unwrap();
        assert_eq!(rows(&t), vec![(2, "B".into()), (3, "C".into()), (4, "D".into())]);
        assert_eq!(t.stats().rows, 3);
        assert_eq!(t.stats().version, 2);
    }

    #[test]
    fn compaction_keeps_exactly_the_live_rows() {
        let t = table(None);
        for round in 0..200i64 {
            let ids: Vec<i64> = (0..100).collect();
            let names: Vec<String> = ids.iter().map(|i| format!("{i}-{round}")).collect();
            t.apply(&changes(&ids, &names.iter().map(String::as_str).collect::<Vec<_>>(), None)).unwrap();
        }
        t.apply(&changes(&[5], &[""], Some(&["d"]))).unwrap();
        let expected: Vec<(i64, String)> = (0..100).filter(|i| *i != 5).map(|i| (i, format!("{i}-199"))).collect();
        assert_eq!(rows(&t), expected);
        let state = t.state();
        assert!(state.stored.len() <= MAX_STORED_BATCHES, "{} batches", state.stored.len());
        assert!(state.stored_rows < 100 * 70, "dead rows are compacted away: {} stored", state.stored_rows);
    }

    #[test]
    fn a_truncate_empties_the_table_and_later_rows_of_its_batch_apply() {
        let t = table(None);
        t.apply(&changes(&[1, 2], &["a", "b"], None)).unwrap();
        let truncate = RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("id", DataType::Int64, true),
                Field::new("name", DataType::Utf8, true),
                Field::new(OP_COLUMN, DataType::Utf8, false),
            ])),
            vec![
                Arc::new(Int64Array::from(vec![Some(3), None, Some(4)])),
                Arc::new(StringArray::from(vec![Some("c"), None, Some("d")])),
                Arc::new(StringArray::from(vec!["i", "t", "r"])),
            ],
        )
        .unwrap();
        t.apply(&truncate).unwrap();
        assert_eq!(rows(&t), vec![(4, "d".into())]);
        assert_eq!(t.stats().rows, 1);
    }

    #[test]
    fn a_refused_batch_leaves_the_table_unchanged() {
        let t = table(None);
        t.apply(&changes(&[1], &["a"], None)).unwrap();
        let err = t.apply(&changes(&[2, 3], &["b", "c"], Some(&["i", "x"]))).unwrap_err();
        assert!(err.message.contains("row 2 of the batch has _op = 'x'"), "{}", err.message);
        let nulls = RecordBatch::try_new(
            Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true), Field::new("name", DataType::Utf8, true)])),
            vec![Arc::new(Int64Array::from(vec![Some(7), None])), Arc::new(StringArray::from(vec!["g", "h"]))],
        )
        .unwrap();
        let err = t.apply(&nulls).unwrap_err();
        assert!(err.message.contains("key column 'id' is NULL in row 2"), "{}", err.message);
        let err = t.apply(&changes(&[1], &["a"], None).project(&[1]).unwrap()).unwrap_err();
        assert!(err.message.contains("no column 'id'"), "{}", err.message);
        assert_eq!(rows(&t), vec![(1, "a".into())]);
        assert_eq!(t.version(), 1);
    }

    #[test]
    fn values_are_cast_strictly_to_the_declared_types() {
        let t = table(None);
        let text_ids = RecordBatch::try_new(
            Arc::new(Schema::new(vec![Field::new("id", DataType::Utf8, false), Field::new("name", DataType::Utf8, true)])),
            vec![Arc::new(StringArray::from(vec!["12"])), Arc::new(StringArray::from(vec!["l"]))],
        )
        .unwrap();
        t.apply(&text_ids).unwrap();
        assert_eq!(rows(&t), vec![(12, "l".into())]);
        let bad = RecordBatch::try_new(text_ids.schema(), vec![Arc::new(StringArray::from(vec!["twelve"])), Arc::new(StringArray::from(vec!["l"]))])
            .unwrap();
        let err = t.apply(&bad).unwrap_err();
        assert!(err.message.contains("column 'id': Utf8 does not fit Int64"), "{}", err.message);
    }

    #[test]
    fn the_row_limit_fails_the_apply_that_crosses_it() {
        let t = table(Some(2));
        t.apply(&changes(&[1, 2], &["a", "b"], None)).unwrap();
        t.apply(&changes(&[2, 1], &["B", "A"], None)).unwrap();
        let err = t.apply(&changes(&[3], &["c"], None)).unwrap_err();
        assert!(err.message.contains("holds 3 rows, more than max_rows = 2"), "{}", err.message);
    }

    #[test]
    fn contains_answers_from_the_current_version() {
        let t = table(None);
        t.apply(&changes(&[1, 2], &["a", "b"], None)).unwrap();
        let probe: ArrayRef = Arc::new(Int64Array::from(vec![Some(1), Some(3), None]));
        assert_eq!(t.contains(&probe).unwrap(), BooleanArray::from(vec![Some(true), Some(false), None]));
        t.apply(&changes(&[1, 3], &["", "c"], Some(&["d", "i"]))).unwrap();
        assert_eq!(t.contains(&probe).unwrap(), BooleanArray::from(vec![Some(false), Some(true), None]));
        // A value the cast to the key's type changes is no key: 2.5 was the key 2, and a
        // number beyond the type's range NULL (dropped by NOT dynamic_contains).
        t.apply(&changes(&[0], &["z"], None)).unwrap();
        let doubles: ArrayRef = Arc::new(arrow::array::Float64Array::from(vec![Some(2.5), Some(3.0), Some(-0.0), Some(1e30), Some(f64::NAN), None]));
        assert_eq!(t.contains(&doubles).unwrap(), BooleanArray::from(vec![Some(false), Some(true), Some(true), Some(false), Some(false), None]));
        let decimals: ArrayRef = Arc::new(arrow::array::Decimal128Array::from(vec![5, 300]).with_precision_and_scale(5, 2).unwrap());
        assert_eq!(t.contains(&decimals).unwrap(), BooleanArray::from(vec![Some(false), Some(true)]));
        // A decimal against a double key is the double nearest it (23.63 in decimal(38, 20)
        // was "changed" by arrow's double round trip, and answered false).
        let prices = DynamicTable::new(
            serde_json::from_value(serde_json::json!({"name": "p", "columns": [{"name": "k", "type": "Float64"}], "key": ["k"]})).unwrap(),
        )
        .unwrap();
        let price = |v: f64| {
            let schema = Arc::new(Schema::new(vec![Field::new("k", DataType::Float64, false)]));
            RecordBatch::try_new(schema, vec![Arc::new(arrow::array::Float64Array::from(vec![v]))]).unwrap()
        };
        prices.apply(&price(23.63)).unwrap();
        let amounts: ArrayRef = Arc::new(
            arrow::array::Decimal128Array::from(vec![2363 * 10_i128.pow(18), 2364 * 10_i128.pow(18)]).with_precision_and_scale(38, 20).unwrap(),
        );
        assert_eq!(prices.contains(&amounts).unwrap(), BooleanArray::from(vec![Some(true), Some(false)]));
        // A zoneless timestamp against a zoned key is read in the key's zone, as the join reads it.
        let zoned = DataType::Timestamp(arrow::datatypes::TimeUnit::Microsecond, Some("Europe/Berlin".into()));
        let instants = DynamicTable::new(
            serde_json::from_value(
                serde_json::json!({"name": "z", "columns": [{"name": "k", "type": "Timestamp(µs, \"Europe/Berlin\")"}], "key": ["k"]}),
            )
            .unwrap(),
        )
        .unwrap();
        let midnight_berlin = 1_704_150_000_000_000_i64; // 2024-01-01T23:00:00Z
        let key: ArrayRef = Arc::new(arrow::array::TimestampMicrosecondArray::from(vec![midnight_berlin]).with_timezone("Europe/Berlin"));
        instants.apply(&RecordBatch::try_new(Arc::new(Schema::new(vec![Field::new("k", zoned, false)])), vec![key]).unwrap()).unwrap();
        let local: ArrayRef = Arc::new(arrow::array::TimestampMicrosecondArray::from(vec![1_704_153_600_000_000_i64])); // 2024-01-02T00:00:00
        assert_eq!(instants.contains(&local).unwrap(), BooleanArray::from(vec![Some(true)]));
        // -0.0 and 0.0 are one key of a float key column.
        let floats = DynamicTable::new(
            serde_json::from_value(serde_json::json!({"name": "f", "columns": [{"name": "k", "type": "Float64"}], "key": ["k"]})).unwrap(),
        )
        .unwrap();
        let zeros = |v: f64, op: &str| {
            let schema = Arc::new(Schema::new(vec![Field::new("k", DataType::Float64, false), Field::new("_op", DataType::Utf8, false)]));
            RecordBatch::try_new(
                schema,
                vec![Arc::new(arrow::array::Float64Array::from(vec![v])), Arc::new(arrow::array::StringArray::from(vec![op]))],
            )
            .unwrap()
        };
        floats.apply(&zeros(0.0, "i")).unwrap();
        floats.apply(&zeros(-0.0, "i")).unwrap();
        assert_eq!(floats.snapshot().unwrap().num_rows(), 1, "one key");
        floats.apply(&zeros(-0.0, "d")).unwrap();
        assert_eq!(floats.snapshot().unwrap().num_rows(), 0, "deleted by -0.0");
        // So are all NaNs: 0/0's has its sign bit set.
        let negative_nan = f64::from_bits(0xfff8_0000_0000_0000);
        floats.apply(&zeros(f64::NAN, "i")).unwrap();
        floats.apply(&zeros(negative_nan, "i")).unwrap();
        assert_eq!(floats.snapshot().unwrap().num_rows(), 1, "one NaN key");
        let nan: ArrayRef = Arc::new(arrow::array::Float64Array::from(vec![negative_nan]));
        assert_eq!(floats.contains(&nan).unwrap(), BooleanArray::from(vec![Some(true)]));
        let text: ArrayRef = Arc::new(arrow::array::StringArray::from(vec![Some("03"), Some("x")]));
        assert_eq!(t.contains(&text).unwrap(), BooleanArray::from(vec![Some(true), None]), "text is parsed; no number is unknown");
    }

    /// Rows of a drained transform output: (first column, second column as text or NULL).
    fn drain(t: &mut crate::transform::SqlTransform) -> Vec<(i64, Option<String>)> {
        let mut rows = Vec::new();
        while let Some(b) = t.next_output() {
            let ids = b.column(0).as_primitive::<arrow::datatypes::Int64Type>();
            let second = arrow::compute::cast(b.column(1), &DataType::Utf8).unwrap();
            let second = second.as_string::<i32>();
            rows.extend((0..b.num_rows()).map(|i| (ids.value(i), (!second.is_null(i)).then(|| second.value(i).to_string()))));
        }
        rows.sort();
        rows
    }

    #[test]
    fn joins_subqueries_and_dynamic_contains_see_each_change_from_the_next_batch_on() {
        use crate::plugin_udf::Functions;
        use crate::transform::SqlTransform;
        let t = Arc::new(table(None));
        let mut functions = Functions::default();
        functions.add_table(Arc::clone(&t)).unwrap();
        let stream = Arc::new(Schema::new(vec![Field::new("cid", DataType::Int64, true)]));
        let plan = |sql: &str| SqlTransform::with_functions(sql, vec![("s".into(), Arc::clone(&stream))], &[], &functions).unwrap();
        let mut join = plan("SELECT s.cid, c.name FROM s LEFT JOIN customers c ON s.cid = c.id");
        let mut inner = plan("SELECT s.cid, c.name FROM s JOIN customers c ON s.cid = c.id");
        let mut member = plan("SELECT cid, dynamic_contains('customers', cid) AS known FROM s");
        let mut semi = plan("SELECT cid, 'in' AS x FROM s WHERE cid IN (SELECT id FROM customers)");
        let probe = || RecordBatch::try_new(Arc::clone(&stream), vec![Arc::new(Int64Array::from(vec![Some(1), Some(2), None]))]).unwrap();
        let mut run = |expect: [Vec<(i64, Option<String>)>; 4]| {
            for (t, expected) in [&mut join, &mut inner, &mut member, &mut semi].into_iter().zip(expect) {
                t.push(0, probe()).unwrap();
                let mut rows = drain(t);
                rows.retain(|(id, _)| *id != 0); // the NULL probe row reads as 0 in `drain`
                assert_eq!(rows, expected);
            }
        };
        let s = |v: &str| Some(v.to_string());
        run([vec![(1, None), (2, None)], vec![], vec![(1, s("false")), (2, s("false"))], vec![]]);
        t.apply(&changes(&[1], &["a"], None)).unwrap();
        run([vec![(1, s("a")), (2, None)], vec![(1, s("a"))], vec![(1, s("true")), (2, s("false"))], vec![(1, s("in"))]]);
        t.apply(&changes(&[1, 2], &["A", "b"], Some(&["u", "i"]))).unwrap();
        run([vec![(1, s("A")), (2, s("b"))], vec![(1, s("A")), (2, s("b"))], vec![(1, s("true")), (2, s("true"))], vec![(1, s("in")), (2, s("in"))]]);
        t.apply(&changes(&[1], &[""], Some(&["d"]))).unwrap();
        run([vec![(1, None), (2, s("b"))], vec![(2, s("b"))], vec![(1, s("false")), (2, s("true"))], vec![(2, s("in"))]]);

        let unknown =
            SqlTransform::with_functions("SELECT dynamic_contains('nope', cid) FROM s", vec![("s".into(), stream)], &[], &functions).err().unwrap();
        assert!(unknown.message.contains("no dynamic table 'nope' (the pipeline's tables: customers)"), "{}", unknown.message);
    }

    /// A lookup table over `backend` (id -> name) whose loader counts its calls.
    fn lookup_table(backend: &Arc<Mutex<BTreeMap<i64, String>>>, calls: &Arc<AtomicU64>, max_rows: Option<u64>) -> Arc<DynamicTable> {
        let t = Arc::new(table(max_rows));
        let (backend, calls) = (Arc::clone(backend), Arc::clone(calls));
        t.set_loader(Box::new(move |keys: RecordBatch| {
            calls.fetch_add(1, Ordering::Relaxed);
            let backend = backend.lock().unwrap();
            let ids = keys.column(0).as_primitive::<arrow::datatypes::Int64Type>();
            let found: Vec<(i64, String)> = ids.values().iter().filter_map(|id| backend.get(id).map(|n| (*id, n.clone()))).collect();
            let (ids, names): (Vec<i64>, Vec<String>) = found.into_iter().unzip();
            Ok(Some(changes(&ids, &names.iter().map(String::as_str).collect::<Vec<_>>(), None)))
        }))
        .unwrap();
        t
    }

    /// A binary key is notified as PostgreSQL writes a bytea as text, `\x0005`: forgetting it
    /// drops the row cached under the bytes 00 05 (a plain cast took the text's own bytes and
    /// dropped nothing: the deleted row went on being served). Text of another form drops all.
    #[test]
    fn a_binary_key_notified_as_bytea_text_is_forgotten() {
        use crate::plugin_udf::Functions;
        use crate::transform::SqlTransform;
        let t = Arc::new(
            DynamicTable::new(
                serde_json::from_value(serde_json::json!({
                    "name": "tags",
                    "columns": [{"name": "k", "type": "Binary"}, {"name": "name", "type": "Utf8"}],
                    "key": ["k"],
                }))
                .unwrap(),
            )
            .unwrap(),
        );
        let backend = Arc::new(Mutex::new(BTreeMap::from([(vec![0u8, 5], "five".to_string()), (vec![0u8, 6], "six".to_string())])));
        let source = Arc::clone(&backend);
        t.set_loader(Box::new(move |keys: RecordBatch| {
            let backend = source.lock().unwrap();
            let asked = keys.column(0).as_binary::<i32>();
            let found: Vec<(Vec<u8>, String)> = asked.iter().flatten().filter_map(|k| backend.get(k).map(|n| (k.to_vec(), n.clone()))).collect();
            let columns: Vec<ArrayRef> = vec![
                Arc::new(arrow::array::BinaryArray::from_iter_values(found.iter().map(|(k, _)| k))),
                Arc::new(StringArray::from_iter_values(found.iter().map(|(_, n)| n))),
            ];
            Ok(Some(RecordBatch::try_new(
                Arc::new(Schema::new(vec![Field::new("k", DataType::Binary, true), Field::new("name", DataType::Utf8, true)])),
                columns,
            )?))
        }))
        .unwrap();
        let mut functions = Functions::default();
        functions.add_table(Arc::clone(&t)).unwrap();
        let stream = Arc::new(Schema::new(vec![Field::new("k", DataType::Binary, true)]));
        let mut join = SqlTransform::with_functions(
            "SELECT g.name FROM s LEFT JOIN tags g ON s.k = g.k",
            vec![("s".into(), Arc::clone(&stream))],
            &[],
            &functions,
        )
        .unwrap();
        let names = |join: &mut SqlTransform| {
            let probe =
                RecordBatch::try_new(Arc::clone(&stream), vec![Arc::new(arrow::array::BinaryArray::from_iter_values([[0u8, 5], [0u8, 6]]))]).unwrap();
            join.push(0, probe).unwrap();
            let mut out = Vec::new();
            while let Some(b) = join.next_output() {
                out.extend(b.column(0).as_string::<i32>().iter().map(|n| n.map(str::to_string)));
            }
            out.sort();
            out
        };
        assert_eq!(names(&mut join), [Some("five".to_string()), Some("six".to_string())]);
        backend.lock().unwrap().remove(&vec![0u8, 5]);
        backend.lock().unwrap().insert(vec![0u8, 6], "SIX".to_string());
        t.forget(Some(&[Arc::new(StringArray::from(vec!["\\x0005"])) as ArrayRef])).unwrap();
        assert_eq!(names(&mut join), [None, Some("six".to_string())], "5 forgotten, 6 still cached");
        t.forget(Some(&[Arc::new(StringArray::from(vec!["0006"])) as ArrayRef])).unwrap();
        assert_eq!(names(&mut join), [None, Some("SIX".to_string())], "text of another form drops everything");
    }

    #[test]
    fn a_lookup_table_with_a_key_of_two_columns_joins_on_both_and_forgets_whole_keys() {
        use crate::plugin_udf::Functions;
        use crate::transform::SqlTransform;
        let t = Arc::new(
            DynamicTable::new(
                serde_json::from_value(serde_json::json!({
                    "name": "customers",
                    "columns": [{"name": "id", "type": "Int64"}, {"name": "region", "type": "Utf8"},
                                {"name": "name", "type": "Utf8"}],
                    "key": ["region", "id"],
                }))
                .unwrap(),
            )
            .unwrap(),
        );
        // The backend: (region, id) -> name; the loader answers the asked keys that exist.
        let backend = Arc::new(Mutex::new(BTreeMap::from([(("eu".to_string(), 1), "eu1".to_string()), (("us".to_string(), 1), "us1".to_string())])));
        let calls = Arc::new(AtomicU64::new(0));
        let (source, counter) = (Arc::clone(&backend), Arc::clone(&calls));
        t.set_loader(Box::new(move |keys: RecordBatch| {
            counter.fetch_add(1, Ordering::Relaxed);
            assert_eq!(keys.schema().field(0).name(), "region", "keys come in the key's order");
            let regions = arrow::compute::cast(keys.column(0), &DataType::Utf8).unwrap();
            let regions = regions.as_string::<i32>();
            let ids = keys.column(1).as_primitive::<arrow::datatypes::Int64Type>();
            let source = source.lock().unwrap();
            let found: Vec<(i64, String, String)> = (0..keys.num_rows())
                .filter_map(|i| {
                    source.get(&(regions.value(i).to_string(), ids.value(i))).map(|n| (ids.value(i), regions.value(i).to_string(), n.clone()))
                })
                .collect();
            let schema = Arc::new(Schema::new(vec![
                Field::new("id", DataType::Int64, false),
                Field::new("region", DataType::Utf8, false),
                Field::new("name", DataType::Utf8, true),
            ]));
            Ok(Some(
                RecordBatch::try_new(
                    schema,
                    vec![
                        Arc::new(Int64Array::from(found.iter().map(|f| f.0).collect::<Vec<_>>())),
                        Arc::new(StringArray::from(found.iter().map(|f| f.1.clone()).collect::<Vec<_>>())),
                        Arc::new(StringArray::from(found.iter().map(|f| f.2.clone()).collect::<Vec<_>>())),
                    ],
                )
                .unwrap(),
            ))
        }))
        .unwrap();
        let mut functions = Functions::default();
        functions.add_table(Arc::clone(&t)).unwrap();
        let stream = Arc::new(Schema::new(vec![Field::new("cid", DataType::Int64, true)]));
        // cid 1 is eu/1, cid 11 is us/1, cid 2 is eu/2 (absent).
        let mut join = SqlTransform::with_functions(
            "SELECT s.cid, c.name FROM s LEFT JOIN customers c \
             ON c.region = CASE WHEN s.cid < 10 THEN 'eu' ELSE 'us' END AND c.id = s.cid % 10",
            vec![("s".into(), Arc::clone(&stream))],
            &[],
            &functions,
        )
        .unwrap();
        let probe = |ids: Vec<i64>| RecordBatch::try_new(Arc::clone(&stream), vec![Arc::new(Int64Array::from(ids))]).unwrap();
        let s = |v: &str| Some(v.to_string());
        join.push(0, probe(vec![1, 11, 2])).unwrap();
        assert_eq!(drain(&mut join), vec![(1, s("eu1")), (2, None), (11, s("us1"))]);
        assert_eq!(calls.load(Ordering::Relaxed), 1);

        backend.lock().unwrap().extend([(("eu".to_string(), 1), "EU1".to_string()), (("us".to_string(), 1), "US1".to_string())]);
        // Forgetting (us, 1) reloads that key only; (eu, 1) is still the cached row.
        let key = |region: &str, id: &str| [Arc::new(StringArray::from(vec![region])) as ArrayRef, Arc::new(StringArray::from(vec![id])) as ArrayRef];
        t.forget(Some(&key("us", "1"))).unwrap();
        join.push(0, probe(vec![1, 11])).unwrap();
        assert_eq!(drain(&mut join), vec![(1, s("eu1")), (11, s("US1"))]);
        assert_eq!(calls.load(Ordering::Relaxed), 2);
        let half = t.forget(Some(&[Arc::new(StringArray::from(vec!["eu"])) as ArrayRef])).unwrap_err();
        assert!(half.message.contains("forgetting keys of 1 columns; the table's key has 2"), "{}", half.message);
    }

    #[test]
    fn a_lookup_table_loads_each_batch_s_missing_keys_in_one_call_and_caches_them() {
        use crate::plugin_udf::Functions;
        use crate::transform::SqlTransform;
        let backend = Arc::new(Mutex::new(BTreeMap::from([(1, "a".to_string()), (2, "b".to_string())])));
        let calls = Arc::new(AtomicU64::new(0));
        let t = lookup_table(&backend, &calls, None);
        let mut functions = Functions::default();
        functions.add_table(Arc::clone(&t)).unwrap();
        let stream = Arc::new(Schema::new(vec![Field::new("cid", DataType::Int64, true)]));
        let plan = |sql: &str| SqlTransform::with_functions(sql, vec![("s".into(), Arc::clone(&stream))], &[], &functions);
        let mut join = plan("SELECT s.cid, c.name FROM s LEFT JOIN customers c ON s.cid = c.id").unwrap();
        let mut member = plan("SELECT cid, dynamic_contains('customers', cid) AS known FROM s").unwrap();
        let mut semi = plan("SELECT cid, 'in' AS x FROM s WHERE cid IN (SELECT id FROM customers)").unwrap();
        let probe = |ids: Vec<Option<i64>>| RecordBatch::try_new(Arc::clone(&stream), vec![Arc::new(Int64Array::from(ids))]).unwrap();
        let s = |v: &str| Some(v.to_string());

        join.push(0, probe(vec![Some(1), Some(3), Some(1), None])).unwrap();
        assert_eq!(drain(&mut join), vec![(0, None), (1, s("a")), (1, s("a")), (3, None)]);
        assert_eq!((calls.load(Ordering::Relaxed), t.stats().misses, t.stats().hits), (1, 2, 0));
        // 1 is held and 3 known absent: no call; 2 is loaded.
        member.push(0, probe(vec![Some(1), Some(2), Some(3)])).unwrap();
        assert_eq!(drain(&mut member), vec![(1, s("true")), (2, s("true")), (3, s("false"))]);
        assert_eq!((calls.load(Ordering::Relaxed), t.stats().misses, t.stats().hits), (2, 3, 2));
        semi.push(0, probe(vec![Some(1), Some(2), Some(3)])).unwrap();
        assert_eq!(drain(&mut semi), vec![(1, s("in")), (2, s("in"))]);
        assert_eq!(calls.load(Ordering::Relaxed), 2, "every key was held");

        // The backend changes; only forgotten keys are read again.
        backend.lock().unwrap().extend([(1, "A".to_string()), (3, "c".to_string())]);
        join.push(0, probe(vec![Some(1), Some(3)])).unwrap();
        assert_eq!(drain(&mut join), vec![(1, s("a")), (3, None)]);
        t.forget(Some(&[Arc::new(StringArray::from(vec!["3"])) as ArrayRef])).unwrap();
        join.push(0, probe(vec![Some(1), Some(3)])).unwrap();
        assert_eq!(drain(&mut join), vec![(1, s("a")), (3, s("c"))]);
        t.forget(None).unwrap();
        assert_eq!(t.stats().rows, 0);
        join.push(0, probe(vec![Some(1), Some(3)])).unwrap();
        assert_eq!(drain(&mut join), vec![(1, s("A")), (3, s("c"))]);
        // A key that cannot be a bigint names no held row: everything is dropped, not nothing.
        backend.lock().unwrap().insert(1, "B".to_string());
        t.forget(Some(&[Arc::new(StringArray::from(vec![Some("abc"), None])) as ArrayRef])).unwrap();
        assert_eq!(t.stats().rows, 0);
        join.push(0, probe(vec![Some(1)])).unwrap();
        assert_eq!(drain(&mut join), vec![(1, s("B"))]);

        let refused = |sql: &str| plan(sql).err().expect(sql).message;
        let computed = refused("SELECT s.cid, c.name FROM s JOIN customers c ON s.cid = c.id + 1");
        assert!(computed.contains("join it to the stream with an equality on its key column (id)"), "{computed}");
        let scanned = refused("SELECT cid FROM s WHERE cid > 0 UNION ALL SELECT id FROM customers");
        assert!(scanned.contains("read it only in a join of the stream with an equality on its key (id)"), "{scanned}");
        assert!(refused("SELECT s.cid FROM s JOIN customers c ON CAST(s.cid AS VARCHAR) = c.name").contains("equality on its key column (id)"));
        assert!(t.apply(&changes(&[1], &["x"], None)).unwrap_err().message.contains("filled by lookups"));
    }

    #[test]
    fn a_lookup_table_evicts_its_oldest_keys_beyond_max_rows() {
        let backend = Arc::new(Mutex::new((1..=10).map(|i| (i, format!("n{i}"))).collect::<BTreeMap<_, _>>()));
        let calls = Arc::new(AtomicU64::new(0));
        let t = lookup_table(&backend, &calls, Some(3));
        let keys = |ids: &[i64]| vec![Arc::new(Int64Array::from(ids.to_vec())) as ArrayRef];
        let names = |b: RecordBatch| {
            let mut n: Vec<String> = b.column(1).as_string::<i32>().iter().map(|v| v.unwrap().to_string()).collect();
            n.sort();
            n
        };
        assert_eq!(names(t.lookup(&keys(&[1, 2, 3, 4, 11])).unwrap()), vec!["n1", "n2", "n3", "n4"]);
        assert!(t.stats().rows <= 3, "{:?}", t.stats());
        // Whatever was evicted is loaded again, and the answer stays whole.
        assert_eq!(names(t.lookup(&keys(&[1, 2, 3, 4, 5])).unwrap()), vec!["n1", "n2", "n3", "n4", "n5"]);
        assert!(t.stats().rows <= 3);
        assert_eq!(t.stats().loads, 2);
    }

    #[test]
    fn a_loader_that_answers_keys_it_was_not_asked_is_refused() {
        let t = table(None);
        t.set_loader(Box::new(|_keys: RecordBatch| Ok(Some(changes(&[7, 7], &["x", "y"], None))))).unwrap();
        let err = t.lookup(&[Arc::new(Int64Array::from(vec![7])) as ArrayRef]).unwrap_err().message;
        assert!(err.contains("returned a key twice"), "{err}");
        let err = t.lookup(&[Arc::new(Int64Array::from(vec![8])) as ArrayRef]).unwrap_err().message;
        assert!(err.contains("for a key that was not asked for"), "{err}");
    }

    #[test]
    fn bad_definitions_name_the_table() {
        let bad = |json: serde_json::Value| DynamicTable::new(serde_json::from_value(json).unwrap()).unwrap_err().message;
        let cols = serde_json::json!([{"name": "id", "type": "Int64"}]);
        assert!(bad(serde_json::json!({"name": "t", "columns": cols, "key": []})).contains("dynamic table 't': it needs a key"));
        assert!(bad(serde_json::json!({"name": "t", "columns": cols, "key": ["no"]})).contains("key column 'no' is not one of its columns"));
        assert!(bad(serde_json::json!({"name": "a.b", "columns": cols, "key": ["id"]})).contains("plain SQL name"));
    }
}
