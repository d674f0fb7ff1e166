"""Smoke test of the Spark peer benchmark (bench.spark_peer) at a tiny size: one group (the
append write), lakestore on this interpreter's pyspark and, where .venv-spark40 and the
connector jar are present, paimon-spark; the harness checks both returned the same rows.

It runs ``python -m bench.spark_peer`` in a subprocess from the project root, as
tests/bench/test_bench_quick.py does (no `import bench` here: tests/ is on sys.path and must not
shadow bench/)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPARK40 = ROOT / ".venv-spark40" / "bin" / "python"
JAR = Path(os.environ.get("LAKESTORE_PAIMON_SPARK_JAR", ROOT.parent / "shared" / "jars" / "paimon-spark-4.0_2.13-2.0.0.jar"))


@pytest.mark.spark
def test_spark_peer_smoke(tmp_path: Path) -> None:
    peer = SPARK40.exists() and JAR.exists()
    systems = "paimon-spark,lakestore 4.3" if peer else "lakestore 4.3"
    report = tmp_path / "REPORT-spark.md"
    report.write_text("# kept\n\nhand-written text stays\n")
    cmd = [
        sys.executable, "-m", "bench.spark_peer",
        "--rows", "2000", "--reps", "1", "--groups", "append", "--only", systems,
        "--lakestore-commit", "worktree", "--workdir", str(tmp_path / "work"),
        "--report", str(report), "--report-section", "smoke",
    ]  # fmt: skip
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    text = report.read_text()
    assert text.startswith("# kept\n\nhand-written text stays\n")
    assert "<!-- spark-peer results smoke: begin -->" in text and "<!-- spark-peer results smoke: end -->" in text
    row = next(line for line in text.splitlines() if line.startswith("| e. append write"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert float(cells[3]) > 0, row  # lakestore 4.3 seconds
    if peer:
        assert float(cells[2]) > 0 and cells[5] in ("met", "missed"), row
    assert "MISMATCH" not in text and "every system returned the same count" in text
