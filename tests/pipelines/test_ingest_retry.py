"""A daily ingestion run that fails in the middle of a day, after the day's commit landed (the
Python worker running the driver's commit is killed right after it), and is then run again for
the same days: every day is ingested exactly once (one commit per day and table, rows equal to
the landing files)."""

from __future__ import annotations

import dagster as dg
import pytest
from conftest import QUIET, make_pipeline, range_tags

from assets.common.days import day_number
from lakestore.spark import create_spark_session
from tests.spark.faults import fault

pytestmark = [pytest.mark.dagster, pytest.mark.spark, pytest.mark.slow]

FIRST, LAST = "1992-01-01", "1992-01-02"


def test_a_run_failing_mid_day_and_run_again_ingests_each_day_once(tmp_path):
    pipeline = make_pipeline(tmp_path / "pipeline")
    assert pipeline.job("dimensions_job").execute_in_process(instance=pipeline.instance, run_config=QUIET).success
    spark = create_spark_session("local[2]", conf={"spark.driver.memory": "1g"})
    marker = tmp_path / "crashed-after-commit"
    with fault(spark, f"after-commit:{marker}"):
        failed = pipeline.job("daily_ingestion_job").execute_in_process(
            instance=pipeline.instance, tags=range_tags(FIRST, LAST), run_config=QUIET, raise_on_error=False
        )
    assert marker.exists(), "no commit crashed: the test proved nothing"
    assert not failed.success
    lake = pipeline.catalog.open()
    landed_before = {
        name: [s.commit_identifier for s in lake.get_table(f"tpch.{name}").snapshots() if s.commit_user == f"ingest-{name}"]
        for name in ("orders", "lineitem")
    }
    assert any(landed_before.values()), "the crashed commit should have landed"

    again = pipeline.job("daily_ingestion_job").execute_in_process(
        instance=pipeline.instance, tags=range_tags(FIRST, LAST), run_config=QUIET
    )
    assert again.success
    assert all(e.passed for e in again.get_asset_check_evaluations())  # rows reconcile with the landing files
    for name in ("orders", "lineitem"):
        table = lake.get_table(f"tpch.{name}")
        idents = sorted(s.commit_identifier for s in table.snapshots() if s.commit_user == f"ingest-{name}")
        assert idents == [day_number(FIRST), day_number(LAST)], (name, idents)
    assert pipeline.instance.get_materialized_partitions(dg.AssetKey(["lineitem", "ingested"])) == {FIRST, LAST}
