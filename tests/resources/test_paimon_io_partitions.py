"""PaimonIOManager, partitioned assets: static, daily (string and date columns) and
multi-partitioned assets write OVERWRITE snapshots of exactly their partition; single-run
backfills overwrite their partitions in one commit; downstream inputs read the upstream
partitions they depend on; concurrent materializations of different partitions all land."""

import datetime as dt
import multiprocessing
import threading

import dagster as dg
import pyarrow as pa
import pytest

import lakestore
from resources.paimon import PartitionMappingError
from tests.resources.paimon_support import materialize_days, output_metadata, run

pytestmark = pytest.mark.dagster

regions = dg.StaticPartitionsDefinition(["eu", "us", "apac"])
days = dg.DailyPartitionsDefinition(start_date="2024-01-01", end_date="2024-01-10")
multi = dg.MultiPartitionsDefinition({"day": days, "region": regions})
RANGE = "dagster/asset_partition_range_start", "dagster/asset_partition_range_end"


def _partition_rows(table: lakestore.Table, column: str) -> dict:
    rows = table.to_arrow()
    out: dict = {}
    for value, v in zip(rows.column(column).to_pylist(), rows.column("v").to_pylist(), strict=True):
        out.setdefault(value, []).append(v)
    return {k: sorted(v) for k, v in out.items()}


def _last_delta_partitions(table: lakestore.Table) -> set:
    return {tuple(sorted(f.partition.items())) for f in table.store.delta_files(table.latest_snapshot())}


def test_static_partition_rematerialization_replaces_exactly_that_partition(io_manager, catalog):
    version = {"n": 1}

    @dg.asset(key=["db", "sales"], partitions_def=regions, metadata={"partition_expr": "region"})
    def sales(context: dg.AssetExecutionContext) -> pa.Table:
        key = context.partition_key
        return pa.table({"region": [key] * version["n"], "v": list(range(version["n"]))})

    run([sales], io_manager, partition_key="eu")
    run([sales], io_manager, partition_key="us")
    version["n"] = 3
    meta = output_metadata(run([sales], io_manager, partition_key="eu"), "db/sales")
    table = catalog.get_table("db.sales")
    assert table.partition_keys == ("region",)
    assert _partition_rows(table, "region") == {"eu": [0, 1, 2], "us": [0]}
    assert meta["commit_kind"] == "OVERWRITE" and meta["rows_added"] == 3 and meta["rows_removed"] == 1
    assert _last_delta_partitions(table) == {(("region", "eu"),)}
    assert sorted(r.data["region"] for r in meta["preview"].records) == ["eu"] * 3  # the partition's rows


@pytest.mark.parametrize("column_type", [pa.string(), pa.date32()], ids=["string", "date"])
def test_daily_partitions_map_to_string_or_date_columns(column_type, io_manager, catalog):
    version = {"n": 1}

    @dg.asset(key=["db", "daily"], partitions_def=days, metadata={"partition_expr": "day"})
    def daily(context: dg.AssetExecutionContext) -> pa.Table:
        start = context.partition_time_window.start.replace(tzinfo=None)
        value = {pa.string(): context.partition_key, pa.date32(): start.date()}[column_type]
        return pa.table({"day": pa.array([value] * version["n"], column_type), "v": list(range(version["n"]))})

    for key in ("2024-01-01", "2024-01-02"):
        run([daily], io_manager, partition_key=key)
    version["n"] = 2
    run([daily], io_manager, partition_key="2024-01-02")
    table = catalog.get_table("db.daily")
    expected_values = {
        pa.string(): ["2024-01-01", "2024-01-02"],
        pa.date32(): [dt.date(2024, 1, 1), dt.date(2024, 1, 2)],
    }[column_type]
    assert _partition_rows(table, "day") == {expected_values[0]: [0], expected_values[1]: [0, 1]}
    assert [s.commit_kind for s in table.snapshots()] == ["OVERWRITE"] * 3


def test_time_windows_on_other_column_types_are_refused(io_manager, catalog):
    catalog.create_database("db")
    catalog.create_table("db.hours", schema=pa.schema([("day", pa.int64()), ("v", pa.int64())]), partition_keys=["day"])

    @dg.asset(key=["db", "hours"], partitions_def=days, metadata={"partition_expr": "day"})
    def hours() -> pa.Table:
        return pa.table({"day": [20240101], "v": [1]})

    with pytest.raises(PartitionMappingError, match="use a date or string column"):
        run([hours], io_manager, partition_key="2024-01-01")

    hourly = dg.HourlyPartitionsDefinition(start_date="2024-01-01-00:00")

    @dg.asset(key=["db", "by_hour"], partitions_def=hourly, metadata={"partition_expr": "day"})
    def by_hour() -> pa.Table:
        return pa.table({"day": [dt.date(2024, 1, 1)], "v": [1]})

    with pytest.raises(PartitionMappingError, match="shorter than a day"):
        run([by_hour], io_manager, partition_key="2024-01-01-05:00")


