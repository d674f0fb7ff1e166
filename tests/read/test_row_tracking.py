"""Row tracking (``row-tracking.enabled``) and data evolution (``data-evolution.enabled``) in
lakestore alone: row ids assigned at commit as Paimon 2.0 assigns them, ``_ROW_ID`` and
``_SEQUENCE_NUMBER`` read on request, compaction keeping them (refused by name on data-evolution tables). Paimon Java 2.0 and pypaimon 2.1
check the same tables in tests/interop/test_java_row_tracking.py."""

from __future__ import annotations

import pyarrow as pa
import pytest

import lakestore
from lakestore.errors import LakestoreError, SchemaMismatchError, UnsupportedTableError
from lakestore.format.binary_row import encode_values
from lakestore.format.types import parse_type
from lakestore.meta.manifest import ManifestStore
from lakestore.meta.options import unsupported
from lakestore.read.data_evolution import row_id_groups
from lakestore.write.row_tracking import paimon_partition_order

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.string())])
TRACKING = {"row-tracking.enabled": "true"}


def _rows(dts: list[str], ids: list[int]) -> pa.Table:
    return pa.table({"dt": dts, "id": ids, "v": [f"v{i}" for i in ids]}, schema=SCHEMA)


@pytest.fixture
def catalog(tmp_path) -> lakestore.Catalog:
    c = lakestore.Catalog(str(tmp_path / "wh"))
    c.create_database("db", exist_ok=True)
    return c


def _partition(value: str) -> bytes:
    return encode_values([parse_type("STRING")], [value])


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        # orders Paimon 2.0.0 Java gave these partitions (first written first in each list);
        # a, c, j and 8 share a hash slot, b, g, h, d, e and f have slots of their own
        (["b", "a", "c"], ["b", "c", "a"]),
        (["b", "c", "a"], ["b", "a", "c"]),
        (["a", "c", "j", "8"], ["8", "j", "c", "a"]),
        (["j", "a", "8", "c"], ["c", "8", "a", "j"]),
        (list("bacdefgh"), ["h", "b", "g", "c", "a", "e", "d", "f"]),
        (list("hgfedcab"), ["h", "b", "g", "a", "c", "e", "d", "f"]),
    ],
)
def test_partition_order_is_paimons(written, expected):
    assert paimon_partition_order([_partition(v) for v in written]) == [_partition(v) for v in expected]


def test_commits_assign_row_ids_and_snapshot_sequence_numbers(catalog):
    table = catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], options=TRACKING)
    table.write_arrow(_rows(["b", "a", "b", "c"], [1, 2, 3, 4]))
    table.write_arrow(_rows(["a", "a"], [5, 6]))
    got = table.to_arrow(columns=["id", "_ROW_ID", "_SEQUENCE_NUMBER"]).sort_by("_ROW_ID").to_pylist()
    # partitions b, c, a (Paimon's order), rows of a partition in write order
    assert [(r["id"], r["_ROW_ID"], r["_SEQUENCE_NUMBER"]) for r in got] == [
        (1, 0, 1),
        (3, 1, 1),
        (4, 2, 1),
        (2, 3, 1),
        (5, 4, 2),
        (6, 5, 2),
    ]
    assert table.to_arrow(columns=["_ROW_ID"]).schema == pa.schema([pa.field("_ROW_ID", pa.int64(), nullable=False)])
    snapshots = table.snapshots()
    assert [s.next_row_id for s in snapshots] == [4, 6]
    store = ManifestStore(table.store.file_io, table.path)
    metas = [store.read_list(s.delta_manifest_list) for s in snapshots]
    assert [(m.min_row_id, m.max_row_id) for ms in metas for m in ms] == [(0, 3), (4, 5)]
    assert sorted((f.min_sequence_number, f.max_sequence_number) for f in _metas(table)) == [(1, 1)] * 3 + [(2, 2)]


def test_row_ids_survive_filters_limits_and_batches(catalog):
    table = catalog.create_table("db.t", schema=SCHEMA, options=TRACKING)
    table.write_arrow(_rows(["x"] * 5, [10, 11, 12, 13, 14]))
    got = table.to_arrow(columns=["id", "_ROW_ID"], filter=lakestore.col("id") >= 13).to_pylist()
    assert got == [{"id": 13, "_ROW_ID": 3}, {"id": 14, "_ROW_ID": 4}]
    assert table.to_arrow(columns=["_ROW_ID"], limit=2).num_rows == 2
    batches = list(table.to_batches(columns=["v", "_SEQUENCE_NUMBER", "_ROW_ID"]))
    assert pa.Table.from_batches(batches).column("_ROW_ID").to_pylist() == [0, 1, 2, 3, 4]
    assert table.to_arrow().column_names == ["dt", "id", "v"]  # only on request


