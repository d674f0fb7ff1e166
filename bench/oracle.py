"""Run bench/oracle_runner.py with the oracle venv's python (pypaimon and its Rust core)."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from bench.common import Measurement

HERE = Path(__file__).resolve().parent
RUNNER = HERE / "oracle_runner.py"


def oracle_python() -> Path:
    return Path(os.environ.get("LAKESTORE_ORACLE_PYTHON", HERE.parent / ".venv-oracle" / "bin" / "python"))


class OracleRunError(RuntimeError):
    pass


class Oracle:
    def __init__(self, python: Path) -> None:
        self.python = python
        self._versions: dict[str, str] | None = None

    @classmethod
    def find(cls) -> Oracle | None:
        python = oracle_python()
        if not python.exists():
            return None
        oracle = cls(python)
        try:
            oracle.versions()
        except OracleRunError:
            return None
        return oracle

    def run(self, task: str, timeout: float = 3600, **spec: Any) -> dict[str, Any]:
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
            json.dump({"task": task, **spec}, fh, default=str)
            path = fh.name
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)  # the oracle must never see lakestore
        try:
            res = subprocess.run(
                [str(self.python), str(RUNNER), path], capture_output=True, text=True, timeout=timeout, env=env, cwd=str(HERE)
            )
        except subprocess.TimeoutExpired as exc:
            raise OracleRunError(f"oracle task {task} timed out after {timeout}s") from exc
        finally:
            os.unlink(path)
        lines = [ln for ln in res.stdout.splitlines() if ln.strip()]
        if res.returncode != 0 or not lines:
            raise OracleRunError(f"oracle task {task} failed (exit {res.returncode}):\n{res.stderr[-4000:]}")
        return json.loads(lines[-1])

    def versions(self) -> dict[str, str]:
        if self._versions is None:
            self._versions = self.run("versions", timeout=300)
        return self._versions

    def measure(self, label: str, task: str, **spec: Any) -> tuple[Measurement | None, dict[str, Any]]:
        """Run a timed task; on failure return (None, {"error": ...}) so one peer cannot sink a run."""
        try:
            out = self.run(task, **spec)
        except OracleRunError as exc:
            return None, {"error": str(exc).splitlines()[0] + " " + str(exc).splitlines()[-1]}
        return Measurement(label, out["times"]), out
