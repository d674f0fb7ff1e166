"""Bad input is refused with a typed error, commits nothing, and leaves no file behind (even
when the bad rows arrive after good ones were already flushed to data files)."""

from __future__ import annotations

import pyarrow as pa
import pytest

import lakestore
from lakestore.errors import LakestoreError, NullKeyError, OptionError, PartitionValueError, SchemaMismatchError

from .conftest import SCHEMA
from .util import all_files, assert_consistent, make_catalog, sorted_rows

GOOD = pa.table({"id": pa.array([1, 2], pa.int64()), "dt": ["a", "b"], "v": ["x", "y"]})


@pytest.fixture(params=["append", "pk"])
def table(request, tmp_path):
    catalog = make_catalog(tmp_path / "wh")
    # a tiny write buffer: good rows are flushed to data files before the bad ones arrive
    options = {"write-buffer-size": "1 kb"}
    if request.param == "pk":
        t = catalog.create_table(
            "db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={**options, "bucket": "2"}
        )
    else:
        t = catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], options=options)
    t.write_arrow(GOOD)
    return t


def _many_good(n: int = 2000) -> pa.Table:
    return pa.table({"id": pa.array(range(100, 100 + n), pa.int64()), "dt": [f"d{i % 3}" for i in range(n)], "v": ["g" * 20] * n})


BAD_INPUTS = {
    "missing column": (pa.table({"id": pa.array([3], pa.int64()), "dt": ["a"]}), SchemaMismatchError),
    "extra column": (pa.table({"id": pa.array([3], pa.int64()), "dt": ["a"], "v": ["z"], "w": [1]}), SchemaMismatchError),
    "string into bigint": (pa.table({"id": ["3"], "dt": ["a"], "v": ["z"]}), SchemaMismatchError),
    "float into bigint": (pa.table({"id": [3.5], "dt": ["a"], "v": ["z"]}), SchemaMismatchError),
    "int into string": (pa.table({"id": pa.array([3], pa.int64()), "dt": ["a"], "v": [7]}), SchemaMismatchError),
    "duplicate column": (
        pa.Table.from_arrays([pa.array([3], pa.int64()), pa.array(["a"]), pa.array(["z"]), pa.array(["q"])], names=["id", "dt", "v", "v"]),
        SchemaMismatchError,
    ),
    "path too long": (pa.table({"id": pa.array([3], pa.int64()), "dt": ["x" * 300], "v": ["z"]}), PartitionValueError),
}


def _assert_untouched(table: lakestore.Table, files_before: set[str]) -> None:
    reopened = lakestore.Table(table.path)
    assert [s.id for s in reopened.snapshots()] == [1], "nothing may be committed"
    assert sorted_rows(reopened.to_arrow()) == sorted_rows(GOOD)
    assert all_files(table.path) == files_before, sorted(all_files(table.path) ^ files_before)
    assert_consistent(table.path)


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
@pytest.mark.parametrize("after_good_rows", [False, True], ids=["alone", "after-flushed-good-rows"])
def test_bad_rows_rejected_with_nothing_left(table, case, after_good_rows):
    bad, error = BAD_INPUTS[case]
    files_before = all_files(table.path)
    data = bad
    if after_good_rows:
        if case == "duplicate column":
            pytest.skip("not applicable: a stream has one schema")
        good = _many_good()
        data = iter([*good.to_batches(max_chunksize=500), *bad.to_batches()])
    try:
        table.write_arrow(data)
    except error:
        pass
    except LakestoreError as exc:
        pytest.fail(f"{case}: expected {error.__name__}, got {type(exc).__name__}: {exc}")
    else:
        pytest.fail(f"{case}: accepted")
    _assert_untouched(table, files_before)


def test_null_primary_key_rejected(tmp_path):
    catalog = make_catalog(tmp_path / "wh")
    t = catalog.create_table(
        "db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "2", "write-buffer-size": "1 kb"}
    )
    t.write_arrow(GOOD)
    files_before = all_files(t.path)
    for bad in (
        pa.table({"id": pa.array([None], pa.int64()), "dt": ["a"], "v": ["z"]}),
        pa.table({"id": pa.array([5], pa.int64()), "dt": pa.array([None], pa.string()), "v": ["z"]}),
    ):
        with pytest.raises(NullKeyError):
            t.write_arrow(iter([*_many_good().to_batches(max_chunksize=500), *bad.to_batches()]))
        _assert_untouched(t, files_before)


def test_overwrite_outside_partition_rejected(table):
    files_before = all_files(table.path)
    with pytest.raises(PartitionValueError):
        table.write_arrow(
            iter(
                [*_many_good().filter(pa.compute.equal(_many_good().column("dt"), "d1")).to_batches(max_chunksize=300), *GOOD.to_batches()]
            ),
            overwrite={"dt": "d1"},
        )
    _assert_untouched(table, files_before)
    with pytest.raises(PartitionValueError):
        table.write_arrow(GOOD, overwrite={"nope": "a"})
    _assert_untouched(table, files_before)


@pytest.mark.parametrize(
    "options",
    [
        {"no.such.option": "1"},
        {"bucket": "abc"},
        {"write-buffer-size": "lots"},
        {"data-file.thin-mode": "true"},
        {"merge-engine": "nope"},
        {"commit.max-retries": "x"},
    ],
    ids=lambda o: next(iter(o)),
)
def test_unknown_or_bad_options_create_nothing(tmp_path, options):
    catalog = make_catalog(tmp_path / "wh")
    with pytest.raises(OptionError):
        catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options=options)
    assert not catalog.table_exists("db.t")
    assert all_files(str(tmp_path / "wh")) == set()


def test_bad_schema_creates_nothing(tmp_path):
    catalog = make_catalog(tmp_path / "wh")
    cases = [
        dict(schema=SCHEMA, primary_keys=["nope"]),
        dict(schema=SCHEMA, partition_keys=["nope"]),
        # with fixed buckets the pk must include the partition keys (bucket = -1: cross-partition upsert)
        dict(schema=SCHEMA, partition_keys=["dt"], primary_keys=["id"], options={"bucket": "2"}),
        dict(schema=pa.schema([("id", pa.int64()), ("id", pa.string())])),
    ]
    for kwargs in cases:
        with pytest.raises(SchemaMismatchError):
            catalog.create_table("db.t", **kwargs)
        assert not catalog.table_exists("db.t")
    assert all_files(str(tmp_path / "wh")) == set()
