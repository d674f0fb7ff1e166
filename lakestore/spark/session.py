"""A SparkSession factory that works on this kind of machine out of the box.

Local masters get loopback binding, the venv's Python for workers, Arrow, UTC session time and
small shuffle/memory settings; a cluster master gets only the settings that are safe anywhere
(Arrow, UTC, Java 17 module options) and keeps the cluster's own networking and sizing.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any

from pyspark.sql import SparkSession

from lakestore.spark.source import register

# Arrow's memory access on Java 17 needs these modules opened (Spark's launcher adds most of them
# for the driver, but executors started by a cluster manager and older launchers do not).
JAVA17_OPTIONS = " ".join(
    [
        "-XX:+IgnoreUnrecognizedVMOptions",
        "--add-opens=java.base/java.lang=ALL-UNNAMED",
        "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
        "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
        "--add-opens=java.base/java.io=ALL-UNNAMED",
        "--add-opens=java.base/java.net=ALL-UNNAMED",
        "--add-opens=java.base/java.nio=ALL-UNNAMED",
        "--add-opens=java.base/java.util=ALL-UNNAMED",
        "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
        "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
        "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
        "--add-opens=java.base/sun.nio.cs=ALL-UNNAMED",
        "--add-opens=java.base/sun.security.action=ALL-UNNAMED",
        "--add-opens=java.base/sun.util.calendar=ALL-UNNAMED",
        "-Dio.netty.tryReflectionSetAccessible=true",
    ]
)


def is_local_master(master: str) -> bool:
    return master == "local" or master.startswith("local[") or master.startswith("local-cluster[")


def _local_cores(master: str) -> int:
    """Cores a ``local[N]``/``local[N,F]``/``local[*]`` master uses."""
    if master == "local":
        return 1
    inner = master[master.index("[") + 1 : master.rindex("]")].split(",")[0].strip()
    if inner == "*":
        return os.cpu_count() or 1
    try:
        return max(1, int(inner))
    except ValueError:
        return os.cpu_count() or 1


def spark_settings(master: str = "local[*]") -> dict[str, str]:
    """lakestore's recommended Spark settings for ``master``: Arrow on (with big batches), UTC
    session time, Java 17 module options, the workers' Python (``spark.pyspark.python``: this
    interpreter, the same environment on every worker), and for local/local-cluster masters
    loopback binding, no UI and small shuffles. ``create_spark_session`` applies them; pass them to
    any other session builder (e.g. dagster-pyspark's ``spark_config``)."""
    conf = {
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.execution.arrow.pyspark.fallback.enabled": "false",
        # Bigger Arrow batches: fewer Python round trips per task in mapInArrow.
        "spark.sql.execution.arrow.maxRecordsPerBatch": "65536",
        "spark.sql.session.timeZone": "UTC",
        "spark.driver.extraJavaOptions": JAVA17_OPTIONS,
        "spark.executor.extraJavaOptions": JAVA17_OPTIONS,
        "spark.pyspark.python": os.environ.get("PYSPARK_PYTHON") or sys.executable,
        "spark.pyspark.driver.python": sys.executable,
    }
    if is_local_master(master):
        cores = _local_cores(master)
        conf.update(
            {
                "spark.driver.host": "127.0.0.1",
                "spark.driver.bindAddress": "127.0.0.1",
                # local-cluster executors are processes of their own: loopback for them too
                "spark.executorEnv.SPARK_LOCAL_IP": "127.0.0.1",
                "spark.ui.enabled": "false",
                "spark.ui.showConsoleProgress": "false",
                # Two partitions per core: enough to balance, few enough to keep tasks cheap.
                "spark.sql.shuffle.partitions": str(2 * cores),
                "spark.default.parallelism": str(cores),
                "spark.driver.memory": "2g",
            }
        )
    return conf


def create_spark_session(master: str = "local[*]", app_name: str = "lakestore", conf: Mapping[str, Any] | None = None) -> SparkSession:
    """Create (or return the running) SparkSession for lakestore work.

    ``conf`` overrides the defaults (see ``spark_settings``). For a cluster master the workers need
    the same Python environment: by default at this interpreter's path (``sys.executable``); set
    ``PYSPARK_PYTHON`` or ``spark.pyspark.python`` in ``conf`` when the path differs there.
    Note: ``getOrCreate`` returns an already running session unchanged; JVM settings such as
    driver memory only apply to the first session of a process.
    """
    settings = spark_settings(master)
    settings.update({k: str(v) for k, v in (conf or {}).items()})
    # Workers are started by the JVM from the environment: the venv's Python, not PATH's python3
    # (an explicit PYSPARK_PYTHON or spark.pyspark.python in ``conf`` wins).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if is_local_master(master):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in settings.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    register(session)
    return session
