"""Two committers finishing their Iceberg metadata out of order: the older snapshot's metadata,
written while the later one's landed, never takes version-hint.text back to itself."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.table import StaticTable

import lakestore
from lakestore.iceberg import commit as iceberg_commit
from lakestore.iceberg import write_iceberg_metadata
from tests.iceberg.readers import latest_metadata, metadata_json

SCHEMA = pa.schema([("id", pa.int64())])


def test_an_older_snapshots_metadata_finishing_last_leaves_the_later_one_current(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    catalog = lakestore.Catalog(str(tmp_path))
    catalog.create_database("db")
    table = catalog.create_table("db.t", schema=SCHEMA, options={"metadata.iceberg.storage": "table-location"})
    metadata_dir = tmp_path / "db.db" / "t" / "metadata"
    table.write_arrow(pa.table({"id": [0]}, schema=SCHEMA))
    shutil.copytree(metadata_dir, tmp_path / "saved")
    for i in (1, 2):
        table.write_arrow(pa.table({"id": [i]}, schema=SCHEMA))
    # snapshots 2 and 3 landed; their committers have not written Iceberg metadata yet
    shutil.rmtree(metadata_dir)
    shutil.copytree(tmp_path / "saved", metadata_dir)
    src = table._iceberg_sources()
    assert src is not None
    continued = iceberg_commit.MetadataGenerator.continued
    raced: list[bool] = []

    def continued_then_race(self: Any, snapshot: Any, base: Any) -> Any:
        out = continued(self, snapshot, base)
        if not raced:  # snapshot 3's committer writes its metadata while snapshot 2's is being built
            raced.append(True)
            write_iceberg_metadata(src, table.snapshot(3))
        return out

    monkeypatch.setattr(iceberg_commit.MetadataGenerator, "continued", continued_then_race)
    write_iceberg_metadata(src, table.snapshot(2))
    assert raced
    metadata = latest_metadata(metadata_dir)
    assert metadata_json(metadata)["current-snapshot-id"] == 3
    iceberg = StaticTable.from_metadata(metadata)
    assert iceberg.scan().to_arrow().num_rows == 3
