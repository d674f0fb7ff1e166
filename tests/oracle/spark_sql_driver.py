"""Drive Spark SQL with Apache Paimon 2.0.0's Spark connector (tests/oracle/spark_sql_cli.py in
``.venv-spark40``) from the tests.

One JVM per test session, started on first use and stopped at exit. Each warehouse gets its own
Paimon ``SparkCatalog`` (``use_warehouse`` returns its name), so tests never share a catalog's
cache. Rows cross as JSON lists. Nothing here imports lakestore.

    from tests.oracle.spark_sql_driver import spark_sql_oracle
    spark = spark_sql_oracle()                # skips (or fails under LAKESTORE_REQUIRE_ALL=1)
    cat = spark.use_warehouse(wh)             # "p1": catalog over wh
    spark.sql(f"CREATE TABLE {cat}.db.t (...) TBLPROPERTIES (...)")
    rows = spark.query(f"SELECT * FROM {cat}.db.t")

The connector is the jar ``../shared/jars/paimon-spark-4.0_2.13-2.0.0.jar`` beside the
repository (``LAKESTORE_PAIMON_SPARK_JAR`` overrides it), built from Apache Paimon's release-2.0.0
source (the registry serves no paimon-spark for Paimon 1.x or 2.0).
"""

from __future__ import annotations

import atexit
import itertools
import json
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent.parent
CLI = HERE / "spark_sql_cli.py"
RESPONSE_PREFIX = "@@spark-sql-oracle@@ "
JAR_NAME = "paimon-spark-4.0_2.13-2.0.0.jar"


class SparkSqlError(RuntimeError):
    """Spark raised; the message carries its exception and the Python traceback."""


def spark40_python() -> Path:
    return Path(os.environ.get("LAKESTORE_SPARK40_PYTHON", REPO_ROOT / ".venv-spark40" / "bin" / "python"))


def paimon_spark_jar() -> Path:
    default = REPO_ROOT.parent / "shared" / "jars" / JAR_NAME
    return Path(os.environ.get("LAKESTORE_PAIMON_SPARK_JAR", default)).resolve()


def hms4compat_jar() -> Path:
    """The Hive 2.3 metastore client that asks HMS 4 with ``get_table_req`` (HMS 4 removed
    ``get_table``), beside the paimon-spark jar: Paimon's Hive catalog against the suite's
    metastore uses it (``metastore.client.class=hms4compat.GetTableReqMetaStoreClient``)."""
    default = REPO_ROOT.parent / "shared" / "jars" / "hms4compat-metastore-client.jar"
    return Path(os.environ.get("LAKESTORE_HMS4COMPAT_JAR", default)).resolve()


def spark_sql_unavailable_reason() -> str | None:
    if not spark40_python().exists():
        return f"the pyspark 4.0 venv is missing ({spark40_python()}); run scripts/install_pyspark.sh 4.0.5 .venv-spark40"
    if shutil.which("java") is None:
        return "java is not on PATH"
    if not paimon_spark_jar().exists():
        return f"Paimon's Spark connector is missing ({paimon_spark_jar()}; set LAKESTORE_PAIMON_SPARK_JAR)"
    return None


