"""Read-side scan options against Paimon 2.0.0 Java: ``incremental-between`` (snapshot ids and
tags), ``incremental-between-timestamp`` and ``incremental-between-scan-mode`` as per-read
options and as table options, and the time-travel options (``scan.snapshot-id``,
``scan.tag-name``, ``scan.timestamp-millis``, ``scan.watermark``, ``scan.version``) stored on
the table. lakestore returns the rows Java's batch read returns."""

from __future__ import annotations

import pyarrow as pa
import pytest

from lakestore.errors import UnsupportedTableError
from lakestore.meta.schema_change import SetOption
from tests._support import sort_rows

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string()), ("k", pa.string())])
COMMITS = [
    [(1, "a", "+I"), (2, "a", "+I"), (3, "a", "+I")],
    [(2, "b", "+I"), (4, "b", "+I"), (3, "a", "-D")],
    [(1, "c", "+I"), (5, "c", "+I"), (2, "b", "+I")],
    [(6, "d", "+I"), (4, "d", "+I")],
]


def batch(rows) -> pa.Table:
    return pa.table({"id": [r[0] for r in rows], "v": [r[1] for r in rows], "k": [r[2] for r in rows]}, schema=SCHEMA)


def same(java_rows: pa.Table, ours: pa.Table) -> None:
    assert sort_rows(ours.select(java_rows.column_names)) == sort_rows(java_rows)


def pk_table(catalog, options=None):
    table = catalog.create_table(
        "db.t", schema=SCHEMA, primary_keys=["id"], options={"bucket": "2", "rowkind.field": "k", **(options or {})}
    )
    for rows in COMMITS:
        table.write_arrow(batch(rows))
    return table


@pytest.mark.parametrize(
    ("mode", "between"),
    # a diff needs both snapshots to exist: no snapshot 0
    [(m, b) for m in (None, "delta", "diff") for b in ("0,2", "1,3", "1,4", "2,2") if not (m == "diff" and b.startswith("0"))],
)
def test_incremental_between_snapshot_ids(java, catalog, warehouse, mode, between):
    table = pk_table(catalog)
    table.compact(full=True)  # snapshot 5, COMPACT: delta skips it, diff sees its files
    options = {"incremental-between": between, **({"incremental-between-scan-mode": mode} if mode else {})}
    same(java.read(warehouse, "db.t", options=options), table.to_arrow(incremental_between=between, incremental_scan_mode=mode))


def test_incremental_between_reaching_a_compaction(java, catalog, warehouse):
    table = pk_table(catalog)
    table.compact(full=True)
    table.write_arrow(batch([(7, "e", "+I"), (1, "e", "+I")]))
    for mode in ("delta", "diff"):
        options = {"incremental-between": "3,6", "incremental-between-scan-mode": mode}
        same(java.read(warehouse, "db.t", options=options), table.to_arrow(incremental_between=(3, 6), incremental_scan_mode=mode))


@pytest.mark.parametrize("mode", [None, "changelog", "delta"])
def test_incremental_between_changelog_producer(java, catalog, warehouse, mode):
    table = pk_table(catalog, {"changelog-producer": "input"})
    options = {"incremental-between": "1,4", **({"incremental-between-scan-mode": mode} if mode else {})}
    same(java.read(warehouse, "db.t", options=options), table.to_arrow(incremental_between="1,4", incremental_scan_mode=mode))


def test_incremental_between_tags_is_a_diff(java, catalog, warehouse):
    table = pk_table(catalog)
    table.manage.create_tag("start", 1)
    table.manage.create_tag("end", 3)
    same(java.read(warehouse, "db.t", options={"incremental-between": "start,end"}), table.to_arrow(incremental_between="start,end"))
    options = {"incremental-between": "start,end", "incremental-between-tag-to-snapshot": "true"}
    java.alter(warehouse, "db.t", [{"op": "set_option", "key": "incremental-between-tag-to-snapshot", "value": "true"}])
    table = catalog.get_table("db.t")
    same(java.read(warehouse, "db.t", options=options), table.to_arrow(incremental_between="start,end"))


