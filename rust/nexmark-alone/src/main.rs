//! "DataFusion alone": the plan Sluice runs for a Nexmark query, minus the JVM.
//!
//! Sluice's Nexmark generator makes bid batches, Sluice's SQL transform (the same planned,
//! task-free DataFusion plan the engine builds through `sluice_transform_create`) runs the
//! query over each batch, and the output is counted and dropped. Comparing this with the
//! engine's generator -> sql -> blackhole pipeline shows what the JVM and the bridge cost.
//!
//! Prints one JSON line: {"engine":"datafusion-alone","events":N,"rows_in":..,"rows_out":..,"seconds":..}
//! where `seconds` is the wall time from planning to the last batch (process start excluded),
//! split into `generate_seconds` and `sql_seconds` (push + drain).

use std::process::ExitCode;
use std::time::{Duration, Instant};

use sluice_core::nexmark::{Entity, GeneratorConfig, NexmarkGenerator};
use sluice_core::side_tables::SideTable;
use sluice_core::transform::{table_references, SqlTransform};

const USAGE: &str =
    "usage: nexmark-alone --query-sql SQL --events N [--batch-size B] [--seed S] [--side-input FILE.csv [--side-table NAME]] [--on-thread]";

/// The name q13's SQL gives the side table (Nexmark's `side_input`), unless --side-table says otherwise.
const DEFAULT_SIDE_TABLE: &str = "side_input";

/// Sluice's generator source defaults (GeneratorSource / SourceSettings): seed 42, batch_size 8192.
const DEFAULT_SEED: u64 = 42;
const DEFAULT_BATCH_SIZE: usize = 8192;

struct Args {
    sql: String,
    /// Events in the whole Nexmark sequence, as the generator source's `count` (bids are 46 of 50).
    events: u64,
    batch_size: usize,
    seed: u64,
    /// q13's side table: a CSV file of `key BIGINT, value STRING` rows, no header.
    side_input: Option<String>,
    side_table: String,
    /// Run the loop on a spawned thread, as the engine's pipeline runs on a JVM thread (not the
    /// process's first thread): isolates what the thread itself changes (e.g. its malloc arena).
    on_thread: bool,
}

fn main() -> ExitCode {
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("nexmark-alone: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let result = if args.on_thread {
        std::thread::scope(|scope| scope.spawn(|| run(&args)).join().unwrap_or_else(|_| Err("the run panicked".into())))
    } else {
        run(&args)
    };
    match result {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("nexmark-alone: {message}");
            ExitCode::FAILURE
        }
    }
}

fn parse_args(mut argv: impl Iterator<Item = String>) -> Result<Args, String> {
    let (mut sql, mut events, mut batch_size, mut seed, mut side_input) = (None, None, DEFAULT_BATCH_SIZE, DEFAULT_SEED, None);
    let mut side_table = DEFAULT_SIDE_TABLE.to_string();
    let mut on_thread = false;
    while let Some(flag) = argv.next() {
        let mut value = || argv.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--query-sql" => sql = Some(value()?),
            "--events" => events = Some(number(&flag, &value()?)?),
            "--batch-size" => batch_size = number(&flag, &value()?)?,
            "--seed" => seed = number(&flag, &value()?)?,
            "--side-input" => side_input = Some(value()?),
            "--side-table" => side_table = value()?,
            "--on-thread" => on_thread = true,
            "-h" | "--help" => return Err("help".into()),
            other => return Err(format!("unknown argument '{other}'")),
        }
    }
    let sql = sql.ok_or("--query-sql is required")?;
    let events = events.ok_or("--events is required")?;
    if batch_size == 0 {
        return Err("--batch-size must be positive".into());
    }
    Ok(Args { sql, events, batch_size, seed, side_input, side_table, on_thread })
}

fn number<T: std::str::FromStr>(flag: &str, text: &str) -> Result<T, String> {
    text.replace('_', "").parse().map_err(|_| format!("{flag}: '{text}' is not a valid number"))
}

fn run(args: &Args) -> Result<String, String> {
    let started = Instant::now();
    let bid_schema = NexmarkGenerator::schema(Entity::Bid);
    let side_tables = side_tables(args)?;
    let stream = stream_table(&args.sql, &side_tables)?;
    let mut transform = SqlTransform::with_side_tables(&args.sql, vec![(stream, bid_schema)], &side_tables).map_err(|e| format!("SQL: {e}"))?;
    let mut generator =
        NexmarkGenerator::new(GeneratorConfig { seed: args.seed, entity: Entity::Bid, event_count: Some(args.events), ..GeneratorConfig::default() });

    let (mut rows_in, mut rows_out) = (0u64, 0u64);
    // Split of the wall time: making the bids vs running the plan (push + drain).
    let (mut generate, mut sql) = (Duration::ZERO, Duration::ZERO);
    loop {
        let t0 = Instant::now();
        let Some(batch) = generator.next_batch(args.batch_size) else { break };
        let t1 = Instant::now();
        rows_in += batch.num_rows() as u64;
        transform.push(0, batch).map_err(|e| format!("query failed: {e}"))?;
        while let Some(output) = transform.next_output() {
            rows_out += output.num_rows() as u64;
        }
        generate += t1 - t0;
        sql += t1.elapsed();
    }
    let seconds = started.elapsed().as_secs_f64();
    Ok(serde_json::json!({
        "engine": "datafusion-alone",
        "events": args.events,
        "rows_in": rows_in,
        "rows_out": rows_out,
        "batch_size": args.batch_size,
        "seconds": seconds,
        "generate_seconds": generate.as_secs_f64(),
        "sql_seconds": sql.as_secs_f64(),
    })
    .to_string())
}

/// The side table as the engine's `sql` transform describes it in its options JSON.
fn side_tables(args: &Args) -> Result<Vec<SideTable>, String> {
    let Some(path) = &args.side_input else { return Ok(Vec::new()) };
    let table = serde_json::json!({
        "name": args.side_table,
        "file": {"path": path, "format": "csv", "header": false},
        "columns": [{"name": "key", "type": "Int64"}, {"name": "value", "type": "Utf8"}],
    });
    Ok(vec![serde_json::from_value(table).map_err(|e| format!("--side-input: {e}"))?])
}

/// The one streaming table the query reads (the generator's bids, under whatever name the SQL uses).
fn stream_table(sql: &str, side_tables: &[SideTable]) -> Result<String, String> {
    let mut names = table_references(sql).map_err(|e| format!("SQL: {e}"))?;
    names.retain(|name| side_tables.iter().all(|t| &t.name != name));
    match names.len() {
        1 => Ok(names.remove(0)),
        _ => Err(format!("the query must read exactly one stream table (the bids), it reads {names:?}")),
    }
}
