"""Level 1: the definitions load and are wired as intended (no Spark)."""

from __future__ import annotations

import dagster as dg
import pytest

from assets.common.partitions import daily_partitions
from pipelines.definitions import all_assets, defs

pytestmark = pytest.mark.dagster


def test_definitions_load():
    dg.Definitions.validate_loadable(defs)
    jobs = {j.name for j in defs.resolve_all_job_defs()}
    assert {"daily_ingestion_job", "maintenance_job", "compaction_job", "dimensions_job"} <= jobs
    assert defs.resolve_schedule_def("daily_ingestion_schedule").job_name == "daily_ingestion_job"
    assert defs.resolve_schedule_def("nightly_maintenance_schedule").job_name == "maintenance_job"
    assert defs.resolve_sensor_def("sorted_runs_sensor").job_name == "compaction_job"


def test_partitions_follow_tpch_calendar():
    keys = daily_partitions.get_partition_keys()
    assert keys[0] == "1992-01-01" and keys[-1] == "1998-08-02" and len(keys) == 2406


def test_every_partitioned_asset_backfills_in_one_run():
    partitioned = [a for a in all_assets if a.partitions_def is not None]
    assert len(partitioned) == 2 + 2 * 5 + 2  # landing, lifecycle stages of orders/lineitem, marts
    for asset in partitioned:
        assert asset.partitions_def == daily_partitions
        assert asset.backfill_policy == dg.BackfillPolicy.single_run(), asset.key


def test_lifecycle_graph_and_checks():
    graph = defs.resolve_asset_graph()
    key = dg.AssetKey
    for table in ("orders", "lineitem"):
        assert graph.get(key([table, "ingested"])).parent_keys == {key(["landing", table])}
        assert graph.get(key([table, "compacted"])).parent_keys == {key([table, "ingested"])}
        assert graph.get(key([table, "changelog"])).parent_keys == {key([table, "ingested"])}
        assert graph.get(key([table, "tagged"])).parent_keys == {key([table, "compacted"])}
        assert graph.get(key([table, "expired"])).parent_keys == {key([table, "tagged"])}
    checks = {(c.asset_key.to_user_string(), c.name) for a in all_assets for c in a.check_specs}
    assert ("orders/ingested", "rows_reconcile_with_landing") in checks
    assert ("lineitem/ingested", "sorted_runs_below_stop_trigger") in checks
    assert ("orders/compacted", "newest_snapshot_readable") in checks
    assert ("lineitem/expired", "retention_respected") in checks
    assert ("orders/changelog", "changelog_rows_match_files") in checks
    # the marts consume the changelog stage, not the ingestion directly
    assert graph.get(key(["marts", "order_status"])).parent_keys >= {key(["orders", "changelog"]), key(["lineitem", "changelog"])}


def test_jobs_use_one_process():
    # Spark steps share a JVM: the in-process executor.
    job = defs.resolve_job_def("daily_ingestion_job")
    assert job.executor_def.name == dg.in_process_executor.name
