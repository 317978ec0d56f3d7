//! Deterministic Nexmark event generator producing Arrow record batches.
//!
//! The event model follows the standard Nexmark generator (Apache Beam's and nexmark-flink's
//! `NexmarkGenerator`): the global event sequence is cut into epochs of 50 events, of which the
//! first is a person, the next 3 are auctions and the remaining 46 are bids. Person and auction
//! ids are derived from the event number alone, and bids/auctions pick the people and auctions
//! they refer to among recent ("in flight" / "active") ids, with a bias towards a few hot ones.
//!
//! Differences from the Java generator, all deliberate:
//! * Randomness comes from a SplitMix64 stream seeded by `(seed, event number)`, so every event
//!   is a pure function of those two values. Generators for different entities (or resuming at
//!   different positions) therefore agree on every id, which the Java generator only achieves by
//!   replaying the whole sequence with one shared `Random`.
//! * Bid `bidder` ids are offset by `FIRST_PERSON_ID` once; nexmark-flink adds it twice (a bug
//!   that makes no bidder match a person).
//! * Channel urls (and the four hot channel urls) are a fixed function of the channel number
//!   instead of being drawn from an unseeded `Random` at class-load time.
//! * Timestamps use exact integer arithmetic: `base_time_ms + n * 1000 / events_per_second`.
//! * Out-of-order groups, rate shapes and wall-clock pacing are not modelled: event time is
//!   strictly a function of the event number and the generator runs as fast as it can.

use std::sync::{Arc, OnceLock};

use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringBuilder, TimestampMillisecondArray};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};

// Event mix: out of every TOTAL_PROPORTION events, the first PERSON_PROPORTION are people, the
// next AUCTION_PROPORTION are auctions and the rest bids.
const PERSON_PROPORTION: u64 = 1;
const AUCTION_PROPORTION: u64 = 3;
const BID_PROPORTION: u64 = 46;
const TOTAL_PROPORTION: u64 = PERSON_PROPORTION + AUCTION_PROPORTION + BID_PROPORTION;

/// Ids start at these values so queries find matches even on small data sets.
pub(crate) const FIRST_PERSON_ID: i64 = 1000;
pub(crate) const FIRST_AUCTION_ID: i64 = 1000;
pub(crate) const FIRST_CATEGORY_ID: i64 = 10;
const NUM_CATEGORIES: u64 = 5;

/// How many not-yet-generated person ids an auction's seller or a bid's bidder may refer to.
pub(crate) const PERSON_ID_LEAD: u64 = 10;
/// How many not-yet-generated auction ids a bid may refer to.
pub(crate) const AUCTION_ID_LEAD: u64 = 10;

// 1 - 1/ratio of bids (auctions) go to a hot auction / come from a hot bidder (seller).
const HOT_AUCTION_RATIO: u64 = 2;
const HOT_BIDDERS_RATIO: u64 = 4;
const HOT_SELLERS_RATIO: u64 = 4;
// The hot auction/bidder/seller is the first of each group of this many ids.
const HOT_GROUP_SIZE: u64 = 100;

const NUM_IN_FLIGHT_AUCTIONS: u64 = 100;
const NUM_ACTIVE_PEOPLE: u64 = 1000;

// Average serialized sizes that the `extra` column pads each row up to.
const AVG_PERSON_BYTE_SIZE: usize = 200;
const AVG_AUCTION_BYTE_SIZE: usize = 500;
const AVG_BID_BYTE_SIZE: usize = 100;

const MIN_STRING_LENGTH: u64 = 3;

// Half of the bids come through one of the hot channels, the rest through "channel-N".
const HOT_CHANNELS_RATIO: u64 = 2;
const HOT_CHANNELS: [&str; 4] = ["Google", "Facebook", "Baidu", "Apple"];
const CHANNELS_NUMBER: u64 = 10_000;

const US_STATES: [&str; 6] = ["AZ", "CA", "ID", "OR", "WA", "WY"];
const US_CITIES: [&str; 10] = ["Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond", "Seattle", "Kent", "Cheyenne"];
const FIRST_NAMES: [&str; 11] = ["Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"];
const LAST_NAMES: [&str; 9] = ["Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"];

/// `extra` values are slices of one shared pool of random letters, as in nexmark-flink; this
/// keeps padding cheap (one memcpy per row).
const EXTRA_POOL_LEN: usize = 1 << 20;

// Fixed keys for the data that does not depend on the configured seed.
const EXTRA_POOL_KEY: u64 = 0x6e65_786d_6172_6b01;
const CHANNEL_URL_KEY: u64 = 0x6e65_786d_6172_6b02;
const HOT_URL_KEY: u64 = 0x6e65_786d_6172_6b03;

/// Upper bound on rows preallocated per batch, so a huge `max_rows` cannot exhaust memory up
/// front (builders still grow past it if needed).
const MAX_PREALLOCATED_ROWS: usize = 1 << 20;

/// The kind of Nexmark event, i.e. which of the three tables a generator emits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entity {
    Person,
    Auction,
    Bid,
}

impl Entity {
    /// Parses `"person"`, `"auction"` or `"bid"` (ASCII case-insensitive).
    pub fn parse(s: &str) -> Result<Entity, String> {
        let s = s.trim();
        [Entity::Person, Entity::Auction, Entity::Bid]
            .into_iter()
            .find(|e| e.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| format!("unknown Nexmark entity '{s}': expected one of 'person', 'auction', 'bid'"))
    }

