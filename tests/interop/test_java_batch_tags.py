"""``tag.automatic-creation`` = ``batch`` (Paimon 2.0's ``TagBatchCreation``): every batch commit
tags the latest snapshot ``batch-write-<yyyy-MM-dd>`` (or ``tag.batch.customized-name``),
replacing the tag of that name, and ``tag.num-retained-max`` then drops the oldest tags of any
kind. Paimon runs it where a Flink batch job ends (its Java core never does): lakestore's batch
commits and a Flink batch INSERT tag the same way, and Paimon 2.0.0 Java reads the tags."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

import lakestore
from lakestore.lifecycle.tags import BATCH_TAG_PREFIX
from tests.oracle.flink_driver import FlinkOracle, flink_oracle

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.int64())])


def _batch(ids: list[int], value: int) -> pa.Table:
    return pa.table({"id": ids, "v": [value] * len(ids)}, schema=SCHEMA)


def _tags(t: lakestore.Table) -> dict[str, int]:
    return {tag.name: tag.snapshot_id for tag in t.manage.tags()}


def _day_tag(snapshot: lakestore.Snapshot) -> str:
    # sink.process-time-zone unset: the machine's zone, in lakestore and in Paimon's JVM
    return BATCH_TAG_PREFIX + dt.datetime.fromtimestamp(snapshot.time_millis / 1000).strftime("%Y-%m-%d")


def test_batch_commits_tag_the_latest_snapshot_java_reads_the_tag(java, catalog, warehouse):
    options = {"bucket": "1", "tag.automatic-creation": "batch", "tag.num-retained-max": "2"}
    t = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options=options)
    first = t.write_arrow(_batch([1, 2], 1))
    assert first is not None
    name = _day_tag(first)
    assert _tags(t) == {name: 1}
    t.manage.create_tag("manual-2")
    second = t.write_arrow(_batch([2, 3], 2))
    assert second is not None and _tags(t) == {"manual-2": 1, name: 2}  # replaced, not added
    rows = java.read(warehouse, "db.t", options={"scan.tag-name": name})
    assert dict(zip(rows["id"].to_pylist(), rows["v"].to_pylist(), strict=True)) == {1: 1, 2: 2, 3: 2}
    # a streaming commit (an identifier of its own) creates none; a compaction is a batch commit
    write = t.new_write(commit_user="stream")
    write.write_arrow(_batch([4], 4))
    t.new_commit(commit_user="stream").commit(write.prepare_commit(), commit_identifier=5)
    assert _tags(t) == {"manual-2": 1, name: 2}
    [compacted] = t.compact(full=True)
    assert _tags(t) == {"manual-2": 1, name: compacted.id}
    # at most tag.num-retained-max tags: the oldest snapshot's go first
    t.manage.create_tag("manual-4", snapshot_id=3)
    t.write_arrow(_batch([5], 5))
    assert _tags(t) == {"manual-4": 3, name: 5}
    rows = java.read(warehouse, "db.t", options={"scan.tag-name": name})
    assert sorted(rows["id"].to_pylist()) == [1, 2, 3, 4, 5]


def test_customized_name(catalog, warehouse):
    options = {"bucket": "1", "tag.automatic-creation": "batch", "tag.batch.customized-name": "nightly"}
    t = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options=options)
    t.write_arrow(_batch([1], 1))
    t.write_arrow(_batch([2], 1))
    assert _tags(t) == {"nightly": 2}


@pytest.fixture(scope="module")
def flink() -> FlinkOracle:
    return flink_oracle()


@pytest.mark.flink
def test_flink_batch_insert_tags_as_lakestore_does(flink, java, catalog, warehouse):
    options = {"bucket": "1", "tag.automatic-creation": "batch"}
    catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options=options)
    flink.use_warehouse(warehouse)
    flink.sql("INSERT INTO db.t VALUES (CAST(1 AS BIGINT), CAST(10 AS BIGINT))", mode="batch")
    t = catalog.get_table("db.t")
    flinks = t.latest_snapshot()
    assert flinks is not None and flinks.commit_identifier == lakestore.BATCH_COMMIT_IDENTIFIER
    assert _tags(t) == {_day_tag(flinks): flinks.id}
    ours = t.write_arrow(_batch([2], 20))
    assert ours is not None and _day_tag(ours) == _day_tag(flinks)
    assert _tags(t) == {_day_tag(ours): ours.id}
    rows = java.read(warehouse, "db.t", options={"scan.tag-name": _day_tag(ours)})
    assert sorted(zip(rows["id"].to_pylist(), rows["v"].to_pylist(), strict=True)) == [(1, 10), (2, 20)]