class SparkSqlOracle:
    """A running spark_sql_cli.py; ``request`` is thread-safe and raises ``SparkSqlError``."""

    def __init__(self, conf: Mapping[str, str] | None = None) -> None:
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        self._tmp = tempfile.mkdtemp(prefix="spark-sql-oracle-")
        env["TMPDIR"] = self._tmp
        env["SPARK_LOCAL_IP"] = "127.0.0.1"
        env["TZ"] = "UTC"  # collect() turns timestamps into naive datetimes of the process's zone
        env["PYSPARK_PYTHON"] = str(spark40_python())
        self.stderr_path = Path(self._tmp) / "stderr.log"
        self._stderr = open(self.stderr_path, "wb")  # noqa: SIM115 - closed in close()
        self._proc = subprocess.Popen(
            [str(spark40_python()), str(CLI)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            env=env,
            cwd=self._tmp,
            start_new_session=True,
        )
        self._lock = threading.Lock()
        self._names = itertools.count(1)
        self._response()  # the "ready" line
        settings = {"spark.local.dir": self._tmp, "spark.sql.warehouse.dir": str(Path(self._tmp) / "spark-warehouse"), **(conf or {})}
        jars = [str(paimon_spark_jar())] + ([str(hms4compat_jar())] if hms4compat_jar().exists() else [])
        started = self.request("start", jars=jars, conf=settings)
        self.start_seconds: float = started["seconds"]
        self.version: str = started["version"]

    def _response(self) -> dict[str, Any]:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            if line.startswith(RESPONSE_PREFIX):
                return json.loads(line[len(RESPONSE_PREFIX) :])
        raise SparkSqlError(f"the Spark SQL oracle exited (code {self._proc.poll()}):\n{self.stderr_tail()}")

    def stderr_tail(self, chars: int = 4000) -> str:
        self._stderr.flush()
        return self.stderr_path.read_text(errors="replace")[-chars:]

    def request(self, op: str, **fields: Any) -> dict[str, Any]:
        with self._lock:
            assert self._proc.stdin is not None
            self._proc.stdin.write(json.dumps({"op": op, **fields}, default=str) + "\n")
            self._proc.stdin.flush()
            result = self._response()
        if not result.pop("ok"):
            raise SparkSqlError(f"{op}: {result['error']}\n{result.get('traceback', '')[-3000:]}")
        return result

    def close(self) -> None:
        if self._proc.poll() is None:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self._proc.pid, 9)
                self._proc.wait()
        self._stderr.close()
        shutil.rmtree(self._tmp, ignore_errors=True)

    # -- operations ---------------------------------------------------------------------------
    def catalog(self, **options: str) -> str:
        """A new Paimon ``SparkCatalog`` with ``options``; returns its name."""
        name = f"p{next(self._names)}"
        self.request("catalog", name=name, options=options)
        return name

    def use_warehouse(self, warehouse: Any, **options: str) -> str:
        """A new filesystem catalog over ``warehouse`` (with database ``db``); returns its name.

        Paimon's catalog cache is off (``cache-enabled=false``): the cached table keeps the schema
        it was loaded with, so a column another engine adds would stay unseen until the cache
        entry expires (``cache.expiration-interval``, 10 minutes by default)."""
        settings = {"cache-enabled": "false", **options}
        name = self.catalog(warehouse="file:" + str(Path(warehouse).resolve()), **settings)
        self.sql(f"CREATE DATABASE IF NOT EXISTS {name}.db")
        return name

    def sql(self, *statements: str) -> list[list[Any]]:
        """Runs ``statements`` in order; the rows of the last one."""
        rows: list[list[Any]] = self.request("sql", statements=list(statements))["rows"]
        return rows

    def query(self, query: str) -> tuple[list[str], list[list[Any]]]:
        """A SELECT: its column names and rows."""
        result = self.request("sql", statements=[query])
        return result["columns"], result["rows"]

    def conf(self, **settings: str | None) -> None:
        """Runtime SQL settings (None unsets one)."""
        self.request("conf", settings=settings)


_oracle: SparkSqlOracle | None = None


def spark_sql_oracle() -> SparkSqlOracle:
    """The session's Spark SQL. Skips the test when it cannot run here, unless
    ``LAKESTORE_REQUIRE_ALL=1`` (CI), where a missing part fails the test."""
    global _oracle
    if _oracle is None:
        reason = spark_sql_unavailable_reason()
        if reason is not None:
            if os.environ.get("LAKESTORE_REQUIRE_ALL") == "1":
                pytest.fail(f"LAKESTORE_REQUIRE_ALL=1 but {reason}")
            pytest.skip(reason)
        _oracle = SparkSqlOracle()
        atexit.register(_oracle.close)
    return _oracle
