"""Amounts in option values: memory sizes (``256 mb``) and durations (``1 h``, ``500 ms``), in
the units Paimon's MemorySize and TimeUtils accept. Used by table options and catalog options
alike, so it sits below every other layer."""

from __future__ import annotations

import re

_MEMORY_UNITS = {
    "": 1,
    "b": 1,
    "bytes": 1,
    "k": 1 << 10,
    "kb": 1 << 10,
    "kib": 1 << 10,
    "m": 1 << 20,
    "mb": 1 << 20,
    "mib": 1 << 20,
    "g": 1 << 30,
    "gb": 1 << 30,
    "gib": 1 << 30,
    "t": 1 << 40,
    "tb": 1 << 40,
    "tib": 1 << 40,
}
_DURATION_UNITS_MS = {
    "": 1,
    "ms": 1,
    "milli": 1,
    "millis": 1,
    "millisecond": 1,
    "milliseconds": 1,
    "s": 1000,
    "sec": 1000,
    "secs": 1000,
    "second": 1000,
    "seconds": 1000,
    "min": 60_000,
    "m": 60_000,
    "minute": 60_000,
    "minutes": 60_000,
    "h": 3_600_000,
    "hour": 3_600_000,
    "hours": 3_600_000,
    "d": 86_400_000,
    "day": 86_400_000,
    "days": 86_400_000,
}
_AMOUNT = re.compile(r"^\s*(\d+)\s*([a-zA-Z]*)\s*$")


def parse_memory(text: str) -> int:
    match = _AMOUNT.match(str(text))
    if not match or match.group(2).lower() not in _MEMORY_UNITS:
        raise ValueError(f"not a memory size: {text!r} (e.g. '256 mb')")
    return int(match.group(1)) * _MEMORY_UNITS[match.group(2).lower()]


def parse_duration_ms(text: str) -> int:
    match = _AMOUNT.match(str(text))
    if not match or match.group(2).lower() not in _DURATION_UNITS_MS:
        raise ValueError(f"not a duration: {text!r} (e.g. '1 h', '10 s', '100 ms')")
    return int(match.group(1)) * _DURATION_UNITS_MS[match.group(2).lower()]
