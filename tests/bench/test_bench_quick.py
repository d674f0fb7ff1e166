"""Smoke test of the benchmark suite: tiny sizes, workloads 1, 2 and 5, report written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

# No `import bench` here: tests/ is on sys.path during collection and must not shadow bench/.
ROOT = Path(__file__).resolve().parents[2]
ORACLE_PYTHON = ROOT / ".venv-oracle" / "bin" / "python"


@pytest.mark.slow
def test_quick_suite_writes_report(tmp_path: Path) -> None:
    report = tmp_path / "REPORT.md"
    cmd = [
        sys.executable,
        "-m",
        "bench.run",
        "--quick",
        "--only",
        "1,2,5",
        "--scale",
        "0.005",
        "--reps",
        "1",
        "--slow-reps",
        "1",
        "--report",
        str(report),
        "--workdir",
        str(tmp_path / "work"),
    ]
    if not ORACLE_PYTHON.exists():
        cmd.append("--no-peers")
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "== Targets" in proc.stdout
    text = report.read_text()
    assert "## Machine" in text and "pyarrow (lakestore)" in text
    for n in (1, 2, 5):
        section = text.split(f"## W{n}:")[1].split("\n## ")[0]
        assert "Skipped" not in section, section
        assert "| lakestore |" in section
    # every lakestore workload produced a measured target row
    assert "W1 lakestore time / pyarrow parquet write time" in text
    assert "W2 lakestore merge read speed" in text
    assert "W5 commit" in text
