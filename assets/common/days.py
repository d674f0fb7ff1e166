"""Partition keys are ISO days; commit identifiers are days since the Unix epoch."""

from __future__ import annotations

import datetime as dt

EPOCH = dt.date(1970, 1, 1)


def day_number(day: str | dt.date) -> int:
    """Days since 1970-01-01: the commit identifier of a partition's ingestion (stable across re-runs)."""
    value = dt.date.fromisoformat(day) if isinstance(day, str) else day
    return (value - EPOCH).days


def day_of(number: int) -> str:
    return (EPOCH + dt.timedelta(days=int(number))).isoformat()
