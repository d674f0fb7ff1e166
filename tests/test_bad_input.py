"""Bad input gets a typed error and commits nothing: no snapshot, no data file left on disk."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest

import lakestore
from lakestore.errors import NullKeyError, OptionError, PartitionValueError, SchemaMismatchError, UnsupportedTypeError
from tests._support import all_files, data_files

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.float64()), ("n", pa.int32())])


def _good(n=3, dt="d1"):
    return pa.table({"dt": [dt] * n, "id": pa.array(range(n), pa.int64()), "v": [1.0] * n, "n": pa.array(range(n), pa.int32())})


@pytest.fixture(params=["pk", "append"])
def table(request, tmp_path):
    cat = lakestore.Catalog(str(tmp_path))
    cat.create_database("db")
    if request.param == "pk":
        t = cat.create_table(
            "db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "2", "write-buffer-size": "1 kb"}
        )
    else:
        t = cat.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], options={"write-buffer-size": "1 kb"})
    t.write_arrow(_good())
    return t


class _Unchanged:
    def __init__(self, table):
        self.table = table
        self.snapshot = table.latest_snapshot().id
        self.files = all_files(table.path)

    def check(self):
        assert self.table.latest_snapshot().id == self.snapshot
        assert self.table.store.snapshot_manager.list_ids()[-1] == self.snapshot
        assert all_files(self.table.path) == self.files, "a rejected write left files behind"
        assert self.table.to_arrow().num_rows == 3


BAD_DATA = {
    "missing column": lambda: _good().drop_columns(["v"]),
    "extra column": lambda: _good().append_column("extra", pa.array([1, 2, 3])),
    "duplicate column": lambda: pa.Table.from_arrays(
        [pa.array(["d1"]), pa.array([1], pa.int64()), pa.array([1.0]), pa.array([1], pa.int32()), pa.array([2.0])],
        names=["dt", "id", "v", "n", "v"],
    ),
    "string into bigint": lambda: _good().set_column(1, "id", pa.array(["1", "2", "3"])),
    "double into bigint": lambda: _good().set_column(1, "id", pa.array([1.5, 2.0, 3.0])),
    "bigint overflowing int": lambda: _good().set_column(3, "n", pa.array([1, 2, 2**40], pa.int64())),
    "bool into string": lambda: _good().set_column(0, "dt", pa.array([True, False, True])),
    "list column": lambda: _good().set_column(2, "v", pa.array([[1.0], [2.0], [3.0]])),
    "timestamp into double": lambda: _good().set_column(2, "v", pa.array([0, 1, 2], pa.timestamp("us"))),
}


@pytest.mark.parametrize("case", sorted(BAD_DATA))
def test_data_not_matching_schema(table, case):
    before = _Unchanged(table)
    with pytest.raises(SchemaMismatchError):
        table.write_arrow(BAD_DATA[case]())
    before.check()


def test_compatible_types_are_cast(table):
    data = _good().set_column(3, "n", pa.array([1, 2, 3], pa.int64())).set_column(1, "id", pa.array([7, 8, 9], pa.int32()))
    table.write_arrow(data.select(["v", "n", "id", "dt"]))  # column order does not matter
    assert table.to_arrow().num_rows == 6
    assert table.to_arrow().schema == table.arrow_schema


def test_null_primary_key(tmp_path):
    cat = lakestore.Catalog(str(tmp_path))
    cat.create_database("db")
    t = cat.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "2"})
    t.write_arrow(_good())
    before = _Unchanged(t)
    for bad in (_good().set_column(1, "id", pa.array([1, None, 3], pa.int64())), _good().set_column(0, "dt", pa.array(["d1", None, "d1"]))):
        with pytest.raises(NullKeyError):
            t.write_arrow(bad)
        before.check()


def test_bad_second_batch_removes_flushed_files(table):
    """A reader whose first batches were already flushed to data files, then a bad batch."""
    before = _Unchanged(table)
    good = _good(400, "d2").to_batches()[0]
    bad = _good(3, "d2").set_column(1, "id", pa.array(["x", "y", "z"])).to_batches()[0]
    reader = pa.RecordBatchReader.from_batches(good.schema, [good, good, good])
    schema_bad = pa.RecordBatchReader.from_batches(bad.schema, [bad])

    def batches():
        yield from reader
        yield from schema_bad

    with pytest.raises(SchemaMismatchError):
        table.write_arrow(batches())
    before.check()


def test_overwrite_with_rows_outside_partition(table):
    before = _Unchanged(table)
    with pytest.raises(PartitionValueError):
        table.write_arrow(_good(3, "d9"), overwrite={"dt": "d1"})
    before.check()
    with pytest.raises(PartitionValueError):
        table.write_arrow(_good(3, "d1"), overwrite={"nope": "d1"})
    before.check()


def test_rowkind_field_bad_values(tmp_path):
    cat = lakestore.Catalog(str(tmp_path))
    cat.create_database("db")
    schema = pa.schema([("id", pa.int64()), ("op", pa.string())])
    t = cat.create_table("db.t", schema=schema, primary_keys=["id"], options={"bucket": "1", "rowkind.field": "op"})
    t.write_arrow(pa.table({"id": pa.array([1], pa.int64()), "op": ["+I"]}))
    before_files = all_files(t.path)
    for ops in (["+X"], [None]):
        with pytest.raises(SchemaMismatchError):
            t.write_arrow(pa.table({"id": pa.array([2], pa.int64()), "op": pa.array(ops, pa.string())}))
    assert all_files(t.path) == before_files
    assert t.latest_snapshot().id == 1


# -- options --------------------------------------------------------------------------------------

BAD_OPTIONS = [
    {"totally.unknown": "1"},
    {"bucket": "0"},
    {"bucket": "-3"},
    {"bucket": "many"},
    {"write-buffer-size": "lots"},
    {"target-file-size": "-1 mb"},
    {"manifest.merge-min-count": "0"},
    {"file.format": "lance"},
    {"merge-engine": "nonsense"},
    {"commit.max-retries": "x"},
    {"changelog-producer": "bogus"},
    {"write-only": "yes"},
    # Paimon options lakestore does not implement: refused, never silently ignored
    {"incremental-to-auto-tag": "2024-01-01"},
    {"data-file.thin-mode": "true"},
    {"scan.creation-time-millis": "1"},
    {"incremental-between-scan-mode": "sideways"},
]


@pytest.mark.parametrize("options", BAD_OPTIONS, ids=[next(iter(o)) + "=" + next(iter(o.values())) for o in BAD_OPTIONS])
@pytest.mark.parametrize("kind", ["pk", "append"])
def test_bad_options_refused_at_create(tmp_path, options, kind):
    cat = lakestore.Catalog(str(tmp_path))
    cat.create_database("db")
    kwargs = {"primary_keys": ["id"]} if kind == "pk" else {}
    with pytest.raises(OptionError) as info:
        cat.create_table("db.t", schema=SCHEMA, options=options, **kwargs)
    assert next(iter(options)) in str(info.value) or "bucket" in str(info.value)
    assert not cat.table_exists("db.t")
    assert not os.path.exists(os.path.join(cat.warehouse, "db.db", "t", "schema"))


@pytest.mark.parametrize(
    "options,kwargs",
    [
        ({"bucket": "2"}, {}),  # append table with fixed buckets needs bucket-key
        ({"bucket-key": "id"}, {}),  # bucket-key needs a fixed bucket count
        ({"bucket": "2", "bucket-key": "v"}, {"primary_keys": ["id"]}),  # bucket-key outside the primary key
        ({"bucket": "2", "bucket-key": "zz"}, {"primary_keys": ["id"]}),
        ({"bucket": "-1", "bucket-key": "id"}, {"primary_keys": ["id"]}),  # dynamic buckets hash the whole key
        ({"dynamic-bucket.target-row-num": "0"}, {"primary_keys": ["id"]}),
        ({"sequence.field": "zz"}, {"primary_keys": ["id"]}),
        ({"sequence.field": "v"}, {}),
        ({"rowkind.field": "dt"}, {}),
        ({"rowkind.field": "zz"}, {"primary_keys": ["id"]}),
    ],
)
def test_inconsistent_options(tmp_path, options, kwargs):
    cat = lakestore.Catalog(str(tmp_path))
    cat.create_database("db")
    with pytest.raises(OptionError):
        cat.create_table("db.t", schema=SCHEMA, options=options, **kwargs)
    assert not cat.table_exists("db.t")


@pytest.mark.parametrize(
    "kwargs,error",
    [
        ({"primary_keys": ["nope"]}, SchemaMismatchError),
        ({"partition_keys": ["nope"]}, SchemaMismatchError),
        # with fixed buckets the primary key must contain the partition keys (bucket = -1 is
        # Paimon's cross-partition upsert)
        ({"partition_keys": ["dt"], "primary_keys": ["id"], "options": {"bucket": "2"}}, SchemaMismatchError),
        ({"partition_keys": ["v"]}, SchemaMismatchError),  # DOUBLE partition
    ],
)
def test_bad_keys(tmp_path, kwargs, error):
    cat = lakestore.Catalog(str(tmp_path))
    cat.create_database("db")
    with pytest.raises(error):
        cat.create_table("db.t", schema=SCHEMA, **kwargs)
    assert not cat.table_exists("db.t")


def test_unsupported_column_type(tmp_path):
    cat = lakestore.Catalog(str(tmp_path))
    cat.create_database("db")
    with pytest.raises(UnsupportedTypeError):
        cat.create_table("db.t", schema=pa.schema([("a", pa.list_(pa.uint32()))]))
    assert not cat.table_exists("db.t")


def test_table_with_unimplemented_option_on_disk_refuses_to_open(tmp_path):
    """Another engine created the table with an option lakestore cannot honour."""
    import json

    cat = lakestore.Catalog(str(tmp_path))
    cat.create_database("db")
    t = cat.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    schema_file = os.path.join(t.path, "schema", "schema-0")
    doc = json.load(open(schema_file))
    doc["options"]["data-evolution.enabled"] = "true"
    with open(schema_file, "w") as f:
        json.dump(doc, f)
    with pytest.raises(OptionError):
        cat.get_table("db.t").write_arrow(_good())
    assert data_files(t.path) == set()
