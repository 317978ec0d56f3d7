//! Source `sequence`: ids `start..start+count` (unbounded without `count`), each exactly once
//! and in order, with a label "seq-<id>". Its snapshot is the next id (8 bytes, little-endian).

use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow::array::{Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use sluice_plugin_sdk::{Error, InstanceInfo, OptionSpec, OptionType, Options, Poll, Result, Source};

pub struct Sequence {
    schema: SchemaRef,
    next: i64,
    /// One past the last id; None: unbounded.
    end: Option<i64>,
    rows_per_poll: i64,
    fail_at: Option<i64>,
    panic_at: Option<i64>,
    delay: Option<Duration>,
    /// With a delay: when the next batch may be emitted.
    ready_at: Option<Instant>,
}

/// The schema of every batch: `id` Int64 and `label` Utf8, both not null.
pub fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false), Field::new("label", DataType::Utf8, false)]))
}

impl Sequence {
    /// The id the next poll starts at.
    pub fn position(&self) -> i64 {
        self.next
    }
}

impl Source for Sequence {
    const NAME: &'static str = "sequence";
    const DESCRIPTION: &'static str = "Emits ids start..start+count (unbounded without count) with a label \"seq-<id>\", each exactly \
         once and in order; restarts after the last checkpoint. fail_at and panic_at make it fail on purpose, for tests.";
    const OPTIONS: &'static [OptionSpec] = &[
        OptionSpec::new("start", OptionType::Integer, "The first id.").default_json("0"),
        OptionSpec::new("count", OptionType::Integer, "How many ids; absent: unbounded."),
        OptionSpec::new("rows_per_poll", OptionType::Integer, "At most this many rows per batch.").default_json("1024"),
        OptionSpec::new("fail_at", OptionType::Integer, "Poll fails (SLUICE_PLUGIN_ERROR) once the next id is this one."),
        OptionSpec::new("panic_at", OptionType::Integer, "Poll panics once the next id is this one."),
        OptionSpec::new(
            "delay_ms",
            OptionType::Integer,
            "Wait this long before every batch (within the poll's timeout: a poll whose timeout ends first returns no batch).",
        ),
    ];

    fn open(options: &Options, _instance: &InstanceInfo) -> Result<(Self, SchemaRef)> {
        let start: i64 = options.get_as("start")?.unwrap_or(0);
        let count: Option<i64> = options.get_as("count")?;
        let end = match count {
            None => None,
            Some(c) if c < 0 => return Err(Error::invalid_options(format!("sequence: option 'count' must not be negative, got {c}"))),
            Some(c) => Some(start.checked_add(c).ok_or_else(|| Error::invalid_options("sequence: options 'start' + 'count' overflow a 64-bit id"))?),
        };
        let rows_per_poll: i64 = options.get_as("rows_per_poll")?.unwrap_or(1024);
        if rows_per_poll <= 0 {
            return Err(Error::invalid_options(format!("sequence: option 'rows_per_poll' must be positive, got {rows_per_poll}")));
        }
        let delay_ms: Option<i64> = options.get_as("delay_ms")?;
        let delay = match delay_ms {
            Some(ms) if ms < 0 => return Err(Error::invalid_options(format!("sequence: option 'delay_ms' must not be negative, got {ms}"))),
            ms => ms.map(|ms| Duration::from_millis(ms as u64)),
        };
        let sequence = Sequence {
            schema: schema(),
            next: start,
            end,
            rows_per_poll,
            fail_at: options.get_as("fail_at")?,
            panic_at: options.get_as("panic_at")?,
            delay,
            ready_at: None,
        };
        let schema = sequence.schema.clone();
        Ok((sequence, schema))
    }

    fn restore(&mut self, snapshot: &[u8]) -> Result<()> {
        let bytes: [u8; 8] =
            snapshot.try_into().map_err(|_| Error::new(format!("sequence: a snapshot is 8 bytes, this one has {}", snapshot.len())))?;
        self.next = i64::from_le_bytes(bytes);
        Ok(())
    }

    fn poll(&mut self, max_rows: usize, timeout: Duration) -> Result<Poll> {
        let end = self.end.unwrap_or(i64::MAX);
        if self.next >= end {
            return Ok(Poll::Finished);
        }
        if let Some(delay) = self.delay {
            // Block at most `timeout`, as the ABI asks.
            let ready_at = *self.ready_at.get_or_insert_with(|| Instant::now() + delay);
            let wait = ready_at.saturating_duration_since(Instant::now());
            if wait > timeout {
                std::thread::sleep(timeout);
                return Ok(Poll::NoneYet);
            }
            std::thread::sleep(wait);
            self.ready_at = Some(Instant::now() + delay);
        }
        if self.fail_at.is_some_and(|at| self.next >= at) {
            return Err(Error::new(format!("sequence: failure requested at {}", self.fail_at.unwrap_or_default())));
        }
        if self.panic_at.is_some_and(|at| self.next >= at) {
            panic!("sequence: panic requested at {}", self.panic_at.unwrap_or_default());
        }
        // Stop short of fail_at / panic_at, so the rows before them are emitted first.
        let mut stop = end;
        for at in [self.fail_at, self.panic_at].into_iter().flatten() {
            if at > self.next {
                stop = stop.min(at);
            }
        }
        let rows = (stop - self.next).min(self.rows_per_poll).min(i64::try_from(max_rows).unwrap_or(i64::MAX));
        let ids = self.next..self.next + rows;
        let labels: StringArray = ids.clone().map(|id| Some(format!("seq-{id}"))).collect();
        let batch = RecordBatch::try_new(self.schema.clone(), vec![Arc::new(Int64Array::from_iter_values(ids)), Arc::new(labels)])?;
        self.next += rows;
        Ok(Poll::Batch(batch))
    }

    fn snapshot(&mut self, _epoch: i64) -> Result<Option<Vec<u8>>> {
        Ok(Some(self.next.to_le_bytes().to_vec()))
    }
}

