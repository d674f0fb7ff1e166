"""One local SparkSession shared by the Spark test modules (2 cores, light settings), plus table
helpers. A module that needs another master (tests/spark/test_cluster.py) stops it; the next
module that asks for ``spark`` starts it again."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark")

import lakestore  # noqa: E402

LOCAL_MASTER = "local[2,2]"


def _alive(session) -> bool:
    try:
        return session.sparkContext._jsc is not None  # stop() clears it
    except Exception:  # noqa: BLE001 - a dead gateway raises various errors
        return False


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    from lakestore.spark import create_spark_session

    # Another module (the pipeline's resources, the cluster tests) may have left a session with
    # other settings running in this process; getOrCreate would hand that one back.
    active = SparkSession.getActiveSession()
    if active is not None and _alive(active) and active.sparkContext.master == LOCAL_MASTER:
        return active
    if active is not None:
        active.stop()
    # local[2,2]: 2 cores, and a failed task is retried once (as on a cluster), so crash tests
    # can check what a retried task leaves behind.
    session = create_spark_session(
        master=LOCAL_MASTER, app_name="lakestore-tests", conf={"spark.sql.shuffle.partitions": "4", "spark.driver.memory": "1g"}
    )
    session.sparkContext.setLogLevel("ERROR")
    return session


@pytest.fixture(scope="session", autouse=True)
def _stop_spark_at_exit():
    yield
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        active.stop()


@pytest.fixture
def catalog(tmp_path):
    cat = lakestore.Catalog(str(tmp_path / "warehouse"))
    cat.create_database("db", exist_ok=True)
    return cat
