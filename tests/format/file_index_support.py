"""Building a file index from a list of values and asking its reader, shared by the bitmap and bsi
index tests."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from lakestore.format.fileindex.base import FileIndexReader, FileIndexResult, FileIndexType
from lakestore.format.types import parse_type


def build(index: FileIndexType, type_text: str, values: list[Any], options: dict[str, str] | None = None, chunks: int = 1) -> bytes:
    """The index of ``values`` (a column of ``type_text``), fed to the writer in ``chunks`` slices."""
    data_type = parse_type(type_text)
    writer = index.writer(data_type, options or {})
    arr = pa.array(values, data_type.to_arrow())
    step = max(1, -(-len(values) // chunks))
    for start in range(0, max(len(values), 1), step):
        writer.add(arr.slice(start, step))
    return writer.to_bytes()


def rows(result: FileIndexResult) -> list[int] | bool:
    """The row positions an answer names, else whether the file remains."""
    return result.rows.tolist() if result.rows is not None else result.remain


def answer(reader: FileIndexReader, op: str, literal: Any = None) -> list[int] | bool:
    """The reader's answer to ``op`` (``equal``, ``not_equal``, ``in``, ``not_in``, ``is_null``,
    ``is_not_null`` or a comparison ``<``, ``<=``, ``>``, ``>=``)."""
    if op == "equal":
        return rows(reader.equal(literal))
    if op == "not_equal":
        return rows(reader.not_equal(literal))
    if op == "in":
        return rows(reader.is_in(literal))
    if op == "not_in":
        return rows(reader.not_in(literal))  # type: ignore[attr-defined]
    if op == "is_null":
        return rows(reader.is_null())
    if op == "is_not_null":
        return rows(reader.is_not_null())
    return rows(reader.compare(op, literal))