#[cfg(test)]
mod tests {
    use arrow::array::AsArray;
    use arrow::datatypes::Int64Type;
    use serde_json::json;

    use super::*;

    fn open(options: serde_json::Value) -> Result<Sequence> {
        let options = Options::from_value(options)?;
        options.check(Sequence::OPTIONS)?;
        Sequence::open(&options, &InstanceInfo::default()).map(|(s, _)| s)
    }

    /// Polls until Finished or an error; returns the ids and labels seen.
    fn drain(source: &mut Sequence, max_rows: usize) -> (Vec<i64>, Vec<String>, Option<Error>) {
        let (mut ids, mut labels) = (Vec::new(), Vec::new());
        loop {
            match source.poll(max_rows, Duration::ZERO) {
                Ok(Poll::Batch(b)) => {
                    assert!(b.num_rows() <= max_rows);
                    assert_eq!(b.schema(), schema());
                    ids.extend(b.column(0).as_primitive::<Int64Type>().values().iter());
                    labels.extend(b.column(1).as_string::<i32>().iter().map(|s| s.unwrap().to_owned()));
                }
                Ok(Poll::NoneYet) => {}
                Ok(Poll::Finished) => return (ids, labels, None),
                Err(e) => return (ids, labels, Some(e)),
            }
        }
    }

    #[test]
    fn emits_start_to_start_plus_count_once_in_order() {
        let mut source = open(json!({"start": 5, "count": 10, "rows_per_poll": 3})).unwrap();
        let (ids, labels, error) = drain(&mut source, 100);
        assert_eq!(ids, (5..15).collect::<Vec<_>>());
        assert_eq!(labels[0], "seq-5");
        assert_eq!(labels[9], "seq-14");
        assert!(error.is_none());
        // max_rows below rows_per_poll wins.
        let mut source = open(json!({"count": 5})).unwrap();
        let Ok(Poll::Batch(b)) = source.poll(2, Duration::ZERO) else { panic!() };
        assert_eq!(b.num_rows(), 2);
        // Zero rows: finished at once.
        assert!(matches!(open(json!({"count": 0})).unwrap().poll(2, Duration::ZERO), Ok(Poll::Finished)));
    }

