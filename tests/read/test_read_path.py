"""The read path: streaming (to_batches / to_arrow_batch_reader) returns exactly to_arrow's rows;
limit pushdown, bucket pruning and row-group pruning read less and return the same rows as the
full read filtered."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import lakestore
from lakestore import col
from lakestore.io.fileio import LocalFileIO
from tests.faulty_io import FaultyFileIO

SCHEMA = pa.schema([("p", pa.string()), ("id", pa.int64()), ("name", pa.string()), ("v", pa.float64()), ("op", pa.string())])


def _rows(ids, p, *, version=0, op="+I"):
    n = len(ids)
    return pa.table(
        {
            "p": pa.array([p] * n, pa.string()),
            "id": pa.array(ids, pa.int64()),
            "name": pa.array([f"n{i}-{version}" for i in ids], pa.string()),
            "v": pa.array([None if i % 11 == 0 else i + version / 10 for i in ids], pa.float64()),
            "op": pa.array([op] * n, pa.string()),
        },
        schema=SCHEMA,
    )


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    cat = lakestore.Catalog(str(tmp_path_factory.mktemp("readpath")))
    cat.create_database("db")
    pk = cat.create_table(
        "db.pk", schema=SCHEMA, partition_keys=["p"], primary_keys=["p", "id"], options={"bucket": "4", "rowkind.field": "op"}
    )
    ap = cat.create_table("db.ap", schema=SCHEMA, partition_keys=["p"])
    for c in range(4):
        ids = list(range(c * 300, c * 300 + 500))  # overlapping: updates across level-0 runs
        for t in (pk, ap):
            t.write_arrow(pa.concat_tables([_rows(ids, "a", version=c), _rows(ids[::3], "b", version=c)]))
    pk.write_arrow(_rows(list(range(0, 1200, 7)), "a", version=9, op="-D"))  # retractions
    return pk, ap


def _stream(table: lakestore.Table, **kwargs) -> pa.Table:
    reader = table.to_arrow_batch_reader(**kwargs)
    streamed = reader.read_all()
    batches = list(table.to_batches(**kwargs))
    assert pa.Table.from_batches(batches, streamed.schema).equals(streamed)
    return streamed


READS = [
    {},
    {"columns": ["id", "name"]},
    {"filter": col("id") < 400},
    {"filter": (col("p") == "a") & (col("id").between(100, 700)), "columns": ["v"]},
    {"filter": col("name") == "n5-0"},
    {"filter": col("id").isin([3, 700, 1100, 99999])},
    {"filter": col("v").is_null()},
]


@pytest.mark.parametrize("which", ["pk", "ap"])
@pytest.mark.parametrize("read", range(len(READS)))
def test_streaming_returns_exactly_the_rows_of_to_arrow(tables, which, read):
    table = tables[0] if which == "pk" else tables[1]
    kwargs = READS[read]
    expected = table.to_arrow(**kwargs)
    got = _stream(table, **kwargs)
    assert got.schema == expected.schema
    assert got.equals(expected)


def test_merge_read_keeps_newest_versions_and_drops_deletes(tables):
    pk = tables[0]
    model: dict = {}
    for c in range(4):
        ids = list(range(c * 300, c * 300 + 500))
        for i in ids:
            model[("a", i)] = f"n{i}-{c}"
        for i in ids[::3]:
            model[("b", i)] = f"n{i}-{c}"
    for i in range(0, 1200, 7):
        model.pop(("a", i), None)
    got = pk.to_arrow(columns=["p", "id", "name"])
    assert {(r["p"], r["id"]): r["name"] for r in got.to_pylist()} == model
    # within a split, rows come in key order
    for split in pk.scan().plan():
        ids = pk.store.split_reader().read(split, ["id"], None).column("id").to_pylist()
        assert ids == sorted(ids)


def test_batch_size_bounds_batches(tables):
    batches = list(tables[1].to_batches(batch_size=100))
    assert batches and max(b.num_rows for b in batches) <= 100
    assert sum(b.num_rows for b in batches) == tables[1].to_arrow().num_rows


@pytest.mark.parametrize("which", ["pk", "ap"])
@pytest.mark.parametrize("limit", [0, 1, 250, 999, 10**6])
def test_limit_returns_the_first_rows(tables, which, limit):
    table = tables[0] if which == "pk" else tables[1]
    full = table.to_arrow()
    assert table.to_arrow(limit=limit).equals(full.slice(0, limit))
    assert _stream(table, limit=limit).equals(full.slice(0, limit))
    filtered = table.to_arrow(filter=col("id") > 600)
    assert table.to_arrow(filter=col("id") > 600, limit=limit).equals(filtered.slice(0, limit))


def test_limit_stops_opening_files(tmp_path):
    cat = lakestore.Catalog(str(tmp_path))
    cat.create_database("db")
    t = cat.create_table("db.t", schema=SCHEMA, options={"write-only": "true"})  # no compaction: six files
    for c in range(6):
        t.write_arrow(_rows(list(range(c * 100, c * 100 + 100)), "x", version=c))
    counting = FaultyFileIO(LocalFileIO())
    table = lakestore.Table.from_path(t.path, file_io=counting)
    full = table.to_arrow()
    assert counting.ops["open_input"] == 6
    counting.ops.clear()
    assert table.to_arrow(limit=150).equals(full.slice(0, 150))
    assert counting.ops["open_input"] == 2
    counting.ops.clear()
    first = next(table.to_batches())
    assert first.num_rows == 100
    assert counting.ops["open_input"] <= 3  # the batch's file and the ones read ahead


def _bucket_of(table: lakestore.Table, key_filter) -> set[int]:
    return {s.bucket for s in table.scan(filter=key_filter).plan()}


def test_bucket_pruning_on_the_bucket_key(tables):
    pk = tables[0]
    full = pk.to_arrow()
    all_buckets = _bucket_of(pk, None)
    assert all_buckets == {0, 1, 2, 3}
    for key in (3, 301, 1198, 5000):
        predicate = col("id") == key
        buckets = _bucket_of(pk, predicate)
        assert len(buckets) <= 1
        got = pk.to_arrow(filter=predicate)
        assert got.equals(full.filter(pc.field("id") == key))
        if got.num_rows:
            # the planned bucket is where the key lives
            holding = {s.bucket for s in pk.scan().plan() if key in pk.store.split_reader().read(s, ["id"], None).column("id").to_pylist()}
            assert buckets == holding
    keys = [3, 301, 1198]
    isin = col("id").isin(keys)
    assert _bucket_of(pk, isin) == set().union(*(_bucket_of(pk, col("id") == k) for k in keys))
    assert pk.to_arrow(filter=isin).equals(full.filter(pc.field("id").isin(keys)))
    either = (col("id") == 3) | ((col("p") == "a") & (col("id") == 301))
    assert _bucket_of(pk, either) == _bucket_of(pk, col("id") == 3) | _bucket_of(pk, col("id") == 301)
    assert pk.to_arrow(filter=either).equals(full.filter((pc.field("id") == 3) | ((pc.field("p") == "a") & (pc.field("id") == 301))))
    # predicates that do not pin the key read every bucket
    for loose in (col("id") != 3, col("id") < 10, (col("id") == 3) | (col("v") > 1.0), col("name") == "n3-0"):
        assert _bucket_of(pk, loose) == all_buckets
    # a literal of another type does not prune (the row filter decides)
    assert _bucket_of(pk, col("id") == "3") == all_buckets
    # the files actually opened: only those of the pinned bucket
    counting = FaultyFileIO(LocalFileIO())
    table = lakestore.Table.from_path(pk.path, file_io=counting)
    table.to_arrow()
    opened_all = counting.ops["open_input"]
    counting.ops.clear()
    assert table.to_arrow(filter=col("id") == 301).equals(full.filter(pc.field("id") == 301))
    pinned_files = sum(len(s.files) for s in pk.scan(filter=col("id") == 301).plan())
    assert counting.ops["open_input"] == pinned_files < opened_all


def test_bucket_pruning_with_a_composite_string_bucket_key(tmp_path):
    schema = pa.schema([("a", pa.string()), ("b", pa.int32()), ("v", pa.int64())])
    cat = lakestore.Catalog(str(tmp_path))
    cat.create_database("db")
    t = cat.create_table("db.t", schema=schema, primary_keys=["a", "b"], options={"bucket": "8"})
    n = 400
    data = pa.table(
        {"a": pa.array([f"k{i % 37}" for i in range(n)]), "b": pa.array([i % 5 for i in range(n)], pa.int32()), "v": pa.array(range(n))},
        schema=schema,
    )
    t.write_arrow(data)
    full = t.to_arrow()
    for a, b in (("k1", 1), ("k36", 0), ("zz", 3)):
        predicate = (col("a") == a) & (col("b") == b)
        assert len(_bucket_of(t, predicate)) <= 1
        assert t.to_arrow(filter=predicate).equals(full.filter((pc.field("a") == a) & (pc.field("b") == b)))
    # half the key pins no bucket: every bucket holding such rows is read
    holding = {s.bucket for s in t.scan().plan() if "k1" in t.store.split_reader().read(s, ["a"], None).column("a").to_pylist()}
    assert len(holding) > 1 and holding <= _bucket_of(t, col("a") == "k1")
    pinned = col("a").isin(["k1", "k2"]) & col("b").isin([1, 2])
    assert len(_bucket_of(t, pinned)) <= 4
    assert t.to_arrow(filter=pinned).equals(full.filter(pc.field("a").isin(["k1", "k2"]) & pc.field("b").isin([1, 2])))


@pytest.fixture(scope="module")
def row_groups(tmp_path_factory):
    """A primary-key table whose data files hold several row groups each."""
    cat = lakestore.Catalog(str(tmp_path_factory.mktemp("rowgroups")))
    cat.create_database("db")
    schema = pa.schema([("id", pa.int64()), ("s", pa.string())])
    t = cat.create_table("db.t", schema=schema, primary_keys=["id"], options={"bucket": "1", "target-file-size": "512 kb"})
    n = 200_000
    t.write_arrow(pa.table({"id": pa.array(range(n), pa.int64()), "s": pa.array(["x" * 8] * n)}, schema=schema))
    t.write_arrow(pa.table({"id": pa.array(range(0, n, 2), pa.int64()), "s": pa.array(["y"] * (n // 2))}, schema=schema))
    return t


def test_row_group_pruning_reads_fewer_row_groups_and_the_same_rows(row_groups):
    t = row_groups
    full = t.to_arrow()
    (split,) = t.scan().plan()
    assert not split.raw_convertible  # two runs: merge-on-read
    reader = t.store.split_reader()
    reader.read(split, ["id", "s"], None)
    total = reader.counters.row_groups_read
    assert reader.counters.row_groups_skipped == 0 and total > 2 * len(split.files)
    for predicate, expr in (
        (col("id") < 1000, pc.field("id") < 1000),
        (col("id").between(150_000, 150_100), (pc.field("id") >= 150_000) & (pc.field("id") <= 150_100)),
        ((col("id") == 77) | (col("id") == 199_999), (pc.field("id") == 77) | (pc.field("id") == 199_999)),
    ):
        reader = t.store.split_reader()
        got = reader.read(split, ["id", "s"], predicate)
        assert got.cast(full.schema).equals(full.filter(expr))
        assert reader.counters.row_groups_skipped > 0
        assert reader.counters.row_groups_read < total
        assert t.to_arrow(filter=predicate).equals(full.filter(expr))
    # a filter on a value column cannot prune before the merge (an older version could match)
    reader = t.store.split_reader()
    got = reader.read(split, ["id", "s"], col("s") == "x" * 8)
    assert got.cast(full.schema).equals(full.filter(pc.field("s") == "x" * 8))
    assert reader.counters.row_groups_skipped == 0


def test_deletion_vector_reads_stream_the_same_rows_and_keep_files_whole(tmp_path):
    cat = lakestore.Catalog(str(tmp_path))
    cat.create_database("db")
    t = cat.create_table(
        "db.dv",
        schema=SCHEMA,
        partition_keys=["p"],
        primary_keys=["p", "id"],
        options={"bucket": "2", "deletion-vectors.enabled": "true", "rowkind.field": "op", "num-sorted-run.compaction-trigger": "2"},
    )
    for c in range(4):
        t.write_arrow(_rows(list(range(c * 50, c * 50 + 120)), "a", version=c))
    t.write_arrow(_rows(list(range(0, 300, 9)), "a", version=7, op="-D"))
    splits = t.scan().plan()
    assert any(s.deletion_files for s in splits)  # vectors apply
    full = t.to_arrow()
    model = {i: f"n{i}-{max(c for c in range(4) if c * 50 <= i < c * 50 + 120)}" for i in range(270) if i % 9 != 0}
    assert dict(zip(full.column("id").to_pylist(), full.column("name").to_pylist(), strict=True)) == model
    for kwargs in ({}, {"filter": col("id") < 100}, {"filter": col("id").isin([1, 55, 299]), "columns": ["name"]}, {"limit": 7}):
        assert _stream(t, **kwargs).equals(t.to_arrow(**kwargs))
    reader = t.store.split_reader()
    for split in splits:
        reader.read(split, ["id"], col("id") < 10)
    assert reader.counters.row_groups_skipped == 0


@pytest.mark.parametrize(
    "options,keys",
    [({"bucket": "2"}, ["dt", "id"]), ({}, []), ({"bucket": "1", "deletion-vectors.enabled": "true"}, ["dt", "id"])],
    ids=["merge", "append", "deletion-vectors"],
)
def test_reading_only_partition_columns_keeps_every_row(tmp_path, options, keys):
    """Partition columns come from the split, not the files: a read of those alone still counts
    the rows (it once returned none)."""
    schema = pa.schema([pa.field("dt", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    catalog = lakestore.Catalog(str(tmp_path))
    catalog.create_database("db")
    table = catalog.create_table("db.p", schema=schema, primary_keys=keys, partition_keys=["dt"], options=options)
    table.write_arrow(pa.table({"dt": ["a", "a", "b"], "id": [1, 2, 3], "v": ["x", "y", "z"]}, schema=schema))
    table.write_arrow(pa.table({"dt": ["a"], "id": [1], "v": ["w"]}, schema=schema))
    full = table.to_arrow()
    assert table.to_arrow(columns=["dt"]).column("dt").to_pylist() == full.column("dt").to_pylist()
    assert table.to_arrow(columns=["dt"], filter=lakestore.col("dt") == "a").num_rows == full.filter(pc.equal(full["dt"], "a")).num_rows
    assert sum(batch.num_rows for batch in table.to_batches(columns=["dt"])) == full.num_rows
