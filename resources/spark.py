"""The Spark resource: one local (or cluster) SparkSession per process, reused by every step.

Built on ``lakestore.spark.create_spark_session`` (local masters: loopback, no UI, few shuffle
partitions). Spark starts lazily, on first use, so steps that do not need it pay no JVM.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

import dagster as dg
from pydantic import Field

_LOCK = threading.Lock()
_SESSION: Any = None


def _alive(session: Any) -> bool:
    try:
        return session is not None and session.sparkContext._jsc is not None  # noqa: SLF001 - stop() clears it
    except Exception:  # noqa: BLE001 - a dead gateway raises various errors
        return False


class SparkResource(dg.ConfigurableResource):
    """``local[*]`` by default; set ``master`` (e.g. ``spark://host:7077``) for a cluster."""

    master: str = Field(default="local[*]", description="Spark master URL")
    app_name: str = Field(default="lakestore-pipeline", description="Spark application name")
    conf: dict[str, str] = Field(default_factory=dict, description="Extra Spark configuration")

    def get_session(self) -> Any:
        """The process-wide session (created on first call, reused afterwards)."""
        global _SESSION  # noqa: PLW0603 - one JVM per process is the point
        with _LOCK:
            if not _alive(_SESSION):
                # Spark starts Python workers with `python3` from PATH unless told otherwise;
                # create_spark_session also binds local masters to loopback.
                os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
                from lakestore.spark import create_spark_session  # noqa: PLC0415 - starts a JVM: only on first use

                _SESSION = create_spark_session(master=self.master, app_name=self.app_name, conf=dict(self.conf))
            return _SESSION


def stop_session() -> None:
    """Stop the process-wide session (tests, scripts)."""
    global _SESSION  # noqa: PLW0603
    with _LOCK:
        if _alive(_SESSION):
            _SESSION.stop()
        _SESSION = None
