"""Record-level expiration (``record-level.expire-time`` + ``record-level.time-field``), as Paimon
2.0's RecordLevelExpire: compaction drops every record whose time field is older than the expire
time (before the merge, record by record), and rewrites rather than upgrades a file whose
statistics say it holds such records. Reads do not filter: an expired record stays visible until
a compaction rewrites its file.

The time field is read in seconds: INT as seconds, BIGINT as seconds or, from 10^12 on, as
milliseconds, TIMESTAMP / TIMESTAMP_LTZ by their epoch milliseconds (divided as Java divides,
towards zero). A null time never expires. ``now`` is whole seconds, the expire time its whole
seconds (Java's Duration.getSeconds)."""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from lakestore.errors import OptionError
from lakestore.format.arrow_ops import as_numpy, from_numpy
from lakestore.format.binary_row import decode_row
from lakestore.format.types import DataType
from lakestore.meta.manifest import DataFileMeta
from lakestore.meta.schema import SchemaManager, TableSchema

_TYPES = ("INT", "BIGINT", "TIMESTAMP", "TIMESTAMP_LTZ")
_MILLIS_FROM = 1_000_000_000_000


def check_time_field(schema: TableSchema) -> None:
    """Paimon's SchemaValidation of ``record-level.time-field`` (a column of INT, BIGINT or
    TIMESTAMP type) and RecordLevelExpire.create (an expire time needs a time field)."""
    options = schema.core_options()
    field = options.record_level_time_field
    if field is not None:
        if field not in schema.field_names:
            raise OptionError(f"Can not find time field {field} for record level expire.")
        dtype = schema.field(field).type
        if dtype.root not in _TYPES:
            raise OptionError(f"The record level time field type should be one of INT, BIGINT, or TIMESTAMP, but field type is {dtype}.")
    if options.record_level_expire_ms is not None and field is None:
        raise OptionError("You should set time field for record-level expire.")


def _java_div(values: np.ndarray, divisor: int) -> np.ndarray:
    """Java's long division (truncating towards zero)."""
    return np.where(values >= 0, values // divisor, -((-values) // divisor))


def _seconds(column: pa.ChunkedArray | pa.Array, dtype: DataType) -> np.ndarray:
    """The time field in seconds (int64; nulls as 0, see ``is_valid``)."""
    if dtype.root in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        unit = column.type.unit
        raw = as_numpy(column.cast(pa.int64()).fill_null(0))
        per_milli = {"s": None, "ms": 1, "us": 1000, "ns": 1_000_000}[unit]
        millis = raw * 1000 if per_milli is None else np.floor_divide(raw, per_milli)
        return _java_div(millis, 1000)
    values = as_numpy(column.cast(pa.int64()).fill_null(0))
    if dtype.root == "BIGINT":
        return np.where(values >= _MILLIS_FROM, values // 1000, values)
    return values


def _value_seconds(value: Any, dtype: DataType) -> int:
    if isinstance(value, dt.datetime):
        epoch = dt.datetime(1970, 1, 1, tzinfo=value.tzinfo)
        delta = value - epoch
        millis = (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000
        return int(_java_div(np.array([millis]), 1000)[0])
    if dtype.root == "BIGINT" and value >= _MILLIS_FROM:
        return int(value) // 1000
    return int(value)


class RecordLevelExpire:
    def __init__(self, schema: TableSchema, schemas: SchemaManager, *, now_s: int | None = None) -> None:
        check_time_field(schema)
        options = schema.core_options()
        expire_ms = options.record_level_expire_ms
        field = options.record_level_time_field
        assert expire_ms is not None and field is not None
        self.schema = schema
        self.schemas = schemas
        self.field = schema.field(field)
        self.expire_s = expire_ms // 1000
        self.now_s = int(time.time()) if now_s is None else now_s

    @classmethod
    def of(cls, schema: TableSchema, schemas: SchemaManager) -> RecordLevelExpire | None:
        if schema.core_options().record_level_expire_ms is None:
            return None
        return cls(schema, schemas)

    def keep(self, rows: pa.Table) -> pa.Table:
        """``rows`` without their expired records."""
        if rows.num_rows == 0:
            return rows
        column = rows.column(self.field.name)
        alive = self.now_s <= _seconds(column, self.field.type) + self.expire_s
        if column.null_count:
            alive |= as_numpy(pc.is_null(column))
        return rows if alive.all() else rows.filter(from_numpy(alive))

    def holds_expired(self, f: DataFileMeta) -> bool:
        """Whether the file's minimum of the time field (its value statistics, read through the
        file's own schema) is expired; no statistics: no."""
        file_schema = self.schema if f.schema_id == self.schema.id else self.schemas.get(f.schema_id)
        by_id = {x.id: x for x in file_schema.fields}
        field = by_id.get(self.field.id)
        if field is None:
            return False
        names = list(f.value_stats_cols) if f.value_stats_cols is not None else file_schema.field_names
        stats = f.value_stats
        if field.name not in names or stats.null_counts is None or len(stats.null_counts) != len(names):
            return False
        minimum = decode_row(stats.min_values, file_schema.types_of(names), source=f.file_name)[names.index(field.name)]
        if minimum is None:
            return False
        return self.now_s - self.expire_s > _value_seconds(minimum, field.type)
