"""Drive Apache Flink 2.0 with Apache Paimon 2.0.0's connector (tests/oracle/flink_cli.py in
``.venv-flink``) from the tests.

One JVM per test session, started on first use and stopped at exit; jobs run on local
mini-clusters inside it, with a checkpoint every second. Rows cross as JSON lists whose first
element is the row kind ("+I", "-U", "+U", "-D"). Nothing here imports lakestore.

    from tests.oracle.flink_driver import flink_oracle
    flink = flink_oracle()                   # skips (or fails under LAKESTORE_REQUIRE_ALL=1)
    flink.use_warehouse(wh)                  # catalog `p` in both environments
    flink.sql("CREATE TABLE p.db.t (...) WITH (...)")
    job = flink.submit("INSERT INTO p.db.t SELECT ...")   # streaming, returns at once
    flink.wait(job)
    rows = flink.query("SELECT * FROM p.db.t")             # batch
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent.parent
CLI = HERE / "flink_cli.py"
RESPONSE_PREFIX = "@@flink-oracle@@ "
TIMEOUT_S = float(os.environ.get("LAKESTORE_ORACLE_TIMEOUT", "600"))
PAIMON_FLINK_JAR = Path(".jars") / "paimon-2.0.0" / "paimon-flink-2.0-2.0.0.jar"
HADOOP_JARS = (Path(".jars") / "lib" / "hadoop-client-api-3.4.1.jar", Path(".jars") / "lib" / "hadoop-client-runtime-3.4.1.jar")


class FlinkOracleError(RuntimeError):
    """Flink raised; the message carries its exception and the Python traceback."""


def flink_python() -> Path:
    return Path(os.environ.get("LAKESTORE_FLINK_PYTHON", REPO_ROOT / ".venv-flink" / "bin" / "python"))


def flink_jars() -> list[Path]:
    return [REPO_ROOT / j for j in (PAIMON_FLINK_JAR, *HADOOP_JARS)]


def flink_unavailable_reason() -> str | None:
    if not flink_python().exists():
        return f"Flink venv missing ({flink_python()}); run scripts/install_flink.sh"
    if shutil.which("java") is None:
        return "java is not on PATH"
    missing = [str(j) for j in flink_jars() if not j.exists()]
    if missing:
        return f"Paimon's Flink connector or Hadoop jars missing ({', '.join(missing)}); run scripts/install_jars.sh"
    return None


class FlinkOracle:
    """A running flink_cli.py; ``request`` is thread-safe and raises ``FlinkOracleError``."""

    def __init__(self, config: Mapping[str, str] | None = None) -> None:
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        self._tmp = tempfile.mkdtemp(prefix="flink-oracle-")
        env["TMPDIR"] = self._tmp
        env["FLINK_LOG_DIR"] = self._tmp  # the JVM's log (PyFlink writes it into its package otherwise)
        self.stderr_path = Path(self._tmp) / "stderr.log"
        self._stderr = open(self.stderr_path, "wb")  # noqa: SIM115 - closed in close()
        self._proc = subprocess.Popen(
            [str(flink_python()), str(CLI)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            env=env,
            cwd=self._tmp,
            start_new_session=True,
        )
        self._lock = threading.Lock()
        self.warehouse: str | None = None
        self._response()  # the "ready" line
        settings = {"io.tmp.dirs": self._tmp, **(config or {})}
        self.start_seconds = self.request("start", jars=[str(j) for j in flink_jars()], config=settings)["seconds"]

    def _response(self) -> dict[str, Any]:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            if line.startswith(RESPONSE_PREFIX):
                return json.loads(line[len(RESPONSE_PREFIX) :])
        self._stderr.flush()
        raise FlinkOracleError(f"the Flink oracle exited (code {self._proc.poll()}):\n{self.stderr_tail()}")

    def stderr_tail(self, chars: int = 4000) -> str:
        """The end of the CLI's stderr and of the JVM's log."""
        self._stderr.flush()
        logs = [self.stderr_path, *sorted(Path(self._tmp).glob("flink-*.log"))]
        return "\n".join(f"== {p.name}\n{p.read_text(errors='replace')[-chars:]}" for p in logs if p.exists())

    def request(self, op: str, **fields: Any) -> dict[str, Any]:
        with self._lock:
            assert self._proc.stdin is not None
            self._proc.stdin.write(json.dumps({"op": op, **fields}, default=str) + "\n")
            self._proc.stdin.flush()
            result = self._response()
        if not result.pop("ok"):
            raise FlinkOracleError(f"{op}: {result['error']}\n{result.get('traceback', '')}")
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
    def use_warehouse(self, warehouse: Any) -> None:
        """(Re)creates catalog ``p`` on ``warehouse`` in both environments and makes it current."""
        uri = "file:" + str(Path(warehouse).resolve())
        self.sql(
            "USE CATALOG default_catalog",
            "DROP CATALOG IF EXISTS p",
            f"CREATE CATALOG p WITH ('type'='paimon', 'warehouse'='{uri}')",
            "USE CATALOG p",
        )
        self.warehouse = str(warehouse)

    def sql(self, *statements: str, mode: str = "both") -> None:
        """DDL in both environments (``mode="stream"``/``"batch"``: one)."""
        self.request("sql", statements=list(statements), mode=mode)

    def submit(self, *statements: str) -> str:
        """A streaming job of one INSERT (several: one statement set), not waited for."""
        return self.request("submit", statements=list(statements))["job"]

    def status(self, job: str) -> str:
        return self.request("job", job=job)["status"]

    def wait(self, job: str, timeout: float = 300) -> str:
        return self.request("wait", job=job, timeout=timeout)["status"]

    def cancel(self, job: str) -> None:
        self.request("cancel", job=job)

    def query(self, query: str) -> list[list[Any]]:
        """A bounded SELECT in batch mode: [[row kind, values...], ...]."""
        return self.request("query", query=query)["rows"]

    def collect(self, query: str) -> Collector:
        """A streaming SELECT, collected until ``Collector.close``."""
        return Collector(self, self.request("collect", query=query)["collect"])


class Collector:
    def __init__(self, oracle: FlinkOracle, collect_id: str) -> None:
        self.oracle = oracle
        self.id = collect_id
        self.rows: list[list[Any]] = []

    def poll(self) -> list[list[Any]]:
        """The rows that arrived since the last poll (also appended to ``rows``)."""
        new = self.oracle.request("poll", collect=self.id, offset=len(self.rows))["rows"]
        self.rows.extend(new)
        return new

    def poll_until(self, done: Any, timeout: float = 120, interval: float = 0.5) -> list[list[Any]]:
        """Polls until ``done(rows)`` holds; returns all rows (raises TimeoutError)."""
        deadline = time.monotonic() + timeout
        while True:
            self.poll()
            if done(self.rows):
                return self.rows
            if time.monotonic() > deadline:
                raise TimeoutError(f"Flink's streaming read did not get there in {timeout} s: {len(self.rows)} rows")
            time.sleep(interval)

    def close(self) -> None:
        self.oracle.request("cancel", collect=self.id)


_oracle: FlinkOracle | None = None


def flink_oracle() -> FlinkOracle:
    """The session's Flink. Skips the test when it cannot run here, unless
    ``LAKESTORE_REQUIRE_ALL=1`` (CI), where a missing Flink fails the test."""
    global _oracle
    if _oracle is None:
        reason = flink_unavailable_reason()
        if reason is not None:
            if os.environ.get("LAKESTORE_REQUIRE_ALL") == "1":
                pytest.fail(f"LAKESTORE_REQUIRE_ALL=1 but {reason}")
            pytest.skip(reason)
        _oracle = FlinkOracle()
        atexit.register(_oracle.close)
    return _oracle


def rows_by_key(rows: Sequence[Sequence[Any]], key_width: int = 1) -> dict[tuple[Any, ...], tuple[Any, ...]]:
    """Batch rows ([kind, values...], all +I) as {key: values}."""
    return {tuple(r[1 : 1 + key_width]): tuple(r[1:]) for r in rows}
