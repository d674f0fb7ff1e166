"""Paimon Java's own HiveCatalog (paimon-spark 2.0.0 on pyspark 4.0.5, Spark SQL with
``metastore=hive``) and lakestore's Hive catalog on one real metastore: both register a table with
the same HMS fields; each reads, writes, alters, renames and drops what the other registered
(partitions included); both commit to one table at once under the metastore's lock."""

from __future__ import annotations

import json
import threading
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import lakestore
from lakestore.catalog.hive import HiveCatalog
from lakestore.io.hive_metastore import ttypes
from tests.hive.test_hive_lock import _expect, _worker
from tests.hms import Metastore
from tests.oracle.spark_sql_driver import SparkSqlOracle, hms4compat_jar, spark_sql_oracle

pytestmark = pytest.mark.spark_sql

# parameters the metastore or the engine adds per table, not what Paimon's catalog writes
VOLATILE = {"transient_lastDdlTime", "owner", "numFiles", "totalSize", "numFilesErasureCoded", "numRows", "rawDataSize"}


@pytest.fixture(scope="module")
def spark() -> SparkSqlOracle:
    oracle = spark_sql_oracle()
    if not hms4compat_jar().exists():
        pytest.skip(f"the HMS 4 client for Spark's Hive 2.3 is missing ({hms4compat_jar()}; set LAKESTORE_HMS4COMPAT_JAR)")
    return oracle


def _spark_catalog(spark: SparkSqlOracle, metastore: Metastore, warehouse: Path) -> str:
    return spark.catalog(
        warehouse=f"file:{warehouse}",
        metastore="hive",
        uri=metastore.uri,
        **{"metastore.client.class": "hms4compat.GetTableReqMetaStoreClient", "cache-enabled": "false", "lock.enabled": "true"},
    )


def _hms(catalog: HiveCatalog, database: str, table: str) -> Any:
    return catalog.client.call("get_table_req", ttypes().GetTableRequest(dbName=database, tblName=table)).table


def _setup(spark: SparkSqlOracle, metastore: Metastore, tmp_path: Path) -> tuple[HiveCatalog, str, str]:
    warehouse = tmp_path / "wh"
    catalog = lakestore.Catalog(str(warehouse), options=metastore.options(**{"lock.enabled": "true"}))
    assert isinstance(catalog, HiveCatalog)
    db = f"sp_{uuid.uuid4().hex[:10]}"
    catalog.create_database(db)
    return catalog, _spark_catalog(spark, metastore, warehouse), db


def test_both_register_the_same_hms_table(spark: SparkSqlOracle, metastore: Metastore, tmp_path: Path):
    catalog, name, db = _setup(spark, metastore, tmp_path)
    spark.sql(
        f"CREATE TABLE {name}.{db}.java (dt STRING, id BIGINT, v DECIMAL(10,2), tags ARRAY<STRING>, day DATE, m MAP<STRING, INT>,"
        " s STRUCT<x: DOUBLE>) PARTITIONED BY (dt)"
        " TBLPROPERTIES ('primary-key'='dt,id', 'bucket'='2', 'metastore.partitioned-table'='true', 'file.format'='parquet')"
    )
    columns = [
        ("dt", pa.string()),
        ("id", pa.int64()),
        ("v", pa.decimal128(10, 2)),
        ("tags", pa.list_(pa.string())),
        ("day", pa.date32()),
        ("m", pa.map_(pa.string(), pa.int32())),
        ("s", pa.struct([("x", pa.float64())])),
    ]
    catalog.create_table(
        f"{db}.ours",
        schema=pa.schema(columns),
        partition_keys=["dt"],
        primary_keys=["dt", "id"],
        options={"bucket": "2", "metastore.partitioned-table": "true", "file.format": "parquet"},
    )
    java, ours = _hms(catalog, db, "java"), _hms(catalog, db, "ours")
    assert ours.tableType == java.tableType
    assert (ours.sd.inputFormat, ours.sd.outputFormat) == (java.sd.inputFormat, java.sd.outputFormat)
    assert ours.sd.serdeInfo.serializationLib == java.sd.serdeInfo.serializationLib
    assert ours.sd.serdeInfo.parameters == java.sd.serdeInfo.parameters
    assert [(c.name, c.type) for c in ours.sd.cols] == [(c.name, c.type) for c in java.sd.cols]
    assert [(c.name, c.type) for c in ours.partitionKeys] == [(c.name, c.type) for c in java.partitionKeys] == [("dt", "string")]
    strip = lambda p: {k: v for k, v in p.items() if k not in VOLATILE}  # noqa: E731
    assert strip(ours.parameters) == strip(java.parameters)
    assert ours.sd.location.endswith(f"/{db}.db/ours") and java.sd.location.endswith(f"/{db}.db/java")


