"""Normalized rows for the parity check (parity.py): the ways engines legitimately differ in
formatting the same value are removed, and nothing else. Standard library only, so its unit test
(test_normalize.py) runs in ci/test.sh without the benchmark's Python environment.

Per JSON value:
- numbers, tagged as numbers: exact decimals rounded to 3 places (Flink writes 0.908 * price as
  DECIMAL(…, 3), Sluice as a double such as 2943344.6520000002, Kafka Streams as a BigDecimal;
  4092 and 4092.0 are the same number). A number never equals a string, so "4092" (text) differs
  from 4092;
- ISO-8601 timestamps (strings): one form, 'YYYY-MM-DDTHH:MM:SS.fff', and a time with a zone
  keeps it: converted to UTC and marked 'Z'. A zone-less time is taken as written and never
  equals a zoned one (TIMESTAMP and TIMESTAMP WITH TIME ZONE are different types);
- everything else as parsed; key order does not matter.
"""
import datetime as dt
import json
import re
from decimal import ROUND_HALF_EVEN, Decimal
from functools import lru_cache

SCALE = Decimal("0.001")
TIMESTAMP = re.compile(r"^(\d{4}-\d{2}-\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?$")


class Number(str):
    """A normalized number: serialized with a tag, so it never equals a string of the same digits."""


def normalize_value(value):
    kind = type(value)
    if kind is str:
        # Cheap test first: most strings are not timestamps.
        if len(value) >= 16 and value[4:5] == "-" and value[:1].isdigit():
            return normalize_timestamp_text(value)
        return value
    if value is None or kind is bool:
        return value
    if kind is int:
        return Number(f"{value}.000")
    if kind is Decimal:
        return Number(str(value.quantize(SCALE, rounding=ROUND_HALF_EVEN)))
    if kind is float:  # not produced with parse_float=Decimal, kept for safety
        return Number(str(Decimal(repr(value)).quantize(SCALE, rounding=ROUND_HALF_EVEN)))
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
    text = moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}"
    return text + "Z" if zone else text


def _tagged(value):
    """JSON-ready form of a normalized value: numbers as {"#": digits}, everything else as is."""
    if isinstance(value, Number):
        return {"#": str(value)}
    if isinstance(value, list):
        return [_tagged(v) for v in value]
    if isinstance(value, dict):
        return {k: _tagged(v) for k, v in value.items()}
    return value


def normalize_row(raw: bytes) -> str:
    row = json.loads(raw, parse_float=Decimal)
    if not isinstance(row, dict):
        return json.dumps(_tagged(normalize_value(row)), separators=(",", ":"))
    return json.dumps({k: _tagged(normalize_value(v)) for k, v in sorted(row.items())}, separators=(",", ":"))
