"""A JDBC catalog's drop of a table never deletes the folder of a table created again under
the same name while the drop was deleting (both hold the table's catalog lock)."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import lakestore
from lakestore.catalog import JdbcCatalog

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])


def test_drop_leaves_a_table_created_while_it_deleted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    options = {"metastore": "jdbc", "uri": f"jdbc:sqlite:{tmp_path}/catalog.sqlite", "catalog-key": "k", "lock.enabled": "true"}
    dropper = lakestore.Catalog(str(tmp_path / "wh"), options=options)
    creator = lakestore.Catalog(str(tmp_path / "wh"), options=options)
    assert isinstance(dropper, JdbcCatalog) and isinstance(creator, JdbcCatalog)
    dropper.create_database("db")
    dropper.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    created: list[Any] = []

    def create() -> None:
        try:
            created.append(creator.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options={"bucket": "1"}))
        except Exception as exc:  # reported by the assertions below
            created.append(exc)

    real_delete_dir = dropper.file_io.delete_dir

    def slow_delete_dir(path: str) -> None:
        # a recursive delete removes the schemas first; another writer creates the table again meanwhile
        shutil.rmtree(Path(path) / "schema")
        racer = threading.Thread(target=create)
        racer.start()
        racer.join(timeout=2)
        real_delete_dir(path)
        pending.append(racer)

    pending: list[threading.Thread] = []
    monkeypatch.setattr(dropper.file_io, "delete_dir", slow_delete_dir)
    dropper.drop_table("db.t")
    for racer in pending:
        racer.join(timeout=60)
    assert len(created) == 1 and isinstance(created[0], lakestore.Table), created
    table = creator.get_table("db.t")  # registered, and its folder holds its schema
    table.write_arrow(pa.table({"id": [1], "v": ["a"]}, schema=SCHEMA))
    assert creator.get_table("db.t").to_arrow().to_pylist() == [{"id": 1, "v": "a"}]
