"""Paimon 2.0's commit options in lakestore's committer: ``snapshot.ignore-empty-commit``,
``commit.discard-duplicate-files`` and ``manifest.delete-file-drop-stats``; the snapshots they give
read by pypaimon 2.1 and Paimon 2.0 Java."""

from __future__ import annotations

import pyarrow as pa
import pytest

import lakestore
from lakestore.meta.file_scan import read_entries
from lakestore.meta.manifest import ADD, DELETE
from lakestore.meta.stats import EMPTY_STATS
from tests._support import assert_same_rows
from tests.oracle.driver import oracle_available, oracle_manifests, oracle_read
from tests.oracle.java_driver import java_unavailable_reason

SCHEMA = pa.schema([pa.field("dt", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False), ("v", pa.float64())])
java_available = java_unavailable_reason() is None


def _batch(ids, value: float) -> pa.Table:
    ids = list(ids)
    return pa.table({"dt": ["a"] * len(ids), "id": ids, "v": [value] * len(ids)}, schema=SCHEMA)


@pytest.fixture
def catalog(tmp_path):
    c = lakestore.Catalog(str(tmp_path / "wh"))
    c.create_database("db")
    return c


def _java_read(t):
    from tests.oracle.java_driver import java_oracle

    warehouse = t.path.rsplit("/", 2)[0]
    return java_oracle().read(warehouse, "db.t")


def test_empty_commits_are_ignored_by_default(catalog):
    t = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["dt", "id"], options={"bucket": "1"})
    t.write_arrow(_batch([1], 1.0))
    assert t.new_commit(commit_user="u").commit([]) == []
    assert [s.id for s in t.snapshots()] == [1]


def test_snapshot_ignore_empty_commit_false_writes_an_empty_snapshot(catalog):
    t = catalog.create_table(
        "db.t", schema=SCHEMA, primary_keys=["dt", "id"], options={"bucket": "1", "snapshot.ignore-empty-commit": "false"}
    )
    t.write_arrow(_batch([1, 2], 1.0))
    (snapshot,) = t.new_commit(commit_user="u").commit([], 7)
    assert (snapshot.id, snapshot.commit_kind, snapshot.delta_record_count, snapshot.total_record_count) == (2, "APPEND", 0, 2)
    assert snapshot.commit_identifier == 7 and t.find_commit("u", 7) is not None
    assert t.store.delta_files(snapshot) == []
    expected = t.to_arrow()
    if oracle_available():
        assert_same_rows(oracle_read(t.path), expected, ["dt", "id"])
    if java_available:
        assert_same_rows(_java_read(t).select(expected.column_names).cast(expected.schema), expected, ["dt", "id"])


@pytest.mark.parametrize("primary_key", [True, False])
def test_commit_discard_duplicate_files(catalog, primary_key):
    t = catalog.create_table(
        "db.t",
        schema=SCHEMA,
        primary_keys=["dt", "id"] if primary_key else (),
        options={"bucket": "1" if primary_key else "-1", "commit.discard-duplicate-files": "true"},
    )
    write = t.new_write(commit_user="u")
    write.write_arrow(_batch(range(5), 1.0))
    messages = write.prepare_commit()
    (first,) = t.new_commit(commit_user="u").commit(messages, 1)
    # the same files again (a job replaying its last commit under a new identifier): not added twice
    (second,) = t.new_commit(commit_user="u").commit(messages, 2)
    assert (second.delta_record_count, second.total_record_count) == (0, first.total_record_count) == (0, 5)
    assert read_entries(t.store.manifests(), t.store.manifests().read_list(second.delta_manifest_list)) == []
    expected = _batch(range(5), 1.0)
    assert_same_rows(t.to_arrow(), expected, ["dt", "id"])
    if oracle_available():
        assert_same_rows(oracle_read(t.path), expected, ["dt", "id"])


def test_discard_duplicates_off_by_default(catalog):
    t = catalog.create_table("db.t", schema=SCHEMA, options={"bucket": "-1"})
    write = t.new_write(commit_user="u")
    write.write_arrow(_batch(range(3), 1.0))
    messages = write.prepare_commit()
    t.new_commit(commit_user="u").commit(messages, 1)
    (second,) = t.new_commit(commit_user="u").commit(messages, 2)
    assert second.delta_record_count == 3  # Paimon's default: the files are added again


@pytest.mark.parametrize("drop", [True, False])
def test_manifest_delete_file_drop_stats(catalog, drop):
    t = catalog.create_table(
        "db.t",
        schema=SCHEMA,
        primary_keys=["dt", "id"],
        options={"bucket": "1", "manifest.delete-file-drop-stats": str(drop).lower(), "manifest.merge-min-count": "1000"},
    )
    t.write_arrow(_batch(range(10), 0.0))
    t.write_arrow(_batch(range(10), 1.0))
    t.compact(full=True)  # two runs merged: a rewritten level-5 file, with value statistics
    t.write_arrow(_batch(range(5), 2.0))
    (snapshot,) = t.compact(full=True)  # deletes the level-5 files
    entries = read_entries(t.store.manifests(), t.store.manifests().read_list(snapshot.delta_manifest_list))
    deletes = [e for e in entries if e.kind == DELETE]
    adds = [e for e in entries if e.kind == ADD]
    assert deletes and adds
    # level-0 runs carry no value statistics anyway: the compacted (level-5) inputs tell
    stats_dropped = [e.file.value_stats == EMPTY_STATS and e.file.value_stats_cols == () for e in deletes if e.file.level > 0]
    assert stats_dropped
    assert all(stats_dropped) if drop else not any(stats_dropped)
    assert not any(e.file.value_stats_cols == () for e in adds if e.file.level > 0)  # ADDs keep theirs
    expected = t.to_arrow()
    assert sorted(expected["v"].to_pylist()) == [1.0] * 5 + [2.0] * 5
    if oracle_available():
        decoded = oracle_manifests(t.path, snapshot.id)["lists"]["deltaManifestList"]["manifests"]
        for e in (e for m in decoded for e in m["entries"] if e["_KIND"] == 1 and e["_FILE"]["_LEVEL"] > 0):
            assert (e["_FILE"]["_VALUE_STATS_COLS"] == []) == drop
            assert (e["_FILE"]["_VALUE_STATS"]["_NULL_COUNTS"] == []) == drop
        assert_same_rows(oracle_read(t.path), expected, ["dt", "id"])
    if java_available:
        assert_same_rows(_java_read(t).select(expected.column_names).cast(expected.schema), expected, ["dt", "id"])
