"""Parity of output topics: the rows two engines wrote for the same query and input, compared as
multisets after normalizing the ways engines legitimately differ in formatting (normalize.py:
numbers by value but never equal to strings, timestamps as instants that keep their zone, key
order ignored). Each normalized row is hashed to 64 bits; the sorted hashes of two topics are
compared, and when they differ the topics are read again to show example rows of each side. Two
outputs of Sluice (FFM and JNI bridges: the same encoder) are compared byte for byte instead.
"""
import hashlib
import uuid

import numpy as np
from confluent_kafka import Consumer, TopicPartition

from normalize import normalize_row

EXAMPLES = 3


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
