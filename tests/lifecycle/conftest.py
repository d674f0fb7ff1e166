from __future__ import annotations

import pyarrow as pa
import pytest

import lakestore

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.float64())])


@pytest.fixture
def catalog(tmp_path):
    c = lakestore.Catalog(str(tmp_path / "wh"))
    c.create_database("db")
    return c


def rows(table: pa.Table) -> list[tuple]:
    out = [tuple(r.values()) for r in table.to_pylist()]
    return sorted(out, key=lambda r: tuple((v is None, "" if v is None else v) for v in r))


def batch(dt: str, ids, value: float) -> pa.Table:
    ids = list(ids)
    return pa.table({"dt": [dt] * len(ids), "id": ids, "v": [value] * len(ids)}, schema=SCHEMA)
