"""Filesystem catalog: databases and tables, typed errors."""

from __future__ import annotations

import json
import os

import pyarrow as pa
import pytest

import lakestore
from lakestore.errors import (
    DatabaseAlreadyExistsError,
    DatabaseNotFoundError,
    InvalidIdentifierError,
    TableAlreadyExistsError,
    TableNotFoundError,
)

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.float64())])


@pytest.fixture
def catalog(tmp_path):
    cat = lakestore.Catalog(str(tmp_path / "wh"))
    cat.create_database("db")
    return cat


def _data():
    return pa.table({"dt": ["a", "b"], "id": pa.array([1, 2], pa.int64()), "v": [1.0, 2.0]})


def test_layout_on_disk(catalog, tmp_path):
    table = catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "2"})
    path = tmp_path / "wh" / "db.db" / "t"
    assert table.path == str(path)
    doc = json.loads((path / "schema" / "schema-0").read_text())
    assert [f["type"] for f in doc["fields"]] == ["STRING NOT NULL", "BIGINT NOT NULL", "DOUBLE"]
    assert [f["id"] for f in doc["fields"]] == [0, 1, 2]
    assert doc["partitionKeys"] == ["dt"] and doc["primaryKeys"] == ["dt", "id"]
    assert doc["options"]["bucket"] == "2"
    assert doc["highestFieldId"] == 2


def test_create_database_exist_ok(catalog):
    with pytest.raises(DatabaseAlreadyExistsError):
        catalog.create_database("db")
    catalog.create_database("db", exist_ok=True)
    catalog.create_database("other")
    assert catalog.list_databases() == ["db", "other"]


def test_create_table_exist_ok_returns_existing(catalog):
    t1 = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    t1.write_arrow(_data())
    with pytest.raises(TableAlreadyExistsError):
        catalog.create_table("db.t", schema=SCHEMA)
    # exist_ok keeps the existing table (schema and data), it does not replace it
    t2 = catalog.create_table("db.t", schema=pa.schema([("x", pa.int32())]), exist_ok=True)
    assert t2.schema.field_names == ["dt", "id", "v"]
    assert t2.primary_keys == ("id",)
    assert t2.to_arrow().num_rows == 2
    assert os.listdir(os.path.join(t1.path, "schema")) == ["schema-0"]


def test_get_list_drop(catalog):
    catalog.create_table("db.b", schema=SCHEMA)
    catalog.create_table("db.a", schema=SCHEMA)
    assert catalog.list_tables("db") == ["a", "b"]
    assert catalog.get_table("db.a").identifier == "db.a"
    catalog.drop_table("db.a")
    assert catalog.list_tables("db") == ["b"]
    assert not catalog.table_exists("db.a")
    with pytest.raises(TableNotFoundError):
        catalog.get_table("db.a")
    with pytest.raises(TableNotFoundError):
        catalog.drop_table("db.a")
    catalog.drop_table("db.a", missing_ok=True)


def test_rename_keeps_data(catalog):
    t = catalog.create_table("db.src", schema=SCHEMA)
    t.write_arrow(_data())
    catalog.create_database("db2")
    catalog.rename_table("db.src", "db2.dst")
    assert catalog.list_tables("db") == []
    moved = catalog.get_table("db2.dst")
    assert sorted(moved.to_arrow().column("id").to_pylist()) == [1, 2]
    with pytest.raises(TableNotFoundError):
        catalog.rename_table("db.src", "db.x")


def test_rename_onto_existing_refused(catalog):
    catalog.create_table("db.a", schema=SCHEMA).write_arrow(_data())
    catalog.create_table("db.b", schema=SCHEMA)
    with pytest.raises(TableAlreadyExistsError):
        catalog.rename_table("db.a", "db.b")
    assert catalog.get_table("db.a").to_arrow().num_rows == 2
    with pytest.raises(DatabaseNotFoundError):
        catalog.rename_table("db.a", "nodb.a")


def test_from_path(catalog):
    t = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options={"bucket": "3"})
    t.write_arrow(_data())
    opened = lakestore.Table.from_path(t.path)
    assert opened.primary_keys == ("id",)
    assert opened.options.bucket == 3
    assert sorted(opened.to_arrow().column("id").to_pylist()) == [1, 2]
    with pytest.raises(TableNotFoundError):
        lakestore.Table.from_path(os.path.join(catalog.warehouse, "db.db", "missing"))


def test_unknown_database(catalog):
    with pytest.raises(DatabaseNotFoundError):
        catalog.create_table("nodb.t", schema=SCHEMA)
    with pytest.raises(DatabaseNotFoundError):
        catalog.get_table("nodb.t")
    with pytest.raises(DatabaseNotFoundError):
        catalog.list_tables("nodb")
    with pytest.raises(DatabaseNotFoundError):
        catalog.drop_database("nodb")
    catalog.drop_database("nodb", missing_ok=True)
    assert not os.path.exists(os.path.join(catalog.warehouse, "nodb.db"))


def test_unknown_table_is_not_a_database_error(catalog):
    with pytest.raises(TableNotFoundError):
        catalog.get_table("db.nothing")
    # a directory without schema files is not a table
    os.makedirs(os.path.join(catalog.warehouse, "db.db", "junk"))
    with pytest.raises(TableNotFoundError):
        catalog.get_table("db.junk")
    assert catalog.list_tables("db") == []


def test_drop_database(catalog):
    catalog.create_table("db.t", schema=SCHEMA)
    with pytest.raises(lakestore.CatalogError):
        catalog.drop_database("db")
    assert catalog.list_tables("db") == ["t"]
    catalog.drop_database("db", cascade=True)
    assert catalog.list_databases() == []


@pytest.mark.parametrize("ident", ["t", "a.b.c", "db.", ".t", "db.t/x", "db.../x", "db.t x", "../db.t", ""])
def test_invalid_identifiers(catalog, ident):
    with pytest.raises(InvalidIdentifierError):
        catalog.create_table(ident, schema=SCHEMA)
    with pytest.raises(InvalidIdentifierError):
        catalog.get_table(ident)


def test_errors_share_base_class(catalog):
    with pytest.raises(lakestore.LakestoreError):
        catalog.get_table("db.nothing")
