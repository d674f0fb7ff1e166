"""DELETE on append tables with deletion vectors (tables Paimon 2.0.0 Java creates and writes):
the rows' positions land in deletion vectors as paimon-spark writes them, read back by lakestore
and by Java, before and after Java appends and compacts."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lakestore
from lakestore import col
from lakestore.dml.append_vectors import _check_base, _selected_positions
from lakestore.errors import CommitConflictError, UnsupportedTableError
from tests._support import all_files, data_files

pytestmark = pytest.mark.oracle

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.string())])
LAYOUTS = {
    "unaware": {"bucket": "-1", "deletion-vectors.enabled": "true"},
    "bucketed": {"bucket": "2", "bucket-key": "id", "deletion-vectors.enabled": "true"},
    "bitmap64": {"bucket": "-1", "deletion-vectors.enabled": "true", "deletion-vectors.bitmap64": "true"},
}


def rows(ids: range, dt: str = "a") -> pa.Table:
    return pa.table({"dt": [dt] * len(ids), "id": list(ids), "v": [f"v{i}" for i in ids]}, schema=SCHEMA)


def ids_of(table: pa.Table) -> list[int]:
    return sorted(table.column("id").to_pylist())


def dv_index(table: lakestore.Table) -> list[tuple[str, int, int]]:
    return sorted((f.partition_path, f.bucket, f.rows) for f in table.store.index_files() if f.index_type == "DELETION_VECTORS")


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_deletes_mark_vectors(java: Any, warehouse: Path, catalog: lakestore.Catalog, layout: str) -> None:
    java.create_table(warehouse, "db.a", SCHEMA, partition_keys=["dt"], options=LAYOUTS[layout])
    java.write(warehouse, "db.a", rows(range(0, 10)))
    java.write(warehouse, "db.a", rows(range(10, 20)))
    java.write(warehouse, "db.a", rows(range(20, 25), dt="b"))
    expected = set(range(25))
    table = catalog.get_table("db.a")
    files = data_files(table.path)

    snapshot = table.delete(col("id").isin([1, 2, 12]))
    assert snapshot is not None and snapshot.commit_kind == "APPEND"
    expected -= {1, 2, 12}
    assert data_files(table.path) == files  # no data file written
    assert ids_of(catalog.get_table("db.a").to_arrow()) == sorted(expected)
    assert ids_of(java.read(warehouse, "db.a")) == sorted(expected)

    # the same files again (their vectors grow), and a row already deleted
    assert catalog.get_table("db.a").delete((col("v") == "v3") | col("id").isin([2, 13, 21])) is not None
    expected -= {3, 13, 21}
    assert ids_of(catalog.get_table("db.a").to_arrow()) == sorted(expected)
    assert ids_of(java.read(warehouse, "db.a")) == sorted(expected)
    assert catalog.get_table("db.a").delete(col("id") == 2) is None  # already deleted: no commit
    assert catalog.get_table("db.a").delete(col("id") > 1000) is None

    # Java appends and compacts over lakestore's vectors
    java.write(warehouse, "db.a", rows(range(30, 33)))
    expected |= {30, 31, 32}
    java.compact(warehouse, "db.a")
    assert ids_of(java.read(warehouse, "db.a")) == sorted(expected)
    assert ids_of(catalog.get_table("db.a").to_arrow()) == sorted(expected)
    assert catalog.get_table("db.a").delete(col("id") >= 30) is not None
    expected -= {30, 31, 32}
    assert ids_of(java.read(warehouse, "db.a")) == sorted(expected)


def test_unaware_tables_keep_untouched_index_files(java: Any, warehouse: Path, catalog: lakestore.Catalog) -> None:
    """Paimon's AppendDeleteFileMaintainer: an index file whose vectors do not change stays; a
    touched one is retired, its unchanged vectors rewritten beside a file of the changed ones."""
    java.create_table(warehouse, "db.a", SCHEMA, partition_keys=["dt"], options=LAYOUTS["unaware"])
    java.write(warehouse, "db.a", rows(range(0, 10)))
    java.write(warehouse, "db.a", rows(range(10, 20)))
    table = catalog.get_table("db.a")
    table.delete(col("id") == 1)
    first = {f.file_name for f in table.store.index_files()}
    assert dv_index(table) == [("dt=a", 0, 1)]
    table.delete(col("id") == 11)  # another data file: the first index file stays
    assert first <= {f.file_name for f in table.store.index_files()}
    assert dv_index(table) == [("dt=a", 0, 1), ("dt=a", 0, 1)]
    table.delete(col("id").isin([2, 12]))  # both files touched: both index files retired
    names = {f.file_name for f in table.store.index_files()}
    assert not names & first
    assert dv_index(table) == [("dt=a", 0, 2)]
    assert ids_of(java.read(warehouse, "db.a")) == sorted(set(range(20)) - {1, 2, 11, 12})


def test_partition_filter_drops_partitions_and_refusals(java: Any, warehouse: Path, catalog: lakestore.Catalog) -> None:
    java.create_table(warehouse, "db.a", SCHEMA, partition_keys=["dt"], options=LAYOUTS["unaware"])
    java.write(warehouse, "db.a", rows(range(0, 3)))
    java.write(warehouse, "db.a", rows(range(3, 6), dt="b"))
    table = catalog.get_table("db.a")
    table.delete(col("id") == 4)
    assert table.delete(col("dt") == "b").commit_kind == "OVERWRITE"
    assert table.store.index_files() == []  # the partition's vectors went with it
    assert ids_of(java.read(warehouse, "db.a")) == [0, 1, 2]
    table.write_arrow(rows(range(9, 11)))  # appends add files and keep the vectors
    table.delete(col("id") == 10)
    assert ids_of(java.read(warehouse, "db.a")) == [0, 1, 2, 9]
    files, latest = all_files(table.path), table.latest_snapshot().id
    with pytest.raises(UnsupportedTableError, match="deletion-vectors.enabled"):
        table.compact(full=True)  # compaction would have to apply and retire the vectors
    assert all_files(table.path) == files and table.latest_snapshot().id == latest


def test_concurrent_changes_conflict(java: Any, warehouse: Path, catalog: lakestore.Catalog) -> None:
    """A delete selected on snapshot N does not commit over a later commit that marked the same
    files or compacted them away (its vectors would be lost or point at removed files)."""
    java.create_table(warehouse, "db.a", SCHEMA, partition_keys=["dt"], options=LAYOUTS["unaware"])
    java.write(warehouse, "db.a", rows(range(0, 10)))
    java.write(warehouse, "db.a", rows(range(10, 20)))
    table = catalog.get_table("db.a")
    base = table.latest_snapshot()
    marked, _, _ = _selected_positions(table, base, col("id") == 1)
    catalog.get_table("db.a").delete(col("id") == 2)  # the same data file, committed in between
    with pytest.raises(CommitConflictError, match="deletion vectors"):
        _check_base(catalog.get_table("db.a"), base, marked)
    base = catalog.get_table("db.a").latest_snapshot()
    marked, _, _ = _selected_positions(table, base, col("id") == 3)
    java.compact(warehouse, "db.a")  # rewrites the data files
    with pytest.raises(CommitConflictError, match="rewritten or removed"):
        _check_base(catalog.get_table("db.a"), base, marked)
    assert ids_of(java.read(warehouse, "db.a")) == sorted(set(range(20)) - {2})


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_update_marks_vectors_and_appends(java: Any, warehouse: Path, catalog: lakestore.Catalog, layout: str) -> None:
    """paimon-spark's UPDATE of a deletion-vector append table: the old rows marked deleted, the
    updated ones appended as new files, one commit; Java reads it, appends and compacts over it."""
    java.create_table(warehouse, "db.a", SCHEMA, partition_keys=["dt"], options=LAYOUTS[layout])
    java.write(warehouse, "db.a", rows(range(0, 10)))
    java.write(warehouse, "db.a", rows(range(10, 20), dt="b"))
    table = catalog.get_table("db.a")
    before = {f.file_name for f in table.store.live_files()}
    snapshot = table.update(set={"v": "new"}, filter=col("id").isin([1, 5, 15]) | (col("v") == "v7"))
    assert snapshot is not None and snapshot.commit_kind == "APPEND" and snapshot.operation == "UPDATE"
    after = catalog.get_table("db.a")
    assert before < {f.file_name for f in after.store.live_files()}  # old files kept (vectors), new ones added
    want = {i: ("new" if i in (1, 5, 7, 15) else f"v{i}") for i in range(20)}
    for read in (after.to_arrow(), java.read(warehouse, "db.a")):
        assert sorted((r["id"], r["v"]) for r in read.to_pylist()) == sorted(want.items())
    assert after.update(set={"v": "x"}, filter=col("id") > 100) is None
    java.write(warehouse, "db.a", rows(range(30, 31)))
    java.compact(warehouse, "db.a")
    want[30] = "v30"
    assert sorted((r["id"], r["v"]) for r in java.read(warehouse, "db.a").to_pylist()) == sorted(want.items())
    assert sorted((r["id"], r["v"]) for r in catalog.get_table("db.a").to_arrow().to_pylist()) == sorted(want.items())


_tables = itertools.count()


@pytest.mark.parametrize("layout", ["unaware", "bucketed"])
def test_sequences_match_a_model(java: Any, tmp_path_factory: pytest.TempPathFactory, layout: str) -> None:
    """Deletes and updates by lakestore, appends and full compactions by Paimon Java, in any order:
    lakestore and Java read the model's rows (a multiset: append tables hold duplicates) after each."""
    warehouse = tmp_path_factory.mktemp("dv-model") / "wh"
    catalog = lakestore.Catalog(str(warehouse))
    catalog.create_database("db")
    ops = st.lists(
        st.one_of(
            st.tuples(st.just("append"), st.lists(st.tuples(st.sampled_from("ab"), st.integers(0, 9)), min_size=1, max_size=6)),
            st.tuples(st.just("delete"), st.integers(0, 9), st.sampled_from(["id", "v"])),
            st.tuples(st.just("update"), st.integers(0, 9), st.sampled_from(["u", "w"])),
            st.tuples(st.just("compact")),
        ),
        min_size=1,
        max_size=6,
    )

    @settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @given(ops)
    def run(steps: list[tuple[Any, ...]]) -> None:
        name = f"db.a{next(_tables)}"
        java.create_table(warehouse, name, SCHEMA, partition_keys=["dt"], options=LAYOUTS[layout])
        model: list[tuple[str, int, str]] = []
        for step in steps:
            if step[0] == "append":
                new = [(dt, i, f"v{i}") for dt, i in step[1]]
                java.write(warehouse, name, pa.Table.from_pylist([dict(zip(SCHEMA.names, r, strict=True)) for r in new], schema=SCHEMA))
                model += new
            elif step[0] == "compact":
                if model:
                    java.compact(warehouse, name)
            elif step[0] == "delete":
                k, column = step[1], step[2]
                predicate = col("id") <= k if column == "id" else col("v") == f"v{k}"
                catalog.get_table(name).delete(predicate)
                model = [r for r in model if not (r[1] <= k if column == "id" else r[2] == f"v{k}")]
            else:
                k, value = step[1], step[2]
                catalog.get_table(name).update(set={"v": value}, filter=col("id") >= k)
                model = [(d, i, value if i >= k else v) for d, i, v in model]
            want = sorted(model)
            assert sorted((r["dt"], r["id"], r["v"]) for r in catalog.get_table(name).to_arrow().to_pylist()) == want, step
        assert sorted((r["dt"], r["id"], r["v"]) for r in java.read(warehouse, name).to_pylist()) == sorted(model)

    run()
