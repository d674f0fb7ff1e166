"""Drive Apache Paimon 0.9's Java core (tests/oracle/java_cli.py in ``.venv-java``, pypaimon
0.2.0's py4j bridge) from the tests: the legacy oracle, for tables older deployments still write.

One JVM per test session, started on first use and stopped at exit; data crosses as Arrow IPC
files. Nothing here imports pypaimon or lakestore. Reached through
``tests.oracle.java_driver.java_oracle("0.9")``; the current Paimon oracles are in java_driver.py.

    from tests.oracle.java_driver import java_oracle
    java = java_oracle("0.9")                # skips (or fails under LAKESTORE_REQUIRE_ALL=1)
    java.create_table(wh, "db.t", schema, primary_keys=["id"], options={"bucket": "2"})
    java.write(wh, "db.t", data)
    rows = java.read(wh, "db.t", options={"scan.snapshot-id": "1"})
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent.parent
CLI = HERE / "java_cli.py"
RESPONSE_PREFIX = "@@java-oracle@@ "
TIMEOUT_S = float(os.environ.get("LAKESTORE_ORACLE_TIMEOUT", "600"))


class JavaOracleError(RuntimeError):
    """Paimon Java raised; the message carries its exception and the Python traceback."""


def java_python() -> Path:
    return Path(os.environ.get("LAKESTORE_JAVA_ORACLE_PYTHON", REPO_ROOT / ".venv-java" / "bin" / "python"))


def _hadoop_classpath() -> str | None:
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        return None
    jars = Path(spec.origin).parent / "jars"
    wanted = [
        next(iter(sorted(jars.glob(pattern))), None)
        # netty-common: Arrow's StructVector (ROW, MAP columns) needs its IntObjectHashMap.
        for pattern in ("hadoop-client-api-*.jar", "hadoop-client-runtime-*.jar", "slf4j-api-*.jar", "netty-common-*.jar")
    ]
    return ":".join(str(j) for j in wanted) if all(wanted) else None


def java_unavailable_reason() -> str | None:
    if not java_python().exists():
        return f"Paimon Java oracle venv missing ({java_python()}); run scripts/install.sh"
    if shutil.which("java") is None:
        return "java is not on PATH"
    if _hadoop_classpath() is None:
        return "pyspark's Hadoop client jars are missing"
    return None


class JavaOracle09:
    """A running java_cli.py; ``request`` is thread-safe and raises ``JavaOracleError``."""

    def __init__(self) -> None:
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        env["_PYPAIMON_HADOOP_CLASSPATH"] = _hadoop_classpath() or ""
        env["_PYPAIMON_JVM_ARGS"] = "--add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED"
        self._tmp = tempfile.mkdtemp(prefix="java-oracle-")
        self._stderr = open(Path(self._tmp) / "stderr.log", "wb")  # noqa: SIM115 - closed in close()
        self._proc = subprocess.Popen(
            [str(java_python()), str(CLI)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            env=env,
            cwd=self._tmp,
        )
        self._lock = threading.Lock()
        self._counter = 0
        self._response()  # the "ready" line

    def _response(self) -> dict[str, Any]:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            if line.startswith(RESPONSE_PREFIX):
                return json.loads(line[len(RESPONSE_PREFIX) :])
        self._stderr.flush()
        tail = (Path(self._tmp) / "stderr.log").read_text(errors="replace")[-4000:]
        raise JavaOracleError(f"the Java oracle exited (code {self._proc.poll()}):\n{tail}")

    def request(self, op: str, **fields: Any) -> dict[str, Any]:
        with self._lock:
            assert self._proc.stdin is not None
            self._proc.stdin.write(json.dumps({"op": op, **fields}, default=str) + "\n")
            self._proc.stdin.flush()
            result = self._response()
        if not result.pop("ok"):
            raise JavaOracleError(f"{op}: {result['error']}\n{result.get('traceback', '')}")
        return result

    def _path(self, name: str) -> str:
        self._counter += 1
        return str(Path(self._tmp) / f"{self._counter}-{name}.arrow")

    def close(self) -> None:
        if self._proc.poll() is None:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._proc.kill()
        self._stderr.close()
        shutil.rmtree(self._tmp, ignore_errors=True)

    # -- operations ---------------------------------------------------------------------------
    def create_table(
        self,
        warehouse: Any,
        identifier: str,
        schema: pa.Schema,
        *,
        primary_keys: Sequence[str] = (),
        partition_keys: Sequence[str] = (),
        options: Mapping[str, str] | None = None,
    ) -> None:
        path = self._path("schema")
        _write_ipc(schema.empty_table(), path)
        self.request(
            "create_table",
            warehouse=str(warehouse),
            identifier=identifier,
            schema_path=path,
            primary_keys=list(primary_keys),
            partition_keys=list(partition_keys),
            table_options={k: str(v) for k, v in (options or {}).items()},
        )

    def write(
        self, warehouse: Any, identifier: str, data: pa.Table, *, overwrite: Mapping[str, str] | None = None, assigners: int = 1
    ) -> int | None:
        """One batch commit; ``overwrite``: {} for the whole table, or a partition. Dynamic-bucket
        tables: ``assigners`` bucket assigners, as a parallel Paimon job runs them."""
        path = self._path("data")
        _write_ipc(data, path)
        result = self.request(
            "write", warehouse=str(warehouse), identifier=identifier, data_path=path, overwrite=overwrite, assigners=assigners
        )
        return result["snapshot_id"]

    def compact(self, warehouse: Any, identifier: str) -> int | None:
        """A full compaction of every bucket, committed by Paimon Java."""
        return self.request("compact", warehouse=str(warehouse), identifier=identifier)["snapshot_id"]

    def read(
        self, warehouse: Any, identifier: str, *, options: Mapping[str, Any] | None = None, projection: Iterable[str] | None = None
    ) -> pa.Table:
        """Rows as Paimon Java reads them; ``options`` are dynamic options such as
        ``scan.snapshot-id``, ``scan.tag-name`` or ``incremental-between``."""
        path = self._path("out")
        self.request(
            "read",
            warehouse=str(warehouse),
            identifier=identifier,
            out_path=path,
            options={k: str(v) for k, v in (options or {}).items()},
            projection=list(projection) if projection is not None else None,
        )
        return _read_ipc(path)

    def changes(self, warehouse: Any, identifier: str, start: int, end: int) -> pa.Table:
        """Snapshots ``start+1..end`` of the table's ``$audit_log`` (a ``rowkind`` column)."""
        return self.read(warehouse, f"{identifier}$audit_log", options={"incremental-between": f"{start},{end}"})

    def snapshots(self, warehouse: Any, identifier: str) -> list[dict[str, Any]]:
        return self.request("snapshots", warehouse=str(warehouse), identifier=identifier)["snapshots"]

    def create_tag(self, warehouse: Any, identifier: str, tag: str, snapshot_id: int | None = None) -> None:
        self.request("create_tag", warehouse=str(warehouse), identifier=identifier, tag=tag, snapshot_id=snapshot_id)

    def delete_tag(self, warehouse: Any, identifier: str, tag: str) -> None:
        self.request("delete_tag", warehouse=str(warehouse), identifier=identifier, tag=tag)

    def rollback(self, warehouse: Any, identifier: str, *, snapshot_id: int | None = None, tag: str | None = None) -> None:
        self.request("rollback", warehouse=str(warehouse), identifier=identifier, snapshot_id=snapshot_id, tag=tag)

    def expire(self, warehouse: Any, identifier: str, *, retain_min: int, retain_max: int | None = None) -> int:
        return self.request("expire", warehouse=str(warehouse), identifier=identifier, retain_min=retain_min, retain_max=retain_max)[
            "expired"
        ]

    def alter(self, warehouse: Any, identifier: str, changes: list[dict[str, str]]) -> None:
        """``changes``: {"op": "add_column", "name", "type": "INT"|"DOUBLE"|"STRING"...},
        {"op": "drop_column", "name"}, {"op": "rename_column", "name", "new_name"},
        {"op": "set_option", "key", "value"}."""
        self.request("alter", warehouse=str(warehouse), identifier=identifier, changes=changes)

    def create_branch(self, warehouse: Any, identifier: str, branch: str, *, tag: str | None = None) -> None:
        self.request("create_branch", warehouse=str(warehouse), identifier=identifier, branch=branch, tag=tag)


def _write_ipc(table: pa.Table, path: str) -> None:
    with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)


def _read_ipc(path: str) -> pa.Table:
    with pa.memory_map(path) as source:
        return pa.ipc.open_file(source).read_all()


_oracle: JavaOracle09 | None = None


def java09_oracle() -> JavaOracle09:
    """The session's Paimon 0.9 oracle. Skips the test when it cannot run here, unless
    ``LAKESTORE_REQUIRE_ALL=1`` (CI), where a missing oracle fails the test."""
    global _oracle
    if _oracle is None:
        reason = java_unavailable_reason()
        if reason is not None:
            if os.environ.get("LAKESTORE_REQUIRE_ALL") == "1":
                pytest.fail(f"LAKESTORE_REQUIRE_ALL=1 but {reason}")
            pytest.skip(reason)
        _oracle = JavaOracle09()
        atexit.register(_oracle.close)
    return _oracle
