"""Deletion-vector tables with Paimon Java 2.0.0, the reference (the one-way cases and the byte
comparison also with 1.4.2): Java writes and lakestore reads
(level 0 invisible, vectors applied, no merge), lakestore writes and Java reads, and writers of
both engines interleaved on one table."""

from __future__ import annotations

import pyarrow as pa
import pytest

import lakestore
import tests.interop.test_java_changelog as changelog
import tests.interop.test_java_merge_engines as scenario
from lakestore.read.deletion_vectors import read_index_files, read_vectors
from tests.compact._tables import live_files
from tests.interop.conftest import same_rows

pytestmark = pytest.mark.oracle

ENGINES = ["deduplicate", "partial-update", "aggregation"]  # Java refuses vectors with first-row
KEYS = scenario.KEYS


def options(engine: str) -> dict[str, str]:
    return {**scenario.options(engine), "deletion-vectors.enabled": "true"}


def vector_count(table: lakestore.Table) -> int:
    return sum(len(f.ranges) for f in read_index_files(table.store.file_io, table.path, table.latest_snapshot()))


@pytest.mark.parametrize("engine", ENGINES)
def test_java_writes_lakestore_reads(java_any, catalog, warehouse, engine):
    java = java_any
    java.create_table(warehouse, "db.t", scenario.SCHEMA, primary_keys=KEYS, partition_keys=["dt"], options=options(engine))
    for index in range(len(scenario.COMMITS)):
        java.write(warehouse, "db.t", scenario.as_table(scenario.commit_rows(engine, index)))
        expected = scenario.model(engine, index + 1)
        same_rows(catalog.get_table("db.t").to_arrow(), expected, KEYS)
    table = catalog.get_table("db.t")
    assert vector_count(table) > 0
    assert all(s.raw_convertible for s in table.scan().plan())
    same_rows(java.read(warehouse, "db.t"), expected, KEYS)
    java.compact(warehouse, "db.t")
    same_rows(catalog.get_table("db.t").to_arrow(), expected, KEYS)
    # time travel to a snapshot before the last vectors
    first = scenario.model(engine, 1)
    same_rows(catalog.get_table("db.t").to_arrow(snapshot_id=2), first, KEYS)


def test_level0_rows_stay_invisible_until_moved_up(java, catalog, warehouse):
    """Java's write-only writers leave level 0 for a compaction job: readers of both engines show
    the table without them."""
    java.create_table(warehouse, "db.t", scenario.SCHEMA, primary_keys=KEYS, partition_keys=["dt"], options=options("deduplicate"))
    java.write(warehouse, "db.t", scenario.as_table(scenario.commit_rows("deduplicate", 0)))
    java.alter(warehouse, "db.t", [{"op": "set_option", "key": "write-only", "value": "true"}])
    java.write(warehouse, "db.t", scenario.as_table(scenario.commit_rows("deduplicate", 1)))
    table = catalog.get_table("db.t")
    assert any(f.level == 0 for f in live_files(table))
    expected = scenario.model("deduplicate", 1)
    same_rows(java.read(warehouse, "db.t"), expected, KEYS)
    same_rows(table.to_arrow(), expected, KEYS)
    java.alter(warehouse, "db.t", [{"op": "set_option", "key": "write-only", "value": "false"}])
    java.compact(warehouse, "db.t")
    same_rows(catalog.get_table("db.t").to_arrow(), scenario.model("deduplicate", 2), KEYS)


def test_projection_and_filter(java, catalog, warehouse):
    java.create_table(warehouse, "db.t", scenario.SCHEMA, primary_keys=KEYS, partition_keys=["dt"], options=options("deduplicate"))
    for index in range(3):
        java.write(warehouse, "db.t", scenario.as_table(scenario.commit_rows("deduplicate", index)))
    expected = scenario.model("deduplicate", 3)
    got = catalog.get_table("db.t").to_arrow(columns=["id", "w"], filter=lakestore.col("dt") == "a")
    want = expected.filter(pa.compute.equal(expected["dt"], "a")).select(["id", "w"])
    assert sorted(got.to_pylist(), key=lambda r: r["id"]) == sorted(want.to_pylist(), key=lambda r: r["id"])


