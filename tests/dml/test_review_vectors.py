"""Two deletion-vector DELETEs of rows of the same data file, the second landing while the
first is between its conflict check and its publish: both deletes must hold (or the first must
fail), never a reported success whose rows are still there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import lakestore
from lakestore import col
from lakestore.dml import append_vectors
from lakestore.errors import CommitConflictError

pytestmark = pytest.mark.oracle

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.string())])
LAYOUTS = {
    "unaware": {"bucket": "-1", "deletion-vectors.enabled": "true"},
    "bucketed": {"bucket": "1", "bucket-key": "id", "deletion-vectors.enabled": "true"},
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_delete_racing_another_delete_loses_nothing(
    java: Any, warehouse: Path, catalog: lakestore.Catalog, layout: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"db.race_{layout}"
    java.create_table(warehouse, name, SCHEMA, partition_keys=["dt"], options=LAYOUTS[layout])
    java.write(warehouse, name, pa.table({"dt": ["a"] * 10, "id": list(range(10)), "v": ["x"] * 10}, schema=SCHEMA))
    checked = append_vectors._check_base
    raced = []

    def check_then_race(*args: Any) -> None:
        checked(*args)
        if not raced:  # another writer's delete lands right after this one's check
            raced.append(True)
            catalog.get_table(name).delete(col("id") == 2)

    monkeypatch.setattr(append_vectors, "_check_base", check_then_race)
    try:
        catalog.get_table(name).delete(col("id") == 1)
        want = sorted(set(range(10)) - {1, 2})
    except CommitConflictError:
        want = sorted(set(range(10)) - {2})
    assert raced
    assert sorted(catalog.get_table(name).to_arrow().column("id").to_pylist()) == want
    assert sorted(java.read(warehouse, name).column("id").to_pylist()) == want