def test_plain_tables_have_no_row_tracking_columns(catalog):
    table = catalog.create_table("db.t", schema=SCHEMA)
    table.write_arrow(_rows(["x"], [1]))
    with pytest.raises(SchemaMismatchError):
        table.to_arrow(columns=["_ROW_ID"])
    assert table.latest_snapshot().next_row_id == 0


def test_compaction_keeps_row_ids(catalog):
    table = catalog.create_table("db.t", schema=SCHEMA, options=TRACKING)
    for i in range(3):
        table.write_arrow(_rows(["x"], [i]))
    assert len(_metas(table)) == 3  # the writer never compacts them
    before = table.to_arrow(columns=["id", "_ROW_ID", "_SEQUENCE_NUMBER"]).sort_by("_ROW_ID").to_pylist()
    table.compact(full=True)  # lakestore/compact/row_tracking.py; against Java: test_java_row_tracking_compaction.py
    [compacted] = _metas(table)
    assert compacted.first_row_id is None and compacted.write_cols[-2:] == ("_ROW_ID", "_SEQUENCE_NUMBER")
    assert table.to_arrow(columns=["id", "_ROW_ID", "_SEQUENCE_NUMBER"]).sort_by("_ROW_ID").to_pylist() == before


def test_data_evolution_compaction_refused_by_name(catalog):
    table = catalog.create_table("db.t", schema=SCHEMA, options={**TRACKING, "data-evolution.enabled": "true"})
    for i in range(3):
        table.write_arrow(_rows(["x"], [i]))
    with pytest.raises(UnsupportedTableError, match="data-evolution.enabled") as info:
        table.compact(full=True)
    assert "data-evolution.enabled" in info.value.options
    assert len(_metas(table)) == 3


def test_row_tracking_needs_an_unaware_append_table(catalog):
    # refused when created (Paimon's SchemaValidation) or, on a table another engine made, when written
    pk = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    with pytest.raises(LakestoreError, match="row-tracking.enabled"):
        table = catalog.create_table("db.pk", schema=pk, primary_keys=["id"], options={**TRACKING, "bucket": "1"})
        table.write_arrow(pa.table({"id": [1], "v": ["a"]}, schema=pk))
    with pytest.raises(LakestoreError, match="row-tracking.enabled|bucket"):
        fixed = catalog.create_table("db.fixed", schema=SCHEMA, options={**TRACKING, "bucket": "2", "bucket-key": "id"})
        fixed.write_arrow(_rows(["x"], [1]))


def test_overwrite_gives_new_row_ids(catalog):
    table = catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], options=TRACKING)
    table.write_arrow(_rows(["a", "b"], [1, 2]))
    table.write_arrow(_rows(["a"], [3]), overwrite={"dt": "a"})
    got = table.to_arrow(columns=["id", "_ROW_ID", "_SEQUENCE_NUMBER"]).sort_by("_ROW_ID").to_pylist()
    assert [(r["id"], r["_ROW_ID"], r["_SEQUENCE_NUMBER"]) for r in got] == [
        (2, 0, 1),
        (3, 2, 2),
    ]  # b first: its hash slot
    assert table.latest_snapshot().next_row_id == 3


def test_data_evolution_table_of_full_rows(catalog):
    table = catalog.create_table("db.t", schema=SCHEMA, options={**TRACKING, "data-evolution.enabled": "true"})
    table.write_arrow(_rows(["x", "x"], [1, 2]))
    table.write_arrow(_rows(["y"], [3]))
    got = table.to_arrow(columns=["id", "_ROW_ID"], filter=lakestore.col("id") > 1).sort_by("_ROW_ID").to_pylist()
    assert got == [{"id": 2, "_ROW_ID": 1}, {"id": 3, "_ROW_ID": 2}]
    groups = row_id_groups(_metas(table))
    assert [[f.first_row_id for f in g] for g in groups] == [[0], [2]]


def _metas(table: lakestore.Table) -> list:
    return [f for split in table.scan().plan() for f in split.files]


def test_data_evolution_without_row_tracking_is_refused(catalog):
    with pytest.raises(LakestoreError, match="data-evolution.enabled"):
        table = catalog.create_table("db.t", schema=SCHEMA, options={"data-evolution.enabled": "true"})
        table.write_arrow(_rows(["x"], [1]))


