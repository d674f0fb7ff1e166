"""lakestore's JDBC catalog (``metastore=jdbc``) on SQLite and on the session's PostgreSQL: the
rows it keeps are Paimon's (read back with plain SQL, not through lakestore), the table files are
where Paimon puts them, and every failure is typed."""

from __future__ import annotations

import pickle
import sqlite3
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import lakestore
from lakestore.catalog import FileSystemCatalog, HiveCatalog, JdbcCatalog, RestCatalog
from lakestore.cli import main as cli_main
from lakestore.errors import (
    CatalogUnreachableError,
    DatabaseAlreadyExistsError,
    DatabaseNotFoundError,
    InvalidCatalogUriError,
    LockAcquireTimeoutError,
    MissingDriverError,
    OptionError,
    TableAlreadyExistsError,
    TableNotFoundError,
)
from lakestore.io.lock import JdbcCatalogLock
from lakestore.meta.schema_change import AddColumn, SetOption
from tests.postgres import free_port

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


@pytest.fixture(params=["sqlite", "postgresql"])
def jdbc_options(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, str]:
    # a catalog-key per test: the PostgreSQL database is the session's, shared by other tests
    key = f"k{uuid.uuid4().hex[:10]}"
    if request.param == "sqlite":
        return {"metastore": "jdbc", "uri": f"jdbc:sqlite:{tmp_path}/catalog.sqlite", "catalog-key": key}
    pg = request.getfixturevalue("postgres")
    return {"metastore": "jdbc", "uri": pg.uri, "jdbc.user": "lake", "catalog-key": key}


def sql(options: dict[str, str], statement: str, params: tuple = ()) -> list[tuple]:
    """Plain SQL on the catalog database, without lakestore."""
    uri = options["uri"]
    if uri.startswith("jdbc:sqlite:"):
        with sqlite3.connect(uri[len("jdbc:sqlite:") :]) as conn:
            return sorted(conn.execute(statement, params).fetchall())
    import psycopg

    with psycopg.connect(uri[len("jdbc:") :], user=options["jdbc.user"], autocommit=True) as conn:
        return sorted(conn.execute(statement.replace("?", "%s"), params).fetchall())


@pytest.fixture
def catalog(tmp_path: Path, jdbc_options: dict[str, str]) -> Iterator[JdbcCatalog]:
    wh = tmp_path / "wh"
    cat = lakestore.Catalog(str(wh), options=jdbc_options)
    assert isinstance(cat, JdbcCatalog)
    yield cat
    cat.close()


def _rows(table: lakestore.Table) -> list[dict[str, Any]]:
    return sorted(table.to_arrow().to_pylist(), key=lambda r: r["id"])


