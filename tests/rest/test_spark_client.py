"""Paimon's own Spark connector (paimon-spark 2.0.0 on pyspark 4.0.5, tests/oracle/spark_sql_driver.py)
as a client of ``lakestore serve``: its ``SparkCatalog`` with ``metastore=rest`` creates databases
and tables, inserts, merges, updates, deletes and reads through the server; lakestore reads the
same tables through its own REST client and straight from the warehouse and agrees row for row,
and writes that Spark reads. A principal with ``read`` on one table reads it (with the catalog
option ``defaultDatabase`` naming a database it may read: the catalog loads its default database
when it starts) and is refused (403) everything else, publishing nothing; no token or a bad one
is refused (401). One server for the module, the session's one JVM. docs/spark-sql.md has the
settings and what these tests found."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest

import lakestore
from tests.oracle.spark_sql_driver import SparkSqlError, SparkSqlOracle, spark_sql_oracle
from tests.rest.server import PREFIX, Server, start_server, warehouse_state

pytestmark = pytest.mark.spark_sql

Row = tuple[Any, ...]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = start_server(tmp_path_factory.mktemp("rest-spark"))
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def spark() -> SparkSqlOracle:
    return spark_sql_oracle()


def spark_catalog(spark: SparkSqlOracle, server: Server, token: str | None, **extra: str) -> str:
    """A Paimon ``SparkCatalog`` on the server (``metastore=rest``) with ``token``; its name.
    Its cache is off, so what lakestore commits is seen by the next statement."""
    options = {**server.catalog_options(token or ""), "cache-enabled": "false", **extra}
    if token is None:
        del options["token"]
    return spark.catalog(**options)


def rest_catalog(server: Server, token: str) -> lakestore.Catalog:
    """lakestore's REST catalog client on the server."""
    return lakestore.Catalog(PREFIX, options={"metastore": "rest", "uri": server.uri, "token": token})


def rows(spark: SparkSqlOracle, query: str) -> list[Row]:
    return sorted(tuple(r) for r in spark.query(query)[1])


def lake_rows(table: lakestore.Table, columns: list[str]) -> list[Row]:
    data = table.to_arrow().select(columns).to_pylist()
    return sorted(tuple(r.values()) for r in data)


def same_everywhere(spark: SparkSqlOracle, cat: str, server: Server, name: str, columns: list[str]) -> list[Row]:
    """Spark's rows of ``name`` equal lakestore's through the REST catalog and from the
    warehouse directory; the rows."""
    expected = rows(spark, f"SELECT {', '.join(columns)} FROM {cat}.{name}")
    assert lake_rows(rest_catalog(server, server.admin_token).get_table(name), columns) == expected, "lakestore over REST"
    assert lake_rows(lakestore.Catalog(str(server.warehouse)).get_table(name), columns) == expected, "lakestore on the directory"
    return expected


def snapshot_ids(server: Server, name: str) -> list[int]:
    return [s.id for s in lakestore.Catalog(str(server.warehouse)).get_table(name).snapshots()]


@pytest.fixture(scope="module")
def tables(spark: SparkSqlOracle, server: Server) -> str:
    """``sp.pk`` (primary key, 2 buckets, partitioned) and ``sp.log`` (append) made and written
    by Spark with the admin token; the catalog's name."""
    c = spark_catalog(spark, server, server.admin_token)
    spark.sql(f"CREATE DATABASE {c}.sp")
    spark.sql(
        f"CREATE TABLE {c}.sp.pk (id INT, name STRING, v DOUBLE, dt STRING) PARTITIONED BY (dt)"
        " TBLPROPERTIES ('primary-key' = 'dt,id', 'bucket' = '2')"
    )
    spark.sql(f"CREATE TABLE {c}.sp.log (id INT, msg STRING)")
    return c


