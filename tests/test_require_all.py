"""``LAKESTORE_REQUIRE_ALL=1`` (set by CI): a test skipped for its environment fails, one skipped
as ``not applicable`` stays skipped; without the variable both skip."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

SAMPLE = """
import pytest

def test_environmental():
    pytest.skip("java is not installed")

def test_not_applicable():
    pytest.skip("not applicable: append tables have no merge engine")

@pytest.mark.skipif(True, reason="oracle venv missing")
def test_marked():
    pass

def test_runs():
    assert True
"""


def _run(tmp_path: Path, require_all: bool) -> tuple[int, str]:
    shutil.copyfile(Path(__file__).with_name("conftest.py"), tmp_path / "conftest.py")
    (tmp_path / "test_sample.py").write_text(SAMPLE)
    env = {k: v for k, v in os.environ.items() if k != "LAKESTORE_REQUIRE_ALL"}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)  # the suite's conftest imports tests.*
    if require_all:
        env["LAKESTORE_REQUIRE_ALL"] = "1"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", os.devnull, str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    return result.returncode, result.stdout.strip().splitlines()[-1]


def test_environment_skips_fail_under_require_all(tmp_path):
    code, summary = _run(tmp_path, require_all=True)
    # the call-time skip fails; the skipif mark (a setup-time skip) is reported as an error
    assert code == 1 and "1 failed" in summary and "1 error" in summary and "1 passed" in summary and "1 skipped" in summary, summary


def test_environment_skips_skip_by_default(tmp_path):
    code, summary = _run(tmp_path, require_all=False)
    assert code == 0 and "1 passed" in summary and "3 skipped" in summary and "failed" not in summary, summary
