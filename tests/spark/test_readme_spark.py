"""The README's Spark example runs as written, twice in a row on the same warehouse (a reader who
runs it again must not hit "already exists"), on the running SparkSession (``create_spark_session``
returns it: ``getOrCreate``); each run commits the snapshots its lines promise and leaves the
rows they imply."""

from __future__ import annotations

import pytest

import lakestore
from tests._support import readme_python_blocks

pytestmark = pytest.mark.spark

# append, overwrite-partition, write_dataframe(overwrite=...), merge_into (an APPEND whose
# operation is MERGE), compact(full=True)
RUN_KINDS = [("APPEND", None), ("OVERWRITE", None), ("OVERWRITE", None), ("APPEND", "MERGE"), ("COMPACT", None)]


def test_spark_snippet_runs_twice(spark, tmp_path):
    (snippet,) = readme_python_blocks("Spark")
    warehouse = tmp_path / "warehouse"
    assert snippet.count('"/tmp/warehouse"') == 1
    code = compile(snippet.replace('"/tmp/warehouse"', repr(str(warehouse))), "README.md (Spark)", "exec")
    seen = 0
    for run in range(2):
        namespace: dict = {}
        exec(code, namespace)  # noqa: S102 - the README's own code
        assert namespace["spark"] is spark
        table = lakestore.Catalog(str(warehouse)).get_table("db.orders")
        new = [s for s in table.snapshots() if s.id > seen]
        assert [(s.commit_kind, s.operation) for s in new] == RUN_KINDS, run
        assert namespace["first"] == new[0].id
        seen = new[-1].id
        # the partition was replaced twice with both rows, then the merge deleted id 2
        assert table.to_arrow().to_pylist() == [{"dt": "2024-01-01", "id": 1, "v": 1.0}]
        # the time-travel DataFrame reads the snapshot of the first write: both rows
        then = sorted((r.dt, r.id, r.v) for r in namespace["then"].collect())
        assert then == [("2024-01-01", 1, 1.0), ("2024-01-01", 2, 2.0)]
