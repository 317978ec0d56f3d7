"""Parity of output topics: the rows two engines wrote for the same query and input, compared as
multisets after normalizing the ways engines legitimately differ in formatting.

Normalization, per JSON value:
- numbers: exact decimals rounded to 3 places (Flink writes 0.908 * price as DECIMAL(…, 3),
  Sluice as a double such as 2943344.6520000002, Kafka Streams as a BigDecimal; 4092 and 4092.0
  are the same number);
- ISO-8601 timestamps: one form, 'YYYY-MM-DDTHH:MM:SS.fff' (with or without 'T', trailing zeros
  of the fraction or none, a zone offset converted to UTC, a zone-less time taken as written);
- everything else as parsed; key order does not matter.
Each normalized row is hashed to 64 bits; the sorted hashes of two topics are compared, and when
they differ the topics are read again to show example rows of each side. Two outputs of Sluice
(FFM and JNI bridges: the same encoder) are compared byte for byte instead.
"""
import datetime as dt
import hashlib
import json
import re
import uuid
from functools import lru_cache
from decimal import ROUND_HALF_EVEN, Decimal

import numpy as np
from confluent_kafka import Consumer, TopicPartition

SCALE = Decimal("0.001")
TIMESTAMP = re.compile(r"^(\d{4}-\d{2}-\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?$")
EXAMPLES = 3


def normalize_value(value):
    kind = type(value)
    if kind is str:
        # Cheap test first: most strings are not timestamps.
        if len(value) >= 16 and value[4:5] == "-" and value[:1].isdigit():
            return normalize_timestamp_text(value)
        return value
    if kind is int:
        return f"{value}.000"
    if kind is Decimal:
        return str(value.quantize(SCALE, rounding=ROUND_HALF_EVEN))
    if value is None or kind is bool:
        return value
    if kind is float:  # not produced with parse_float=Decimal, kept for safety
        return str(Decimal(repr(value)).quantize(SCALE, rounding=ROUND_HALF_EVEN))
    if isinstance(value, list):
        return [normalize_value(v) for v in value]
    if isinstance(value, dict):
        return {k: normalize_value(v) for k, v in sorted(value.items())}
    return value


@lru_cache(maxsize=1 << 16)
def normalize_timestamp_text(text: str) -> str:
    """A timestamp's canonical form, or the text unchanged if it is not one (bids share their
    timestamps a lot, hence the cache)."""
    match = TIMESTAMP.match(text)
    return normalize_timestamp(match) if match else text


def normalize_timestamp(match) -> str:
    date, hour, minute, second, fraction, zone = match.groups()
    micros = int((fraction or "0").ljust(6, "0")[:6])
    moment = dt.datetime.fromisoformat(f"{date}T{hour}:{minute}:{second or '00'}").replace(microsecond=micros)
    if zone and zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        hours, minutes = int(zone[1:3]), int(zone[-2:])
        moment -= sign * dt.timedelta(hours=hours, minutes=minutes)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}"


def normalize_row(raw: bytes) -> str:
    row = json.loads(raw, parse_float=Decimal)
    if not isinstance(row, dict):
        return json.dumps(normalize_value(row))
    return json.dumps({k: normalize_value(v) for k, v in sorted(row.items())}, separators=(",", ":"))


def row_hash(normalized: str) -> int:
    return int.from_bytes(hashlib.blake2b(normalized.encode(), digest_size=8).digest(), "little")


def read_topic(bootstrap: str, topic: str):
    """Every record value of `topic` from the start to the end offsets it has now."""
    consumer = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": f"nexmark-parity-{uuid.uuid4().hex}",
        "enable.auto.commit": False,
        "enable.partition.eof": False,
        "fetch.min.bytes": 1 << 16,
        "queued.max.messages.kbytes": 1 << 18,
    })
    try:
        metadata = consumer.list_topics(topic, timeout=30)
        partitions = sorted(metadata.topics[topic].partitions)
        remaining = {}
        assignment = []
        for p in partitions:
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)
            if high > low:
                remaining[p] = high
                assignment.append(TopicPartition(topic, p, low))
        if not assignment:
            return
        consumer.assign(assignment)
        idle = 0
        while remaining:
            messages = consumer.consume(num_messages=10_000, timeout=1.0)
            if not messages:
                idle += 1
                if idle > 60:
                    raise RuntimeError(f"{topic}: no records for 60 s with partitions {sorted(remaining)} unfinished")
                continue
            idle = 0
            for message in messages:
                if message.error():
                    raise RuntimeError(f"{topic}: {message.error()}")
                p = message.partition()
                if p in remaining:
                    yield message.value()
                    if message.offset() + 1 >= remaining[p]:
                        del remaining[p]
    finally:
        consumer.close()


def topic_hashes(bootstrap: str, topic: str, normalized: bool = True) -> np.ndarray:
    """The sorted 64-bit hashes of a topic's rows: normalized, or of the raw bytes (for two outputs
    of the same encoder, where any difference at all matters)."""
    key = (lambda v: row_hash(normalize_row(v))) if normalized else raw_hash
    hashes = np.fromiter((key(v) for v in read_topic(bootstrap, topic)), dtype=np.uint64)
    hashes.sort()
    return hashes


def raw_hash(value: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(value, digest_size=8).digest(), "little")


def compare(bootstrap: str, reference_topic: str, reference: np.ndarray, other_topic: str, other: np.ndarray,
            normalized: bool = True) -> dict:
    """Compares two topics by their hashes (from topic_hashes, same `normalized`)."""
    result = {"rows_reference": int(reference.size), "rows_other": int(other.size), "normalized": normalized}
    if reference.size == other.size and np.array_equal(reference, other):
        result.update(equal=True, only_in_reference=0, only_in_other=0)
        return result
    ref_keys, ref_counts = np.unique(reference, return_counts=True)
    other_keys, other_counts = np.unique(other, return_counts=True)
    ref_map = dict(zip(ref_keys.tolist(), ref_counts.tolist()))
    other_map = dict(zip(other_keys.tolist(), other_counts.tolist()))
    extra_ref = {k: c - other_map.get(k, 0) for k, c in ref_map.items() if c > other_map.get(k, 0)}
    extra_other = {k: c - ref_map.get(k, 0) for k, c in other_map.items() if c > ref_map.get(k, 0)}
    result.update(
        equal=False,
        only_in_reference=int(sum(extra_ref.values())),
        only_in_other=int(sum(extra_other.values())),
        examples_only_in_reference=examples(bootstrap, reference_topic, extra_ref, normalized),
        examples_only_in_other=examples(bootstrap, other_topic, extra_other, normalized),
    )
    return result


def examples(bootstrap: str, topic: str, wanted: dict, normalized: bool) -> list:
    """Up to EXAMPLES raw rows of `topic` whose hashes are in `wanted`."""
    keys = set(list(wanted)[:EXAMPLES])
    found = []
    if not keys:
        return found
    for value in read_topic(bootstrap, topic):
        h = row_hash(normalize_row(value)) if normalized else raw_hash(value)
        if h in keys:
            found.append(value.decode(errors="replace"))
            keys.discard(h)
            if not keys:
                break
    return found