def test_append_table_reads_appends_and_refuses_compaction(java, catalog, warehouse):
    """Append tables with deletion vectors: lakestore reads them (vectors applied), appends to
    them (new files, the vectors kept) and refuses to compact them (a rewrite must apply and
    retire the vectors)."""
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("v", pa.string())])
    java.create_table(warehouse, "db.a", schema, options={"bucket": "-1", "deletion-vectors.enabled": "true"})
    data = pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"]}, schema=schema)
    java.write(warehouse, "db.a", data)
    table = catalog.get_table("db.a")
    assert sorted(table.to_arrow().to_pylist(), key=lambda r: r["id"]) == data.to_pylist()
    table.write_arrow(data)
    assert sorted(r["id"] for r in java.read(warehouse, "db.a").to_pylist()) == [1, 1, 2, 2, 3, 3]
    with pytest.raises(lakestore.errors.UnsupportedTableError, match="deletion-vectors.enabled"):
        table.compact(full=True)


@pytest.mark.parametrize("engine", ENGINES)
def test_lakestore_writes_java_reads(java_any, catalog, warehouse, engine):
    java = java_any
    table = catalog.create_table("db.t", schema=scenario.SCHEMA, partition_keys=["dt"], primary_keys=KEYS, options=options(engine))
    for index in range(len(scenario.COMMITS)):
        table.write_arrow(scenario.as_table(scenario.commit_rows(engine, index)))
        assert all(f.level > 0 for f in live_files(table))  # level 0 moved up at every commit
        expected = scenario.model(engine, index + 1)
        same_rows(table.to_arrow(), expected, KEYS)
        same_rows(java.read(warehouse, "db.t"), expected, KEYS)
    assert vector_count(table) > 0
    table.compact(full=True)
    assert vector_count(table) == 0  # a full compaction rewrites every file with a vector
    same_rows(java.read(warehouse, "db.t"), expected, KEYS)
    same_rows(lakestore.Table.from_path(table.path).to_arrow(), expected, KEYS)


@pytest.mark.parametrize("engine", ENGINES)
def test_writers_of_both_engines_interleave(java, catalog, warehouse, engine):
    table = catalog.create_table("db.t", schema=scenario.SCHEMA, partition_keys=["dt"], primary_keys=KEYS, options=options(engine))
    steps = ["lakestore", "java", "lakestore+compact", "java+compact", "lakestore"]
    for index, step in enumerate(steps):
        data = scenario.as_table(scenario.commit_rows(engine, index))
        if step.startswith("java"):
            java.write(warehouse, "db.t", data)
            if step.endswith("compact"):
                java.compact(warehouse, "db.t")
        else:
            table = catalog.get_table("db.t")
            table.write_arrow(data)
            if step.endswith("compact"):
                table.compact()
        expected = scenario.model(engine, index + 1)
        same_rows(catalog.get_table("db.t").to_arrow(), expected, KEYS)
        same_rows(java.read(warehouse, "db.t"), expected, KEYS)


def test_index_files_byte_exact_with_java(java_any, catalog, warehouse):
    java = java_any
    """The same commits give index files of the same bytes (names aside) from both engines."""
    java.create_table(warehouse, "db.j", scenario.SCHEMA, primary_keys=KEYS, partition_keys=["dt"], options=options("deduplicate"))
    ours = catalog.create_table("db.l", schema=scenario.SCHEMA, partition_keys=["dt"], primary_keys=KEYS, options=options("deduplicate"))
    for index in range(3):
        data = scenario.as_table(scenario.commit_rows("deduplicate", index))
        java.write(warehouse, "db.j", data)
        ours.write_arrow(data)
    theirs = catalog.get_table("db.j")

    def vectors(table: lakestore.Table) -> list[tuple[bytes, int, list[int]]]:
        out = []
        for split in table.scan().plan():
            for name, positions in read_vectors(table.store.file_io, table.path, dict(split.deletion_files)).items():
                level = next(f.level for f in split.files if f.file_name == name)
                out.append((split.partition, split.bucket, level, positions.tolist()))
        return sorted(out)

    assert vectors(ours) == vectors(theirs)

    def index_shape(table: lakestore.Table) -> list[tuple[bytes, int, int]]:
        files = read_index_files(table.store.file_io, table.path, table.latest_snapshot())
        return sorted((f.partition, f.bucket, f.file_size) for f in files)

    assert index_shape(ours) == index_shape(theirs)


