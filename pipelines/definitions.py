"""The Dagster ``Definitions`` of the pipeline (``workspace.yaml`` loads ``defs`` from here)."""

from __future__ import annotations

import dagster as dg
from dagster_pyspark import LazyPySparkResource

from assets.dimensions import dimension_assets
from assets.landing.assets import landing_assets
from assets.lineitem import lineitem_assets
from assets.marts import mart_assets
from assets.orders import orders_assets
from pipelines.jobs import all_jobs
from pipelines.schedules import all_schedules
from pipelines.sensors import sorted_runs_sensor
from resources import LakestoreResource, LandingResource, spark_resource

all_assets = [*landing_assets, *dimension_assets, *orders_assets, *lineitem_assets, *mart_assets]


def build_definitions(
    *, catalog: LakestoreResource | None = None, landing: LandingResource | None = None, spark: LazyPySparkResource | None = None
) -> dg.Definitions:
    """Everything, with default resources (warehouse under the project, Spark on ``$LAKESTORE_SPARK_MASTER`` or local) unless given."""
    return dg.Definitions(
        assets=all_assets,
        jobs=all_jobs,
        schedules=all_schedules,
        sensors=[sorted_runs_sensor],
        resources={
            "catalog": catalog or LakestoreResource(),
            "landing": landing or LandingResource(),
            "spark": spark or spark_resource(),
        },
        # Spark steps share one JVM per run instead of one per step process.
        executor=dg.in_process_executor,
    )


defs = build_definitions()
