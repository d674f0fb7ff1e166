"""Fixtures of the resource tests: a warehouse under pytest's tmp dir and the I/O manager bound to it."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("dagster")

import lakestore  # noqa: E402
from resources import PaimonIOManager  # noqa: E402


@pytest.fixture
def warehouse(tmp_path: Path) -> str:
    return str(tmp_path / "warehouse")


@pytest.fixture
def io_manager(warehouse: str) -> PaimonIOManager:
    return PaimonIOManager(warehouse=warehouse)


@pytest.fixture
def catalog(warehouse: str) -> lakestore.Catalog:
    return lakestore.Catalog(warehouse)