def test_databases_and_tables_are_paimons_rows(catalog: JdbcCatalog, jdbc_options: dict[str, str]):
    key, wh = jdbc_options["catalog-key"], catalog.warehouse
    catalog.create_database("sales", properties={"owner": "ops"})
    assert sql(jdbc_options, "SELECT * FROM paimon_database_properties WHERE catalog_key = ?", (key,)) == [
        (key, "sales", "exists", "true"),
        (key, "sales", "location", f"{wh}/sales.db"),
        (key, "sales", "owner", "ops"),
    ]
    assert not Path(wh, "sales.db").exists()  # as Paimon: a database is rows, not a folder
    assert catalog.database_properties("sales") == {"location": f"{wh}/sales.db", "owner": "ops"}

    table = catalog.create_table("sales.orders", schema=SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    assert sql(jdbc_options, "SELECT * FROM paimon_tables WHERE catalog_key = ?", (key,)) == [(key, "sales", "orders")]
    assert Path(wh, "sales.db", "orders", "schema", "schema-0").is_file()
    table.write_arrow(pa.table({"id": [1, 2], "v": ["a", "b"]}, schema=SCHEMA))
    table.write_arrow(pa.table({"id": [2], "v": ["B"]}, schema=SCHEMA))

    again = lakestore.Catalog(wh, options=jdbc_options)  # a second catalog over the same rows
    assert again.list_databases() == ["sales"] and again.list_tables("sales") == ["orders"]
    assert _rows(again.get_table("sales.orders")) == [{"id": 1, "v": "a"}, {"id": 2, "v": "B"}]
    # the files are where the filesystem catalog (and Paimon's) finds them
    assert _rows(lakestore.Catalog(wh).get_table("sales.orders")) == [{"id": 1, "v": "a"}, {"id": 2, "v": "B"}]
    assert catalog.create_table("sales.orders", schema=SCHEMA, exist_ok=True).schema.primary_keys == ("id",)
    with pytest.raises(TableAlreadyExistsError):
        catalog.create_table("sales.orders", schema=SCHEMA)
    with pytest.raises(DatabaseAlreadyExistsError):
        catalog.create_database("sales")
    catalog.create_database("sales", exist_ok=True)


def test_rename_alter_drop(catalog: JdbcCatalog, jdbc_options: dict[str, str]):
    key, wh = jdbc_options["catalog-key"], catalog.warehouse
    catalog.create_database("a")
    catalog.create_database("b")
    catalog.create_table("a.t", schema=SCHEMA).write_arrow(pa.table({"id": [1], "v": ["x"]}, schema=SCHEMA))
    catalog.rename_table("a.t", "b.u")
    assert sql(jdbc_options, "SELECT * FROM paimon_tables WHERE catalog_key = ?", (key,)) == [(key, "b", "u")]
    assert not Path(wh, "a.db", "t").exists() and Path(wh, "b.db", "u", "schema", "schema-0").is_file()
    assert catalog.list_tables("a") == [] and catalog.list_tables("b") == ["u"]
    with pytest.raises(TableNotFoundError):
        catalog.get_table("a.t")

    altered = catalog.alter_table("b.u", [AddColumn("w", pa.int32())])
    assert altered.schema.id == 1 and Path(wh, "b.db", "u", "schema", "schema-1").is_file()
    assert catalog.get_table("b.u").to_arrow().to_pylist() == [{"id": 1, "v": "x", "w": None}]

    catalog.create_table("a.t", schema=SCHEMA)
    with pytest.raises(TableAlreadyExistsError):
        catalog.rename_table("a.t", "b.u")
    catalog.drop_table("a.t")
    assert not Path(wh, "a.db", "t").exists()
    with pytest.raises(TableNotFoundError):
        catalog.drop_table("a.t")
    catalog.drop_table("a.t", missing_ok=True)

    with pytest.raises(TableAlreadyExistsError, match="not empty"):
        catalog.drop_database("b")
    catalog.drop_database("b", cascade=True)
    catalog.drop_database("a")
    assert catalog.list_databases() == []
    assert sql(jdbc_options, "SELECT * FROM paimon_tables WHERE catalog_key = ?", (key,)) == []
    assert sql(jdbc_options, "SELECT * FROM paimon_database_properties WHERE catalog_key = ?", (key,)) == []
    assert not Path(wh, "b.db", "u").exists()
    with pytest.raises(DatabaseNotFoundError):
        catalog.create_table("b.v", schema=SCHEMA)


def test_a_folder_nobody_registered_is_not_a_table(catalog: JdbcCatalog):
    wh = catalog.warehouse
    filesystem = lakestore.Catalog(wh)  # the same warehouse through the filesystem catalog
    filesystem.create_database("db")
    filesystem.create_table("db.t", schema=SCHEMA).write_arrow(pa.table({"id": [7], "v": ["q"]}, schema=SCHEMA))
    assert catalog.list_databases() == []
    catalog.create_database("db")
    assert catalog.list_tables("db") == [] and not catalog.table_exists("db.t")
    with pytest.raises(TableNotFoundError):
        catalog.get_table("db.t")
    with pytest.raises(TableAlreadyExistsError, match="repair_table"):
        catalog.create_table("db.t", schema=SCHEMA)  # and the other catalog's table is untouched
    assert _rows(filesystem.get_table("db.t")) == [{"id": 7, "v": "q"}]
    catalog.repair_table("db.t")
    assert catalog.list_tables("db") == ["t"] and _rows(catalog.get_table("db.t")) == [{"id": 7, "v": "q"}]


def test_catalog_keys_are_separate_namespaces(tmp_path: Path):
    uri = f"jdbc:sqlite:{tmp_path}/shared.sqlite"
    one = lakestore.Catalog(str(tmp_path / "wh1"), options={"metastore": "jdbc", "uri": uri, "catalog-key": "one"})
    two = lakestore.Catalog(str(tmp_path / "wh2"), options={"metastore": "jdbc", "uri": uri, "catalog-key": "two"})
    one.create_database("db")
    one.create_table("db.t", schema=SCHEMA)
    assert two.list_databases() == []
    two.create_database("db")
    assert two.list_tables("db") == [] and one.list_tables("db") == ["t"]
    plain = lakestore.Catalog(str(tmp_path / "wh3"), options={"metastore": "jdbc", "uri": uri})  # catalog-key 'jdbc'
    assert plain.list_databases() == []


def test_sync_all_properties(tmp_path: Path):
    options = {"metastore": "jdbc", "uri": f"jdbc:sqlite:{tmp_path}/c.sqlite", "sync-all-properties": "true"}
    catalog = lakestore.Catalog(str(tmp_path / "wh"), options=options)
    catalog.create_database("db")
    table = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    query = "SELECT database_name, table_name, property_key, property_value FROM paimon_table_properties"
    expected = {**table.schema.options, "bucket-key": "id", "primary-key": "id"}  # the schema file's options
    assert sql(options, query) == sorted(("db", "t", k, v) for k, v in expected.items())
    assert ("db", "t", "bucket", "2") in sql(options, query)
    catalog.alter_table("db.t", [SetOption("snapshot.num-retained.max", "50")])
    assert ("db", "t", "snapshot.num-retained.max", "50") in sql(options, query)
    catalog.rename_table("db.t", "db.u")
    assert {r[1] for r in sql(options, query)} == {"u"}
    catalog.drop_table("db.u")
    assert sql(options, query) == []


def test_the_catalog_lock_guards_create_and_alter(tmp_path: Path, jdbc_options: dict[str, str]):
    options = {
        **jdbc_options,
        "lock.enabled": "true",
        "lock-acquire-timeout": "1 s",
        "lock-check-max-sleep": "100 ms",
        "lock.expire-time": "1 min",
    }
    catalog = lakestore.Catalog(str(tmp_path / "wh"), options=options)
    catalog.create_database("db")
    other = JdbcCatalogLock.from_options(options)  # another process's hold on the table's lock
    lock_id = f"{options['catalog-key']}.db.t"
    with other.hold(lock_id):
        with pytest.raises(LockAcquireTimeoutError):
            catalog.create_table("db.t", schema=SCHEMA)
        assert catalog.list_tables("db") == [] and not Path(tmp_path, "wh", "db.db", "t").exists()
    # once free: created, written and altered (the schema publish re-enters the held lock)
    table = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    table.write_arrow(pa.table({"id": [1], "v": ["a"]}, schema=SCHEMA))
    assert catalog.alter_table("db.t", [AddColumn("w", pa.int64())]).schema.id == 1
    held = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with other.hold(lock_id):
            held.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(10)
    try:
        with pytest.raises(LockAcquireTimeoutError):
            catalog.alter_table("db.t", [AddColumn("x", pa.int64())])
        # the table's own publishes take the same lock: a commit, a tag
        with pytest.raises(LockAcquireTimeoutError):
            table.write_arrow(pa.table({"id": [2], "v": ["b"]}, schema=SCHEMA))
        with pytest.raises(LockAcquireTimeoutError):
            table.manage.create_tag("t1")
    finally:
        release.set()
        holder.join()
    assert catalog.get_table("db.t").schema.id == 1
    assert [s.id for s in table.snapshots()] == [1] and table.manage.tags() == []
    table.manage.create_tag("t1")  # once free
    assert [t.name for t in table.manage.tags()] == ["t1"]
    other.close()


def test_embedded_sqlite_is_the_default(tmp_path: Path):
    wh = tmp_path / "wh"
    catalog = lakestore.Catalog(str(wh), options={"metastore": "jdbc"})
    assert catalog.options["uri"] == f"jdbc:sqlite:{wh}/jdbc-catalog.sqlite"
    catalog.create_database("db")
    assert (wh / "jdbc-catalog.sqlite").is_file()
    assert lakestore.Catalog(f"file://{wh}", options={"metastore": "JDBC"}).list_databases() == ["db"]
    filesystem = lakestore.Catalog(str(wh), options={"metastore": "filesystem"})
    assert type(filesystem) is FileSystemCatalog and isinstance(filesystem, lakestore.Catalog)
    assert isinstance(catalog, lakestore.Catalog) and not isinstance(catalog, HiveCatalog | RestCatalog)


def test_typed_errors_say_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    wh = str(tmp_path / "wh")
    for uri in ("jdbc:mysql://db:3306/paimon", "postgresql.example.com", "jdbc:sqlite:"):
        with pytest.raises(InvalidCatalogUriError, match="jdbc:sqlite:|jdbc:postgresql:"):
            lakestore.Catalog(wh, options={"metastore": "jdbc", "uri": uri})
    with pytest.raises(InvalidCatalogUriError, match="needs option 'uri'"):
        lakestore.Catalog("s3://bucket/wh", options={"metastore": "jdbc"})
    with pytest.raises(OptionError, match="Hive"):
        lakestore.Catalog(wh, options={"metastore": "hive"})
    with pytest.raises(OptionError, match="filesystem, hive, jdbc"):
        lakestore.Catalog(wh, options={"metastore": "glue"})
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(CatalogUnreachableError, match="writable"):
        lakestore.Catalog(wh, options={"metastore": "jdbc", "uri": f"jdbc:sqlite:{tmp_path}/file/catalog.sqlite"})
    (tmp_path / "garbage.sqlite").write_bytes(b"\x00" * 4096 + b"not sqlite" * 100)
    with pytest.raises(CatalogUnreachableError, match="SQLite database"):
        lakestore.Catalog(wh, options={"metastore": "jdbc", "uri": f"jdbc:sqlite:{tmp_path}/garbage.sqlite"})
    pytest.importorskip("psycopg")
    closed_port = free_port()  # nothing listens there
    with pytest.raises(CatalogUnreachableError, match="server runs"):
        lakestore.Catalog(wh, options={"metastore": "jdbc", "uri": f"jdbc:postgresql://127.0.0.1:{closed_port}/db"})
    with pytest.raises(InvalidCatalogUriError):
        lakestore.Catalog(wh, options={"metastore": "jdbc", "uri": "jdbc:postgresql://127.0.0.1:5432/db?nonsense=1"})
    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if psycopg were not installed
    with pytest.raises(MissingDriverError, match="pip install 'lakestore\\[postgres\\]'"):
        lakestore.Catalog(wh, options={"metastore": "jdbc", "uri": "jdbc:postgresql://127.0.0.1:5432/db"})


def test_cli_and_resource_take_the_catalog_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    from resources.lakestore_catalog import LakestoreResource

    wh = tmp_path / "wh"
    resource = LakestoreResource(warehouse=str(wh), metastore="jdbc")
    catalog = resource.open()
    assert isinstance(catalog, JdbcCatalog) and catalog.options["uri"] == f"jdbc:sqlite:{wh}/jdbc-catalog.sqlite"
    catalog.create_database("db")
    catalog.create_table("db.t", schema=SCHEMA)
    lakestore.Catalog(str(wh)).create_database("folder_only")  # a folder the JDBC catalog does not list
    assert cli_main(["-w", str(wh), "-o", "metastore=jdbc", "--json", "tables"]) == 0
    assert capsys.readouterr().out.strip() == '[{"table": "db.t"}]'
    assert cli_main(["-w", str(wh), "--json", "databases"]) == 0  # the filesystem catalog
    assert "folder_only" in capsys.readouterr().out
    assert cli_main(["-w", str(wh), "-o", "metastore=jdbc", "-o", "uri=jdbc:mysql://x/y", "databases"]) == 1
    assert "jdbc:sqlite:" in capsys.readouterr().err
    assert cli_main(["-w", str(wh), "-o", "metastore", "databases"]) == 2


def test_driver_properties_are_passed_on_or_refused(tmp_path: Path, postgres: Any):
    wh = str(tmp_path / "wh")
    base = {"metastore": "jdbc", "uri": postgres.uri, "jdbc.user": "lake", "catalog-key": f"k{uuid.uuid4().hex[:10]}"}
    # the session's server speaks no SSL: 'require' fails there, which shows the property reached the driver
    with pytest.raises(CatalogUnreachableError, match="SSL"):
        lakestore.Catalog(wh, options={**base, "jdbc.sslmode": "require"})
    with pytest.raises(CatalogUnreachableError, match="SSL"):
        JdbcCatalogLock.from_options({**base, "lock.enabled": "true", "jdbc.sslmode": "require"}).acquire("x")
    catalog = lakestore.Catalog(wh, options={**base, "jdbc.sslmode": "disable"})
    catalog.create_database("db")
    assert pickle.loads(pickle.dumps(catalog.store)).list_databases() == ["db"]  # Spark-style shipping
    with pytest.raises(OptionError, match="'jdbc.ssl'"):
        lakestore.Catalog(wh, options={**base, "jdbc.ssl": "true"})
    with pytest.raises(OptionError, match="'jdbc.journal_mode'"):
        lakestore.Catalog(wh, options={"metastore": "jdbc", "jdbc.journal_mode": "wal"})