    /// The lowercase name accepted by [`Entity::parse`].
    pub fn as_str(self) -> &'static str {
        match self {
            Entity::Person => "person",
            Entity::Auction => "auction",
            Entity::Bid => "bid",
        }
    }

    /// Offset of this entity's first event within each epoch, and how many events it has there.
    fn slot(self) -> (u64, u64) {
        match self {
            Entity::Person => (0, PERSON_PROPORTION),
            Entity::Auction => (PERSON_PROPORTION, AUCTION_PROPORTION),
            Entity::Bid => (PERSON_PROPORTION + AUCTION_PROPORTION, BID_PROPORTION),
        }
    }

    /// The first event number `>= n` that is of this kind.
    fn next_event_from(self, n: u64) -> u64 {
        let (start, len) = self.slot();
        let offset = n % TOTAL_PROPORTION;
        if offset < start {
            n + (start - offset)
        } else if offset < start + len {
            n
        } else {
            n + (TOTAL_PROPORTION - offset) + start
        }
    }

    /// Number of events of this kind among event numbers `0..x`.
    fn count_before(self, x: u64) -> u64 {
        let (start, len) = self.slot();
        (x / TOTAL_PROPORTION) * len + (x % TOTAL_PROPORTION).saturating_sub(start).min(len)
    }

    /// Number of events of this kind among event numbers `lo..hi`.
    fn count_between(self, lo: u64, hi: u64) -> u64 {
        if lo >= hi {
            0
        } else {
            self.count_before(hi) - self.count_before(lo)
        }
    }
}

/// What to generate. Two generators with equal `seed`, `base_time_ms` and `events_per_second`
/// describe the same event sequence, whatever their `entity`, `first_event` and `event_count`.
#[derive(Clone, Debug)]
pub struct GeneratorConfig {
    pub seed: u64,
    pub entity: Entity,
    /// Number of events in the whole sequence (all three kinds), None = unbounded.
    pub event_count: Option<u64>,
    /// Event number to start at (resume position); default 0.
    pub first_event: u64,
    /// Event time of event 0, epoch milliseconds. Default 1_700_000_000_000 (fixed, so output is deterministic).
    pub base_time_ms: i64,
    /// Events per second of event time (sets the spacing of timestamps). Default 10_000.
    /// Zero is treated as one.
    pub events_per_second: u64,
}

impl Default for GeneratorConfig {
    fn default() -> Self {
        GeneratorConfig {
            seed: 0,
            entity: Entity::Bid,
            event_count: None,
            first_event: 0,
            base_time_ms: 1_700_000_000_000,
            events_per_second: 10_000,
        }
    }
}

/// Generates the rows of one Nexmark table as Arrow record batches.
pub struct NexmarkGenerator {
    config: GeneratorConfig,
    /// Mixed seed, the per-event random streams are derived from it.
    seed_key: u64,
    /// One past the last event number of the sequence.
    end: u64,
    /// Next event number to examine.
    position: u64,
    schema: SchemaRef,
    /// Scratch buffers reused across rows to avoid per-row allocation.
    scratch: String,
    word: String,
}

impl NexmarkGenerator {
    pub fn new(config: GeneratorConfig) -> NexmarkGenerator {
        let end = config.event_count.unwrap_or(u64::MAX);
        NexmarkGenerator {
            seed_key: mix64(config.seed.wrapping_add(GOLDEN_GAMMA)),
            end,
            position: config.first_event,
            schema: Self::schema(config.entity),
            config,
            scratch: String::with_capacity(128),
            word: String::with_capacity(128),
        }
    }

    /// The Arrow schema of `entity`'s table (camelCase column names, as in Nexmark SQL).
    pub fn schema(entity: Entity) -> SchemaRef {
        static PERSON: OnceLock<SchemaRef> = OnceLock::new();
        static AUCTION: OnceLock<SchemaRef> = OnceLock::new();
        static BID: OnceLock<SchemaRef> = OnceLock::new();
        let ts = || DataType::Timestamp(TimeUnit::Millisecond, None);
        let field = |name: &str, data_type: DataType| Field::new(name, data_type, false);
        let cell = match entity {
            Entity::Person => &PERSON,
            Entity::Auction => &AUCTION,
            Entity::Bid => &BID,
        };
        cell.get_or_init(|| {
            let fields = match entity {
                Entity::Person => vec![
                    field("id", DataType::Int64),
                    field("name", DataType::Utf8),
                    field("emailAddress", DataType::Utf8),
                    field("creditCard", DataType::Utf8),
                    field("city", DataType::Utf8),
                    field("state", DataType::Utf8),
                    field("dateTime", ts()),
                    field("extra", DataType::Utf8),
                ],
                Entity::Auction => vec![
                    field("id", DataType::Int64),
                    field("itemName", DataType::Utf8),
                    field("description", DataType::Utf8),
                    field("initialBid", DataType::Int64),
                    field("reserve", DataType::Int64),
                    field("dateTime", ts()),
                    field("expires", ts()),
                    field("seller", DataType::Int64),
                    field("category", DataType::Int64),
                    field("extra", DataType::Utf8),
                ],
                Entity::Bid => vec![
                    field("auction", DataType::Int64),
                    field("bidder", DataType::Int64),
                    field("price", DataType::Int64),
                    field("channel", DataType::Utf8),
                    field("url", DataType::Utf8),
                    field("dateTime", ts()),
                    field("extra", DataType::Utf8),
                ],
            };
            Arc::new(Schema::new(fields))
        })
        .clone()
    }

    pub fn output_schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    pub fn config(&self) -> &GeneratorConfig {
        &self.config
    }

    /// Event number of the next event to be examined (the resume position).
    pub fn position(&self) -> u64 {
        self.position
    }

    /// Next batch of at most `max_rows` rows (at least one; 0 is treated as 1) of this
    /// generator's entity, walking the event sequence and skipping events of other kinds.
    /// Returns None, never an empty batch, once the sequence holds no more such events.
    pub fn next_batch(&mut self, max_rows: usize) -> Option<RecordBatch> {
        let entity = self.config.entity;
        let available = entity.count_between(self.position, self.end);
        let rows = available.min(max_rows.max(1) as u64) as usize;
        if rows == 0 {
            self.position = self.position.max(self.end);
            return None;
        }
        let columns = match entity {
            Entity::Person => self.persons(rows),
            Entity::Auction => self.auctions(rows),
            Entity::Bid => self.bids(rows),
        };
        let batch = RecordBatch::try_new(self.schema.clone(), columns).expect("generated columns match the entity schema");
        Some(batch)
    }