def test_spark_creates_writes_merges_and_reads_through_the_server(spark: SparkSqlOracle, server: Server, tables: str) -> None:
    c = tables
    assert sorted(r[1] for r in spark.sql(f"SHOW TABLES IN {c}.sp")) == ["log", "pk"]
    t = lakestore.Catalog(str(server.warehouse)).get_table("sp.pk")
    assert t.primary_keys == ("dt", "id") and t.partition_keys == ("dt",) and t.options.bucket == 2

    cols = ["id", "name", "v", "dt"]
    spark.sql(f"INSERT INTO {c}.sp.pk VALUES (1, 'a', 1.0, 'x'), (2, 'b', 2.0, 'x'), (3, 'c', 3.0, 'y')")
    spark.sql(f"INSERT INTO {c}.sp.pk VALUES (1, 'a2', 10.0, 'x'), (4, 'd', 4.0, 'z')")
    assert same_everywhere(spark, c, server, "sp.pk", cols) == [
        (1, "a2", 10.0, "x"),
        (2, "b", 2.0, "x"),
        (3, "c", 3.0, "y"),
        (4, "d", 4.0, "z"),
    ]
    spark.sql(
        f"MERGE INTO {c}.sp.pk AS t USING (SELECT * FROM VALUES (2, 'm2', 20.0, 'x'), (5, 'e', 5.0, 'y'), (3, 'gone', 0.0, 'y')"
        " AS s(id, name, v, dt)) AS s ON t.id = s.id AND t.dt = s.dt"
        " WHEN MATCHED AND s.name = 'gone' THEN DELETE"
        " WHEN MATCHED THEN UPDATE SET t.name = s.name, t.v = s.v"
        " WHEN NOT MATCHED THEN INSERT *"
    )
    spark.sql(f"UPDATE {c}.sp.pk SET v = v + 1 WHERE id = 4")
    spark.sql(f"DELETE FROM {c}.sp.pk WHERE id = 1")
    assert same_everywhere(spark, c, server, "sp.pk", cols) == [(2, "m2", 20.0, "x"), (4, "d", 5.0, "z"), (5, "e", 5.0, "y")]

    spark.sql(f"INSERT INTO {c}.sp.log VALUES (1, 'one'), (2, 'two')")
    spark.sql(f"INSERT INTO {c}.sp.log VALUES (3, 'three')")
    assert same_everywhere(spark, c, server, "sp.log", ["id", "msg"]) == [(1, "one"), (2, "two"), (3, "three")]

    # lakestore writes through the server's commit endpoint; Spark reads what it wrote
    rc = rest_catalog(server, server.admin_token)
    before = snapshot_ids(server, "sp.pk")
    pk = rc.get_table("sp.pk")
    pk.write_arrow(pa.table({"id": pa.array([5, 6], pa.int32()), "name": ["L5", "L6"], "v": [50.0, 6.0], "dt": ["y", "w"]}))
    rc.get_table("sp.log").write_arrow(pa.table({"id": pa.array([4], pa.int32()), "msg": ["four"]}))
    assert snapshot_ids(server, "sp.pk") == [*before, before[-1] + 1]
    assert same_everywhere(spark, c, server, "sp.pk", cols) == [
        (2, "m2", 20.0, "x"),
        (4, "d", 5.0, "z"),
        (5, "L5", 50.0, "y"),
        (6, "L6", 6.0, "w"),
    ]
    assert same_everywhere(spark, c, server, "sp.log", ["id", "msg"]) == [(1, "one"), (2, "two"), (3, "three"), (4, "four")]
    # and Spark writes on top of lakestore's commit
    spark.sql(f"INSERT INTO {c}.sp.log VALUES (5, 'five')")
    assert [r[0] for r in same_everywhere(spark, c, server, "sp.log", ["id", "msg"])] == [1, 2, 3, 4, 5]


