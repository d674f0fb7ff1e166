"""Avro data files (``AvroFormat``) as Paimon writes them, with fastavro (row by row: fastavro
reads and writes Python records; columns are converted to and from Arrow in bulk).

Paimon's row schema (``AvroSchemaConverter``): one record named
``org.apache.paimon.avro.generated.record``, a nullable column ``["null", T]`` with default
null, NOT NULL columns plain; TINYINT/SMALLINT/INT int, BIGINT long, FLOAT float, DOUBLE double,
CHAR/VARCHAR/STRING string, BINARY/VARBINARY bytes, DECIMAL bytes (decimal), DATE int (date),
TIME int (time-millis), TIMESTAMP(p) long timestamp-millis (p <= 3) / timestamp-micros (p <= 6),
TIMESTAMP_LTZ local-timestamp-millis / -micros, ARRAY array, MAP with STRING keys map, other
MAPs an array of ``{key, value}`` records (logicalType map), ROW a record named
``<top name>_<column>[_<field>...]``. TIMESTAMP(7..9) has no Avro type (Paimon refuses it).

Statistics: Paimon has no Avro statistics extractor; its collectors compare the rows' values:
min/max of every atomic type (binaries included), NaN the greatest double, nested columns only
null counts."""

from __future__ import annotations

import io
import math
from collections.abc import Iterator, Sequence
from typing import Any, cast

import fastavro
import pyarrow as pa
import pyarrow.compute as pc

from lakestore.errors import CorruptMetadataError, UnsupportedTypeError
from lakestore.format.arrow_ops import from_pylist
from lakestore.format.file_format import FileFormat, FormatWriter, StatsKind, rows_only
from lakestore.format.kv import SEQUENCE_NUMBER, VALUE_KIND
from lakestore.format.types import DataType
from lakestore.io.fileio import FileIO

AVRO_CODECS = ("zstd", "snappy", "deflate")
_AVRO_CODEC = {"zstd": "zstandard", "snappy": "snappy", "deflate": "deflate"}
RECORD = "org.apache.paimon.avro.generated.record"
_BLOCK_ROWS = 4096
_SYSTEM_TYPES = {SEQUENCE_NUMBER: pa.int64(), VALUE_KIND: pa.int8()}


def _avro_type(t: pa.DataType, name: str) -> Any:
    """The Avro type of Arrow type ``t``; ``name``: the record name of a ROW at this place."""
    if pa.types.is_boolean(t):
        return "boolean"
    if pa.types.is_int8(t) or pa.types.is_int16(t) or pa.types.is_int32(t):
        return "int"
    if pa.types.is_int64(t):
        return "long"
    if pa.types.is_float32(t):
        return "float"
    if pa.types.is_float64(t):
        return "double"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "string"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return "bytes"
    if pa.types.is_decimal(t):
        return {"type": "bytes", "logicalType": "decimal", "precision": t.precision, "scale": t.scale}
    if pa.types.is_date32(t):
        return {"type": "int", "logicalType": "date"}
    if pa.types.is_time32(t):
        return {"type": "int", "logicalType": "time-millis"}
    if pa.types.is_timestamp(t):
        if t.unit == "ns":
            raise UnsupportedTypeError("TIMESTAMP(7..9) has no Avro type (Paimon refuses it in Avro files): write such tables as parquet")
        unit = "millis" if t.unit in ("s", "ms") else "micros"
        return {"type": "long", "logicalType": f"{'local-' if t.tz is not None else ''}timestamp-{unit}"}
    if pa.types.is_map(t):
        value = _nullable(_avro_type(t.item_type, f"{name}_value"), t.item_field.nullable)
        if pa.types.is_string(t.key_type):
            return {"type": "map", "values": value}
        key = {"name": "key", "type": _avro_type(t.key_type, f"{name}_key")}
        entry = {"type": "record", "name": name, "fields": [key, {"name": "value", "type": value, **_default(t.item_field.nullable)}]}
        return {"type": "array", "logicalType": "map", "items": entry}
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return {"type": "array", "items": _nullable(_avro_type(t.value_type, name), t.value_field.nullable)}
    if pa.types.is_struct(t):
        return {
            "type": "record",
            "name": name,
            "fields": [_avro_field(t.field(i), f"{name}_{t.field(i).name}") for i in range(t.num_fields)],
        }
    raise UnsupportedTypeError(f"Arrow type {t} has no Avro type in lakestore")


def _nullable(avro: Any, nullable: bool) -> Any:
    return ["null", avro] if nullable else avro


def _default(nullable: bool) -> dict[str, Any]:
    return {"default": None} if nullable else {}


def _avro_field(field: pa.Field, name: str) -> dict[str, Any]:
    return {"name": field.name, "type": _nullable(_avro_type(field.type, name), field.nullable), **_default(field.nullable)}