    #[test]
    fn snapshot_and_restore_continue_exactly_after_the_snapshot() {
        let mut first = open(json!({"count": 20, "rows_per_poll": 7})).unwrap();
        let Ok(Poll::Batch(b)) = first.poll(100, Duration::ZERO) else { panic!() };
        assert_eq!(b.num_rows(), 7);
        let snapshot = first.snapshot(1).unwrap().unwrap();
        assert_eq!(snapshot, 7i64.to_le_bytes());
        // Rows polled after the snapshot are replayed by the restored source.
        let _ = first.poll(100, Duration::ZERO);

        let mut second = open(json!({"count": 20, "rows_per_poll": 7})).unwrap();
        second.restore(&snapshot).unwrap();
        let (ids, _, _) = drain(&mut second, 100);
        assert_eq!(ids, (7..20).collect::<Vec<_>>());
        assert_eq!(second.snapshot(2).unwrap().unwrap(), 20i64.to_le_bytes());

        let error = second.restore(&[1, 2, 3]).unwrap_err();
        assert_eq!(error.message(), "sequence: a snapshot is 8 bytes, this one has 3");
    }

    #[test]
    fn fail_at_and_panic_at() {
        let mut source = open(json!({"count": 10, "rows_per_poll": 4, "fail_at": 6})).unwrap();
        let (ids, _, error) = drain(&mut source, 100);
        assert_eq!(ids, (0..6).collect::<Vec<_>>());
        assert_eq!(error.unwrap().message(), "sequence: failure requested at 6");

        let mut source = open(json!({"count": 10, "panic_at": 2})).unwrap();
        let Ok(Poll::Batch(b)) = source.poll(100, Duration::ZERO) else { panic!() };
        assert_eq!(b.num_rows(), 2);
        let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| source.poll(100, Duration::ZERO))).unwrap_err();
        assert_eq!(sluice_plugin_sdk::panic_message(&*panic), "sequence: panic requested at 2");
    }

    #[test]
    fn unbounded_without_count() {
        let mut source = open(json!({"start": i64::MAX - 3})).unwrap();
        let (ids, _, _) = drain(&mut source, 2);
        assert_eq!(ids, vec![i64::MAX - 3, i64::MAX - 2, i64::MAX - 1]);
        let mut source = open(json!({"delay_ms": 1})).unwrap();
        for _ in 0..3 {
            assert!(matches!(source.poll(1000, Duration::from_secs(5)), Ok(Poll::Batch(b)) if b.num_rows() == 1000));
        }
        assert_eq!(source.position(), 3000);
    }

    #[test]
    fn delay_waits_within_the_poll_timeout() {
        let mut source = open(json!({"delay_ms": 200})).unwrap();
        let started = Instant::now();
        assert!(matches!(source.poll(10, Duration::from_millis(20)), Ok(Poll::NoneYet)));
        assert!(started.elapsed() < Duration::from_millis(190));
        assert!(matches!(source.poll(10, Duration::from_secs(5)), Ok(Poll::Batch(b)) if b.num_rows() == 10));
        assert!(started.elapsed() >= Duration::from_millis(200));
        assert_eq!(source.position(), 10);
    }

    #[test]
    fn invalid_options_name_the_option() {
        let cases = [
            (json!({"strat": 1}), "unknown option 'strat'"),
            (json!({"count": -1}), "sequence: option 'count' must not be negative, got -1"),
            (json!({"rows_per_poll": 0}), "sequence: option 'rows_per_poll' must be positive, got 0"),
            (json!({"start": "a"}), "option 'start' must be of type integer"),
            (json!({"start": i64::MAX, "count": 2}), "sequence: options 'start' + 'count' overflow a 64-bit id"),
        ];
        for (options, expected) in cases {
            let error = open(options.clone()).err().unwrap();
            assert_eq!(error.kind(), sluice_plugin_sdk::ErrorKind::InvalidOptions, "{options}");
            assert!(error.message().starts_with(expected), "{options}: {}", error.message());
        }
    }
}
