"""One local SparkSession for all Spark tests (2 cores, light settings), plus table helpers."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark")

import lakestore  # noqa: E402


@pytest.fixture(scope="session")
def spark():
    from pyspark.sql import SparkSession

    from lakestore.spark import create_spark_session

    # Another test module (the pipeline's resources) may have left a session with other
    # settings running in this process; getOrCreate would hand that one back.
    active = SparkSession.getActiveSession()
    if active is not None and active.sparkContext.master != "local[2,2]":
        active.stop()
    # local[2,2]: 2 cores, and a failed task is retried once (as on a cluster), so crash tests
    # can check what a retried task leaves behind.
    session = create_spark_session(
        master="local[2,2]",
        app_name="lakestore-tests",
        conf={"spark.sql.shuffle.partitions": "4", "spark.driver.memory": "1g"},
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture
def catalog(tmp_path):
    cat = lakestore.Catalog(str(tmp_path / "warehouse"))
    cat.create_database("db", exist_ok=True)
    return cat