def avro_schema(schema: pa.Schema) -> dict[str, Any]:
    """Paimon's Avro row schema of a data file's Arrow schema."""
    return {"type": "record", "name": RECORD, "fields": [_avro_field(f, f"{RECORD}_{f.name}") for f in schema]}


def _has_map(t: pa.DataType) -> bool:
    return pa.types.is_map(t) or any(_has_map(t.field(i).type) for i in range(t.num_fields))


def _to_avro(value: Any, t: pa.DataType) -> Any:
    """A ``to_pylist`` value of a map-holding type as fastavro takes it (maps as dicts or entry records)."""
    if value is None:
        return None
    if pa.types.is_map(t):
        if pa.types.is_string(t.key_type):
            return {k: _to_avro(v, t.item_type) for k, v in value}
        return [{"key": _to_avro(k, t.key_type), "value": _to_avro(v, t.item_type)} for k, v in value]
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return [_to_avro(v, t.value_type) for v in value]
    if pa.types.is_struct(t):
        return {f.name: _to_avro(value[f.name], f.type) for f in t}
    return value


def _from_avro(value: Any, t: pa.DataType) -> Any:
    """A fastavro value of a map-holding type as ``pa.array`` takes it."""
    if value is None:
        return None
    if pa.types.is_map(t):
        pairs = value.items() if isinstance(value, dict) else ((e["key"], e["value"]) for e in value)
        return [(_from_avro(k, t.key_type), _from_avro(v, t.item_type)) for k, v in pairs]
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return [_from_avro(v, t.value_type) for v in value]
    if pa.types.is_struct(t):
        return {f.name: _from_avro(value.get(f.name), f.type) for f in t}
    return value


def _column_values(column: pa.ChunkedArray) -> list[Any]:
    """A column's values for fastavro: timestamps, dates and times as their integers."""
    t = column.type
    if pa.types.is_timestamp(t):
        if t.unit == "s":
            column = column.cast(pa.timestamp("ms", tz=t.tz))
        return column.cast(pa.int64()).to_pylist()
    if pa.types.is_date32(t) or pa.types.is_time32(t):
        return column.cast(pa.int32()).to_pylist()
    values = column.to_pylist()
    return [_to_avro(v, t) for v in values] if _has_map(t) else values


class _AvroWriter(FormatWriter):
    def __init__(self, sink: pa.NativeFile, table: pa.Table, compression: str, zstd_level: int) -> None:
        self._sink = sink
        self._schema = fastavro.parse_schema(avro_schema(table.schema))
        self._codec = _AVRO_CODEC[compression]
        self._level = zstd_level if compression == "zstd" else None
        self._writer: Any = None

    def write(self, table: pa.Table, group_rows: int) -> None:
        names = table.column_names
        columns = [_column_values(c) for c in table.columns]
        records = [dict(zip(names, row, strict=True)) for row in zip(*columns, strict=True)]
        if self._writer is None:
            self._writer = fastavro.write.Writer(
                cast(Any, _SinkAdapter(self._sink)), self._schema, codec=self._codec, compression_level=self._level, sync_interval=1 << 20
            )
        for record in records:
            self._writer.write(record)
        self._writer.flush()

    def close(self) -> None:
        if self._writer is None:  # an empty file still carries its header
            self._writer = fastavro.write.Writer(
                cast(Any, _SinkAdapter(self._sink)), self._schema, codec=self._codec, compression_level=self._level
            )
        self._writer.flush()


class _SinkAdapter(io.RawIOBase):
    """A pyarrow output stream as the file object fastavro writes to."""

    def __init__(self, sink: pa.NativeFile) -> None:
        self._sink = sink

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self._sink.write(bytes(data))
        return len(data)

    def flush(self) -> None:
        return None


