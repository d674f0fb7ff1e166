"""Interop with Apache Paimon's Java core, the reference implementation: lakestore writes and Java
reads, Java writes and lakestore reads, on one warehouse.

Fixtures: ``java`` is Paimon 2.0.0, the reference; ``java_any`` runs a test once per current
Paimon version (2.0.0 and 1.4.2, the last 1.x) for the cases whose files differ between them;
``java09`` is Paimon 0.9 (pypaimon 0.2.0's bridge), kept for the tables older deployments still
write (test_java09_tables.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import lakestore
from tests._support import sort_rows
from tests.oracle.java_driver import JavaOracle, java_oracle

pytestmark = pytest.mark.oracle


CURRENT_VERSIONS = ["2.0.0", "1.4.2"]


@pytest.fixture
def java() -> JavaOracle:
    return java_oracle()


@pytest.fixture(params=CURRENT_VERSIONS)
def java_any(request) -> JavaOracle:
    return java_oracle(request.param)


@pytest.fixture
def java09() -> Any:
    return java_oracle("0.9")


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
