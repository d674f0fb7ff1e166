"""Deletion-vector index files through expiration, rollback and orphan cleanup: exactly the
index files no retained snapshot or tag references go."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pyarrow as pa

import lakestore
from lakestore.read.deletion_vectors import read_index_files

# a time after every snapshot of the test session: time retention never protects them
LATER_MS = int(time.time() * 1000) + 86_400_000

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
OPTIONS = {"bucket": "2", "deletion-vectors.enabled": "true"}


def _table(tmp_path) -> lakestore.Table:
    catalog = lakestore.Catalog(str(tmp_path))
    catalog.create_database("db")
    return catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options=OPTIONS)


def _write(table: lakestore.Table, ids: range, value: str) -> None:
    table.write_arrow(pa.table({"id": list(ids), "v": [value] * len(ids)}, schema=SCHEMA))


def _on_disk(table: lakestore.Table) -> set[str]:
    folder = Path(table.path) / "index"
    return {p.name for p in folder.iterdir()} if folder.exists() else set()


def _live(table: lakestore.Table, snapshot=None) -> set[str]:
    return {f.file_name for f in read_index_files(table.store.file_io, table.path, snapshot or table.latest_snapshot())}


def _rows(table: lakestore.Table, **kwargs) -> dict[int, str]:
    return {r["id"]: r["v"] for r in table.to_arrow(**kwargs).to_pylist()}


def test_expiration_deletes_unreferenced_index_files(tmp_path):
    table = _table(tmp_path)
    _write(table, range(20), "a")
    for i, value in enumerate("bcde"):
        _write(table, range(i, 20, 3), value)
    assert len(_on_disk(table)) > len(_live(table)) > 0
    expected = _rows(table)
    table.manage.create_tag("t1", snapshot_id=4)
    tagged, tagged_rows = _live(table, table.snapshot(4)), _rows(table, snapshot_id=4)
    table.maintenance.expire_snapshots(num_retained_min=1, time_retained_ms=0, now_ms=LATER_MS)
    assert table.store.snapshot_manager.earliest_id() == table.latest_snapshot().id
    assert _on_disk(table) == _live(table) | tagged
    assert _rows(lakestore.Table.from_path(table.path)) == expected
    assert _rows(table, tag="t1") == tagged_rows
    table.manage.delete_tag("t1")
    assert _on_disk(table) == _live(table)


def test_orphan_index_files_are_removed(tmp_path):
    table = _table(tmp_path)
    _write(table, range(10), "a")
    _write(table, range(5), "b")
    live = _live(table)
    stray = Path(table.path) / "index" / "index-00000000-0000-0000-0000-000000000000-0"
    stray.write_bytes(b"\x01")
    old = time.time() - 3 * 86_400
    os.utime(stray, (old, old))
    result = table.maintenance.remove_orphan_files(older_than_ms=int(time.time() * 1000))
    assert "index/" + stray.name in result.deleted
    assert live <= _on_disk(table)
    assert _rows(table) == {**{i: "a" for i in range(10)}, **{i: "b" for i in range(5)}}