    /// Event time of event number `n`: `base_time_ms + n * 1000 / events_per_second`.
    fn timestamp_ms(&self, n: u64) -> i64 {
        let eps = self.config.events_per_second.max(1);
        let offset = match n.checked_mul(1000) {
            Some(ms_times_eps) => (ms_times_eps / eps) as i128,
            None => (n as u128 * 1000 / eps as u128) as i128,
        };
        let millis = self.config.base_time_ms as i128 + offset;
        millis.clamp(i64::MIN as i128, i64::MAX as i128) as i64
    }

    fn rng_for(&self, n: u64) -> Rng {
        Rng::for_index(self.seed_key, n)
    }

    fn persons(&mut self, rows: usize) -> Vec<ArrayRef> {
        let cap = rows.min(MAX_PREALLOCATED_ROWS);
        let mut ids = Vec::with_capacity(cap);
        let mut names = StringBuilder::with_capacity(cap, cap * 12);
        let mut emails = StringBuilder::with_capacity(cap, cap * 12);
        let mut cards = StringBuilder::with_capacity(cap, cap * 19);
        let mut cities = StringBuilder::with_capacity(cap, cap * 8);
        let mut states = StringBuilder::with_capacity(cap, cap * 2);
        let mut times = Vec::with_capacity(cap);
        let mut extras = StringBuilder::with_capacity(cap, cap * AVG_PERSON_BYTE_SIZE);
        let pool = extra_pool();
        let mut n = self.position;
        for _ in 0..rows {
            n = Entity::Person.next_event_from(n);
            let mut rng = self.rng_for(n);
            ids.push(last_base0_person_id(n) as i64 + FIRST_PERSON_ID);

            let s = &mut self.scratch;
            s.clear();
            s.push_str(FIRST_NAMES[rng.below(FIRST_NAMES.len() as u64) as usize]);
            s.push(' ');
            s.push_str(LAST_NAMES[rng.below(LAST_NAMES.len() as u64) as usize]);
            names.append_value(&*s);
            let mut size = s.len();

            s.clear();
            push_trimmed_string(&mut rng, 7, &mut self.word, s);
            s.push('@');
            push_trimmed_string(&mut rng, 5, &mut self.word, s);
            s.push_str(".com");
            emails.append_value(&*s);
            size += s.len();

            s.clear();
            for group in 0..4 {
                if group > 0 {
                    s.push(' ');
                }
                push_four_digits(rng.below(10_000) as u16, s);
            }
            cards.append_value(&*s);
            size += s.len();

            let city = US_CITIES[rng.below(US_CITIES.len() as u64) as usize];
            let state = US_STATES[rng.below(US_STATES.len() as u64) as usize];
            cities.append_value(city);
            states.append_value(state);
            size += 8 + city.len() + state.len();

            times.push(self.timestamp_ms(n));
            extras.append_value(next_extra(&mut rng, pool, size, AVG_PERSON_BYTE_SIZE));
            n += 1;
        }
        self.position = n;
        vec![
            Arc::new(Int64Array::from(ids)),
            Arc::new(names.finish()),
            Arc::new(emails.finish()),
            Arc::new(cards.finish()),
            Arc::new(cities.finish()),
            Arc::new(states.finish()),
            Arc::new(TimestampMillisecondArray::from(times)),
            Arc::new(extras.finish()),
        ]
    }

    fn auctions(&mut self, rows: usize) -> Vec<ArrayRef> {
        let cap = rows.min(MAX_PREALLOCATED_ROWS);
        let mut ids = Vec::with_capacity(cap);
        let mut item_names = StringBuilder::with_capacity(cap, cap * 11);
        let mut descriptions = StringBuilder::with_capacity(cap, cap * 51);
        let mut initial_bids = Vec::with_capacity(cap);
        let mut reserves = Vec::with_capacity(cap);
        let mut times = Vec::with_capacity(cap);
        let mut expires = Vec::with_capacity(cap);
        let mut sellers = Vec::with_capacity(cap);
        let mut categories = Vec::with_capacity(cap);
        let mut extras = StringBuilder::with_capacity(cap, cap * AVG_AUCTION_BYTE_SIZE);
        let pool = extra_pool();
        // Events until NUM_IN_FLIGHT_AUCTIONS more auctions have been generated: auction lengths
        // average the event time that takes.
        let in_flight_events = NUM_IN_FLIGHT_AUCTIONS * TOTAL_PROPORTION / AUCTION_PROPORTION;
        let mut n = self.position;
        for _ in 0..rows {
            n = Entity::Auction.next_event_from(n);
            let mut rng = self.rng_for(n);
            let timestamp = self.timestamp_ms(n);
            ids.push(last_base0_auction_id(n) as i64 + FIRST_AUCTION_ID);

            let seller = if rng.below(HOT_SELLERS_RATIO) > 0 {
                (last_base0_person_id(n) / HOT_GROUP_SIZE) * HOT_GROUP_SIZE
            } else {
                next_base0_person_id(n, &mut rng)
            };
            sellers.push(seller as i64 + FIRST_PERSON_ID);
            categories.push(FIRST_CATEGORY_ID + rng.below(NUM_CATEGORIES) as i64);

            let initial_bid = next_price(&mut rng);
            initial_bids.push(initial_bid);

            let horizon_ms = self.timestamp_ms(n.saturating_add(in_flight_events)).saturating_sub(timestamp);
            let length_ms = 1 + rng.below(horizon_ms.saturating_mul(2).max(1) as u64) as i64;
            times.push(timestamp);
            expires.push(timestamp.saturating_add(length_ms));

            let s = &mut self.scratch;
            s.clear();
            push_trimmed_string(&mut rng, 20, &mut self.word, s);
            item_names.append_value(&*s);
            let mut size = s.len();
            s.clear();
            push_trimmed_string(&mut rng, 100, &mut self.word, s);
            descriptions.append_value(&*s);
            size += s.len();

            reserves.push(initial_bid + next_price(&mut rng));

            size += 8 + 8 + 8 + 8 + 8 + 8;
            extras.append_value(next_extra(&mut rng, pool, size, AVG_AUCTION_BYTE_SIZE));
            n += 1;
        }
        self.position = n;
        vec![
            Arc::new(Int64Array::from(ids)),
            Arc::new(item_names.finish()),
            Arc::new(descriptions.finish()),
            Arc::new(Int64Array::from(initial_bids)),
            Arc::new(Int64Array::from(reserves)),
            Arc::new(TimestampMillisecondArray::from(times)),
            Arc::new(TimestampMillisecondArray::from(expires)),
            Arc::new(Int64Array::from(sellers)),
            Arc::new(Int64Array::from(categories)),
            Arc::new(extras.finish()),
        ]
    }