def test_multi_partition_rematerialization_replaces_one_key(io_manager, catalog):
    version = {"n": 1}

    @dg.asset(key=["db", "grid"], partitions_def=multi, metadata={"partition_expr": {"day": "day", "region": "region"}})
    def grid(context: dg.AssetExecutionContext) -> pa.Table:
        keys = context.partition_key.keys_by_dimension
        n = version["n"]
        return pa.table({"day": [keys["day"]] * n, "region": [keys["region"]] * n, "v": list(range(n))})

    for day in ("2024-01-01", "2024-01-02"):
        for region in ("eu", "us"):
            run([grid], io_manager, partition_key=dg.MultiPartitionKey({"day": day, "region": region}))
    version["n"] = 4
    run([grid], io_manager, partition_key=dg.MultiPartitionKey({"day": "2024-01-02", "region": "eu"}))
    table = catalog.get_table("db.grid")
    assert set(table.partition_keys) == {"day", "region"}
    assert _last_delta_partitions(table) == {(("day", "2024-01-02"), ("region", "eu"))}
    rows = table.to_arrow().group_by(["day", "region"]).aggregate([("v", "count")]).to_pylist()
    counts = {(r["day"], r["region"]): r["v_count"] for r in rows}
    assert counts == {("2024-01-01", "eu"): 1, ("2024-01-01", "us"): 1, ("2024-01-02", "eu"): 4, ("2024-01-02", "us"): 1}


def test_single_run_backfill_overwrites_its_partitions_in_one_commit(io_manager, catalog):
    @dg.asset(
        key=["db", "filled"],
        partitions_def=days,
        metadata={"partition_expr": "day"},
        backfill_policy=dg.BackfillPolicy.single_run(),
    )
    def filled(context: dg.AssetExecutionContext) -> pa.Table:
        keys = context.partition_keys
        return pa.table({"day": keys, "v": [len(keys)] * len(keys)})

    run([filled], io_manager, partition_key="2024-01-05")
    run([filled], io_manager, tags=dict(zip(RANGE, ["2024-01-01", "2024-01-03"], strict=True)))
    run([filled], io_manager, tags=dict(zip(RANGE, ["2024-01-02", "2024-01-03"], strict=True)))
    table = catalog.get_table("db.filled")
    assert _partition_rows(table, "day") == {"2024-01-01": [3], "2024-01-02": [2], "2024-01-03": [2], "2024-01-05": [1]}
    last = table.latest_snapshot()
    assert last.commit_kind == "OVERWRITE" and len(table.snapshots()) == 3
    assert _last_delta_partitions(table) == {(("day", "2024-01-02"),), (("day", "2024-01-03"),)}


def test_rows_outside_the_partition_are_refused_and_nothing_committed(io_manager, catalog):
    @dg.asset(key=["db", "stray"], partitions_def=regions, metadata={"partition_expr": "region"})
    def stray() -> pa.Table:
        return pa.table({"region": ["eu", "us"], "v": [1, 2]})

    with pytest.raises(lakestore.PartitionValueError):
        run([stray], io_manager, partition_key="eu")
    assert catalog.get_table("db.stray").latest_snapshot() is None


def test_partitioned_asset_without_partition_expr_is_refused(io_manager):
    @dg.asset(key=["db", "unmapped"], partitions_def=regions)
    def unmapped() -> pa.Table:
        return pa.table({"region": ["eu"], "v": [1]})

    with pytest.raises(PartitionMappingError, match="give partition_expr"):
        run([unmapped], io_manager, partition_key="eu")


