"""Table's public inspection API (what tools and the pipeline use instead of metadata internals):
find_commit, live_files, delta_files, reset_consumer."""

from __future__ import annotations

import pyarrow as pa

import lakestore

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.float64())])


def _table(tmp_path):
    catalog = lakestore.Catalog(str(tmp_path / "wh"))
    catalog.create_database("db")
    return catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "1"})


def _rows(dt, ids):
    return pa.table({"dt": [dt] * len(ids), "id": ids, "v": [1.0] * len(ids)}, schema=SCHEMA)


def test_find_commit_by_user_and_identifier(tmp_path):
    t = _table(tmp_path)
    landed = t.write_arrow(_rows("a", [1, 2]), commit_user="ingest", commit_identifier=7)
    t.write_arrow(_rows("a", [3]), commit_user="other", commit_identifier=7)
    assert t.find_commit("ingest", 7) == landed
    assert t.find_commit("ingest", 8) is None and t.find_commit("ingest", 7, kind="COMPACT") is None
    assert landed is not None and landed.delta_record_count == 2


def test_live_and_delta_files(tmp_path):
    t = _table(tmp_path)
    first = t.write_arrow(_rows("a", [1, 2]))
    t.write_arrow(_rows("b", [3]))
    live = t.store.live_files()
    assert sorted((f.partition_path, f.rows) for f in live) == [("dt=a", 2), ("dt=b", 1)]
    assert {f.kind for f in live} == {"ADD"} and all(f.bytes > 0 and f.bucket == 0 for f in live)
    assert [(f.kind, f.partition, f.rows) for f in t.store.delta_files(first)] == [("ADD", {"dt": "a"}, 2)]
    compacted = t.compact(full=True)[-1]
    delta = t.store.delta_files(compacted)
    assert {f.kind for f in delta} == {"ADD", "DELETE"}
    assert [f.rows for f in t.store.live_files(first)] == [2]  # time travel: what snapshot 1 read
    assert {f.level for f in t.store.live_files()} != {0}


def test_reset_consumer(tmp_path):
    t = _table(tmp_path)
    t.write_arrow(_rows("a", [1]))
    t.manage.reset_consumer("reader", 1)
    assert t.manage.consumers() == {"reader": 1}
    t.manage.reset_consumer("reader", 2)
    assert t.manage.consumers() == {"reader": 2}
