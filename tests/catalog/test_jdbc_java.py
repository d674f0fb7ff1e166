"""One JDBC catalog shared by Paimon 2.0.0 Java's ``JdbcCatalog`` and lakestore's: same ``uri``,
``warehouse`` and ``catalog-key``, each engine sees and uses what the other created, wrote,
renamed and dropped.

PostgreSQL with the catalog lock (``lock.enabled``) for both engines: Paimon 2.0's JDBC lock on
SQLite fails with SQLITE_BUSY inside Java alone. The embedded SQLite catalog is shared without
the lock (one writer at a time)."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import lakestore
from lakestore.catalog import JdbcCatalog
from tests.oracle.java_driver import java_oracle

pytestmark = pytest.mark.oracle

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


def _sorted(table: pa.Table) -> list[dict[str, Any]]:
    return sorted(table.select(["id", "v"]).to_pylist(), key=lambda r: r["id"])


@pytest.fixture
def shared(tmp_path: Path, postgres: Any) -> tuple[Any, str, dict[str, str]]:
    """Paimon Java and the options of one JDBC catalog on the session's PostgreSQL."""
    java = java_oracle()
    warehouse = str(tmp_path / "wh")
    options = {
        "metastore": "jdbc",
        "uri": postgres.uri,
        "jdbc.user": "lake",
        "catalog-key": f"k{uuid.uuid4().hex[:10]}",  # the database is the session's
        "lock.enabled": "true",
    }
    java.use_catalog(warehouse, options)
    yield java, warehouse, options
    java.use_catalog(warehouse, {})


def test_java_creates_and_writes_lakestore_lists_reads_and_writes(shared: tuple[Any, str, dict[str, str]]):
    java, wh, options = shared
    java.create_table(wh, "jdb.orders", SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    java.write(wh, "jdb.orders", pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"]}, schema=SCHEMA))
    java.catalog(wh, "create_database", database="empty_db", properties={"owner": "java"})

    catalog = lakestore.Catalog(wh, options=options)
    assert isinstance(catalog, JdbcCatalog)
    assert catalog.list_databases() == ["empty_db", "jdb"]
    assert catalog.list_tables("jdb") == ["orders"] and catalog.list_tables("empty_db") == []
    assert catalog.database_properties("empty_db") == {"owner": "java", "location": f"{wh}/empty_db.db"}
    table = catalog.get_table("jdb.orders")
    assert _sorted(table.to_arrow()) == _sorted(java.read(wh, "jdb.orders"))

    table.write_arrow(pa.table({"id": [2, 4], "v": ["B", "d"]}, schema=SCHEMA))  # an upsert and a new key
    expected = [{"id": 1, "v": "a"}, {"id": 2, "v": "B"}, {"id": 3, "v": "c"}, {"id": 4, "v": "d"}]
    assert _sorted(java.read(wh, "jdb.orders")) == expected

    java.catalog(wh, "rename_table", identifier="jdb.orders", target="jdb.orders2")
    assert catalog.list_tables("jdb") == ["orders2"] and not catalog.table_exists("jdb.orders")
    assert _sorted(catalog.get_table("jdb.orders2").to_arrow()) == expected
    catalog.drop_table("jdb.orders2")
    assert java.catalog(wh, "list_tables", database="jdb") == []
    assert not Path(wh, "jdb.db", "orders2").exists()
    catalog.drop_database("empty_db")
    assert java.catalog(wh, "list_databases") == ["jdb"]


def test_lakestore_creates_and_writes_java_lists_reads_and_writes(shared: tuple[Any, str, dict[str, str]]):
    java, wh, options = shared
    catalog = lakestore.Catalog(wh, options=options)
    catalog.create_database("lake", properties={"owner": "lakestore"})
    table = catalog.create_table("lake.t", schema=SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    table.write_arrow(pa.table({"id": [1, 2], "v": ["x", "y"]}, schema=SCHEMA))

    catalog.create_database("only_rows")  # rows without a folder: a filesystem catalog would not see it
    assert not Path(wh, "only_rows.db").exists()
    assert java.catalog(wh, "list_databases") == ["lake", "only_rows"]
    assert java.catalog(wh, "list_tables", database="lake") == ["t"]
    assert _sorted(java.read(wh, "lake.t")) == [{"id": 1, "v": "x"}, {"id": 2, "v": "y"}]
    java.write(wh, "lake.t", pa.table({"id": [2, 3], "v": ["Y", "z"]}, schema=SCHEMA))
    expected = [{"id": 1, "v": "x"}, {"id": 2, "v": "Y"}, {"id": 3, "v": "z"}]
    assert _sorted(catalog.get_table("lake.t").to_arrow()) == expected

    catalog.alter_table("lake.t", [lakestore.AddColumn("w", pa.int64())])
    assert java.read(wh, "lake.t").schema.names == ["id", "v", "w"]
    catalog.rename_table("lake.t", "lake.u")
    assert java.catalog(wh, "list_tables", database="lake") == ["u"]
    assert _sorted(java.read(wh, "lake.u")) == expected
    java.catalog(wh, "drop_table", identifier="lake.u")
    assert catalog.list_tables("lake") == [] and not Path(wh, "lake.db", "u").exists()
    java.catalog(wh, "drop_database", database="lake")
    assert catalog.list_databases() == ["only_rows"]


def test_the_embedded_sqlite_catalog_is_shared_without_the_lock(tmp_path: Path):
    java = java_oracle()
    wh = str(tmp_path / "wh")
    catalog = lakestore.Catalog(wh, options={"metastore": "jdbc"})  # jdbc:sqlite:<wh>/jdbc-catalog.sqlite
    java.use_catalog(wh, {"metastore": "jdbc", "uri": catalog.options["uri"]})
    try:
        catalog.create_database("db")
        catalog.create_table("db.t", schema=SCHEMA).write_arrow(pa.table({"id": [1], "v": ["a"]}, schema=SCHEMA))
        java.create_table(wh, "db.j", SCHEMA)
        java.write(wh, "db.j", pa.table({"id": [5], "v": ["e"]}, schema=SCHEMA))
        assert java.catalog(wh, "list_tables", database="db") == ["j", "t"]
        assert catalog.list_tables("db") == ["j", "t"]
        assert _sorted(java.read(wh, "db.t")) == [{"id": 1, "v": "a"}]
        assert _sorted(catalog.get_table("db.j").to_arrow()) == [{"id": 5, "v": "e"}]
    finally:
        java.use_catalog(wh, {})