@pytest.mark.parametrize("mode", [None, "diff"])
def test_incremental_between_timestamp(java, catalog, warehouse, mode):
    table = pk_table(catalog)
    times = [s.time_millis for s in table.snapshots()]
    for start, end in [(times[0], times[2]), (times[0] - 1000, times[1]), (times[1], times[3] + 1000)]:
        between = f"{start},{end}"
        options = {"incremental-between-timestamp": between, **({"incremental-between-scan-mode": mode} if mode else {})}
        ours = table.to_arrow(incremental_between_timestamp=between, incremental_scan_mode=mode)
        same(java.read(warehouse, "db.t", options=options), ours)


def test_incremental_between_on_an_append_table(java, catalog, warehouse):
    schema = pa.schema([("id", pa.int64()), ("v", pa.string())])
    table = catalog.create_table("db.a", schema=schema)
    for i in range(4):
        table.write_arrow(pa.table({"id": [i, i + 10], "v": [str(i), "x"]}, schema=schema))
    table.write_arrow(pa.table({"id": [99], "v": ["o"]}, schema=schema), overwrite=True)
    for between in ("1,3", "2,5"):
        for mode in ("delta", "diff"):
            options = {"incremental-between": between, "incremental-between-scan-mode": mode}
            ours = table.to_arrow(incremental_between=between, incremental_scan_mode=mode)
            same(java.read(warehouse, "db.a", options=options), ours)


def test_incremental_between_as_a_table_option(java, catalog, warehouse):
    pk_table(catalog)
    java.alter(
        warehouse,
        "db.t",
        [
            {"op": "set_option", "key": "incremental-between", "value": "1,3"},
            {"op": "set_option", "key": "incremental-between-scan-mode", "value": "diff"},
        ],
    )
    table = catalog.get_table("db.t")
    same(java.read(warehouse, "db.t"), table.to_arrow())
    same(java.read(warehouse, "db.t"), pa.concat_tables(list(map(pa.Table.from_batches, [[b] for b in table.to_batches()]))))
    # per-read arguments win over the table's options, as Paimon's dynamic options do
    options = {"incremental-between": "2,4", "incremental-between-scan-mode": "delta"}
    same(java.read(warehouse, "db.t", options=options), table.to_arrow(incremental_between="2,4", incremental_scan_mode="delta"))


@pytest.mark.parametrize("key", ["scan.snapshot-id", "scan.tag-name", "scan.timestamp-millis"])
def test_time_travel_table_options(java, catalog, warehouse, key):
    table = pk_table(catalog)
    table.manage.create_tag("two", 2)
    value = {"scan.snapshot-id": "2", "scan.tag-name": "two", "scan.timestamp-millis": str(table.snapshot(2).time_millis)}[key]
    java.alter(warehouse, "db.t", [{"op": "set_option", "key": key, "value": value}])
    table = catalog.get_table("db.t")
    expected = java.read(warehouse, "db.t")
    assert expected.num_rows < table.to_arrow(snapshot_id=table.latest_snapshot().id).num_rows
    same(expected, table.to_arrow())
    with pytest.raises(UnsupportedTableError, match=key):
        table.stream()


def test_scan_watermark_table_option(java, catalog, warehouse):
    """Paimon 2.0 reads ``scan.watermark`` as a dynamic option (the first snapshot whose watermark
    reached it); lakestore honours it set on the table. ``scan.version`` alone is refused on a
    table by both (from-snapshot needs scan.snapshot-id, scan.tag-name or scan.watermark)."""
    table = pk_table(catalog)
    table.write_arrow(batch([(8, "w", "+I")]), watermark=1000)
    table.write_arrow(batch([(9, "w", "+I")]), watermark=2000)
    with pytest.raises(Exception, match="scan.snapshot-id"):
        java.alter(warehouse, "db.t", [{"op": "set_option", "key": "scan.version", "value": "2"}])
    expected = java.read(warehouse, "db.t", options={"scan.watermark": "1500"})
    same(expected, catalog.alter_table("db.t", [SetOption("scan.watermark", "1500")]).to_arrow())