def test_reads_of_what_snapshots_added_merge_data_evolution_files(catalog):
    # against Paimon 2.0.0 Java: tests/interop/test_java_data_evolution_incremental.py
    table = catalog.create_table("db.t", schema=SCHEMA, options={**TRACKING, "data-evolution.enabled": "true"})
    table.write_arrow(_rows(["x"], [1]))
    table.update_columns(pa.table({"_ROW_ID": [0], "v": ["new"]}))
    assert table.read_changes(from_snapshot_id=0).select(["id", "v"]).to_pylist() == [{"id": 1, "v": "new"}]
    assert table.read_changes(from_snapshot_id=1).select(["id", "v"]).to_pylist() == [{"id": None, "v": "new"}]
    assert [b.num_rows for b in table.stream(snapshot_id=1)] == [1, 1]
    # row tracking alone: the changes are the appended rows
    plain = catalog.create_table("db.p", schema=SCHEMA, options=TRACKING)
    plain.write_arrow(_rows(["x"], [1]))
    assert plain.read_changes(from_snapshot_id=0).column("id").to_pylist() == [1]


def test_update_columns_of_a_data_evolution_table(catalog):
    table = catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], options={**TRACKING, "data-evolution.enabled": "true"})
    table.write_arrow(_rows(["x", "x", "y"], [1, 2, 3]))
    snapshot = table.update_columns(pa.table({"_ROW_ID": [2, 0], "v": ["new3", "new1"]}))
    assert snapshot is not None and snapshot.next_row_id == 3
    got = table.to_arrow(columns=["id", "v", "_ROW_ID"]).sort_by("_ROW_ID").to_pylist()
    # partition x first (Paimon's order of the two partitions): ids 1, 2, 3 have row ids 0, 1, 2
    assert [(r["id"], r["v"], r["_ROW_ID"]) for r in got] == [(1, "new1", 0), (2, "v2", 1), (3, "new3", 2)]
    assert table.to_arrow(filter=lakestore.col("v") == "new1").num_rows == 1
    with pytest.raises(SchemaMismatchError, match="name no row"):
        table.update_columns(pa.table({"_ROW_ID": [7], "v": ["x"]}))
    with pytest.raises(SchemaMismatchError, match="partition columns"):
        table.update_columns(pa.table({"_ROW_ID": [0], "dt": ["z"]}))
    with pytest.raises(SchemaMismatchError, match="twice"):
        table.update_columns(pa.table({"_ROW_ID": [0, 0], "v": ["a", "b"]}))
    plain = catalog.create_table("db.p", schema=SCHEMA, options=TRACKING)
    with pytest.raises(UnsupportedTableError, match="data-evolution.enabled"):
        plain.update_columns(pa.table({"_ROW_ID": [0], "v": ["x"]}))


def test_vector_store_files_of_data_evolution_tables_refused():
    found = unsupported({**TRACKING, "data-evolution.enabled": "true", "vector.file.format": "parquet"}, primary_keys=())
    assert "vector.file.format" in dict(found.blocks_reads)
    assert "vector.file.format" in dict(found.blocks_writes)
    assert not unsupported(TRACKING, primary_keys=()).blocks_reads
    assert not unsupported(TRACKING, primary_keys=()).blocks_compaction  # lakestore/compact/row_tracking.py
    evolution = unsupported({**TRACKING, "data-evolution.enabled": "true"}, primary_keys=())
    assert "data-evolution.enabled" in dict(evolution.blocks_compaction)


@pytest.mark.parametrize("evolution", [False, True])
def test_sequence_numbers_of_several_files_in_one_commit(catalog, evolution):
    # Paimon's AppendOnlyWriter: one counter across a writer's files (later files keep their own
    # sequence numbers), or with data evolution a counter per file (every file gets the snapshot id)
    options = {**TRACKING, "write-buffer-size": "1 kb", **({"data-evolution.enabled": "true"} if evolution else {})}
    table = catalog.create_table("db.t", schema=SCHEMA, options=options)
    data = _rows(["x"] * 300, list(range(300)))
    table.write_arrow(data.to_batches(max_chunksize=100))
    files = sorted(_metas(table), key=lambda f: f.first_row_id)
    assert len(files) > 1
    assert [f.first_row_id for f in files] == [sum(g.row_count for g in files[:i]) for i in range(len(files))]
    if evolution:
        assert {(f.min_sequence_number, f.max_sequence_number) for f in files} == {(1, 1)}
    else:
        assert (files[0].min_sequence_number, files[0].max_sequence_number) == (1, 1)
        assert [f.min_sequence_number for f in files[1:]] == [f.first_row_id for f in files[1:]]
    got = table.to_arrow(columns=["id", "_ROW_ID"])
    assert got.column("id").to_pylist() == got.column("_ROW_ID").to_pylist() == list(range(300))
