"""Input changelog interop with pypaimon: its streaming reader reads lakestore's changelog
files, and lakestore reads the changelog pypaimon writes."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

import lakestore
from tests.oracle.driver import CLI, oracle_available, oracle_python, oracle_write

pytestmark = [pytest.mark.oracle, pytest.mark.slow, pytest.mark.skipif(not oracle_available(), reason="oracle venv missing")]

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.int64()), ("op", pa.string())])


def test_pypaimon_streams_lakestore_input_changelog(tmp_path: Path) -> None:
    catalog = lakestore.Catalog(str(tmp_path / "wh"))
    catalog.create_database("db")
    table = catalog.create_table(
        "db.t", schema=SCHEMA, primary_keys=["id"], options={"bucket": "1", "changelog-producer": "input", "rowkind.field": "op"}
    )
    table.write_arrow(pa.table({"id": [1, 2, 3], "v": [1, 2, 3], "op": ["+I"] * 3}, schema=SCHEMA))
    out = tmp_path / "stream.arrow"
    proc = subprocess.Popen(
        [
            str(oracle_python()),
            str(CLI),
            "streaming-read",
            "--table-path",
            table.path,
            "--out",
            str(out),
            "--max-polls",
            "10",
            "--idle-seconds",
            "12",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(6)  # the oracle has planned the initial full scan by now
        table.write_arrow(pa.table({"id": [2, 3, 4], "v": [20, 0, 4], "op": ["+U", "-D", "+I"]}, schema=SCHEMA))
        stdout, stderr = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stderr[-2000:]
    rows = ipc.open_file(str(out)).read_all().to_pylist()
    initial = sorted((r["id"], r["v"]) for r in rows[:3])
    assert initial == [(1, 1), (2, 2), (3, 3)]
    later = [(r.get("_row_kind"), r["id"], r["v"]) for r in rows[3:]]
    expected = [(r["_row_kind"], r["id"], r["v"]) for r in table.read_changes(from_snapshot_id=1).to_pylist()]
    assert sorted(x[1:] for x in later) == sorted(x[1:] for x in expected)
    if all(k is not None for k, _, _ in later):
        assert sorted(later) == sorted(expected)


def test_lakestore_reads_pypaimon_input_changelog(tmp_path: Path) -> None:
    warehouse = tmp_path / "wh"
    options = {"bucket": "1", "changelog-producer": "input"}
    oracle_write(
        warehouse, "db.t", pa.table({"id": [1, 2], "v": [1, 2], "op": ["+I", "+I"]}, schema=SCHEMA), primary_keys=("id",), options=options
    )
    oracle_write(
        warehouse, "db.t", pa.table({"id": [2, 5], "v": [20, 5], "op": ["+I", "+I"]}, schema=SCHEMA), primary_keys=("id",), options=options
    )
    table = lakestore.Catalog(str(warehouse)).get_table("db.t")
    if table.latest_snapshot().changelog_manifest_list is None:
        pytest.skip("not applicable: pypaimon 2.1.0 writes no changelog files for changelog-producer=input")
    changes = [(r["_row_kind"], r["id"], r["v"]) for r in table.read_changes(from_snapshot_id=0, columns=["id", "v"]).to_pylist()]
    assert changes == [("+I", 1, 1), ("+I", 2, 2), ("+I", 2, 20), ("+I", 5, 5)]