# -- bucket-function.type ------------------------------------------------------------------------
BUCKET_CASES = {
    "mod-int": ("mod", [pa.field("a", pa.int32(), nullable=False)], [[-7, -1, 0, 1, 5, 2**31 - 1, -(2**31)]]),
    "mod-bigint": ("mod", [pa.field("a", pa.int64(), nullable=False)], [[-(2**40), -3, 0, 4, 2**40 + 3, 2**63 - 1]]),
    "hive-int-string": (
        "hive",
        [pa.field("a", pa.int32(), nullable=False), pa.field("b", pa.string(), nullable=False)],
        [[1, -2, 3, 2**31 - 1, 0, 7], ["x", "héllo", "", "zz", "日本", "a longer string key"]],
    ),
    "hive-bigint-double-bool": (
        "hive",
        [pa.field("a", pa.int64(), nullable=False), pa.field("b", pa.float64(), nullable=False), pa.field("c", pa.bool_(), nullable=False)],
        [[-(2**40), 5, 0, 9, 2**62, -1], [1.5, -0.0, 0.0, -2.25, 1e300, 3.0], [True, False, True, False, True, True]],
    ),
    "hive-decimal-float-date-binary": (
        "hive",
        [
            pa.field("a", pa.decimal128(12, 3), nullable=False),
            pa.field("b", pa.float32(), nullable=False),
            pa.field("c", pa.date32(), nullable=False),
            pa.field("d", pa.binary(), nullable=False),
            pa.field("e", pa.int16(), nullable=False),
        ],
        [
            [__import__("decimal").Decimal(x) for x in ("1.500", "-2.000", "0.000", "123456789.123", "-0.010", "10.000")],
            [1.25, -0.0, 3.5, -7.75, 0.0, 1e10],
            [0, 19000, -5, 20000, 1, 365],
            [b"\x00\xff", b"abc", b"", b"\x80", b"\x7f\x01", b"zz"],
            [1, -1, 300, -300, 0, 32767],
        ],
    ),
}


@pytest.mark.parametrize("case", list(BUCKET_CASES))
def test_bucket_function(java, catalog, warehouse, case):
    function, key_fields, key_values = BUCKET_CASES[case]
    schema = pa.schema([*key_fields, ("v", pa.string())])
    keys = [f.name for f in key_fields]
    n = len(key_values[0])

    def rows(tag: str) -> pa.Table:
        return pa.table([*key_values, [f"{tag}{i}" for i in range(n)]], schema=schema)

    options = {"bucket": "3", "bucket-function.type": function}
    java.create_table(warehouse, "db.j", schema, primary_keys=keys, options=options)
    java.write(warehouse, "db.j", rows("java"))
    # lakestore updates every key Java wrote: in another bucket, Java would return both versions
    table = catalog.get_table("db.j")
    table.write_arrow(rows("ours"))
    same(java.read(warehouse, "db.j"), rows("ours"))
    # and Java updates every key lakestore wrote
    ours = catalog.create_table("db.l", schema=schema, primary_keys=keys, options=options)
    ours.write_arrow(rows("ours"))
    java.write(warehouse, "db.l", rows("java"))
    same(java.read(warehouse, "db.l"), rows("java"))
    same(ours.to_arrow(), rows("java"))
    assert len({f.bucket for f in ours.store.live_files()}) > 1
    # bucket pruning finds every key in its bucket
    from lakestore.read.predicate import Column

    typed = rows("x")
    for i in range(n):
        pred = None
        for name in keys:
            term = Column(name) == typed.column(name)[i].as_py()
            pred = term if pred is None else pred & term
        got = ours.to_arrow(filter=pred)
        assert got["v"].to_pylist() == [f"java{i}"], (i, got)