    fn bids(&mut self, rows: usize) -> Vec<ArrayRef> {
        let cap = rows.min(MAX_PREALLOCATED_ROWS);
        let mut auctions = Vec::with_capacity(cap);
        let mut bidders = Vec::with_capacity(cap);
        let mut prices = Vec::with_capacity(cap);
        let mut channels = StringBuilder::with_capacity(cap, cap * 10);
        let mut urls = StringBuilder::with_capacity(cap, cap * 64);
        let mut times = Vec::with_capacity(cap);
        let mut extras = StringBuilder::with_capacity(cap, cap * AVG_BID_BYTE_SIZE);
        let pool = extra_pool();
        let channel_table = channel_table();
        let mut n = self.position;
        for _ in 0..rows {
            n = Entity::Bid.next_event_from(n);
            let mut rng = self.rng_for(n);

            let auction = if rng.below(HOT_AUCTION_RATIO) > 0 {
                (last_base0_auction_id(n) / HOT_GROUP_SIZE) * HOT_GROUP_SIZE
            } else {
                next_base0_auction_id(n, &mut rng)
            };
            auctions.push(auction as i64 + FIRST_AUCTION_ID);

            // The hot bidder is the second person of its group, so it differs from the hot seller.
            let bidder = if rng.below(HOT_BIDDERS_RATIO) > 0 {
                (last_base0_person_id(n) / HOT_GROUP_SIZE) * HOT_GROUP_SIZE + 1
            } else {
                next_base0_person_id(n, &mut rng)
            };
            bidders.push(bidder as i64 + FIRST_PERSON_ID);

            prices.push(next_price(&mut rng));

            if rng.below(HOT_CHANNELS_RATIO) > 0 {
                let i = rng.below(HOT_CHANNELS.len() as u64) as usize;
                channels.append_value(HOT_CHANNELS[i]);
                urls.append_value(&channel_table.hot_urls[i]);
            } else {
                let (channel, url) = &channel_table.channels[rng.below(CHANNELS_NUMBER) as usize];
                channels.append_value(channel);
                urls.append_value(url);
            }

            times.push(self.timestamp_ms(n));
            extras.append_value(next_extra(&mut rng, pool, 8 + 8 + 8 + 8, AVG_BID_BYTE_SIZE));
            n += 1;
        }
        self.position = n;
        vec![
            Arc::new(Int64Array::from(auctions)),
            Arc::new(Int64Array::from(bidders)),
            Arc::new(Int64Array::from(prices)),
            Arc::new(channels.finish()),
            Arc::new(urls.finish()),
            Arc::new(TimestampMillisecondArray::from(times)),
            Arc::new(extras.finish()),
        ]
    }
}

/// The id (base 0) of the last person generated at or before event `n`; `n`'s own id if `n` is
/// a person.
fn last_base0_person_id(n: u64) -> u64 {
    let epoch = n / TOTAL_PROPORTION;
    let offset = n % TOTAL_PROPORTION;
    // Auctions and bids go back to the last person of their epoch.
    let offset = if offset < PERSON_PROPORTION { offset } else { PERSON_PROPORTION - 1 };
    epoch * PERSON_PROPORTION + offset
}

/// The id (base 0) of the last auction generated at or before event `n`, which must be an
/// auction or a bid (every epoch has generated an auction by then); `n`'s own id if `n` is an
/// auction.
fn last_base0_auction_id(n: u64) -> u64 {
    let epoch = n / TOTAL_PROPORTION;
    let offset = n % TOTAL_PROPORTION;
    debug_assert!(offset >= PERSON_PROPORTION, "event {n} is a person");
    let offset = (offset - PERSON_PROPORTION).min(AUCTION_PROPORTION - 1);
    epoch * AUCTION_PROPORTION + offset
}

/// A random person (base 0) among the `NUM_ACTIVE_PEOPLE` most recent ones, or up to
/// `PERSON_ID_LEAD` ids ahead of the last generated person.
fn next_base0_person_id(n: u64, rng: &mut Rng) -> u64 {
    let num_people = last_base0_person_id(n) + 1;
    let active = num_people.min(NUM_ACTIVE_PEOPLE);
    num_people - active + rng.below(active + PERSON_ID_LEAD)
}

/// A random auction (base 0) among the `NUM_IN_FLIGHT_AUCTIONS` most recent ones, or up to
/// `AUCTION_ID_LEAD` ids ahead of the last generated auction.
fn next_base0_auction_id(n: u64, rng: &mut Rng) -> u64 {
    let max = last_base0_auction_id(n);
    let min = max.saturating_sub(NUM_IN_FLIGHT_AUCTIONS);
    min + rng.below(max - min + 1 + AUCTION_ID_LEAD)
}

/// A price in cents, log-uniform between 1.00 and 1 000 000.00.
fn next_price(rng: &mut Rng) -> i64 {
    // Java's Math.round rounds half up, i.e. floor(x + 0.5).
    (10f64.powf(rng.next_f64() * 6.0) * 100.0 + 0.5).floor() as i64
}

