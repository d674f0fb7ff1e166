"""The table's metadata publisher (``lakestore.io.publish``): with ``lock.enabled`` every publish
of a catalog's table (snapshot, schema, tag, on a branch too) holds the table's catalog lock under
Paimon's lock id, while the FileIO underneath holds none; the store keeps the catalog's publisher
through branches and pickling."""

from __future__ import annotations

import pickle
from pathlib import Path

import pyarrow as pa
import pytest

import lakestore
from lakestore.io.factory import publisher_for
from lakestore.io.fileio import LocalFileIO
from lakestore.io.lock import JdbcCatalogLock
from lakestore.io.publish import MetadataPublisher

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


def _rows(*ids: int) -> pa.Table:
    return pa.table({"id": list(ids), "v": [f"v{i}" for i in ids]}, schema=SCHEMA)


def test_every_publish_of_a_locked_catalogs_table_holds_its_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    options = {"lock.enabled": "true", "uri": f"jdbc:sqlite:{tmp_path}/locks.db", "catalog-key": "prod"}
    catalog = lakestore.Catalog(str(tmp_path / "wh"), options=options)
    lock = catalog.publisher.lock
    assert isinstance(lock, JdbcCatalogLock) and type(catalog.file_io) is LocalFileIO
    published: list[tuple[str, list[str]]] = []
    link = LocalFileIO.try_publish

    def recording(self: LocalFileIO, path: str, data: bytes) -> bool:
        published.append(("/".join(path.split("/")[-2:]), sorted(lock._thread_held())))
        return link(self, path, data)

    monkeypatch.setattr(LocalFileIO, "try_publish", recording)
    catalog.create_database("db")
    table = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    table.write_arrow(_rows(1, 2))
    catalog.alter_table("db.t", [lakestore.SetOption("snapshot.num-retained.max", "20")])
    table.manage.create_tag("t1")
    table.manage.rename_tag("t1", "t2")
    main_publishes = list(published)
    branch = table.manage.create_branch("b", tag="t2")
    branch.write_arrow(_rows(3))
    assert [name for name, _ in main_publishes] == [
        "schema/schema-0",
        "snapshot/snapshot-1",
        "schema/schema-1",
        "tag/tag-t1",
        "tag/tag-t2",
    ]
    assert all(held == ["prod.db.t"] for _, held in main_publishes), main_publishes  # Paimon's lock id
    branch_publishes = published[len(main_publishes) :]
    assert [name for name, _ in branch_publishes] == ["schema/schema-0", "snapshot/snapshot-1", "snapshot/snapshot-2"]
    assert all(len(held) == 1 and held[0].endswith("/db.db/t/branch/branch-b") for _, held in branch_publishes), branch_publishes
    assert not lock._thread_held()  # every hold was released
    assert sorted(branch.to_arrow().column("id").to_pylist()) == [1, 2, 3]


def test_the_store_keeps_the_catalogs_publisher(tmp_path: Path):
    options = {"lock.enabled": "true", "uri": f"jdbc:sqlite:{tmp_path}/locks.db"}
    catalog = lakestore.Catalog(str(tmp_path / "wh"), options=options)
    catalog.create_database("db")
    table = catalog.create_table("db.t", schema=SCHEMA)
    store = table.store
    assert store.publisher is catalog.publisher and store.snapshot_commit.publisher is catalog.publisher
    assert store.schema_manager.publisher is catalog.publisher
    table.manage.create_branch("b")
    assert table.on_branch("b").store.publisher is catalog.publisher
    again = pickle.loads(pickle.dumps(store.publisher))  # only options travel: the lock reconnects
    assert isinstance(again.lock, JdbcCatalogLock) and again.lock.options == catalog.publisher.lock.options
    assert again.catalog_options() == catalog.publisher.catalog_options()
    # a store opened by path with the catalog's options publishes under the same lock
    opened = lakestore.FileStore.open(table.path, file_io=LocalFileIO(), publisher=publisher_for(LocalFileIO(), options))
    assert isinstance(opened.publisher.lock, JdbcCatalogLock) and opened.snapshot_commit.publisher is opened.publisher
    plain = lakestore.Catalog(str(tmp_path / "wh"))
    assert plain.publisher.lock is None and plain.get_table("db.t").store.publisher.lock is None
    assert MetadataPublisher(LocalFileIO()).catalog_options() == {}


def test_a_table_opened_by_path_with_lock_options_publishes_under_the_lock(tmp_path: Path):
    options = {"lock.enabled": "true", "uri": f"jdbc:sqlite:{tmp_path}/locks.db", "lock-acquire-timeout": "300 ms"}
    catalog = lakestore.Catalog(str(tmp_path / "wh"), options=options)
    catalog.create_database("db")
    path = catalog.create_table("db.t", schema=SCHEMA).path
    opened = lakestore.Table.from_path(path, options=options)
    other = JdbcCatalogLock.from_options(options)
    with other.hold("jdbc.db.t"), pytest.raises(lakestore.LockAcquireTimeoutError):
        opened.write_arrow(_rows(1))
    other.close()
