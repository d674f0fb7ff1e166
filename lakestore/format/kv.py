"""The primary-key file layout: ``_KEY_<k>`` columns, ``_SEQUENCE_NUMBER``, ``_VALUE_KIND``, values."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pyarrow as pa

from lakestore.format.types import DataType

KEY_PREFIX = "_KEY_"
SEQUENCE_NUMBER = "_SEQUENCE_NUMBER"
VALUE_KIND = "_VALUE_KIND"

INSERT = 0
UPDATE_BEFORE = 1
UPDATE_AFTER = 2
DELETE = 3

ROW_KIND_SHORT = {"+I": INSERT, "-U": UPDATE_BEFORE, "+U": UPDATE_AFTER, "-D": DELETE}
ROW_KIND_NAMES = {v: k for k, v in ROW_KIND_SHORT.items()}

# Paimon's field ids of the system columns (SpecialFields).
KEY_FIELD_ID_START = 2147483647 // 2
SEQUENCE_NUMBER_FIELD_ID = 2147483647 - 1
VALUE_KIND_FIELD_ID = 2147483647 - 2
# ids of list elements and map keys/values, derived from the column's id and the nesting depth
_STRUCTURED_BASE = (2**31 - 1) // 4
_DEPTH_LIMIT = 1 << 10
_FIELD_ID = b"PARQUET:field_id"


def _with_id(field: pa.Field, field_id: int) -> pa.Field:
    return field.with_metadata({_FIELD_ID: str(field_id).encode()})


def _nested_ids(field: pa.Field, dtype: DataType | None, field_id: int, depth: int) -> pa.Field:
    """``field`` with Paimon's Parquet field ids on its nested children, as Paimon's
    ParquetSchemaConverter writes them: ROW fields carry their own ids, an ARRAY's element and a
    MAP's key and value ids derived from the column's id and depth (Paimon's SpecialFields, as
    the Iceberg metadata names them). Iceberg readers (pyiceberg,
    DuckDB, Polars) resolve nested columns by these ids."""
    t = field.type
    if dtype is None:
        return field
    if dtype.root == "ROW" and pa.types.is_struct(t) and len(dtype.fields) == t.num_fields:
        # a ROW's fields start again at depth 0 (ParquetSchemaConverter.convertToParquetTypes)
        children = [_with_id(_nested_ids(t.field(i), f.type, f.id, 0), f.id) for i, f in enumerate(dtype.fields)]
        return field.with_type(pa.struct(children))
    if dtype.root == "ARRAY" and (pa.types.is_list(t) or pa.types.is_large_list(t)):
        element_id = _STRUCTURED_BASE + field_id * _DEPTH_LIMIT + depth + 1
        element = _with_id(_nested_ids(t.value_field, dtype.element, field_id, depth + 1), element_id)
        return field.with_type(pa.large_list(element) if pa.types.is_large_list(t) else pa.list_(element))
    if dtype.root == "MAP" and pa.types.is_map(t):
        key_id = _STRUCTURED_BASE - field_id * _DEPTH_LIMIT - depth - 1
        value_id = _STRUCTURED_BASE + field_id * _DEPTH_LIMIT + depth + 1
        key = _with_id(_nested_ids(t.key_field, dtype.key, field_id, depth + 1), key_id)
        item = _with_id(_nested_ids(t.item_field, dtype.value, field_id, depth + 1), value_id)
        return field.with_type(pa.map_(key, item, keys_sorted=t.keys_sorted))
    return field


def _column(field: pa.Field, field_id: int, types: Mapping[str, DataType] | None) -> pa.Field:
    dtype = types.get(field.name) if types is not None else None
    return _with_id(_nested_ids(field, dtype, field_id, 0), field_id)


def key_column(name: str) -> str:
    return f"{KEY_PREFIX}{name}"


def kv_file_schema(
    user_schema: pa.Schema, trimmed_keys: Sequence[str], field_ids: dict[str, int], types: Mapping[str, DataType] | None = None
) -> pa.Schema:
    """Arrow schema of a primary-key data file, with Paimon's parquet field ids (on nested
    children too when ``types``, the columns' Paimon types, are given)."""
    fields = [
        _with_id(pa.field(key_column(k), user_schema.field(k).type, nullable=False), KEY_FIELD_ID_START + field_ids[k])
        for k in trimmed_keys
    ]
    fields.append(_with_id(pa.field(SEQUENCE_NUMBER, pa.int64(), nullable=False), SEQUENCE_NUMBER_FIELD_ID))
    fields.append(_with_id(pa.field(VALUE_KIND, pa.int8(), nullable=False), VALUE_KIND_FIELD_ID))
    fields.extend(_column(f, field_ids[f.name], types) for f in user_schema)
    return pa.schema(fields)


def append_file_schema(user_schema: pa.Schema, field_ids: dict[str, int], types: Mapping[str, DataType] | None = None) -> pa.Schema:
    """Arrow schema of an append-table data file, with Paimon's parquet field ids."""
    return pa.schema([_column(f, field_ids[f.name], types) for f in user_schema])
