"""The README's "Your own tables" commands run as written, in a fresh directory beside the
project's virtual environment: the table is materialized through PaimonIOManager, compacted and
tagged by the second asset, and the lakestore command line shows the tag and the compacted
files; the definitions file the UI loads validates. (Starting ``dagster dev`` itself is covered by
tests/pipelines/test_e2e_dagster_dev.py.)"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import lakestore

pytestmark = [pytest.mark.dagster, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


def _section_bash_blocks(heading: str) -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = re.search(rf"^## {re.escape(heading)}\n", text, flags=re.M)
    assert start is not None, f"README.md has no section '## {heading}'"
    end = re.search(r"^## ", text[start.end() :], flags=re.M)
    section = text[start.end() :] if end is None else text[start.end() : start.end() + end.start()]
    return re.findall(r"^```bash\n(.*?)^```", section, flags=re.S | re.M)


def test_own_tables_commands_run_as_written(tmp_path):
    (commands,) = _section_bash_blocks("Your own tables")
    (tmp_path / ".venv").symlink_to(Path(sys.prefix))
    env = {k: v for k, v in os.environ.items() if k not in ("DAGSTER_HOME", "LAKESTORE_WAREHOUSE")}
    env["TMPDIR"] = str(tmp_path)
    done = subprocess.run(["bash", "-e", "-c", commands], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "day-2024-01-01" in done.stdout  # lakestore tags
    table = lakestore.Catalog(str(tmp_path / "my_tables" / "warehouse")).get_table("shop.orders")
    assert table.to_arrow().num_rows == 3
    assert [t.name for t in table.manage.tags()] == ["day-2024-01-01"]
    assert {s.commit_kind for s in table.snapshots()} == {"OVERWRITE", "COMPACT"}
    assert all(f.level > 0 for f in table.store.live_files())  # compacted
    validate = subprocess.run(
        [str(tmp_path / ".venv" / "bin" / "dagster"), "definitions", "validate", "-f", "my_tables/definitions.py"],
        cwd=tmp_path,
        env={**env, "DAGSTER_HOME": str(tmp_path / ".dagster_home")},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert validate.returncode == 0, validate.stdout[-3000:] + validate.stderr[-3000:]
