"""Smoke tests of the headline workload (W9) and the scale benchmark (bench.sf1) at tiny sizes.

They run ``python -m ...`` in a subprocess from the project root, as tests/bench/test_bench_quick.py
does (no `import bench` here: tests/ is on sys.path and must not shadow bench/)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _python(code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_headline_data_has_a_string_that_differs_on_every_row() -> None:
    out = _python(
        "import json, pyarrow as pa, pyarrow.compute as pc\n"
        "from bench import data\n"
        "cs = data.headline_commits(0.01)\n"
        "t = pa.concat_tables(cs)\n"
        "print(json.dumps([t.num_rows, pc.count_distinct(t['name']).as_py(), pc.count_distinct(t['id']).as_py(),"
        " pc.count_distinct(t['dt']).as_py(), len(cs), t.num_columns]))\n"
    )
    rows, names, keys, partitions, commits, columns = json.loads(out.strip().splitlines()[-1])
    assert (rows, names, keys, partitions, commits, columns) == (10_000, 10_000, 5_500, 3, 4, 6)


@pytest.mark.slow
def test_headline_workload_fresh_processes(tmp_path: Path) -> None:
    report = tmp_path / "REPORT.md"
    cmd = [sys.executable, "-m", "bench.run", "--quick", "--only", "9", "--scale", "0.002", "--slow-reps", "1", "--no-peers"]
    cmd += ["--report", str(report), "--workdir", str(tmp_path / "work")]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    section = report.read_text().split("## W9:")[1]
    assert "Skipped" not in section, section
    for step in ("write 4 commits, 1st run in process", "merge-on-read, 1st run in process", "write 4 commits, 2nd run (warm)"):
        assert f"| {step} | lakestore |" in section
        assert f"| {step} | pyarrow (floor) |" in section
    # the merge really merged: 1,100 keys of 2,000 upserted rows
    assert "read 1,100 rows" in section
    assert "load average after the workload" in section


def test_process_tree_rss_and_markdown(tmp_path: Path) -> None:
    out = _python(
        "import os, argparse, json\n"
        "from pathlib import Path\n"
        "from bench import sf1\n"
        "rss = sf1.tree_rss_kib(os.getpid())\n"
        "with sf1.RssSampler(0.01) as s:\n"
        "    blob = bytearray(64 << 20)\n"
        "    import time; t = time.process_time()\n"
        "    while time.process_time() - t < 0.3: pass\n"
        "    time.sleep(0.1)\n"
        "stage = sf1._stage('write', 0.0, 1e12, 10, s)\n"
        "args = sf1.parse_args(['--scale-factor', '0.01', '--days', '2'])\n"
        "old = '# r\\n\\n## generate\\n\\nkept section\\n\\n## lineitem\\n\\nstale\\n'\n"
        "md = sf1.markdown(args, {'lineitem': {'stages': [stage], 'process_seconds': 1.0, 'process_peak_rss_kib': stage['peak_rss_kib'],"
        " 'facts': {'rows written': 10}, 'load_before': [0.5, 0.4, 0.3], 'load_after': [0.6, 0.5, 0.4]}}, old)\n"
        "print(json.dumps([rss, stage['peak_rss_kib'], md, stage['cpu_s']]))\n"
    )
    rss, peak, md, cpu = json.loads(out.strip().splitlines()[-1])
    assert cpu >= 0.2  # the 0.3 s busy loop, to the sampling interval
    assert rss > 0
    assert peak >= rss + 60 * 1024  # the 64 MiB buffer was seen by the sampler
    assert "| write | " in md and "before 0.50 / 0.40 / 0.30, after 0.60 / 0.50 / 0.40" in md
    assert "rows written: 10" in md
    # a stage not run this time keeps its section from the previous report; the one run is replaced
    assert "kept section" in md and "stale" not in md
    assert md.index("## generate") < md.index("## lineitem")


@pytest.mark.slow
def test_sf1_generate_stage_tiny(tmp_path: Path) -> None:
    report = tmp_path / "REPORT-sf1.md"
    cmd = [sys.executable, "-m", "bench.sf1", "--scale-factor", "0.001", "--stages", "generate", "--workdir", str(tmp_path / "w")]
    proc = subprocess.run(cmd + ["--report", str(report)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-2000:]
    text = report.read_text()
    assert "## generate" in text and "dbgen + fates" in text
    assert "lineitem 6," in text  # about 6,000 lineitem rows at scale factor 0.001
