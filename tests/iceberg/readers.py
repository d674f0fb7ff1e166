"""The three Iceberg readers the tests compare with lakestore: pyiceberg, DuckDB and Polars, each
reading a table's Iceberg metadata file (``v<N>.metadata.json``)."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import Any

import pyarrow as pa

os.environ.setdefault("POLARS_ICEBERG_PLANNER", "pyiceberg")


def duckdb_connection() -> Any:
    """DuckDB with the avro and iceberg extensions loaded from their wheels (avro first: loading
    iceberg alone tries to download avro)."""
    import duckdb

    con = duckdb.connect()
    for name in ("avro", "iceberg"):
        spec = importlib.util.find_spec(f"duckdb_extension_{name}")
        assert spec is not None and spec.submodule_search_locations, f"duckdb-extension-{name} is not installed"
        root = Path(next(iter(spec.submodule_search_locations)))
        con.sql(f"LOAD '{root / 'extensions' / f'v{duckdb.__version__}' / f'{name}.duckdb_extension'}'")
    return con


def latest_metadata(metadata_dir: str | Path) -> str:
    hint = (Path(metadata_dir) / "version-hint.text").read_text().strip()
    return str(Path(metadata_dir) / f"v{hint}.metadata.json")


def sorted_rows(table: pa.Table, columns: list[str]) -> list[tuple[Any, ...]]:
    rows = [tuple(r[c] for c in columns) for r in table.select(columns).to_pylist()]
    return sorted(rows, key=lambda r: tuple((v is None, v if v is not None else 0) for v in r))


def read_pyiceberg(metadata: str, snapshot_id: int | None = None) -> pa.Table:
    from pyiceberg.table import StaticTable

    table = StaticTable.from_metadata(metadata)
    return table.scan(snapshot_id=snapshot_id).to_arrow()


def read_duckdb(con: Any, metadata: str, snapshot_id: int | None = None) -> pa.Table:
    version = "" if snapshot_id is None else f", snapshot_from_id => {snapshot_id}"
    return con.sql(f"SELECT * FROM iceberg_scan('{metadata}'{version})").to_arrow_table()


def read_polars(metadata: str, snapshot_id: int | None = None) -> pa.Table:
    import polars as pl

    return pl.scan_iceberg(metadata, snapshot_id=snapshot_id).collect().to_arrow()


def all_readers(con: Any, metadata: str, snapshot_id: int | None = None) -> dict[str, pa.Table]:
    return {
        "pyiceberg": read_pyiceberg(metadata, snapshot_id),
        "duckdb": read_duckdb(con, metadata, snapshot_id),
        "polars": read_polars(metadata, snapshot_id),
    }


def metadata_json(path: str) -> dict[str, Any]:
    doc = json.loads(Path(path).read_text())
    assert isinstance(doc, dict)
    return doc
