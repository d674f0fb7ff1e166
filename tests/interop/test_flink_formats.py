"""ORC and Avro tables with Flink 2.0 and Paimon 2.0.0's connector (tests/oracle/flink_driver.py):
Flink SQL creates and writes them (one streaming job inserting a bounded VALUES list into both),
lakestore reads them row for row, writes and compacts in the same format, and Flink's batch
SELECT reads the result."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import lakestore
from tests.compact._tables import live_files
from tests.oracle.flink_driver import flink_oracle

pytestmark = pytest.mark.flink
FORMATS = ("orc", "avro")
VALUES = (
    "VALUES (1, 'a', 1.25, TIMESTAMP '2024-01-01 00:00:00.123'),"
    " (2, 'b', CAST(NULL AS DECIMAL(10, 2)), CAST(NULL AS TIMESTAMP(3))),"
    " (3, CAST(NULL AS STRING), -3.50, TIMESTAMP '1999-12-31 23:59:59')"
)


def test_flink_writes_orc_and_avro_lakestore_continues(tmp_path):
    flink = flink_oracle()
    warehouse = tmp_path / "wh"
    flink.use_warehouse(warehouse)
    flink.sql(
        "CREATE DATABASE IF NOT EXISTS db",
        *(
            f"CREATE TABLE db.{fmt} (id BIGINT, v STRING, d DECIMAL(10, 2), ts TIMESTAMP(3), PRIMARY KEY (id) NOT ENFORCED)"
            f" WITH ('bucket' = '1', 'file.format' = '{fmt}')"
            for fmt in FORMATS
        ),
        mode="stream",
    )
    assert flink.wait(flink.submit(*(f"INSERT INTO db.{fmt} {VALUES}" for fmt in FORMATS))) == "FINISHED"
    catalog = lakestore.Catalog(str(warehouse))
    for fmt in FORMATS:
        table = catalog.get_table(f"db.{fmt}")
        assert {Path(f.file_name).suffix for f in live_files(table)} == {f".{fmt}"}
        got = sorted(table.to_arrow().select(["id", "v"]).to_pylist(), key=lambda r: r["id"])
        assert got == [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}, {"id": 3, "v": None}]
        schema = table.to_arrow().schema
        table.write_arrow(pa.table({"id": [2, 4], "v": ["B", "d"], "d": [None, None], "ts": [None, None]}, schema=schema))
        table.compact(full=True)
        assert {Path(f.file_name).suffix for f in live_files(catalog.get_table(f"db.{fmt}"))} == {f".{fmt}"}
        rows = flink.query(f"SELECT id, v, CAST(d AS STRING), CAST(ts AS STRING) FROM db.{fmt}")
        assert sorted(r[1:] for r in rows) == [
            [1, "a", "1.25", "2024-01-01 00:00:00.123"],
            [2, "B", None, None],
            [3, None, "-3.50", "1999-12-31 23:59:59.000"],
            [4, "d", None, None],
        ]