def _arrow_type(avro: Any) -> tuple[pa.DataType, bool]:
    """Arrow type and nullability of a (parsed) Avro type of a Paimon file."""
    nullable = False
    if isinstance(avro, list):
        branches = [b for b in avro if b != "null"]
        nullable = len(branches) < len(avro)
        avro = branches[0]
    if isinstance(avro, str):
        simple = {"boolean": pa.bool_(), "int": pa.int32(), "long": pa.int64(), "float": pa.float32(), "double": pa.float64()}
        if avro in simple:
            return simple[avro], nullable
        return (pa.string() if avro == "string" else pa.binary()), nullable
    logical = avro.get("logicalType")
    kind = avro["type"]
    if logical == "decimal":
        return pa.decimal128(avro["precision"], avro.get("scale", 0)), nullable
    if logical == "date":
        return pa.date32(), nullable
    if logical == "time-millis":
        return pa.time32("ms"), nullable
    if logical in ("timestamp-millis", "timestamp-micros", "local-timestamp-millis", "local-timestamp-micros"):
        unit = "ms" if logical.endswith("millis") else "us"
        return pa.timestamp(unit, tz="UTC" if logical.startswith("local-") else None), nullable
    if kind == "map":
        value, value_nullable = _arrow_type(avro["values"])
        return pa.map_(pa.field("key", pa.string(), nullable=False), pa.field("value", value, nullable=value_nullable)), nullable
    if kind == "array" and logical == "map":
        entry = {f["name"]: _arrow_type(f["type"]) for f in avro["items"]["fields"]}
        key, value = entry["key"], entry["value"]
        return pa.map_(pa.field("key", key[0], nullable=False), pa.field("value", value[0], nullable=value[1])), nullable
    if kind == "array":
        item, item_nullable = _arrow_type(avro["items"])
        return pa.list_(pa.field("item", item, nullable=item_nullable)), nullable
    if kind == "record":
        return pa.struct([pa.field(f["name"], *_arrow_type(f["type"])) for f in avro["fields"]]), nullable
    return _arrow_type(kind)[0], nullable


def _table(records: list[dict[str, Any]], fields: dict[str, pa.DataType], columns: Sequence[str], path: str) -> pa.Table:
    arrays = []
    for name in columns:
        t = fields[name]
        values = [r.get(name) for r in records]
        if _has_map(t):
            values = [_from_avro(v, t) for v in values]
        try:
            arrays.append(from_pylist(values, t) if values else pa.array([], t))
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as exc:
            # a valid file lakestore cannot convert is no corrupt one
            raise UnsupportedTypeError(f"{path}: lakestore cannot read avro column {name} as {t}: {exc}") from exc
    return pa.Table.from_arrays(arrays, names=list(columns)) if columns else rows_only(len(records))


class AvroFormat(FileFormat):
    """Avro as Paimon writes it (AvroFileFormat, AvroSchemaConverter)."""

    name = "avro"
    codecs = AVRO_CODECS

    def open_writer(self, sink: pa.NativeFile, table: pa.Table, *, compression: str, zstd_level: int, target_size: int) -> FormatWriter:
        return _AvroWriter(sink, table, self.check_codec(compression), zstd_level)

    def _records(self, source: Any, path: str, columns: Sequence[str]) -> tuple[list[dict[str, Any]], dict[str, pa.DataType]]:
        try:
            reader = fastavro.reader(source)
            schema: Any = reader.writer_schema
            records = cast(list[dict[str, Any]], list(reader))
        except Exception as exc:  # fastavro raises many types on damaged input
            raise CorruptMetadataError(path, f"unreadable avro: {exc!r}") from exc
        if isinstance(schema, list):  # a top level wrapped in ["null", record]
            schema = next((b for b in schema if isinstance(b, dict)), {})
        if not isinstance(schema, dict) or schema.get("type") != "record":
            raise CorruptMetadataError(path, "an avro data file whose rows are not records")
        fields = {f["name"]: _SYSTEM_TYPES.get(f["name"]) or _arrow_type(f["type"])[0] for f in schema.get("fields", [])}
        missing = set(columns) - set(fields)
        if missing:
            raise CorruptMetadataError(path, f"lacks columns {sorted(missing)}")
        return records, fields

    def read(self, file_io: FileIO, path: str, columns: Sequence[str]) -> tuple[pa.Table, int]:
        records, fields = self._records(io.BytesIO(file_io.read_bytes(path)), path, columns)
        return _table(records, fields, columns, path), len(records)

    def batches(self, source: pa.NativeFile, path: str, columns: Sequence[str], batch_rows: int) -> tuple[int, Iterator[pa.RecordBatch]]:
        records, fields = self._records(io.BytesIO(source.read()), path, columns)

        def stream() -> Iterator[pa.RecordBatch]:
            for offset in range(0, len(records), batch_rows):
                yield from _table(records[offset : offset + batch_rows], fields, columns, path).to_batches()

        return len(records), stream()

    def stats_kind(self, dtype: DataType) -> StatsKind:
        # Paimon's collectors: no comparable value in a nested column, only its null count
        return "counts" if dtype.is_nested else "full"

    def min_max(self, column: pa.ChunkedArray | pa.Array, arrow_type: pa.DataType) -> pa.Array:
        # Java's Double/Float.compareTo: NaN is greater than every other value
        pair = super().min_max(column, arrow_type)
        if pa.types.is_floating(arrow_type) and pc.any(pc.is_nan(column)).as_py():
            low = pair[0].as_py()
            return pa.array([math.nan if low is None else low, math.nan], arrow_type)
        return pair


AVRO = AvroFormat()
