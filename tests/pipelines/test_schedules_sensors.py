"""Level 2: schedules and the sorted-runs sensor evaluated against real tables (no Spark)."""

from __future__ import annotations

import datetime as dt
import json

import dagster as dg
import pyarrow as pa
import pytest

from assets.common.lsm import table_shape
from assets.common.tables import LINEITEM, ORDERS, ensure_table
from assets.landing.tpch import load_tpch
from pipelines.definitions import defs
from pipelines.schedules import daily_ingestion_schedule, nightly_maintenance_schedule
from pipelines.sensors import sorted_runs_sensor

pytestmark = pytest.mark.dagster


def _tick(schedule: dg.ScheduleDefinition, when: dt.datetime) -> list:
    context = dg.build_schedule_context(scheduled_execution_time=when, repository_def=defs.get_repository_def())
    return schedule.evaluate_tick(context)


def test_daily_schedule_requests_previous_day():
    data = _tick(daily_ingestion_schedule, dt.datetime(1995, 3, 16, 0, 15, tzinfo=dt.UTC))
    assert [r.partition_key for r in data.run_requests] == ["1995-03-15"]
    assert data.run_requests[0].run_key == "ingest-1995-03-15"
    # the first day of the calendar is reachable, the day before it is not
    assert [r.partition_key for r in _tick(daily_ingestion_schedule, dt.datetime(1992, 1, 2, 0, 15, tzinfo=dt.UTC)).run_requests] == [
        "1992-01-01"
    ]
    data = _tick(daily_ingestion_schedule, dt.datetime(1992, 1, 1, 0, 15, tzinfo=dt.UTC))
    assert not data.run_requests and "outside the TPC-H calendar" in data.skip_message


def test_nightly_schedule_skips_after_the_calendar():
    data = _tick(nightly_maintenance_schedule, dt.datetime(1998, 8, 3, 3, 0, tzinfo=dt.UTC))
    assert [r.partition_key for r in data.run_requests] == ["1998-08-02"]
    data = _tick(nightly_maintenance_schedule, dt.datetime(2026, 1, 1, 3, 0, tzinfo=dt.UTC))
    assert not data.run_requests and data.skip_message


def _orders_rows(data, day: str, start: int) -> pa.Table:
    """Real orders rows re-keyed into partition ``day`` (unique keys per call)."""
    rows = data.tables["orders"].slice(start, 40)
    return (
        pa.table(
            {
                **{name: rows.column(name) for name in data.tables["orders"].column_names},
                "dt": pa.array([day] * rows.num_rows),
                "_op": pa.array(["+I"] * rows.num_rows),
                "_seq": pa.array([1] * rows.num_rows, pa.int64()),
            }
        )
        .select(ORDERS.schema.names)
        .cast(ORDERS.schema)
    )


def _evaluate(pipeline, cursor: str | None):
    context = dg.build_sensor_context(
        cursor=cursor, resources={"catalog": pipeline.catalog}, instance=pipeline.instance, definitions=pipeline.defs
    )
    return sorted_runs_sensor(context)


def test_sensor_requests_compaction_for_partitions_at_the_trigger(pipeline):
    data = load_tpch(pipeline.landing.resolved_root(), pipeline.landing.scale_factor)
    lake = pipeline.catalog.open()
    orders = ensure_table(lake, ORDERS, pipeline.catalog.lifecycle_options())
    ensure_table(lake, LINEITEM, pipeline.catalog.lifecycle_options())  # healthy (empty) table
    trigger = orders.options.compaction_trigger
    # dt=1995-01-01: one commit per call writes one level-0 file per bucket (write-only), so
    # `trigger` commits reach the trigger in both buckets; dt=1995-01-02 stays one below it.
    for i in range(trigger):
        orders.write_arrow(_orders_rows(data, "1995-01-01", 40 * i), commit_user="test")
    for i in range(trigger - 1):
        orders.write_arrow(_orders_rows(data, "1995-01-02", 40 * i), commit_user="test")
    shapes = {(s.partition, s.bucket): s.sorted_runs for s in table_shape(orders)}
    assert shapes == {
        ("dt=1995-01-01", 0): trigger,
        ("dt=1995-01-01", 1): trigger,
        ("dt=1995-01-02", 0): trigger - 1,
        ("dt=1995-01-02", 1): trigger - 1,
    }

    result = _evaluate(pipeline, None)
    assert [(r.partition_key, tuple(r.asset_selection)) for r in result.run_requests] == [
        ("1995-01-01", (dg.AssetKey(["orders", "compacted"]),))
    ]
    latest = orders.latest_snapshot().id
    assert json.loads(result.cursor) == {"orders": latest}

    # no new snapshot: the sensor does not even plan the table again
    assert _evaluate(pipeline, result.cursor).run_requests == []

    # the requested run compacts the partition; afterwards the table is healthy
    run = pipeline.job("compaction_job").execute_in_process(
        instance=pipeline.instance,
        partition_key="1995-01-01",
        asset_selection=[dg.AssetKey(["orders", "compacted"])],
    )
    assert run.success
    assert all(e.passed for e in run.get_asset_check_evaluations())
    shapes = {(s.partition, s.bucket): s.sorted_runs for s in table_shape(orders)}
    assert shapes[("dt=1995-01-01", 0)] == 1 and shapes[("dt=1995-01-01", 1)] == 1
    after = _evaluate(pipeline, result.cursor)
    assert after.run_requests == [] and json.loads(after.cursor)["orders"] > latest


def test_sensor_requests_nothing_for_a_healthy_table(pipeline):
    data = load_tpch(pipeline.landing.resolved_root(), pipeline.landing.scale_factor)
    orders = ensure_table(pipeline.catalog.open(), ORDERS, pipeline.catalog.lifecycle_options())
    orders.write_arrow(_orders_rows(data, "1996-06-01", 0), commit_user="test")
    result = _evaluate(pipeline, None)
    assert result.run_requests == [] and json.loads(result.cursor) == {"orders": 1}
