"""The ``paimon`` source's options parsed once into typed values (no Spark session): the scan, the
overwrite, the commit id."""

from __future__ import annotations

import datetime

import pyarrow as pa
import pytest

import lakestore
from lakestore.commit.protocol import CommitId
from lakestore.scan import ScanSpec
from lakestore.spark.options import (
    OVERWRITE_OPTION,
    SCAN_OPTION,
    commit_id_of,
    open_table,
    overwrite_of,
    overwrite_option,
    scan_of,
    scan_option,
    scan_schema,
    table_options,
)
from lakestore.spark.tasks import TASK_HOOK_ENV, task_hook

SCHEMA = pa.schema([("p", pa.string()), ("d", pa.date32()), ("id", pa.int64()), ("v", pa.string())])


@pytest.fixture
def table(catalog):
    t = catalog.create_table("db.t", schema=SCHEMA, partition_keys=["p", "d"])
    t.write_arrow(pa.table({"p": ["x"], "d": [datetime.date(2024, 1, 1)], "id": [1], "v": ["a"]}, schema=SCHEMA))
    return t


def test_string_scan_options_build_the_scan_the_helpers_pass_whole(table):
    options = {**table_options(table), "columns": "id, v", "snapshot-id": "1"}
    assert scan_of(options) == ScanSpec(columns=("id", "v"), snapshot_id=1)
    assert scan_of({**table_options(table), "tag": "t1"}) == ScanSpec(tag="t1")
    spec = ScanSpec(columns=("v",), filter=lakestore.col("id") > 0, timestamp_ms=5, limit=3)
    assert scan_of({**table_options(table), **scan_option(spec)}) == spec
    assert open_table(table_options(table)).path == table.path
    with pytest.raises(lakestore.OptionError, match="cannot be combined"):
        scan_of({**scan_option(spec), "columns": "id"})
    with pytest.raises(lakestore.OptionError, match="at most one"):
        scan_of({"snapshot-id": "1", "tag": "t1"})
    with pytest.raises(lakestore.OptionError, match="integer"):
        scan_of({"snapshot-id": "one"})
    with pytest.raises(lakestore.OptionError, match="incremental"):
        scan_of(scan_option(ScanSpec(incremental_between=(1, 2))))
    with pytest.raises(lakestore.OptionError, match=SCAN_OPTION):
        scan_of({SCAN_OPTION: "not an encoded scan"})


def test_the_scan_schema_checks_columns_and_filter(table):
    assert scan_schema(table, ScanSpec(columns=("id",), snapshot_id=1)).field_names == SCHEMA.names
    with pytest.raises(lakestore.SchemaMismatchError, match="nope"):
        scan_schema(table, ScanSpec(columns=("nope",)))
    with pytest.raises(lakestore.SchemaMismatchError, match="gone"):
        scan_schema(table, ScanSpec(filter=lakestore.col("gone") == 1))
    with pytest.raises(lakestore.SnapshotNotFoundError):
        scan_schema(table, ScanSpec(snapshot_id=9))


def test_overwrite_specs_are_typed_and_parsed_once(table):
    options = table_options(table)
    assert overwrite_of(table, options, False) is None
    assert overwrite_of(table, options, True) is True
    # the string option casts to the keys' types
    parsed = overwrite_of(table, {**options, "overwrite-partition": "p=x, d=2024-01-02"}, True)
    assert parsed == {"p": "x", "d": datetime.date(2024, 1, 2)}
    # the helpers' typed dict arrives as it was, separators and all
    typed = {"p": "a,b=c", "d": datetime.date(2024, 1, 3)}
    assert overwrite_of(table, {**options, **overwrite_option(table, typed)}, True) == typed
    with pytest.raises(lakestore.PartitionValueError):
        overwrite_option(table, {"id": 1})
    with pytest.raises(lakestore.PartitionValueError):
        overwrite_option(table, [{"p": "x"}])
    with pytest.raises(lakestore.PartitionValueError):
        overwrite_of(table, {**options, "overwrite-partition": "id=1"}, True)
    with pytest.raises(lakestore.OptionError, match="key=value"):
        overwrite_of(table, {**options, "overwrite-partition": "x"}, True)
    with pytest.raises(lakestore.OptionError, match="needs mode"):
        overwrite_of(table, {**options, **overwrite_option(table, typed)}, False)
    with pytest.raises(lakestore.OptionError, match="not both"):
        overwrite_of(
            table, {**options, OVERWRITE_OPTION: overwrite_option(table, typed)[OVERWRITE_OPTION], "overwrite-partition": "p=x"}, True
        )


def test_commit_id_of_the_options():
    assert commit_id_of({"commit-user": "job", "commit-identifier": "7"}) == CommitId("job", 7)
    assert commit_id_of({"commit-user": "job"}) == CommitId("job")
    assert commit_id_of({}).user  # a fresh user
    with pytest.raises(lakestore.OptionError):
        commit_id_of({"commit-user": "job", "commit-identifier": "x"})


calls: list[tuple[str, tuple[str, ...]]] = []


def record(point: str, files) -> None:
    calls.append((point, tuple(files)))


def test_the_task_hook_calls_the_function_the_environment_names(monkeypatch):
    calls.clear()
    task_hook("after-write", ["a"])  # no hook named: nothing is called
    monkeypatch.setenv(TASK_HOOK_ENV, f"{__name__}:record")
    task_hook("after-write", ["data-1.parquet"])
    task_hook("after-commit")
    assert calls == [("after-write", ("data-1.parquet",)), ("after-commit", ())]
    monkeypatch.setenv(TASK_HOOK_ENV, "no-function-named")
    with pytest.raises(lakestore.OptionError, match="<module>:<function>"):
        task_hook("after-write")