def test_each_reads_writes_alters_renames_and_drops_the_others_tables(spark: SparkSqlOracle, metastore: Metastore, tmp_path: Path):
    catalog, name, db = _setup(spark, metastore, tmp_path)
    # lakestore's table, written by both, partitions synced by both
    ours = catalog.create_table(
        f"{db}.ours",
        schema=pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.string())]),
        partition_keys=["dt"],
        primary_keys=["dt", "id"],
        options={"bucket": "2", "metastore.partitioned-table": "true"},
    )
    ours.write_arrow(pa.table({"dt": ["a", "b"], "id": [1, 2], "v": ["x", "y"]}))
    assert spark.sql(f"SELECT dt, id, v FROM {name}.{db}.ours ORDER BY id") == [["a", 1, "x"], ["b", 2, "y"]]
    spark.sql(f"INSERT INTO {name}.{db}.ours VALUES ('c', 3, 'z'), ('a', 1, 'x2')")
    assert sorted(map(tuple, spark.sql(f"SHOW PARTITIONS {name}.{db}.ours"))) == [("dt=a",), ("dt=b",), ("dt=c",)]
    rows = catalog.get_table(f"{db}.ours").to_arrow().sort_by("id").to_pylist()
    assert rows == [{"dt": "a", "id": 1, "v": "x2"}, {"dt": "b", "id": 2, "v": "y"}, {"dt": "c", "id": 3, "v": "z"}]
    catalog.alter_table(f"{db}.ours", [lakestore.AddColumn("n", pa.int32())])
    spark.sql(f"INSERT INTO {name}.{db}.ours VALUES ('d', 4, 'w', 7)")
    assert spark.sql(f"SELECT n FROM {name}.{db}.ours WHERE id = 4") == [[7]]
    # Paimon's table, written and altered by lakestore
    spark.sql(f"CREATE TABLE {name}.{db}.java (id BIGINT, name STRING) TBLPROPERTIES ('primary-key'='id', 'bucket'='1')")
    spark.sql(f"INSERT INTO {name}.{db}.java VALUES (1, 'one')")
    java = catalog.get_table(f"{db}.java")
    assert java.to_arrow().to_pylist() == [{"id": 1, "name": "one"}]
    java.write_arrow(pa.table({"id": [2], "name": ["two"]}))
    spark.sql(f"ALTER TABLE {name}.{db}.java ADD COLUMN score DOUBLE")
    assert catalog.get_table(f"{db}.java").schema.field_names == ["id", "name", "score"]
    assert [c.name for c in _hms(catalog, db, "java").sd.cols] == ["id", "name", "score"]
    assert spark.sql(f"SELECT id, name FROM {name}.{db}.java ORDER BY id") == [[1, "one"], [2, "two"]]
    # renames and drops, each of the other's table
    catalog.rename_table(f"{db}.java", f"{db}.java2")
    assert spark.sql(f"SELECT count(*) FROM {name}.{db}.java2") == [[2]]
    spark.sql(f"ALTER TABLE {name}.{db}.ours RENAME TO {db}.ours2")
    assert catalog.get_table(f"{db}.ours2").to_arrow().num_rows == 4
    spark.sql(f"DROP TABLE {name}.{db}.java2")
    assert not catalog.table_exists(f"{db}.java2")
    catalog.drop_table(f"{db}.ours2")
    assert [r[1] for r in spark.sql(f"SHOW TABLES IN {name}.{db}")] == []


def _insert(spark: SparkSqlOracle, table: str, errors: list[BaseException]) -> None:
    try:
        for i in range(4):
            spark.sql(f"INSERT INTO {table} VALUES ({i}, 0)")
    except BaseException as exc:
        errors.append(exc)


def test_spark_and_lakestore_commit_to_one_table_under_the_lock(spark: SparkSqlOracle, metastore: Metastore, tmp_path: Path):
    catalog, name, db = _setup(spark, metastore, tmp_path)
    for table, keys in (("append", []), ("pk", ["id"])):
        identifier = f"{db}.{table}"
        # write-only: several writers' compactions of one bucket conflict, in Paimon as here (one
        # gives up); what is tested is that commits exclude each other under the lock
        options = {"bucket": "1", "write-only": "true", **({"bucket-key": "id"} if not keys else {})}
        catalog.create_table(identifier, schema=pa.schema([("id", pa.int64()), ("worker", pa.int32())]), primary_keys=keys, options=options)
        worker_options = metastore.options(**{"lock.enabled": "true", "lock-check-max-sleep": "200 ms"})
        procs = [_worker("commit", json.dumps(worker_options), catalog.warehouse, identifier, str(w), "4") for w in (1, 2)]
        for p in procs:
            _expect(p, "ready")
        errors: list[BaseException] = []
        thread = threading.Thread(target=_insert, args=(spark, f"{name}.{db}.{table}", errors))
        thread.start()
        for p in procs:
            _, err = p.communicate(timeout=240)
            assert p.returncode == 0, err
        thread.join(240)
        assert not errors, errors
        snapshots = catalog.get_table(identifier).snapshots()
        assert [s.id for s in snapshots] == list(range(1, len(snapshots) + 1))
        assert sum(1 for s in snapshots if s.commit_kind == "APPEND") == 12
        ids = sorted(catalog.get_table(identifier).to_arrow()["id"].to_pylist())
        assert ids == sorted([0, 1, 2, 3] + [w * 100_000 + i for w in (1, 2) for i in range(4)])
        assert spark.sql(f"SELECT count(*) FROM {name}.{db}.{table}") == [[12]]
