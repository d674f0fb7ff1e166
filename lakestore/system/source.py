"""What a system table reads of its data table, and how Paimon's system tables print values.

``TableState`` hands the system tables one table on one branch (its ``FileStore`` and its time
travel), so this package never depends on ``lakestore.table``. The printers follow Paimon 2.0.0's system tables: values
cast to STRING as its ``CastExecutors`` do (partitions: ``{a, b}`` or ``k=v/k2=v2``), statistics
as Java's ``Object.toString`` of Paimon's internal values, timestamps as local wall-clock time.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from lakestore.format.arrow_ops import from_pylist
from lakestore.format.binary_row import decode_row
from lakestore.format.types import DataType
from lakestore.meta.snapshot import Snapshot
from lakestore.store import FileStore

_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_DATE = dt.date(1970, 1, 1)


@dataclass(frozen=True)
class TimeTravel:
    """Where a system table that reads a snapshot looks: the latest (all None), a snapshot id, a
    tag or a time (Paimon's ``scan.snapshot-id`` / ``scan.tag-name`` / ``scan.timestamp-millis``
    on the system table)."""

    snapshot_id: int | None = None
    tag: str | None = None
    timestamp_ms: int | None = None


LATEST = TimeTravel()


@dataclass(frozen=True)
class TableState:
    """One table on one branch as its system tables read it: the table's ``FileStore`` and its
    time travel."""

    store: FileStore
    # the snapshot a read names (the table's own time travel: ids, tags, its scan.* options)
    resolve: Callable[[TimeTravel], Snapshot | None]


# -- time -----------------------------------------------------------------------------------------
def local_millis(epoch_ms: int | None) -> int | None:
    """Epoch millis as the local wall-clock time's millis (Paimon's ``LocalDateTime.ofInstant(...,
    ZoneId.systemDefault())`` in a TIMESTAMP(3) column)."""
    if epoch_ms is None:
        return None
    return epoch_ms + time.localtime(epoch_ms // 1000).tm_gmtoff * 1000


def naive_millis(value: dt.datetime | None) -> int | None:
    """A naive (local) datetime as TIMESTAMP(3) millis."""
    if value is None:
        return None
    return (value.replace(tzinfo=None) - _EPOCH) // dt.timedelta(milliseconds=1)


def java_duration(ms: int) -> str:
    """``java.time.Duration.toString()`` of ``ms`` milliseconds (``PT1H30M``, ``PT0.5S``)."""
    if ms == 0:
        return "PT0S"
    sign = "-" if ms < 0 else ""
    ms = abs(ms)
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    seconds, millis = divmod(rest, 1000)
    out = "PT"
    if hours:
        out += f"{sign}{hours}H"
    if minutes:
        out += f"{sign}{minutes}M"
    if seconds or millis:
        out += f"{sign}{seconds}" + (f".{millis:03d}".rstrip("0") if millis else "") + "S"
    return out


# -- Java's printing of values --------------------------------------------------------------------
def java_double(value: float, *, single: bool = False) -> str:
    """``Double.toString`` (``Float.toString`` with ``single``): plain between 1e-3 and 1e7,
    else ``d.dddE<exp>``; the shortest digits that read back."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    text = str(np.float32(value)) if single else repr(value)  # the shortest digits that read back
    sign, digits, exponent = decimal.Decimal(text).as_tuple()
    number = "".join(map(str, digits)).rstrip("0") or "0"
    point = len(digits) + int(exponent)  # digits before the decimal point
    prefix = "-" if sign else ""
    if 1e-3 <= abs(value) < 1e7:
        if point <= 0:
            return f"{prefix}0.{'0' * -point}{number}"
        whole, frac = number[:point].ljust(point, "0"), number[point:]
        return f"{prefix}{whole}.{frac or '0'}"
    return f"{prefix}{number[0]}.{number[1:] or '0'}E{point - 1}"


def _java_local_datetime(value: dt.datetime, nanos: int | None = None) -> str:
    """``LocalDateTime.toString``: seconds only when non-zero, fractions in groups of three."""
    out = value.strftime("%Y-%m-%dT%H:%M")
    nanos = value.microsecond * 1000 if nanos is None else nanos
    if value.second or nanos:
        out += f":{value.second:02d}"
        if nanos:
            text = f"{nanos:09d}"
            out += "." + (text[:3] if text[3:] == "000000" else text[:6] if text[6:] == "000" else text)
    return out


def object_string(value: Any, dtype: DataType) -> str:
    """Java's ``toString`` of Paimon's internal value (files' statistics and keys): DATE as its
    epoch day, TIMESTAMP as ``LocalDateTime``, doubles as ``Double.toString``."""
    if value is None:
        return "null"
    root = dtype.root
    if isinstance(value, bool):
        return "true" if value else "false"
    if root == "DATE" and isinstance(value, dt.date):
        return str((value - _EPOCH_DATE).days)
    if root in ("FLOAT", "DOUBLE"):
        return java_double(float(value), single=root == "FLOAT")
    if isinstance(value, dt.datetime):
        return _java_local_datetime(value.replace(tzinfo=None) if value.tzinfo is None else value.astimezone(dt.UTC).replace(tzinfo=None))
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    return str(value)


def cast_string(value: Any, dtype: DataType) -> str:
    """Paimon's cast of a value to STRING (partition values)."""
    if value is None:
        return "null"
    root = dtype.root
    if isinstance(value, bool):
        return "true" if value else "false"
    if root in ("FLOAT", "DOUBLE"):
        return java_double(float(value), single=root == "FLOAT")
    if isinstance(value, dt.datetime):
        naive = value if value.tzinfo is None else value.astimezone(dt.UTC).replace(tzinfo=None)
        text = naive.strftime("%Y-%m-%d %H:%M:%S")
        precision = dtype.precision if dtype.precision is not None else 6
        if precision > 0:
            text += "." + f"{naive.microsecond:06d}000"[:precision]
        return text
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    return str(value)


class RowPrinter:
    """Serialized rows (partitions, partition statistics) as Paimon casts them to STRING, each
    distinct row decoded once."""

    def __init__(self, types: Sequence[DataType], *, source: str) -> None:
        self.types = list(types)
        self.source = source
        self._values: dict[bytes, tuple[Any, ...]] = {}

    def values(self, row: bytes) -> tuple[Any, ...]:
        if row not in self._values:
            self._values[row] = decode_row(row, self.types, source=self.source) if self.types else ()
        return self._values[row]

    def braces(self, row: bytes | None) -> str | None:
        """``{v1, v2}`` (a ROW cast to STRING); None for no row."""
        if row is None:
            return None
        values = self.values(row)
        return "{" + ", ".join(cast_string(v, t) for v, t in zip(values, self.types, strict=True)) + "}"


def table_of(schema: pa.Schema, columns: dict[str, list[Any]]) -> pa.Table:
    """A system table's rows from its column lists (metadata-sized: a row per file at most)."""
    arrays = [from_pylist(columns[f.name], f.type) for f in schema]
    return pa.Table.from_arrays(arrays, schema=schema)
