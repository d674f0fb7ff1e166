"""The primary-key file layout: ``_KEY_<k>`` columns, ``_SEQUENCE_NUMBER``, ``_VALUE_KIND``, values."""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

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


def key_column(name: str) -> str:
    return f"{KEY_PREFIX}{name}"


def kv_file_schema(user_schema: pa.Schema, trimmed_keys: Sequence[str], field_ids: dict[str, int]) -> pa.Schema:
    """Arrow schema of a primary-key data file, with Paimon's parquet field ids."""

    def with_id(field: pa.Field, field_id: int) -> pa.Field:
        return field.with_metadata({b"PARQUET:field_id": str(field_id).encode()})

    fields = [
        with_id(pa.field(key_column(k), user_schema.field(k).type, nullable=False), KEY_FIELD_ID_START + field_ids[k]) for k in trimmed_keys
    ]
    fields.append(with_id(pa.field(SEQUENCE_NUMBER, pa.int64(), nullable=False), SEQUENCE_NUMBER_FIELD_ID))
    fields.append(with_id(pa.field(VALUE_KIND, pa.int8(), nullable=False), VALUE_KIND_FIELD_ID))
    fields.extend(with_id(f, field_ids[f.name]) for f in user_schema)
    return pa.schema(fields)


def append_file_schema(user_schema: pa.Schema, field_ids: dict[str, int]) -> pa.Schema:
    return pa.schema([f.with_metadata({b"PARQUET:field_id": str(field_ids[f.name]).encode()}) for f in user_schema])
