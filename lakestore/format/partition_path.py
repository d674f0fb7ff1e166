"""Partition directory names, formatted exactly as Paimon's Java legacy path utils do."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from lakestore.errors import PartitionValueError
from lakestore.format.types import DataType

DEFAULT_PARTITION_NAME = "__DEFAULT_PARTITION__"
_EPOCH = dt.date(1970, 1, 1)
_MAX_NAME_BYTES = 255  # file systems (and object stores' tooling) refuse longer path segments
_ESCAPED = frozenset([chr(c) for c in range(0x20)] + ['"', "#", "%", "'", "*", "/", ":", "=", "?", "\\", "\x7f", "{", "}", "[", "]", "^"])


def escape_path_name(text: str) -> str:
    if not any(ch in _ESCAPED for ch in text):
        return text
    return "".join(f"%{ord(ch):02X}" if ch in _ESCAPED else ch for ch in text)


def partition_value_string(value: Any, dtype: DataType, *, default_name: str = DEFAULT_PARTITION_NAME) -> str:
    """The legacy string form of a partition value (DATE as epoch days, null/empty as default)."""
    if value is None:
        return default_name
    root = dtype.root
    if root == "DATE":
        if not isinstance(value, dt.date):
            raise PartitionValueError(f"DATE partition value {value!r} is not a date")
        return str((value - _EPOCH).days)
    if root == "BOOLEAN":
        return "true" if value else "false"
    if dtype.is_integer:
        return str(int(value))
    if dtype.is_string:
        text = str(value)
        return text if text else default_name
    raise PartitionValueError(f"partition values of type {dtype} cannot form a path")


def partition_path(
    names: Sequence[str], types: Sequence[DataType], values: Sequence[Any], *, default_name: str = DEFAULT_PARTITION_NAME
) -> str:
    """``k1=v1/k2=v2`` (escaped), or ``""`` for an unpartitioned table."""
    parts = []
    for name, dtype, value in zip(names, types, values, strict=False):
        text = partition_value_string(value, dtype, default_name=default_name)
        part = f"{escape_path_name(name)}={escape_path_name(text)}"
        if len(part.encode()) > _MAX_NAME_BYTES:
            raise PartitionValueError(f"partition value {value!r} of {name!r} makes a directory name longer than {_MAX_NAME_BYTES} bytes")
        parts.append(part)
    return "/".join(parts)


def bucket_dir(table_path: str, partition: str, bucket: int) -> str:
    """A bucket's directory in the default layout only (no ``data-file.path-directory``): the
    engine names and finds data files through ``lakestore.meta.paths.TablePaths``."""
    base = f"{table_path}/{partition}" if partition else table_path
    return f"{base}/bucket-{bucket}"