/// Appends a random string of 3 to `max_len - 1` characters, lowercase letters with about one in
/// 13 replaced by `special`.
fn push_random_string(rng: &mut Rng, max_len: u64, special: char, out: &mut String) {
    let len = MIN_STRING_LENGTH + rng.below(max_len - MIN_STRING_LENGTH);
    for _ in 0..len {
        // One draw per character: the high half decides letter vs special, the low half picks
        // the letter.
        let r = rng.next_u64();
        if below_u32((r >> 32) as u32, 13) == 0 {
            out.push(special);
        } else {
            out.push(char::from(b'a' + below_u32(r as u32, 26) as u8));
        }
    }
}

/// Appends a random space-separated string like [`push_random_string`], trimmed of leading and
/// trailing spaces (as Java's `String.trim()`), using `word` as scratch.
fn push_trimmed_string(rng: &mut Rng, max_len: u64, word: &mut String, out: &mut String) {
    word.clear();
    push_random_string(rng, max_len, ' ', word);
    out.push_str(word.trim_matches(' '));
}

/// Appends `value` (< 10 000) as four zero-padded digits.
fn push_four_digits(value: u16, out: &mut String) {
    for divisor in [1000, 100, 10, 1] {
        out.push(char::from(b'0' + (value / divisor % 10) as u8));
    }
}

/// Padding such that `current_size + extra.len()` averages `average_size`: a length uniform in
/// ±20% around the missing size, as a slice of the shared pool of random letters.
fn next_extra<'a>(rng: &mut Rng, pool: &'a str, current_size: usize, average_size: usize) -> &'a str {
    if current_size > average_size {
        return "";
    }
    let desired = (average_size - current_size) as u64;
    // round(desired * 0.2), rounding half up.
    let delta = (2 * desired + 5) / 10;
    let len = desired - delta + if delta == 0 { 0 } else { rng.below(2 * delta) };
    let start = rng.below(pool.len() as u64 - len) as usize;
    &pool[start..start + len as usize]
}

/// 1 MiB of random lowercase letters, the same for every generator.
fn extra_pool() -> &'static str {
    static POOL: OnceLock<String> = OnceLock::new();
    POOL.get_or_init(|| {
        let mut rng = Rng::for_index(EXTRA_POOL_KEY, 0);
        let mut pool = String::with_capacity(EXTRA_POOL_LEN);
        while pool.len() < EXTRA_POOL_LEN {
            let r = rng.next_u64();
            pool.push(char::from(b'a' + below_u32((r >> 32) as u32, 26) as u8));
            pool.push(char::from(b'a' + below_u32(r as u32, 26) as u8));
        }
        pool
    })
}

/// The fixed url of each hot channel and the name and url of each "channel-N".
struct ChannelTable {
    hot_urls: [String; HOT_CHANNELS.len()],
    channels: Vec<(String, String)>,
}

fn channel_table() -> &'static ChannelTable {
    static TABLE: OnceLock<ChannelTable> = OnceLock::new();
    TABLE.get_or_init(|| {
        let hot_urls = std::array::from_fn(|i| {
            let mut url = String::with_capacity(64);
            push_base_url(&mut Rng::for_index(HOT_URL_KEY, i as u64), &mut url);
            url
        });
        let channels = (0..CHANNELS_NUMBER)
            .map(|i| {
                let mut rng = Rng::for_index(CHANNEL_URL_KEY, i);
                let mut url = String::with_capacity(80);
                push_base_url(&mut rng, &mut url);
                // Nine in ten channel urls carry a channel id, the bit-reversed channel number as
                // a (wrapping) absolute 32-bit Java int, like nexmark-flink.
                if rng.below(10) > 0 {
                    let channel_id = (i as i32).reverse_bits().wrapping_abs();
                    url.push_str("&channel_id=");
                    url.push_str(&channel_id.to_string());
                }
                (format!("channel-{i}"), url)
            })
            .collect();
        ChannelTable { hot_urls, channels }
    })
}

/// Appends a url like `https://www.nexmark.com/abc/d_ef/ghi/item.htm?query=1`.
fn push_base_url(rng: &mut Rng, out: &mut String) {
    out.push_str("https://www.nexmark.com/");
    for _ in 0..3 {
        push_random_string(rng, 5, '_', out);
        out.push('/');
    }
    out.push_str("item.htm?query=1");
}

