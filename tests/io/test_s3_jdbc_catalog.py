"""Paimon's JDBC catalog over an S3 warehouse: as Paimon's ``lockEnabled()``, the catalog lock is
on for an object store unless ``lock.enabled`` says otherwise, and commits publish under it."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import lakestore
from lakestore.catalog import JdbcCatalog

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


def test_jdbc_catalog_on_s3_takes_the_lock_by_default(s3_server, bucket: str, tmp_path: Path):
    uri = f"jdbc:sqlite:{tmp_path}/catalog.sqlite"
    catalog = lakestore.Catalog(f"s3://{bucket}/wh", options=s3_server.options(metastore="jdbc", uri=uri))
    assert isinstance(catalog, JdbcCatalog) and catalog.lock is not None
    assert catalog.publisher.lock is catalog.lock  # the publishes' lock, re-entered by create/alter
    assert not hasattr(catalog.file_io, "lock")  # the file system only moves bytes
    catalog.create_database("db")
    table = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    assert table.store.publisher is catalog.publisher  # its commits, schemas and tags publish under the lock
    table.write_arrow(pa.table({"id": [1, 2], "v": ["a", "b"]}, schema=SCHEMA))
    catalog.alter_table("db.t", [lakestore.AddColumn("w", pa.int32())])
    again = lakestore.Catalog(f"s3://{bucket}/wh", options=s3_server.options(metastore="jdbc", uri=uri))
    assert again.list_tables("db") == ["t"]
    assert sorted(again.get_table("db.t").to_arrow().to_pylist(), key=lambda r: r["id"]) == [
        {"id": 1, "v": "a", "w": None},
        {"id": 2, "v": "b", "w": None},
    ]
    off = lakestore.Catalog(f"s3://{bucket}/wh", options=s3_server.options(metastore="jdbc", uri=uri, **{"lock.enabled": "false"}))
    assert off.lock is None and off.publisher.lock is None
    with pytest.raises(lakestore.InvalidCatalogUriError, match="needs option 'uri'"):
        lakestore.Catalog(f"s3://{bucket}/wh", options=s3_server.options(metastore="jdbc"))
