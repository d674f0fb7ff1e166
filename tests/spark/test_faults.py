"""Faults on a real cluster: ``local-cluster[2,1,1024]`` (two executor JVMs) with task retries and
``spark.speculation`` on. An executor JVM is killed in the middle of a write and of a compaction
(after its task wrote files, before the task returned them): the job still commits once, every
row is in the table exactly once, no snapshot references a file of the killed attempt, and
``remove_orphan_files`` removes exactly what the killed attempt left.

(On one host Spark never places a speculative copy beside the original attempt, so speculation
is on here to check that it changes nothing, not to force speculative copies.)"""

from __future__ import annotations

import time

import pytest
from pyspark.sql import SparkSession

from lakestore.spark import compact, create_spark_session, write_dataframe
from tests._support import assert_same_rows
from tests.spark.faults import crashed_files, data_file_names, fault, files_of_every_snapshot
from tests.spark.test_write_read import pk_table, rows

pytestmark = [pytest.mark.spark, pytest.mark.slow]

MASTER = "local-cluster[2,1,1024]"
KEYS = ["dt", "id"]


@pytest.fixture(scope="module")
def cluster():
    active = SparkSession.getActiveSession()
    if active is not None:
        active.stop()
    conf = {
        "spark.driver.memory": "1g",
        "spark.task.maxFailures": "2",
        "spark.speculation": "true",
        "spark.speculation.interval": "100ms",
        "spark.speculation.multiplier": "2",
        "spark.speculation.quantile": "0.5",
        "spark.sql.shuffle.partitions": "4",
    }
    session = create_spark_session(MASTER, app_name="lakestore-fault-tests", conf=conf)
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def _executors(spark) -> set[str]:
    ids = spark.sparkContext._jsc.sc().getExecutorIds().mkString(",")  # noqa: SLF001
    return set(filter(None, ids.split(",")))


def _wait_for_executors(spark, count: int, *, other_than: set[str] = frozenset(), timeout: float = 90.0) -> set[str]:
    """The active executors once ``count`` are up, with one not in ``other_than`` if given."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ids = _executors(spark)
        if len(ids) >= count and (not other_than or ids - other_than):
            return ids
        time.sleep(0.5)
    return _executors(spark)


def _check_orphans_removed(table, crashed: set[str]) -> None:
    """The killed attempt's files are on disk, unreferenced, and orphan cleanup deletes them and
    no referenced file."""
    referenced = files_of_every_snapshot(table)
    assert crashed and not crashed & referenced, "a snapshot references a file of the killed attempt"
    assert crashed <= data_file_names(table.path), "the killed attempt's files should be on disk"
    before = table.to_arrow()
    result = table.maintenance.remove_orphan_files(older_than_ms=int(time.time() * 1000) + 60_000)
    deleted = {path.rsplit("/", 1)[-1] for path in result.deleted}
    assert crashed <= deleted and not deleted & referenced
    assert data_file_names(table.path) <= referenced  # nothing but referenced data files remains
    assert_same_rows(table.to_arrow(), before, KEYS)


def test_executor_killed_in_the_middle_of_a_write(cluster, catalog, tmp_path):
    assert cluster.sparkContext.getConf().get("spark.speculation") == "true"
    before = _wait_for_executors(cluster, 2)
    assert len(before) == 2
    table = pk_table(catalog)
    data = rows(4000)
    marker = tmp_path / "killed-write"
    with fault(cluster, f"after-write:{marker}:executor"):
        snapshot = write_dataframe(cluster.createDataFrame(data).repartition(4), table, commit_user="job", commit_identifier=1)
    crashed = crashed_files(marker)
    assert snapshot is not None and [s.commit_kind for s in table.snapshots()] == ["APPEND"]
    assert _wait_for_executors(cluster, 2, other_than=before) - before, "no executor was replaced: none was killed"
    assert_same_rows(table.to_arrow(), data, KEYS)  # every row exactly once
    _check_orphans_removed(table, crashed)


def test_executor_killed_in_the_middle_of_a_compaction(cluster, catalog, tmp_path):
    _wait_for_executors(cluster, 2)
    table = pk_table(catalog, "db.c")
    for i in range(3):  # three runs per bucket, rows updated by the later ones
        table.write_arrow(rows(1500, start=i * 500, tag=f"v{i}"))
    expected = table.to_arrow()
    marker = tmp_path / "killed-compaction"
    with fault(cluster, f"after-compact:{marker}:executor"):
        snapshots = compact(cluster, table, full=True)
    crashed = crashed_files(marker)
    assert [s.commit_kind for s in snapshots] == ["COMPACT"]
    assert all(len(split.files) == 1 for split in table.scan().plan())
    assert_same_rows(table.to_arrow(), expected, KEYS)
    _check_orphans_removed(table, crashed)


def test_a_failed_write_commits_nothing_and_a_rerun_commits_once(cluster, catalog, tmp_path):
    """Every attempt of one task crashes (its retries run out): the job fails, nothing lands and
    orphan cleanup removes the attempts' files; the rerun with the same identifier commits once."""
    _wait_for_executors(cluster, 2)
    table = pk_table(catalog, "db.r")
    data = rows(2000)
    markers = [tmp_path / f"attempt-{i}" for i in range(4)]  # 2 tasks x spark.task.maxFailures attempts
    spec = ",".join(f"after-write:{m}" for m in markers)
    with fault(cluster, spec), pytest.raises(Exception, match="(?s)Job aborted|failed"):
        write_dataframe(cluster.createDataFrame(data), table, commit_user="job", commit_identifier=5)
    fired = [m for m in markers if m.exists()]
    assert len(fired) >= 2, "no task ran out of attempts"
    crashed = set().union(*(crashed_files(m) for m in fired))
    assert table.latest_snapshot() is None
    result = table.maintenance.remove_orphan_files(older_than_ms=int(time.time() * 1000) + 60_000)
    assert crashed <= {p.rsplit("/", 1)[-1] for p in result.deleted}
    assert not data_file_names(table.path)
    snapshot = write_dataframe(cluster.createDataFrame(data), table, commit_user="job", commit_identifier=5)
    again = write_dataframe(cluster.createDataFrame(data), table, commit_user="job", commit_identifier=5)
    assert snapshot is not None and again is not None and again.id == snapshot.id == 1
    assert_same_rows(table.to_arrow(), data, KEYS)
