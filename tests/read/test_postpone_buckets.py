"""Postpone-bucket tables (``bucket = -2``, Paimon 1.1+): lakestore reads what Paimon's batch
readers read (the real buckets a fixed-bucket write or a compaction assigned; rows still in
``bucket-postpone`` are invisible), and writes, compacts and maintains them."""

from __future__ import annotations

import glob
import json
import subprocess
import time

import pyarrow as pa
import pytest

import lakestore
from lakestore.errors import LakestoreError, OptionError
from tests._support import assert_same_rows
from tests.oracle.driver import oracle_available, oracle_python, oracle_read

SCHEMA = pa.schema([pa.field("dt", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False), ("v", pa.float64())])

# pypaimon 2.1: one postponed batch (bucket-postpone/) and one fixed-bucket batch (real buckets,
# as a compaction or Paimon's batch-write-fixed-bucket leaves them).
_WRITE = """
import json, sys
import pyarrow as pa
from pypaimon import CatalogFactory, Schema
warehouse, step = sys.argv[1], sys.argv[2]
catalog = CatalogFactory.create({"warehouse": warehouse})
catalog.create_database("db", True)
arrow = pa.schema([pa.field("dt", pa.string(), False), pa.field("id", pa.int64(), False), ("v", pa.float64())])
options = {"bucket": "-2", "file.format": "parquet", "postpone.default-bucket-num": "2"}
schema = Schema.from_pyarrow_schema(arrow, partition_keys=["dt"], primary_keys=["dt", "id"], options=options)
catalog.create_table("db.t", schema, True)
table = catalog.get_table("db.t")
if step == "fixed":
    builder = table.new_postpone_fixed_bucket_write_builder()
    data = pa.table({"dt": ["a"] * 4, "id": [1, 2, 3, 4], "v": [1.0] * 4}, schema=arrow)
else:
    builder = table.new_batch_write_builder()
    data = pa.table({"dt": ["a", "b"], "id": [1, 9], "v": [2.0, 2.0]}, schema=arrow)
write, commit = builder.new_write(), builder.new_commit()
write.write_arrow(data)
commit.commit(write.prepare_commit())
write.close(); commit.close()
print(json.dumps({"ok": True}))
"""


def _pypaimon(warehouse, step: str) -> None:
    subprocess.run([str(oracle_python()), "-c", _WRITE, str(warehouse), step], check=True, capture_output=True, text=True)


@pytest.mark.skipif(not oracle_available(), reason="oracle venv not available")
def test_reads_only_real_buckets_then_writes_and_compacts(tmp_path):
    warehouse = tmp_path / "wh"
    _pypaimon(warehouse, "fixed")
    _pypaimon(warehouse, "postponed")
    t = lakestore.Catalog(str(warehouse)).get_table("db.t")
    table_dir = f"{warehouse}/db.db/t"
    assert glob.glob(f"{table_dir}/dt=a/bucket-postpone/*.parquet") and glob.glob(f"{table_dir}/dt=a/bucket-[01]/*.parquet")
    got = t.to_arrow()
    assert sorted(got["id"].to_pylist()) == [1, 2, 3, 4] and set(got["v"].to_pylist()) == {1.0}  # the postponed rows: not yet
    assert_same_rows(got, oracle_read(t.path), ["dt", "id"])
    assert {f.bucket for f in t.store.live_files()} >= {-2}
    # lakestore postpones its rows too, and maintenance keeps every postponed file
    t.write_arrow(pa.table({"dt": ["a"], "id": [5], "v": [3.0]}, schema=SCHEMA))
    assert t.to_arrow().num_rows == 4
    t.maintenance.expire_snapshots(num_retained_min=1)
    assert t.maintenance.remove_orphan_files(older_than_ms=int(time.time() * 1000) + 60_000).deleted == ()
    assert len(glob.glob(f"{table_dir}/dt=a/bucket-postpone/*.parquet")) == 2
    # the compaction gives them real buckets: dt=a keeps its 2, dt=b gets postpone.default-bucket-num
    [snapshot] = t.compact()
    assert snapshot.commit_kind == "COMPACT"
    got = t.to_arrow()
    expected = {("a", 1): 2.0, ("a", 2): 1.0, ("a", 3): 1.0, ("a", 4): 1.0, ("a", 5): 3.0, ("b", 9): 2.0}
    assert dict(zip(zip(got["dt"].to_pylist(), got["id"].to_pylist(), strict=True), got["v"].to_pylist(), strict=True)) == expected
    assert_same_rows(got, oracle_read(t.path), ["dt", "id"])
    assert {f.bucket for f in t.store.live_files()} <= {0, 1}
    assert json.loads(open(f"{table_dir}/snapshot/LATEST").read()) == snapshot.id


def test_postpone_tables_need_a_primary_key(tmp_path):
    catalog = lakestore.Catalog(str(tmp_path / "wh"))
    catalog.create_database("db")
    t = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["dt", "id"], options={"bucket": "-2"})
    assert t.schema.options["bucket"] == "-2"
    with pytest.raises(OptionError, match=r"bucket=-2 \(postpone buckets\) needs a primary key"):
        catalog.create_table("db.a", schema=SCHEMA, options={"bucket": "-2"})
    with pytest.raises(LakestoreError, match="positive bucket count"):
        catalog.create_table("db.t2", schema=SCHEMA, primary_keys=["dt", "id"], options={"bucket": "-3"})