# -- scan.fallback-branch / scan.primary-branch --------------------------------------------------
PART_SCHEMA = pa.schema([pa.field("dt", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])


def part_rows(dt: str, ids: list[int], tag: str) -> pa.Table:
    return pa.table({"dt": [dt] * len(ids), "id": ids, "v": [f"{tag}{i}" for i in ids]}, schema=PART_SCHEMA)


@pytest.mark.parametrize("key", ["scan.fallback-branch", "scan.primary-branch"])
@pytest.mark.parametrize("writer", ["lakestore", "java"])
def test_fallback_branch(java, catalog, warehouse, key, writer):
    table = catalog.create_table("db.t", schema=PART_SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"], options={"bucket": "2"})
    table.write_arrow(pa.concat_tables([part_rows("d1", [1, 2], "main"), part_rows("d2", [1, 2, 3], "main")]))
    branch_rows = pa.concat_tables([part_rows("d2", [1, 9], "fb"), part_rows("d3", [1, 2], "fb"), part_rows("d4", [5], "fb")])
    if writer == "lakestore":
        table.manage.create_branch("fb").write_arrow(branch_rows)
    else:
        java.create_branch(warehouse, "db.t", "fb")
        java.write(warehouse, "db.t$branch_fb", branch_rows)
    java.alter(warehouse, "db.t", [{"op": "set_option", "key": key, "value": "fb"}])
    table = catalog.get_table("db.t")
    expected = java.read(warehouse, "db.t")
    assert {r["v"][:2] for r in expected.to_pylist()} == {"ma", "fb"}
    same(expected, table.to_arrow())
    same(expected, pa.Table.from_batches(list(table.to_batches()), schema=table.to_arrow().schema))
    # a projection and a filter as Paimon applies them: to each branch's partitions
    from lakestore.read.predicate import Column

    got = table.to_arrow(columns=["v", "dt"], filter=(Column("id") == 1) | (Column("dt") == "d4"))
    want = [r for r in expected.to_pylist() if r["id"] == 1 or r["dt"] == "d4"]
    assert sort_rows(got) == sort_rows(pa.Table.from_pylist([{"v": r["v"], "dt": r["dt"]} for r in want]))
    # time travel by snapshot id: the other branch's snapshot of that time, as Paimon's rewriteOtherOptions
    same(java.read(warehouse, "db.t", options={"scan.snapshot-id": "1"}), table.to_arrow(snapshot_id=1))
    # writes go to the current branch only
    table.write_arrow(part_rows("d3", [7], "main"))
    same(java.read(warehouse, "db.t"), catalog.get_table("db.t").to_arrow())


@pytest.mark.parametrize("engine", ["deduplicate", "first-row", "partial-update"])
def test_diff_merges_only_the_files_each_side_lacks(java, catalog, warehouse, engine):
    options = {"bucket": "2", "merge-engine": engine}
    table = catalog.create_table(
        "db.d", schema=pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())]), primary_keys=["id"], options=options
    )
    for i, ids in enumerate([[1, 2, 3], [2, 4], [1, 5], [2]]):
        table.write_arrow(pa.table({"id": ids, "v": [f"{i}-{x}" if x != 2 else "same" for x in ids]}, schema=table.arrow_schema))
    table.compact(full=True)
    for between in ("2,4", "1,3", "3,5", "1,5"):
        options = {"incremental-between": between, "incremental-between-scan-mode": "diff"}
        same(java.read(warehouse, "db.d", options=options), table.to_arrow(incremental_between=between, incremental_scan_mode="diff"))


def test_scan_bucket_table_option(java, catalog, warehouse):
    pk_table(catalog).write_arrow(batch([(i, "m", "+I") for i in range(10, 40)]))  # 5
    java.alter(warehouse, "db.t", [{"op": "set_option", "key": "scan.bucket", "value": "1"}])
    table = catalog.get_table("db.t")
    expected = java.read(warehouse, "db.t")
    assert 0 < expected.num_rows < 30  # of 35 keys, those of bucket 1
    same(expected, table.to_arrow())
    assert {s.bucket for s in table.scan().plan()} == {1}
    for mode in ("delta", "diff"):
        options = {"incremental-between": "1,5", "incremental-between-scan-mode": mode}
        same(java.read(warehouse, "db.t", options=options), table.to_arrow(incremental_between="1,5", incremental_scan_mode=mode))


@pytest.mark.parametrize("writer", ["lakestore", "java"])
def test_scan_file_creation_time_millis_table_option(java, catalog, warehouse, writer):
    """Paimon's FileCreationTimeStartingScanner: the latest snapshot's files created since then."""
    import time

    table = catalog.create_table("db.c", schema=SCHEMA, primary_keys=["id"], options={"bucket": "2", "rowkind.field": "k"})

    def write(rows) -> None:
        if writer == "lakestore":
            table.write_arrow(batch(rows))
        else:
            java.write(warehouse, "db.c", batch(rows))

    write(COMMITS[0])
    time.sleep(0.05)
    middle = int(time.time() * 1000)
    time.sleep(0.05)
    write(COMMITS[1])
    write(COMMITS[2])
    java.alter(warehouse, "db.c", [{"op": "set_option", "key": "scan.file-creation-time-millis", "value": str(middle)}])
    table = catalog.get_table("db.c")
    expected = java.read(warehouse, "db.c")
    assert "a" not in {r["v"] for r in expected.to_pylist()}  # the first commit's files are older
    same(expected, table.to_arrow())
    assert {r["v"] for r in table.to_arrow(snapshot_id=1).to_pylist()} == {"a"}  # a named snapshot wins over the option