const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// SplitMix64's output function, a bijective 64-bit mixer.
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Unbiased-enough uniform integer in `0..n` from 32 random bits (Lemire's multiply-shift; the
/// bias is below n / 2^32, irrelevant for the small ranges used here).
fn below_u32(r: u32, n: u32) -> u32 {
    ((r as u64 * n as u64) >> 32) as u32
}

/// SplitMix64 stream. Each event gets its own stream, seeded from `(key, index)`, so events can
/// be generated independently and in any order.
struct Rng {
    state: u64,
}

impl Rng {
    fn for_index(key: u64, index: u64) -> Rng {
        // mix64 is a bijection, so distinct indexes give distinct starting states.
        Rng { state: key ^ mix64(index.wrapping_add(GOLDEN_GAMMA)) }
    }

    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN_GAMMA);
        mix64(self.state)
    }

    /// Uniform integer in `0..n` (`n > 0`), multiply-shift on 64 bits (bias below n / 2^64).
    fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Uniform double in `[0, 1)`.
    fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Array, AsArray};
    use arrow::datatypes::{Int64Type, TimestampMillisecondType};
    use std::collections::{BTreeMap, HashMap, HashSet};

    fn config(entity: Entity, seed: u64, event_count: u64) -> GeneratorConfig {
        GeneratorConfig { seed, entity, event_count: Some(event_count), ..GeneratorConfig::default() }
    }

    fn collect(config: GeneratorConfig, max_rows: usize) -> Vec<RecordBatch> {
        let mut generator = NexmarkGenerator::new(config);
        std::iter::from_fn(|| generator.next_batch(max_rows)).collect()
    }

    fn i64s(batch: &RecordBatch, name: &str) -> Vec<i64> {
        let column = batch.column_by_name(name).unwrap();
        match column.data_type() {
            DataType::Int64 => column.as_primitive::<Int64Type>().values().to_vec(),
            _ => column.as_primitive::<TimestampMillisecondType>().values().to_vec(),
        }
    }

    fn strings(batch: &RecordBatch, name: &str) -> Vec<String> {
        let column = batch.column_by_name(name).unwrap().as_string::<i32>();
        column.iter().map(|v| v.unwrap().to_string()).collect()
    }

    /// All values of a column over all batches.
    fn all_i64s(batches: &[RecordBatch], name: &str) -> Vec<i64> {
        batches.iter().flat_map(|b| i64s(b, name)).collect()
    }

    /// Event numbers of `entity`'s events in `0..event_count`, the slow obvious way.
    fn event_numbers(entity: Entity, event_count: u64) -> Vec<u64> {
        (0..event_count)
            .filter(|&n| {
                let offset = n % 50;
                match entity {
                    Entity::Person => offset == 0,
                    Entity::Auction => (1..4).contains(&offset),
                    Entity::Bid => offset >= 4,
                }
            })
            .collect()
    }

    const ENTITIES: [Entity; 3] = [Entity::Person, Entity::Auction, Entity::Bid];

    #[test]
    fn schema_columns_and_types() {
        let ts = DataType::Timestamp(TimeUnit::Millisecond, None);
        let expected: [(Entity, Vec<(&str, DataType)>); 3] = [
            (
                Entity::Person,
                vec![
                    ("id", DataType::Int64),
                    ("name", DataType::Utf8),
                    ("emailAddress", DataType::Utf8),
                    ("creditCard", DataType::Utf8),
                    ("city", DataType::Utf8),
                    ("state", DataType::Utf8),
                    ("dateTime", ts.clone()),
                    ("extra", DataType::Utf8),
                ],
            ),
            (
                Entity::Auction,
                vec![
                    ("id", DataType::Int64),
                    ("itemName", DataType::Utf8),
                    ("description", DataType::Utf8),
                    ("initialBid", DataType::Int64),
                    ("reserve", DataType::Int64),
                    ("dateTime", ts.clone()),
                    ("expires", ts.clone()),
                    ("seller", DataType::Int64),
                    ("category", DataType::Int64),
                    ("extra", DataType::Utf8),
                ],
            ),
            (
                Entity::Bid,
                vec![
                    ("auction", DataType::Int64),
                    ("bidder", DataType::Int64),
                    ("price", DataType::Int64),
                    ("channel", DataType::Utf8),
                    ("url", DataType::Utf8),
                    ("dateTime", ts.clone()),
                    ("extra", DataType::Utf8),
                ],
            ),
        ];
        for (entity, columns) in expected {
            let schema = NexmarkGenerator::schema(entity);
            let actual: Vec<(&str, DataType)> = schema.fields().iter().map(|f| (f.name().as_str(), f.data_type().clone())).collect();
            assert_eq!(actual, columns, "{entity:?}");
            assert!(schema.fields().iter().all(|f| !f.is_nullable()));

            let mut generator = NexmarkGenerator::new(config(entity, 1, 500));
            assert_eq!(generator.output_schema(), schema);
            let batch = generator.next_batch(100).unwrap();
            assert_eq!(batch.schema(), schema);
            assert!(batch.columns().iter().all(|c| c.null_count() == 0));
        }
    }

    #[test]
    fn entity_parse() {
        assert_eq!(Entity::parse("person"), Ok(Entity::Person));
        assert_eq!(Entity::parse("auction"), Ok(Entity::Auction));
        assert_eq!(Entity::parse("Bid"), Ok(Entity::Bid));
        let err = Entity::parse("bids").unwrap_err();
        for allowed in ["person", "auction", "bid"] {
            assert!(err.contains(allowed), "{err}");
        }
    }

    #[test]
    fn deterministic_per_seed() {
        for entity in ENTITIES {
            let a = collect(config(entity, 7, 20_000), 1000);
            let b = collect(config(entity, 7, 20_000), 1000);
            assert_eq!(a, b, "{entity:?}");
            let c = collect(config(entity, 8, 20_000), 1000);
            assert_ne!(a, c, "{entity:?}");
        }
    }

    #[test]
    fn proportions_and_ids() {
        let persons = collect(config(Entity::Person, 3, 50_000), 4096);
        let auctions = collect(config(Entity::Auction, 3, 50_000), 4096);
        let bids = collect(config(Entity::Bid, 3, 50_000), 4096);
        let rows = |b: &[RecordBatch]| b.iter().map(|b| b.num_rows()).sum::<usize>();
        assert_eq!(rows(&persons), 1_000);
        assert_eq!(rows(&auctions), 3_000);
        assert_eq!(rows(&bids), 46_000);
        // Person and auction ids are consecutive from the first id.
        assert_eq!(all_i64s(&persons, "id"), (1000..2000).collect::<Vec<_>>());
        assert_eq!(all_i64s(&auctions, "id"), (1000..4000).collect::<Vec<_>>());
    }

    /// Maps each event number to the largest id of `entity` generated at or before it.
    fn ids_by_event(entity: Entity, event_count: u64, seed: u64) -> BTreeMap<u64, i64> {
        let batches = collect(config(entity, seed, event_count), 4096);
        event_numbers(entity, event_count).into_iter().zip(all_i64s(&batches, "id")).collect()
    }

    fn last_id_at(ids: &BTreeMap<u64, i64>, n: u64) -> i64 {
        ids.range(..=n).next_back().map_or(i64::MIN, |(_, id)| *id)
    }

    /// The standard generator lets sellers, bidders and bid auctions refer up to PERSON_ID_LEAD
    /// (AUCTION_ID_LEAD) ids past the last one generated; those ids are generated shortly after.
    #[test]
    fn references_consistent_across_entities() {
        let seed = 11;
        let event_count = 100_000;
        // Enough extra events for the leads to be generated too.
        let horizon = event_count + 50 * PERSON_ID_LEAD.max(AUCTION_ID_LEAD);
        let person_ids = ids_by_event(Entity::Person, horizon, seed);
        let auction_ids = ids_by_event(Entity::Auction, horizon, seed);
        let all_persons: HashSet<i64> = person_ids.values().copied().collect();
        let all_auctions: HashSet<i64> = auction_ids.values().copied().collect();

        let auction_events = event_numbers(Entity::Auction, event_count);
        let auctions = collect(config(Entity::Auction, seed, event_count), 1000);
        let sellers = all_i64s(&auctions, "seller");
        let mut ahead = 0;
        for (&n, &seller) in auction_events.iter().zip(&sellers) {
            let last = last_id_at(&person_ids, n);
            assert!(all_persons.contains(&seller), "seller {seller} at event {n}");
            assert!(seller <= last + PERSON_ID_LEAD as i64, "seller {seller} at {n}");
            ahead += (seller > last) as usize;
        }
        assert!(ahead > 0, "the person id lead is exercised");

        let bid_events = event_numbers(Entity::Bid, event_count);
        let bids = collect(config(Entity::Bid, seed, event_count), 1000);
        let (bid_auctions, bidders) = (all_i64s(&bids, "auction"), all_i64s(&bids, "bidder"));
        assert_eq!(bid_events.len(), bid_auctions.len());
        let (mut auctions_ahead, mut bidders_ahead) = (0, 0);
        for ((&n, &auction), &bidder) in bid_events.iter().zip(&bid_auctions).zip(&bidders) {
            let last_auction = last_id_at(&auction_ids, n);
            assert!(all_auctions.contains(&auction), "auction {auction} at {n}");
            assert!(auction <= last_auction + AUCTION_ID_LEAD as i64);
            auctions_ahead += (auction > last_auction) as usize;

            let last_person = last_id_at(&person_ids, n);
            assert!(all_persons.contains(&bidder), "bidder {bidder} at {n}");
            assert!(bidder <= last_person + PERSON_ID_LEAD as i64);
            bidders_ahead += (bidder > last_person) as usize;
        }
        assert!(auctions_ahead > 0 && bidders_ahead > 0);
        // About half the bids go to the hot auction of their group.
        let hot = bid_events.iter().zip(&bid_auctions).filter(|&(&n, &a)| a == (last_id_at(&auction_ids, n) - 1000) / 100 * 100 + 1000).count();
        let share = hot as f64 / bid_events.len() as f64;
        assert!((0.45..0.6).contains(&share), "hot auction share {share}");
    }

    #[test]
    fn batches_resume_and_position() {
        for entity in ENTITIES {
            let event_count = 30_000;
            let whole = collect(config(entity, 5, event_count), usize::MAX);
            assert_eq!(whole.len(), 1);
            let whole = &whole[0];

            let max_rows = 77;
            let mut generator = NexmarkGenerator::new(config(entity, 5, event_count));
            let mut offset = 0;
            let mut last_position = generator.position();
            let mut batches = 0;
            while let Some(batch) = generator.next_batch(max_rows) {
                assert!(batch.num_rows() > 0 && batch.num_rows() <= max_rows);
                assert!(generator.position() > last_position);
                last_position = generator.position();
                assert_eq!(batch, whole.slice(offset, batch.num_rows()));
                offset += batch.num_rows();
                batches += 1;

                // Resuming from the position continues the same sequence.
                if batches % 50 == 7 {
                    let mut resumed = NexmarkGenerator::new(GeneratorConfig { first_event: generator.position(), ..config(entity, 5, event_count) });
                    let mut peek = NexmarkGenerator::new(GeneratorConfig { first_event: generator.position(), ..config(entity, 5, event_count) });
                    let next = peek.next_batch(max_rows);
                    assert_eq!(resumed.next_batch(max_rows), next);
                    if let Some(next) = next {
                        assert_eq!(next, whole.slice(offset, next.num_rows()));
                    }
                }
            }
            assert_eq!(offset, whole.num_rows());
            assert_eq!(generator.position(), event_count);
            assert!(generator.next_batch(max_rows).is_none());
        }
    }

    #[test]
    fn resumed_run_equals_uninterrupted_run() {
        let whole = collect(config(Entity::Bid, 9, 10_000), usize::MAX).remove(0);
        let mut first = NexmarkGenerator::new(config(Entity::Bid, 9, 10_000));
        let head = first.next_batch(1234).unwrap();
        let tail = collect(GeneratorConfig { first_event: first.position(), ..config(Entity::Bid, 9, 10_000) }, usize::MAX).remove(0);
        assert_eq!(head, whole.slice(0, 1234));
        assert_eq!(tail, whole.slice(1234, whole.num_rows() - 1234));
    }

    #[test]
    fn event_count_bounds_sequence() {
        for (entity, event_count, expected_rows) in [
            (Entity::Person, 1, 1),
            (Entity::Auction, 1, 0),
            (Entity::Auction, 3, 2),
            (Entity::Bid, 4, 0),
            (Entity::Bid, 5, 1),
            (Entity::Person, 1234, 25),
            (Entity::Auction, 1234, 75),
            (Entity::Bid, 1234, 1234 - 25 - 75),
        ] {
            let mut generator = NexmarkGenerator::new(config(entity, 2, event_count));
            let mut rows = 0;
            while let Some(batch) = generator.next_batch(10) {
                rows += batch.num_rows();
            }
            assert_eq!(rows, expected_rows, "{entity:?} over {event_count} events");
            assert_eq!(generator.position(), event_count);
            assert!(generator.next_batch(10).is_none());
        }
        // Starting past the end yields nothing.
        let mut generator = NexmarkGenerator::new(GeneratorConfig { first_event: 100, ..config(Entity::Bid, 2, 50) });
        assert!(generator.next_batch(10).is_none());
        // Unbounded keeps going.
        let mut generator = NexmarkGenerator::new(GeneratorConfig { entity: Entity::Person, ..GeneratorConfig::default() });
        for _ in 0..3 {
            assert_eq!(generator.next_batch(100).unwrap().num_rows(), 100);
        }
        assert_eq!(generator.position(), 300 * 50 - 49);
    }

    #[test]
    fn timestamps_follow_event_numbers() {
        for events_per_second in [10_000, 7, 1000] {
            for entity in ENTITIES {
                let event_count = 20_000;
                let cfg = GeneratorConfig { events_per_second, ..config(entity, 4, event_count) };
                let base = cfg.base_time_ms;
                let batches = collect(cfg, 999);
                let times = all_i64s(&batches, "dateTime");
                let expected: Vec<i64> =
                    event_numbers(entity, event_count).into_iter().map(|n| base + (n * 1000 / events_per_second) as i64).collect();
                assert_eq!(times, expected, "{entity:?} at {events_per_second}/s");
                assert!(times.windows(2).all(|w| w[0] <= w[1]));
            }
        }
    }

    #[test]
    fn field_formats() {
        let persons = collect(config(Entity::Person, 6, 200_000), 1000);
        for batch in &persons {
            for card in strings(batch, "creditCard") {
                let groups: Vec<&str> = card.split(' ').collect();
                assert_eq!(groups.len(), 4, "{card}");
                assert!(groups.iter().all(|g| g.len() == 4 && g.bytes().all(|b| b.is_ascii_digit())));
            }
            for email in strings(batch, "emailAddress") {
                assert!(email.ends_with(".com") && email.contains('@'), "{email}");
            }
            for name in strings(batch, "name") {
                let (first, last) = name.split_once(' ').unwrap();
                assert!(FIRST_NAMES.contains(&first) && LAST_NAMES.contains(&last));
            }
            assert!(strings(batch, "state").iter().all(|s| US_STATES.contains(&s.as_str())));
            assert!(strings(batch, "city").iter().all(|c| US_CITIES.contains(&c.as_str())));
        }

        let auctions = collect(config(Entity::Auction, 6, 200_000), 1000);
        let mut total_size = 0;
        let mut rows = 0;
        for batch in &auctions {
            let (initial, reserve) = (i64s(batch, "initialBid"), i64s(batch, "reserve"));
            assert!(initial.iter().zip(&reserve).all(|(i, r)| *i >= 100 && r > i));
            let (start, end) = (i64s(batch, "dateTime"), i64s(batch, "expires"));
            // With 10 000 events/s, 100 auctions in flight span ~167 ms; lengths average that.
            assert!(start.iter().zip(&end).all(|(s, e)| e > s && e - s <= 334));
            assert!(i64s(batch, "category").iter().all(|c| (10..15).contains(c)));
            for name in strings(batch, "itemName") {
                assert!(name.len() < 20 && name.trim() == name);
            }
            let (names, descriptions) = (strings(batch, "itemName"), strings(batch, "description"));
            for ((name, description), extra) in names.iter().zip(&descriptions).zip(strings(batch, "extra")) {
                total_size += 48 + name.len() + description.len() + extra.len();
                rows += 1;
            }
        }
        let average = total_size as f64 / rows as f64;
        assert!((480.0..520.0).contains(&average), "auction size {average}");

        let bids = collect(config(Entity::Bid, 6, 200_000), 4096);
        let mut url_of_channel: HashMap<String, String> = HashMap::new();
        let mut hot = 0;
        let mut rows = 0;
        let mut extra_len = 0;
        for batch in &bids {
            assert!(i64s(batch, "price").iter().all(|p| (100..=100_000_000).contains(p)));
            let extras = strings(batch, "extra");
            extra_len += extras.iter().map(String::len).sum::<usize>();
            for (channel, url) in strings(batch, "channel").into_iter().zip(strings(batch, "url")) {
                rows += 1;
                assert!(url.starts_with("https://www.nexmark.com/"), "{url}");
                if HOT_CHANNELS.contains(&channel.as_str()) {
                    hot += 1;
                    assert!(url.ends_with("/item.htm?query=1"), "{url}");
                } else {
                    let number: u64 = channel.strip_prefix("channel-").unwrap().parse().unwrap();
                    assert!(number < CHANNELS_NUMBER);
                }
                let known = url_of_channel.entry(channel).or_insert_with(|| url.clone());
                assert_eq!(*known, url);
            }
        }
        let hot_share = hot as f64 / rows as f64;
        assert!((0.48..0.52).contains(&hot_share), "hot channel share {hot_share}");
        let average_extra = extra_len as f64 / rows as f64;
        assert!((66.0..70.0).contains(&average_extra), "bid extra {average_extra}");
    }

    /// Run with `cargo test --release -- --ignored --nocapture generation_rate`.
    #[test]
    #[ignore]
    fn generation_rate() {
        for (entity, events) in [(Entity::Bid, 5_000_000), (Entity::Auction, 50_000_000), (Entity::Person, 100_000_000)] {
            let mut generator = NexmarkGenerator::new(config(entity, 1, events));
            let start = std::time::Instant::now();
            let mut rows = 0;
            let mut bytes = 0;
            while let Some(batch) = generator.next_batch(8192) {
                rows += batch.num_rows();
                bytes += batch.get_array_memory_size();
            }
            let seconds = start.elapsed().as_secs_f64();
            println!(
                "{entity:?}: {rows} rows in {seconds:.3} s = {:.2} M rows/s ({:.0} MB/s of arrays)",
                rows as f64 / seconds / 1e6,
                bytes as f64 / seconds / 1e6
            );
        }
    }
}