def test_inputs_read_the_upstream_partitions_they_depend_on(io_manager, monkeypatch):
    scans: list[dict] = []
    scan = lakestore.Table.scan

    def spy(self, **kwargs):
        scans.append(kwargs)
        return scan(self, **kwargs)

    @dg.asset(key=["db", "events"], partitions_def=days, metadata={"partition_expr": "day"})
    def events(context: dg.AssetExecutionContext) -> pa.Table:
        return pa.table({"day": [context.partition_key] * 2, "v": [1, 2], "note": ["x", "y"]})

    seen: dict = {}

    @dg.asset(
        key=["db", "rolling"],
        partitions_def=days,
        ins={
            "events": dg.AssetIn(
                key=["db", "events"],
                partition_mapping=dg.TimeWindowPartitionMapping(start_offset=-1),
                metadata={"columns": ["day", "v"]},
            )
        },
        metadata={"partition_expr": "day"},
    )
    def rolling(context: dg.AssetExecutionContext, events: pa.Table) -> pa.Table:
        seen["rolling"] = events
        return pa.table({"day": [context.partition_key], "v": [sum(events.column("v").to_pylist())]})

    @dg.asset(key=["db", "everything"], ins={"events": dg.AssetIn(key=["db", "events"])})
    def everything(events: pa.Table) -> None:
        seen["everything"] = events

    for key in ("2024-01-01", "2024-01-02", "2024-01-03"):
        run([events], io_manager, partition_key=key)
    monkeypatch.setattr(lakestore.Table, "scan", spy)
    run([rolling, events], io_manager, partition_key="2024-01-03", selection=[rolling])
    assert sorted(set(seen["rolling"].column("day").to_pylist())) == ["2024-01-02", "2024-01-03"]
    assert seen["rolling"].column_names == ["day", "v"]
    assert scans[0]["columns"] == ["day", "v"] and scans[0]["filter"] is not None  # pushed into the scan
    run([everything, events], io_manager, selection=[everything])
    assert seen["everything"].num_rows == 6 and seen["everything"].column_names == ["day", "v", "note"]


def test_multi_partitioned_input_filters_each_dimension(io_manager):
    @dg.asset(key=["db", "cells"], partitions_def=multi, metadata={"partition_expr": {"day": "day", "region": "region"}})
    def cells(context: dg.AssetExecutionContext) -> pa.Table:
        keys = context.partition_key.keys_by_dimension
        return pa.table({"day": pa.array([dt.date.fromisoformat(keys["day"])]), "region": [keys["region"]], "v": [1]})

    seen: dict = {}

    @dg.asset(key=["db", "by_day"], partitions_def=multi, ins={"cells": dg.AssetIn(key=["db", "cells"])})
    def by_day(cells: pa.Table) -> None:
        seen["rows"] = cells

    for day in ("2024-01-01", "2024-01-02"):
        for region in ("eu", "us"):
            run([cells], io_manager, partition_key=dg.MultiPartitionKey({"day": day, "region": region}))
    run([by_day, cells], io_manager, partition_key=dg.MultiPartitionKey({"day": "2024-01-02", "region": "us"}), selection=[by_day])
    assert seen["rows"].select(["day", "region"]).to_pylist() == [{"day": dt.date(2024, 1, 2), "region": "us"}]


def test_concurrent_materializations_of_different_partitions_all_land(io_manager, catalog):
    @dg.asset(key=["db", "parallel"], partitions_def=days, metadata={"partition_expr": "day"})
    def parallel(context: dg.AssetExecutionContext) -> pa.Table:
        return pa.table({"day": [context.partition_key] * 100, "v": list(range(100))})

    keys = days.get_partition_keys()[:4]
    start = threading.Barrier(len(keys))
    errors: list[BaseException] = []

    def materialize(key: str) -> None:
        try:
            start.wait()
            run([parallel], io_manager, partition_key=key)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=materialize, args=(key,)) for key in keys]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    table = catalog.get_table("db.parallel")
    assert {k: len(v) for k, v in _partition_rows(table, "day").items()} == dict.fromkeys(keys, 100)
    assert [s.commit_kind for s in table.snapshots()] == ["OVERWRITE"] * len(keys)


def test_concurrent_processes_commit_their_partitions_safely(warehouse, catalog):
    # as Dagster's multiprocess executor and concurrent runs do: each process its own commits
    # (forked: a spawned interpreter would spend seconds importing Dagster again)
    keys = [f"2024-01-{d:02d}" for d in range(1, 5)]
    context = multiprocessing.get_context("fork")
    with context.Pool(2) as pool:
        done = pool.starmap(materialize_days, [(warehouse, keys[0::2]), (warehouse, keys[1::2])])
    assert done == [2, 2]
    table = catalog.get_table("db.shared")
    assert {k: len(v) for k, v in _partition_rows(table, "day").items()} == dict.fromkeys(keys, 100)
    assert [s.commit_kind for s in table.snapshots()] == ["OVERWRITE"] * len(keys)
