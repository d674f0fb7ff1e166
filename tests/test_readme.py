"""The README's library snippets run as written, twice in a row on the same warehouse (a reader
who runs them again must not hit "already exists")."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def _library_snippets() -> list[str]:
    text = README.read_text()
    section = text.split("## Using lakestore as a library", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def test_library_snippets_run_twice(tmp_path):
    snippets = _library_snippets()
    assert len(snippets) >= 3
    code = "\n".join(snippets).replace('"/tmp/warehouse"', repr(str(tmp_path / "warehouse")))
    for run in range(2):
        namespace: dict = {}
        exec(compile(code, f"README.md (run {run + 1})", "exec"), namespace)  # noqa: S102 - the README's own code
        table = namespace["table"]
        assert table.find_commit("job-1", 7) is not None
        assert table.latest_snapshot() is not None
