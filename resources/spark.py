"""The Spark resource: dagster-pyspark's ``LazyPySparkResource`` configured with lakestore's
recommended settings (``lakestore.spark.spark_settings``).

The session starts on first use (``spark.spark_session``), so steps that do not need Spark pay no
JVM, and ``getOrCreate`` shares one JVM per process across the steps of the in-process executor.
The master is ``local[*]`` unless given or set in ``$LAKESTORE_SPARK_MASTER`` (e.g.
``spark://host:7077``, ``local-cluster[2,1,1024]``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from dagster_pyspark import LazyPySparkResource
from pyspark.sql import SparkSession

from lakestore.spark import spark_settings

MASTER_ENV = "LAKESTORE_SPARK_MASTER"


def default_master() -> str:
    return os.environ.get(MASTER_ENV) or "local[*]"


def spark_resource(
    master: str | None = None, *, app_name: str = "lakestore-pipeline", conf: Mapping[str, str] | None = None
) -> LazyPySparkResource:
    """A ``LazyPySparkResource`` for ``master`` with lakestore's settings, ``conf`` on top."""
    master = master or default_master()
    settings = {**spark_settings(master), "spark.master": master, "spark.app.name": app_name, **dict(conf or {})}
    return LazyPySparkResource(spark_config=settings)


def stop_session() -> None:
    """Stop this process's SparkSession, if one runs (tests, scripts)."""
    active = SparkSession.getActiveSession()
    if active is not None:
        active.stop()
