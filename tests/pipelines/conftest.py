"""Pipeline test fixtures: a warehouse and landing zone under pytest's tmp dir, resources bound
to them, an ephemeral Dagster instance, and the process-wide SparkSession stopped at the end."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("dagster")

import dagster as dg  # noqa: E402

from pipelines.definitions import build_definitions  # noqa: E402
from resources import LakestoreResource, LandingResource, spark_resource  # noqa: E402
from resources.spark import stop_session  # noqa: E402

SCALE_FACTOR = 0.01


@dataclass
class Pipeline:
    root: Path
    catalog: LakestoreResource
    landing: LandingResource
    defs: dg.Definitions
    instance: dg.DagsterInstance

    def job(self, name: str) -> dg.JobDefinition:
        return self.defs.resolve_job_def(name)


def make_pipeline(root: Path) -> Pipeline:
    catalog = LakestoreResource(warehouse=str(root / "warehouse"))
    landing = LandingResource(root=str(root / "warehouse" / "landing"), scale_factor=SCALE_FACTOR)
    spark = spark_resource("local[2]", conf={"spark.driver.memory": "1g"})
    defs = build_definitions(catalog=catalog, landing=landing, spark=spark)
    return Pipeline(root, catalog, landing, defs, dg.DagsterInstance.ephemeral())


@pytest.fixture(scope="session", autouse=True)
def _spark_python():
    # Spark workers must run this interpreter; stop the shared JVM at the end.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    yield
    stop_session()


@pytest.fixture
def pipeline(tmp_path: Path) -> Pipeline:
    return make_pipeline(tmp_path)


def range_tags(first: str, last: str) -> dict[str, str]:
    return {"dagster/asset_partition_range_start": first, "dagster/asset_partition_range_end": last}


QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
