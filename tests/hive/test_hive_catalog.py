"""``metastore=hive`` against the session's real Hive Metastore: databases and tables are
registered as Paimon 2.0's HiveCatalog registers them (checked field by field on the HMS objects),
create / alter / rename / drop follow its rules, and partition sync fills HMS partitions."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import lakestore
from lakestore.catalog.hive import HiveCatalog
from lakestore.errors import DatabaseNotFoundError, OptionError, TableAlreadyExistsError, TableNotFoundError
from lakestore.io.hive_metastore import ttypes
from tests.hms import Metastore

PAIMON_FORMATS = ("org.apache.paimon.hive.mapred.PaimonInputFormat", "org.apache.paimon.hive.mapred.PaimonOutputFormat")


def _db() -> str:
    return f"db_{uuid.uuid4().hex[:10]}"


def _catalog(metastore: Metastore, warehouse: Path, **options: str) -> HiveCatalog:
    catalog = lakestore.Catalog(str(warehouse), options=metastore.options(**options))
    assert isinstance(catalog, HiveCatalog)
    return catalog


def _hms_table(catalog: HiveCatalog, database: str, table: str) -> Any:
    return catalog.client.call("get_table_req", ttypes().GetTableRequest(dbName=database, tblName=table)).table


def _local(location: str) -> str:
    return location.removeprefix("file:")


SCHEMA = pa.schema(
    [
        ("dt", pa.string()),
        ("id", pa.int64()),
        ("b", pa.bool_()),
        ("i8", pa.int8()),
        ("i16", pa.int16()),
        ("i32", pa.int32()),
        ("f", pa.float32()),
        ("d", pa.float64()),
        ("dec", pa.decimal128(10, 2)),
        ("bin", pa.binary()),
        ("day", pa.date32()),
        ("ts", pa.timestamp("us")),
        ("ltz", pa.timestamp("us", tz="UTC")),
        ("tags", pa.list_(pa.string())),
        ("attrs", pa.map_(pa.string(), pa.int32())),
        ("point", pa.struct([("x", pa.float64()), ("y", pa.float64())])),
    ]
)
HIVE_TYPES = {
    "dt": "string",
    "id": "bigint",
    "b": "boolean",
    "i8": "tinyint",
    "i16": "smallint",
    "i32": "int",
    "f": "float",
    "d": "double",
    "dec": "decimal(10,2)",
    "bin": "binary",
    "day": "date",
    "ts": "timestamp",
    "ltz": "timestamp with local time zone",
    "tags": "array<string>",
    "attrs": "map<string,int>",
    "point": "struct<x:double,y:double>",
}


def test_database_is_registered_as_paimon_registers_it(metastore: Metastore, tmp_path: Path):
    catalog = _catalog(metastore, tmp_path / "wh")
    db = _db()
    catalog.create_database(db, properties={"comment": "orders", "team": "lake"})
    hms_db = catalog.client.call("get_database", db)
    assert hms_db.description == "orders" and hms_db.parameters == {"team": "lake"}
    assert _local(hms_db.locationUri) == f"{tmp_path}/wh/{db}.db"
    assert os.path.isdir(f"{tmp_path}/wh/{db}.db")  # the metastore created it
    assert db in catalog.list_databases() and catalog.database_exists(db)
    assert catalog.database_properties(db)["team"] == "lake"
    with pytest.raises(lakestore.DatabaseAlreadyExistsError):
        catalog.create_database(db)
    catalog.create_database(db, exist_ok=True)
    catalog.drop_database(db)
    assert not catalog.database_exists(db) and not os.path.exists(f"{tmp_path}/wh/{db}.db")
    with pytest.raises(DatabaseNotFoundError):
        catalog.drop_database(db)


def test_table_is_registered_as_paimon_registers_it(metastore: Metastore, tmp_path: Path):
    catalog = _catalog(metastore, tmp_path / "wh")
    db = _db()
    catalog.create_database(db)
    table = catalog.create_table(
        f"{db}.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "2"}, comment="all types"
    )
    hms = _hms_table(catalog, db, "t")
    # HMS 4 stores a non-ACID managed table as external; lakestore keeps treating it as managed
    assert hms.tableType in ("MANAGED_TABLE", "EXTERNAL_TABLE")
    if hms.tableType == "EXTERNAL_TABLE":
        assert hms.parameters["TRANSLATED_TO_EXTERNAL"] == "TRUE"
    assert (hms.sd.inputFormat, hms.sd.outputFormat) == PAIMON_FORMATS
    assert hms.sd.serdeInfo.serializationLib == "org.apache.paimon.hive.PaimonSerDe"
    params = hms.parameters
    assert params["table_type"] == "PAIMON" and params["storage_handler"] == "org.apache.paimon.hive.PaimonStorageHandler"
    assert params["primary-key"] == "dt,id" and params["partition"] == "dt" and params["bucket-key"] == "id" and params["bucket"] == "2"
    assert params["comment"] == "all types"
    assert {c.name: c.type for c in hms.sd.cols} == HIVE_TYPES
    assert hms.partitionKeys == []  # metastore.partitioned-table is false by default
    assert _local(hms.sd.location) == f"{tmp_path}/wh/{db}.db/t" == table.path
    assert hms.retention == 2**31 - 1 and hms.owner
    # lakestore opens it through a fresh catalog and reads what was written
    table.write_arrow(pa.Table.from_pylist([{"dt": "a", "id": 1, "b": True}], schema=SCHEMA))
    again = _catalog(metastore, tmp_path / "wh").get_table(f"{db}.t")
    assert again.to_arrow().select(["dt", "id", "b"]).to_pylist() == [{"dt": "a", "id": 1, "b": True}]
    assert catalog.list_tables(db) == ["t"] and catalog.table_exists(f"{db}.t")
    with pytest.raises(TableAlreadyExistsError):
        catalog.create_table(f"{db}.t", schema=SCHEMA)
    assert catalog.create_table(f"{db}.t", schema=SCHEMA, exist_ok=True).path == table.path


def test_sync_all_properties_off_and_location_in_properties(metastore: Metastore, tmp_path: Path):
    catalog = _catalog(metastore, tmp_path / "wh", **{"sync-all-properties": "false", "location-in-properties": "true"})
    db = _db()
    catalog.create_database(db)
    assert catalog.client.call("get_database", db).parameters["paimon_location"] == f"{tmp_path}/wh/{db}.db"
    schema = pa.schema([("id", pa.int64()), ("v", pa.string())])
    options = {"hive.owner-team": "lake", "partition.expiration-time": "7 d", "bucket": "1", "bucket-key": "id"}
    table = catalog.create_table(f"{db}.t", schema=schema, options=options)
    params = _hms_table(catalog, db, "t").parameters
    assert params["owner-team"] == "lake" and params["partition.expiration-time"] == "7 d"
    assert "bucket" not in params and "hive.owner-team" not in params
    assert params["paimon_location"] == table.path == f"{tmp_path}/wh/{db}.db/t"
    table.write_arrow(pa.table({"id": [1], "v": ["x"]}))
    assert catalog.get_table(f"{db}.t").to_arrow().num_rows == 1


def test_a_non_paimon_hms_table_is_not_listed_or_opened(metastore: Metastore, tmp_path: Path):
    t = ttypes()
    catalog = _catalog(metastore, tmp_path / "wh")
    db = _db()
    catalog.create_database(db)
    sd = t.StorageDescriptor(
        cols=[t.FieldSchema(name="x", type="int")],
        inputFormat="org.apache.hadoop.mapred.TextInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
        serdeInfo=t.SerDeInfo(serializationLib="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe", parameters={}),
        parameters={},
    )
    catalog.client.call(
        "create_table", t.Table(tableName="csv", dbName=db, sd=sd, partitionKeys=[], parameters={}, tableType="EXTERNAL_TABLE")
    )
    catalog.create_table(f"{db}.p", schema=pa.schema([("id", pa.int64())]))
    assert catalog.list_tables(db) == ["p"]
    with pytest.raises(TableNotFoundError, match="not a Paimon table"):
        catalog.get_table(f"{db}.csv")
    with pytest.raises(TableAlreadyExistsError, match="not a Paimon table"):
        catalog.create_table(f"{db}.csv", schema=pa.schema([("id", pa.int64())]))
    with pytest.raises(TableAlreadyExistsError):
        catalog.drop_database(db)
    catalog.client.call("drop_table", db, "csv", False)
    catalog.drop_database(db, cascade=True)
    assert not catalog.database_exists(db)


def test_alter_updates_the_schema_and_the_hms_table(metastore: Metastore, tmp_path: Path):
    catalog = _catalog(metastore, tmp_path / "wh")
    db = _db()
    catalog.create_database(db)
    catalog.create_table(
        f"{db}.t", schema=pa.schema([("id", pa.int64())]), primary_keys=["id"], options={"bucket": "1", "snapshot.num-retained.min": "5"}
    )
    altered = catalog.alter_table(
        f"{db}.t",
        [
            lakestore.AddColumn("note", pa.string()),
            lakestore.SetOption("snapshot.num-retained.max", "50"),
            lakestore.RemoveOption("snapshot.num-retained.min"),
        ],
    )
    assert altered.schema.id == 1
    hms = _hms_table(catalog, db, "t")
    assert [(c.name, c.type) for c in hms.sd.cols] == [("id", "bigint"), ("note", "string")]
    assert hms.parameters["snapshot.num-retained.max"] == "50" and "snapshot.num-retained.min" not in hms.parameters
    with pytest.raises(lakestore.SchemaChangeError):
        catalog.alter_table(f"{db}.t", [lakestore.DropColumn("id")])
    assert catalog.get_table(f"{db}.t").schema.id == 1


def test_rename_moves_a_managed_table_and_drop_deletes_it(metastore: Metastore, tmp_path: Path):
    catalog = _catalog(metastore, tmp_path / "wh")
    db, other = _db(), _db()
    catalog.create_database(db)
    catalog.create_database(other)
    table = catalog.create_table(f"{db}.t", schema=pa.schema([("id", pa.int64())]))
    table.write_arrow(pa.table({"id": [1, 2]}))
    catalog.rename_table(f"{db}.t", f"{other}.u")
    assert not catalog.table_exists(f"{db}.t") and catalog.list_tables(other) == ["u"]
    moved = catalog.get_table(f"{other}.u")
    assert moved.path == f"{tmp_path}/wh/{other}.db/u" and not os.path.exists(table.path)
    assert sorted(moved.to_arrow()["id"].to_pylist()) == [1, 2]
    assert _local(_hms_table(catalog, other, "u").sd.location) == moved.path
    with pytest.raises(TableNotFoundError):
        catalog.rename_table(f"{db}.t", f"{other}.v")
    catalog.drop_table(f"{other}.u")
    assert not os.path.exists(moved.path) and not catalog.table_exists(f"{other}.u")
    with pytest.raises(TableNotFoundError):
        catalog.drop_table(f"{other}.u")
    catalog.drop_table(f"{other}.u", missing_ok=True)


def test_external_tables_keep_their_files(metastore: Metastore, tmp_path: Path):
    catalog = _catalog(metastore, tmp_path / "wh", **{"table.type": "external"})
    db = _db()
    catalog.create_database(db)
    table = catalog.create_table(f"{db}.t", schema=pa.schema([("id", pa.int64())]))
    hms = _hms_table(catalog, db, "t")
    assert hms.tableType == "EXTERNAL_TABLE" and hms.parameters["EXTERNAL"] == "TRUE" and "TRANSLATED_TO_EXTERNAL" not in hms.parameters
    custom = tmp_path / "elsewhere" / "t2"
    placed = _catalog(metastore, tmp_path / "wh").create_table(
        f"{db}.t2", schema=pa.schema([("id", pa.int64())]), options={"path": str(custom)}
    )
    assert placed.path == str(custom) and _hms_table(catalog, db, "t2").tableType == "EXTERNAL_TABLE"
    placed.write_arrow(pa.table({"id": [7]}))
    catalog.drop_table(f"{db}.t")
    catalog.drop_table(f"{db}.t2")
    assert os.path.isdir(f"{table.path}/schema") and os.path.isdir(f"{custom}/snapshot")
    # registering the external folder again picks up its schema and rows
    again = catalog.create_table(f"{db}.t2", schema=pa.schema([("id", pa.int64())]), options={"path": str(custom)})
    assert again.to_arrow()["id"].to_pylist() == [7]


def test_partitioned_table_syncs_partitions_and_statistics(metastore: Metastore, tmp_path: Path):
    catalog = _catalog(metastore, tmp_path / "wh")
    db = _db()
    catalog.create_database(db)
    schema = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.string())])
    table = catalog.create_table(
        f"{db}.t", schema=schema, partition_keys=["dt"], options={"metastore.partitioned-table": "true", "bucket": "2", "bucket-key": "id"}
    )
    hms = _hms_table(catalog, db, "t")
    assert [(c.name, c.type) for c in hms.partitionKeys] == [("dt", "string")]
    assert [c.name for c in hms.sd.cols] == ["id", "v"]
    table.write_arrow(pa.table({"dt": ["2024-01-01", "2024-01-01", "2024-01-02"], "id": [1, 2, 3], "v": ["a", "b", "c"]}))
    table.write_arrow(pa.table({"dt": ["2024-01-01"], "id": [4], "v": ["d"]}))
    names = sorted(catalog.client.call("get_partition_names", db, "t", -1))
    assert names == ["dt=2024-01-01", "dt=2024-01-02"]
    request = ttypes().GetPartitionsByNamesRequest(db_name=db, tbl_name="t", names=names)
    parts = {p.values[0]: p for p in catalog.client.call("get_partitions_by_names_req", request).partitions}
    live = {}
    for f in table.store.live_files():
        s = live.setdefault(f.partition["dt"], [0, 0, 0])
        s[0], s[1], s[2] = s[0] + 1, s[1] + f.bytes, s[2] + f.rows
    for value, (files, size, rows) in live.items():
        params = parts[value].parameters
        assert (params["numFiles"], params["totalSize"], params["numRows"]) == (str(files), str(size), str(rows))
        assert params["totalBuckets"] == "2" and params["lastUpdateTime"] == params["transient_lastDdlTime"]
        assert _local(parts[value].sd.location) == f"{table.path}/dt={value}"
    assert parts["2024-01-01"].parameters["numRows"] == "3"


def test_tag_to_partition_registers_a_string_partition_key(metastore: Metastore, tmp_path: Path):
    catalog = _catalog(metastore, tmp_path / "wh")
    db = _db()
    catalog.create_database(db)
    table = catalog.create_table(f"{db}.t", schema=pa.schema([("id", pa.int64())]), options={"metastore.tag-to-partition": "tag"})
    assert [(c.name, c.type) for c in _hms_table(catalog, db, "t").partitionKeys] == [("tag", "string")]
    table.write_arrow(pa.table({"id": [1]}))
    assert catalog.client.call("get_partition_names", db, "t", -1) == []  # commits add no partitions
    table.manage.create_tag("2024-01-01")
    table.manage.create_tag("v2")
    assert sorted(catalog.client.call("get_partition_names", db, "t", -1)) == ["tag=2024-01-01", "tag=v2"]
    request = ttypes().GetPartitionsByNamesRequest(db_name=db, tbl_name="t", names=["tag=v2"])
    assert _local(catalog.client.call("get_partitions_by_names_req", request).partitions[0].sd.location) == f"{table.path}/tag=v2"
    catalog.get_table(f"{db}.t").manage.delete_tag("v2")
    assert catalog.client.call("get_partition_names", db, "t", -1) == ["tag=2024-01-01"]
    with pytest.raises(OptionError, match="tag-to-partition"):
        catalog.create_table(
            f"{db}.p", schema=pa.schema([("dt", pa.string())]), partition_keys=["dt"], options={"metastore.tag-to-partition": "tag"}
        )
