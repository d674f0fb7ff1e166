"""Reads: projection, predicates (pruning, file skipping and exact filtering), time travel."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import lakestore
from lakestore import col
from lakestore.errors import SchemaMismatchError, SnapshotNotFoundError
from tests._support import assert_same_rows

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.float64()), ("s", pa.string()), ("day", pa.date32())])


def _batch(ids, dt_value, v_offset=0.0):
    n = len(ids)
    return pa.table(
        {
            "dt": pa.array([dt_value] * n, pa.string()),
            "id": pa.array(ids, pa.int64()),
            "v": pa.array([None if i % 7 == 0 else i + v_offset for i in ids], pa.float64()),
            "s": pa.array([None if i % 5 == 0 else f"s{i % 13}" for i in ids], pa.string()),
            "day": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=i % 10) for i in ids], pa.date32()),
        },
        schema=SCHEMA,
    )


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    cat = lakestore.Catalog(str(tmp_path_factory.mktemp("read")))
    cat.create_database("db")
    pk = cat.create_table("db.pk", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "3"})
    ap = cat.create_table("db.ap", schema=SCHEMA, partition_keys=["dt"])
    apd = cat.create_table("db.apd", schema=SCHEMA, partition_keys=["day"])
    # four commits with disjoint id ranges (file skipping), plus one commit updating keys
    for c in range(4):
        ids = list(range(c * 100, c * 100 + 60))
        for t in (pk, ap, apd):
            # the third partition: '' in the primary-key table (keys are NOT NULL), null elsewhere;
            # both live in the __DEFAULT_PARTITION__ directory
            t.write_arrow(pa.concat_tables([_batch(ids, "d1"), _batch(ids, "d2"), _batch(ids[:10], "" if t is pk else None)]))
    pk.write_arrow(_batch(list(range(0, 400, 3)), "d1", v_offset=0.5))  # updates across commits
    return pk, ap, apd


PREDICATES = {
    "part ==": lambda: (col("dt") == "d1", pc.field("dt") == "d1"),
    "part !=": lambda: (col("dt") != "d1", pc.field("dt") != "d1"),
    "part is_null": lambda: (col("dt").is_null(), pc.field("dt").is_null()),
    "part == ''": lambda: (col("dt") == "", pc.field("dt") == ""),
    "part isin": lambda: (col("dt").isin(["d2", "zz"]), pc.field("dt").isin(["d2", "zz"])),
    "key ==": lambda: (col("id") == 105, pc.field("id") == 105),
    "key <": lambda: (col("id") < 50, pc.field("id") < 50),
    "key between": lambda: (col("id").between(95, 205), (pc.field("id") >= 95) & (pc.field("id") <= 205)),
    "key isin": lambda: (col("id").isin([1, 150, 999]), pc.field("id").isin([1, 150, 999])),
    "value ==": lambda: (col("v") == 3.5, pc.field("v") == 3.5),
    "value >=": lambda: (col("v") >= 250.0, pc.field("v") >= 250.0),
    "value is_null": lambda: (col("v").is_null(), pc.field("v").is_null()),
    "value is_not_null": lambda: (col("s").is_not_null(), pc.field("s").is_valid()),
    "string <": lambda: (col("s") < "s3", pc.field("s") < "s3"),
    "date >": lambda: (col("day") > dt.date(2024, 1, 5), pc.field("day") > pa.scalar(dt.date(2024, 1, 5))),
    "and": lambda: ((col("dt") == "d1") & (col("id") < 120), (pc.field("dt") == "d1") & (pc.field("id") < 120)),
    "or": lambda: ((col("dt") == "d2") | (col("v") < 10), (pc.field("dt") == "d2") | (pc.field("v") < 10)),
    "not": lambda: (~(col("id") < 300), ~(pc.field("id") < 300)),
    "not and": lambda: (~((col("dt") == "d1") & col("s").is_null()), ~((pc.field("dt") == "d1") & pc.field("s").is_null())),
    "nothing matches": lambda: (col("id") == -1, pc.field("id") == -1),
}


@pytest.mark.parametrize("name", list(PREDICATES))
@pytest.mark.parametrize("which", ["pk", "ap", "apd"])
def test_filter_equals_arrow_filter_of_full_table(tables, name, which):
    table = dict(zip(["pk", "ap", "apd"], tables, strict=False))[which]
    pred, expr = PREDICATES[name]()
    full = table.to_arrow()
    got = table.to_arrow(filter=pred)
    assert_same_rows(got, full.filter(expr))
    # with a projection that does not include the filtered columns
    got_proj = table.to_arrow(columns=["v", "id"], filter=pred)
    assert got_proj.column_names == ["v", "id"]
    assert_same_rows(got_proj, full.filter(expr).select(["v", "id"]))


def test_pk_full_read_is_merged(tables):
    pk = tables[0]
    full = pk.to_arrow()
    keys = list(zip(full.column("dt").to_pylist(), full.column("id").to_pylist(), strict=False))
    original = {i for c in range(4) for i in range(c * 100, c * 100 + 60)}
    d1_ids = original | set(range(0, 400, 3))
    assert len(keys) == len(set(keys)) == len(d1_ids) + 240 + 40
    updated = {r["id"]: r["v"] for r in full.to_pylist() if r["dt"] == "d1"}
    assert set(updated) == d1_ids
    assert updated[3] == 3.5 and updated[4] == 4.0 and updated[6] == 6.5
    assert updated[0] is None  # the update itself carries a null value: newest row wins, nulls included
    assert updated[99] == 99.5  # inserted by the update commit


def test_projection_order_and_schema(tables):
    for t in tables:
        out = t.to_arrow(columns=["s", "dt"])
        assert out.column_names == ["s", "dt"]
        assert out.schema.field("dt").type == pa.string()
        assert out.num_rows == t.to_arrow().num_rows
    with pytest.raises(SchemaMismatchError):
        tables[0].to_arrow(columns=["nope"])
    with pytest.raises(SchemaMismatchError):
        tables[0].to_arrow(filter=col("nope") == 1)


def _files(splits):
    return sum(len(s.files) for s in splits)


def test_partition_pruning_really_prunes(tables):
    for t in tables[:2]:
        all_splits = t.scan().plan()
        d1 = t.scan(filter=col("dt") == "d1").plan()
        assert d1 and all(s.partition_values == ("d1",) for s in d1)
        assert _files(d1) < _files(all_splits)
        default = "" if t is tables[0] else None
        nulls = t.scan(filter=col("dt").is_null() if default is None else col("dt") == "").plan()
        assert nulls and all(s.partition_values == (default,) for s in nulls)
        assert t.scan(filter=col("dt") == "zz").plan() == []
    apd = tables[2]
    one_day = apd.scan(filter=col("day") == dt.date(2024, 1, 3)).plan()
    assert {s.partition_values for s in one_day} == {(dt.date(2024, 1, 3),)}


def test_key_stats_skip_files_in_pk_table(tables):
    pk = tables[0]
    total = _files(pk.scan(filter=col("dt") == "d2").plan())
    assert total >= 4 * 3 - 2  # 4 commits x up to 3 buckets
    hit = pk.scan(filter=(col("dt") == "d2") & (col("id") == 105)).plan()
    # only the files of the commit holding ids 100..159 (one per bucket) can contain id 105
    assert 1 <= _files(hit) <= 3 < total, [f.file_name for s in hit for f in s.files]
    assert all(f.min_sequence_number >= 0 for s in hit for f in s.files)
    assert pk.to_arrow(filter=(col("dt") == "d2") & (col("id") == 105)).column("id").to_pylist() == [105]
    assert pk.scan(filter=col("id") > 10_000).plan() == []


def test_value_stats_skip_files_in_append_table(tables):
    ap = tables[1]
    total = _files(ap.scan().plan())
    by_id = ap.scan(filter=col("id").between(100, 159)).plan()
    assert 0 < _files(by_id) <= total // 4 + 1
    assert ap.scan(filter=col("v") > 1e9).plan() == []
    assert ap.scan(filter=col("id").isin([-5, 100_000])).plan() == []
    # negation cannot use statistics but must not drop anything either
    assert _files(ap.scan(filter=~(col("id") > 10_000)).plan()) == total


def test_time_travel(tables):
    pk, ap, _ = tables
    for t, per_commit in ((pk, 130), (ap, 130)):
        snaps = t.snapshots()
        assert [s.id for s in snaps][:4] == [1, 2, 3, 4]
        for i in range(1, 5):
            assert t.to_arrow(snapshot_id=i).num_rows == per_commit * i
        assert t.scan(snapshot_id=1).plan() and _files(t.scan(snapshot_id=1).plan()) <= _files(t.scan().plan())
    old = pk.to_arrow(snapshot_id=4, filter=(col("dt") == "d1") & (col("id") == 3))
    assert old.column("v").to_pylist() == [3.0]
    with pytest.raises(SnapshotNotFoundError):
        pk.to_arrow(snapshot_id=99)


def test_empty_table_reads(tmp_path):
    cat = lakestore.Catalog(str(tmp_path))
    cat.create_database("db")
    t = cat.create_table("db.e", schema=SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    out = t.to_arrow()
    assert out.num_rows == 0 and out.schema.names == SCHEMA.names
    assert out.schema.field("id").nullable is False
    assert t.to_arrow(columns=["v"], filter=col("id") == 1).column_names == ["v"]
    assert t.scan().plan() == []


def test_to_pandas(tables):
    pd = pytest.importorskip("pandas")
    df = tables[0].to_pandas(columns=["dt", "id", "v"], filter=col("dt") == "d1")
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == ["dt", "id", "v"]
    assert len(df) == tables[0].to_arrow(filter=col("dt") == "d1").num_rows > 240
    assert df["id"].is_unique


def test_split_reader_per_split_equals_to_arrow(tables):
    pk = tables[0]
    reader = pk.store.split_reader()
    parts = [reader.read(s, pk.schema.field_names, None) for s in pk.scan().plan()]
    assert_same_rows(pa.concat_tables(parts).cast(pk.arrow_schema), pk.to_arrow())
