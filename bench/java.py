"""Run bench/java_runner.py with the ``.venv-java`` python: Paimon 0.9's Java core over py4j.

The JVM needs Hadoop's client jars (and netty-common for Arrow) on its classpath; they come from
pyspark's jars directory of this (lakestore) environment, as for the Java interoperability tests."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RUNNER = HERE / "java_runner.py"
JVM_ARGS = "--add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED"


def java_python() -> Path:
    return Path(os.environ.get("LAKESTORE_JAVA_ORACLE_PYTHON", HERE.parent / ".venv-java" / "bin" / "python"))


def hadoop_classpath() -> str | None:
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        return None
    jars = Path(spec.origin).parent / "jars"
    patterns = ("hadoop-client-api-*.jar", "hadoop-client-runtime-*.jar", "slf4j-api-*.jar", "netty-common-*.jar")
    found = [next(iter(sorted(jars.glob(p))), None) for p in patterns]
    return ":".join(str(j) for j in found if j is not None) if all(found) else None


class JavaRunError(RuntimeError):
    pass


class Java:
    """The Paimon Java peer; every ``run`` is a fresh process with its own JVM."""

    def __init__(self, python: Path, classpath: str) -> None:
        self.python = python
        self.classpath = classpath
        self._versions: dict[str, str] | None = None

    @classmethod
    def unavailable_reason(cls) -> str | None:
        if not java_python().exists():
            return f"the Paimon Java venv is missing ({java_python().name} under .venv-java)"
        if shutil.which("java") is None:
            return "java is not on PATH"
        if hadoop_classpath() is None:
            return "pyspark's Hadoop client jars are missing"
        return None

    @classmethod
    def find(cls) -> Java | None:
        if cls.unavailable_reason() is not None:
            return None
        return cls(java_python(), hadoop_classpath() or "")

    def run(self, task: str, timeout: float = 3600, **spec: Any) -> dict[str, Any]:
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
            json.dump({"task": task, "spawned_at": time.time(), **spec}, fh, default=str)
            path = fh.name
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)  # the peer must never see lakestore
        env["_PYPAIMON_HADOOP_CLASSPATH"] = self.classpath
        env["_PYPAIMON_JVM_ARGS"] = JVM_ARGS
        workdir = tempfile.mkdtemp(prefix="java-bench-")
        try:
            res = subprocess.run(
                [str(self.python), str(RUNNER), path], capture_output=True, text=True, timeout=timeout, env=env, cwd=workdir
            )
        except subprocess.TimeoutExpired as exc:
            raise JavaRunError(f"java task {task} timed out after {timeout}s") from exc
        finally:
            os.unlink(path)
            shutil.rmtree(workdir, ignore_errors=True)
        lines = [ln for ln in res.stdout.splitlines() if ln.strip()]
        if res.returncode != 0 or not lines:
            raise JavaRunError(f"java task {task} failed (exit {res.returncode}):\n{res.stderr[-4000:]}")
        out: dict[str, Any] = json.loads(lines[-1])
        return out

    def versions(self) -> dict[str, str]:
        if self._versions is None:
            self._versions = self.run("versions", timeout=300)
        return self._versions
