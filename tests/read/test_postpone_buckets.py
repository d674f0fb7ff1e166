"""Postpone-bucket tables (``bucket = -2``, Paimon 1.1+): lakestore reads what Paimon's batch
readers read (the real buckets a fixed-bucket write or a compaction assigned; rows still in
``bucket-postpone`` are invisible), and refuses to create, write or maintain them, by name."""

from __future__ import annotations

import glob
import json
import subprocess

import pyarrow as pa
import pytest

import lakestore
from lakestore.errors import LakestoreError, OptionError, UnsupportedTableError
from tests._support import assert_same_rows
from tests.oracle.driver import oracle_available, oracle_python, oracle_read

SCHEMA = pa.schema([pa.field("dt", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False), ("v", pa.float64())])
REFUSAL = r"bucket=-2 \(postpone buckets\) is a Paimon feature lakestore does not implement yet"

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
def test_reads_only_real_buckets_and_refuses_writes(tmp_path):
    warehouse = tmp_path / "wh"
    _pypaimon(warehouse, "fixed")
    _pypaimon(warehouse, "postponed")
    t = lakestore.Catalog(str(warehouse)).get_table("db.t")
    table_dir = f"{warehouse}/db.db/t"
    assert glob.glob(f"{table_dir}/dt=a/bucket-postpone/*.parquet") and glob.glob(f"{table_dir}/dt=a/bucket-[01]/*.parquet")
    got = t.to_arrow()
    assert sorted(got["id"].to_pylist()) == [1, 2, 3, 4] and set(got["v"].to_pylist()) == {1.0}  # the postponed rows: not yet
    assert_same_rows(got, oracle_read(t.path), ["dt", "id"])
    assert {f.bucket for f in t.live_files()} >= {-2}
    for action in (
        lambda: t.write_arrow(pa.table({"dt": ["a"], "id": [5], "v": [1.0]}, schema=SCHEMA)),
        lambda: t.compact(full=True),
        lambda: t.expire_snapshots(num_retained_min=1),
        lambda: t.remove_orphan_files(),
    ):
        with pytest.raises(UnsupportedTableError, match=REFUSAL):
            action()
    assert json.loads(open(f"{table_dir}/snapshot/LATEST").read()) == 2


def test_creating_a_postpone_table_is_refused_by_name(tmp_path):
    catalog = lakestore.Catalog(str(tmp_path / "wh"))
    catalog.create_database("db")
    with pytest.raises(OptionError, match=REFUSAL):
        catalog.create_table("db.t", schema=SCHEMA, primary_keys=["dt", "id"], options={"bucket": "-2"})
    with pytest.raises(LakestoreError, match="positive bucket count"):
        catalog.create_table("db.t", schema=SCHEMA, primary_keys=["dt", "id"], options={"bucket": "-3"})