def test_a_reader_reads_its_table_and_is_refused_the_rest(spark: SparkSqlOracle, server: Server, tables: str) -> None:
    spark.sql(f"INSERT INTO {tables}.sp.pk VALUES (7, 'g', 7.0, 'x')")
    token = server.principal("spark-reader", ("read", "sp.pk"))
    # Paimon's SparkCatalog loads its default database ('default') when it starts: a principal
    # without read on it is refused there (403), so it names a database it may read
    with pytest.raises(SparkSqlError, match=r"DatabaseNoPermissionException: Database default has no permission"):
        spark.sql(f"SELECT * FROM {spark_catalog(spark, server, token)}.sp.pk")
    c = spark_catalog(spark, server, token, defaultDatabase="sp")
    expected = rows(spark, f"SELECT * FROM {tables}.sp.pk")
    assert rows(spark, f"SELECT * FROM {c}.sp.pk") == expected
    assert [r[1] for r in spark.sql(f"SHOW TABLES IN {c}.sp")] == ["pk"]  # listings show what it may read
    pk_ids, log_ids, files = snapshot_ids(server, "sp.pk"), snapshot_ids(server, "sp.log"), warehouse_state(server.warehouse)

    # Spark writes the data and manifest files itself; the server refuses the commit (403, which
    # Paimon's client raises as ForbiddenException). The client retries a commit that raised up
    # to commit.max-retries (10 by default, 12.6 s here): one retry is enough to show it
    retries = f"spark.paimon.{c}.sp.pk.commit.max-retries"
    spark.conf(**{retries: "1"})
    try:
        with pytest.raises(SparkSqlError) as denied:
            spark.sql(f"INSERT INTO {c}.sp.pk VALUES (8, 'h', 8.0, 'x')")
    finally:
        spark.conf(**{retries: None})
    message = str(denied.value)
    assert "with 1 retries" in message, message[:2000]
    assert "ForbiddenException: Forbidden: principal 'spark-reader' has no write grant on table sp.pk" in message, message[:2000]
    with pytest.raises(SparkSqlError, match=r"TableNoPermissionException: Table sp.log has no permission.*no read grant on table sp.log"):
        spark.sql(f"SELECT * FROM {c}.sp.log")
    with pytest.raises(SparkSqlError, match=r"ForbiddenException"):
        spark.sql(f"CREATE TABLE {c}.sp.other (id INT)")

    # nothing was published: the same snapshots, no file changed; what the refused INSERT left
    # are unreferenced data and manifest files of sp.pk
    assert snapshot_ids(server, "sp.pk") == pk_ids and snapshot_ids(server, "sp.log") == log_ids
    after = warehouse_state(server.warehouse)
    assert {k: v for k, v in after.items() if k in files} == files
    left = sorted(set(after) - set(files))
    assert left and all(k.startswith(("sp.db/pk/manifest/", "sp.db/pk/dt=x/bucket-")) for k in left), left
    assert rows(spark, f"SELECT * FROM {tables}.sp.pk") == expected
    pk = lakestore.Catalog(str(server.warehouse)).get_table("sp.pk")
    assert lake_rows(pk, ["id", "name", "v", "dt"]) == expected
    # lakestore's orphan removal deletes exactly those files; the table reads the same
    removed = pk.maintenance.remove_orphan_files(older_than_ms=int(time.time() * 1000) + 1000)
    assert sorted(f"sp.db/pk/{path}" for path in removed.deleted) == left
    assert warehouse_state(server.warehouse) == files
    assert rows(spark, f"SELECT * FROM {c}.sp.pk") == expected


@pytest.mark.parametrize("token", [None, "not-a-token"], ids=["no-token", "bad-token"])
def test_no_token_or_a_bad_one_is_refused(spark: SparkSqlOracle, server: Server, tables: str, token: str | None) -> None:
    """Refused (401, raised by Paimon's client as NotAuthorizedException) when the catalog loads."""
    c = spark_catalog(spark, server, token)
    with pytest.raises(SparkSqlError, match=r"NotAuthorizedException: Not authorized") as refused:
        spark.sql(f"SELECT * FROM {c}.sp.pk")
    assert "RESTCatalog" in str(refused.value)
