"""Interop with Apache Paimon's Java core (0.9), the reference implementation: lakestore writes
and Java reads, Java writes and lakestore reads, on one warehouse."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import lakestore
from tests._support import sort_rows
from tests.oracle.java_driver import JavaOracle, java_oracle

pytestmark = pytest.mark.oracle


@pytest.fixture
def java() -> JavaOracle:
    return java_oracle()


@pytest.fixture
def warehouse(tmp_path) -> Path:
    return tmp_path / "wh"


@pytest.fixture
def catalog(warehouse) -> lakestore.Catalog:
    c = lakestore.Catalog(str(warehouse))
    c.create_database("db", exist_ok=True)
    return c


def same_rows(got: pa.Table, expected: pa.Table, keys: list[str]) -> None:
    """Equal as sets of rows over ``expected``'s columns (Java reads every column nullable)."""
    got = got.select(expected.column_names)
    assert sort_rows(got, keys) == sort_rows(expected, keys)
