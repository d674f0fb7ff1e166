"""The abstract catalog (lakestore.catalog.base) and the REST codec both sides of the REST catalog
use (lakestore.catalog.rest_codec)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pyarrow as pa
import pytest

import lakestore
import lakestore.catalog.filesystem as filesystem
from lakestore.catalog import FileSystemCatalog, HiveCatalog, JdbcCatalog, RestCatalog
from lakestore.catalog import rest_codec as codec
from lakestore.catalog.base import NewTable
from lakestore.errors import OptionError, TableAlreadyExistsError
from lakestore.meta.schema import new_schema
from lakestore.meta.schema_change import (
    AddColumn,
    DropColumn,
    RemoveOption,
    RenameColumn,
    SetOption,
    UpdateColumnType,
    UpdateComment,
    to_data_type,
)
from lakestore.table import Table


def test_every_catalog_is_a_catalog_and_the_base_is_abstract(tmp_path: Path):
    for impl in (FileSystemCatalog, JdbcCatalog, RestCatalog, HiveCatalog):
        assert issubclass(impl, lakestore.Catalog) and not getattr(impl, "__abstractmethods__", None), impl
    assert lakestore.Catalog.__abstractmethods__ >= {"_create_table", "get_table", "alter_table", "list_tables", "drop_table"}

    class Half(lakestore.Catalog):  # misses most of the API
        def get_table(self, identifier: str) -> Table:
            raise AssertionError

    with pytest.raises(TypeError, match="abstract"):
        Half(str(tmp_path))
    assert type(lakestore.Catalog(str(tmp_path / "wh"))) is FileSystemCatalog


def test_the_old_filesystem_catalog_name_warns_and_still_builds_catalogs(tmp_path: Path):
    with pytest.warns(DeprecationWarning, match=r"filesystem\.Catalog is deprecated .* use lakestore\.Catalog .*FileSystemCatalog"):
        old = filesystem.Catalog
    assert old is lakestore.Catalog
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        catalog = old(str(tmp_path / "wh"), options={"metastore": "jdbc"})
    assert type(catalog) is JdbcCatalog
    with pytest.raises(AttributeError):
        filesystem.Catalogue  # noqa: B018 - a misspelt name is still an AttributeError


def test_create_table_is_parsed_once_for_every_implementation(tmp_path: Path):
    seen: list[tuple[NewTable, bool]] = []

    class Recording(FileSystemCatalog):
        def _create_table(self, new: NewTable, *, exist_ok: bool) -> Table:
            seen.append((new, exist_ok))
            return super()._create_table(new, exist_ok=exist_ok)

    catalog = Recording(str(tmp_path / "wh"))
    catalog.create_database("db")
    schema = pa.schema([("dt", pa.string()), ("id", pa.int64())])
    table = catalog.create_table("db.t", schema=schema, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "2"})
    assert table.schema.primary_keys == ("dt", "id") and table.schema.options["bucket"] == "2"
    new, exist_ok = seen[0]
    assert (new.database, new.name, new.partition_keys, new.primary_keys, exist_ok) == ("db", "t", ("dt",), ("dt", "id"), False)
    with pytest.raises(TableAlreadyExistsError):
        catalog.create_table("db.t", schema=schema)
    assert catalog.create_table("db.t", schema=schema, exist_ok=True).schema.id == 0


def test_a_schema_the_client_encodes_is_the_schema_the_server_decodes():
    arrow = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            ("tags", pa.list_(pa.string())),
            ("point", pa.struct([("x", pa.float64()), ("y", pa.float64())])),
            ("attrs", pa.map_(pa.string(), pa.int32())),
        ]
    )
    schema = new_schema(arrow, primary_keys=["id"], options={"bucket": "1"}, comment="c")
    decoded = codec.schema_from_json(codec.schema_json(schema))
    assert decoded.fields == schema.fields and decoded.highest_field_id == schema.highest_field_id
    assert (decoded.primary_keys, decoded.options, decoded.comment) == (schema.primary_keys, schema.options, schema.comment)


def test_schema_changes_round_trip_through_the_codec():
    changes = [
        SetOption("snapshot.num-retained.max", "5"),
        RemoveOption("snapshot.num-retained.min"),
        UpdateComment("table comment"),
        UpdateComment("column comment", column="v"),
        AddColumn("a", pa.int32(), "new", first=True),
        AddColumn("b", "STRING", None, after="a"),
        AddColumn("c", pa.float64()),
        DropColumn("d"),
        RenameColumn("e", "f"),
        UpdateColumnType("g", pa.int64()),
    ]
    decoded = codec.changes_from_json([codec.change_json(c) for c in changes])
    expected = [
        type(c)(**{**vars(c), "type": to_data_type(c.type)}) if isinstance(c, AddColumn | UpdateColumnType) else c  # type: ignore[arg-type]
        for c in changes
    ]
    assert decoded == expected
    with pytest.raises(OptionError, match="cannot be sent"):
        codec.change_json(object())  # type: ignore[arg-type]


def test_error_bodies_round_trip_to_the_clients_errors():
    err = codec.RestError(404, "database 'x' does not exist", codec.DATABASE, "x")
    back = codec.RestError.from_response(404, json.dumps(err.body()).encode())
    assert back == codec.RestError(404, "database 'x' does not exist", codec.DATABASE)
    assert type(back.to_lakestore("GET /v1/databases/x")) is lakestore.DatabaseNotFoundError
    assert type(codec.RestError.from_response(409, b'{"resourceType": "TABLE"}').to_lakestore("POST")) is lakestore.TableAlreadyExistsError
    assert type(codec.RestError.from_response(403, b"not json").to_lakestore("GET")) is lakestore.RestCatalogAccessError
    other = codec.RestError.from_response(500, b"[]").to_lakestore("GET /v1/x")
    assert type(other) is lakestore.CatalogError and str(other) == "GET /v1/x: 500 (HTTP 500)"
