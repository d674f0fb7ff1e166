"""The Dagster ``Definitions`` of the pipeline (``workspace.yaml`` loads ``defs`` from here): the
landing, dimension and mart assets written in Python, and the tables declared in YAML
(``pipelines/defs``) with their lifecycle assets, jobs, schedules and sensor."""

from __future__ import annotations

import dagster as dg
from dagster_pyspark import LazyPySparkResource

from assets.dimensions import dimension_assets
from assets.landing.assets import landing_assets
from assets.marts import mart_assets
from pipelines import tables
from pipelines.jobs import dimensions_job
from resources import LakestoreResource, LandingResource, spark_resource

# (one Definitions object at module scope, ``defs``: the tables' definitions stay in ``tables``)
table_assets = [a for a in tables.table_defs.assets or () if isinstance(a, dg.AssetsDefinition)]
all_assets = [*landing_assets, *dimension_assets, *table_assets, *mart_assets]


def build_definitions(
    *, catalog: LakestoreResource | None = None, landing: LandingResource | None = None, spark: LazyPySparkResource | None = None
) -> dg.Definitions:
    """Everything, with default resources (warehouse under the project, Spark on ``$LAKESTORE_SPARK_MASTER`` or local) unless given."""
    python_defs = dg.Definitions(
        assets=[*landing_assets, *dimension_assets, *mart_assets],
        jobs=[dimensions_job],
        resources={
            "catalog": catalog or LakestoreResource(),
            "landing": landing or LandingResource(),
            "spark": spark or spark_resource(),
        },
        # Spark steps share one JVM per run instead of one per step process.
        executor=dg.in_process_executor,
    )
    return dg.Definitions.merge(tables.table_defs, python_defs)


defs = build_definitions()
