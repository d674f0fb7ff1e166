"""Shared helpers of the core-engine tests (oracle facts, table comparison, disk inspection)."""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import pyarrow as pa

FACTS_PATH = Path(__file__).resolve().parent / "fixtures" / "oracle_facts.json"
README = Path(__file__).resolve().parent.parent / "README.md"


@lru_cache(maxsize=1)
def facts() -> dict:
    with open(FACTS_PATH, encoding="utf-8") as f:
        return json.load(f)


def fact_value(v: Any) -> Any:
    """Decode a value as tests/oracle/dump_facts.py encoded it."""
    if isinstance(v, dict):
        ((kind, text),) = v.items()
        if kind == "decimal":
            return decimal.Decimal(text)
        if kind == "timestamp":
            return dt.datetime.fromisoformat(text)
        if kind == "date":
            return dt.date.fromisoformat(text)
        if kind == "bytes":
            return bytes.fromhex(text)
        if kind == "float":
            return float(text)
        raise ValueError(v)
    return v


def sort_rows(table: pa.Table, keys: list[str] | None = None) -> list[dict]:
    """Rows of ``table`` as dicts, in a deterministic order (by ``keys`` or by all columns)."""
    rows = table.to_pylist()
    order = keys or table.column_names

    def key(r: dict) -> tuple:
        return tuple((r[k] is None, _sortable(r[k])) for k in order)

    return sorted(rows, key=key)


def _sortable(v: Any) -> Any:
    if v is None:
        return 0
    if isinstance(v, bytes):
        return base64.b16encode(v).decode()
    if isinstance(v, dt.datetime) and v.tzinfo is not None:
        return v.astimezone(dt.UTC).replace(tzinfo=None)
    return v


def assert_same_rows(got: pa.Table, expected: pa.Table, keys: list[str] | None = None) -> None:
    assert got.column_names == expected.column_names, (got.column_names, expected.column_names)
    g = sort_rows(got, keys)
    e = sort_rows(expected, keys)
    assert len(g) == len(e), f"{len(g)} rows != expected {len(e)}"
    for i, (a, b) in enumerate(zip(g, e, strict=False)):
        assert a == b, f"row {i} differs:\n got      {a}\n expected {b}"


def data_files(table_path: str | os.PathLike) -> set[str]:
    """Relative paths of every data file under a table directory."""
    out = set()
    root = str(table_path)
    for d, _dirs, files in os.walk(root):
        for f in files:
            if f.startswith("data-"):
                out.add(os.path.relpath(os.path.join(d, f), root))
    return out


def all_files(table_path: str | os.PathLike) -> set[str]:
    out = set()
    root = str(table_path)
    for d, _dirs, files in os.walk(root):
        for f in files:
            out.add(os.path.relpath(os.path.join(d, f), root))
    return out


def readme_python_blocks(heading: str) -> list[str]:
    """The ```` ```python ```` blocks of the README section ``## <heading>`` (up to the next
    ``## `` heading, its ``###`` subsections included), in order. A heading the README lacks
    raises, so a renamed section fails its test instead of running nothing."""
    text = README.read_text(encoding="utf-8")
    start = re.search(rf"^## {re.escape(heading)}\n", text, flags=re.M)
    if start is None:
        raise LookupError(f"README.md has no section '## {heading}'")
    end = re.search(r"^## ", text[start.end() :], flags=re.M)
    section = text[start.end() :] if end is None else text[start.end() : start.end() + end.start()]
    return re.findall(r"^```python\n(.*?)^```", section, flags=re.S | re.M)