def test_lookup_changelog_with_vectors(java, catalog, warehouse):
    """Each engine replays the lookup changelog the other wrote on a deletion-vector table (Paimon
    allows vectors with the none, input and lookup producers)."""
    opts = {"bucket": "2", "deletion-vectors.enabled": "true", "changelog-producer": "lookup"}
    table = catalog.create_table("db.l", schema=changelog.SCHEMA, primary_keys=["id"], options=opts)
    java.create_table(warehouse, "db.j", changelog.SCHEMA, primary_keys=["id"], options=opts)
    for commit in changelog.COMMITS:
        table.write_arrow(changelog.batch(commit))
        java.write(warehouse, "db.j", changelog.batch(commit))
    ours = changelog.lakestore_changes(table)
    assert any(ours)
    assert changelog.java_changes(java, warehouse, "db.l", table.latest_snapshot().id) == ours
    theirs = catalog.get_table("db.j")
    assert changelog.lakestore_changes(theirs) == changelog.java_changes(java, warehouse, "db.j", theirs.latest_snapshot().id)
    # the same changes overall, whichever snapshot carries them
    assert sorted(c for s in ours for c in s) == sorted(c for s in changelog.lakestore_changes(theirs) for c in s)


def test_sequence_field_with_vectors(java, catalog, warehouse):
    """An older sequence value keeps the row above level 0: the lookup rewrites it and masks the
    old copy, as Paimon's lookup keeps the winner by sequence field."""
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("seq", pa.int64()), ("v", pa.string())])
    opts = {"bucket": "1", "sequence.field": "seq", "deletion-vectors.enabled": "true"}
    table = catalog.create_table("db.t", schema=schema, primary_keys=["id"], options=opts)
    table.write_arrow(pa.table({"id": [1, 2, 3], "seq": [10, 10, 10], "v": ["new", "new", "new"]}, schema=schema))
    java.write(warehouse, "db.t", pa.table({"id": [1, 2], "seq": [5, 20], "v": ["old", "newer"]}, schema=schema))
    table = catalog.get_table("db.t")
    table.write_arrow(pa.table({"id": [2, 3], "seq": [15, 11], "v": ["stale", "newest"]}, schema=schema))
    expected = pa.table({"id": [1, 2, 3], "seq": [10, 20, 11], "v": ["new", "newer", "newest"]}, schema=schema)
    same_rows(table.to_arrow(), expected, ["id"])
    same_rows(java.read(warehouse, "db.t"), expected, ["id"])
    java.compact(warehouse, "db.t")
    same_rows(catalog.get_table("db.t").to_arrow(), expected, ["id"])


def test_partition_overwrite_drops_vectors(java, catalog, warehouse):
    table = catalog.create_table("db.t", schema=scenario.SCHEMA, partition_keys=["dt"], primary_keys=KEYS, options=options("deduplicate"))
    for index in range(3):
        table.write_arrow(scenario.as_table(scenario.commit_rows("deduplicate", index)))
    replacement = scenario.as_table([("a", 1, 1, "o1", "+I"), ("a", 2, 2, "o2", "+I")])
    table.write_arrow(replacement, overwrite={"dt": "a"})
    before = scenario.model("deduplicate", 3)
    expected = pa.concat_tables([before.filter(pa.compute.equal(before["dt"], "b")), replacement])
    same_rows(table.to_arrow(), expected, KEYS)
    same_rows(java.read(warehouse, "db.t"), expected, KEYS)
    live = {name for split in table.scan().plan() for name, _ in split.deletion_files}
    assert all(split.partition_values == ("b",) for split in table.scan().plan() if split.deletion_files), live
