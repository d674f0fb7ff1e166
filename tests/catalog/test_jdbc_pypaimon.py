"""lakestore's embedded SQLite JDBC catalog shared with pypaimon 2.1's JDBC catalog (its own
venv, tests/catalog/pypaimon_jdbc.py): pypaimon lists and reads what lakestore registered and
wrote, lakestore lists and reads the table pypaimon created."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pyarrow as pa
import pytest

import lakestore
from tests.oracle.driver import oracle_available, oracle_python

pytestmark = pytest.mark.oracle

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


def test_pypaimon_jdbc_catalog_shares_lakestores(tmp_path: Path):
    if not oracle_available():
        if os.environ.get("LAKESTORE_REQUIRE_ALL") == "1":
            pytest.fail("LAKESTORE_REQUIRE_ALL=1 but the pypaimon oracle venv (.venv-oracle) is missing")
        pytest.skip("the pypaimon oracle venv (.venv-oracle) is missing")
    wh = str(tmp_path / "wh")
    catalog = lakestore.Catalog(wh, options={"metastore": "jdbc"})
    catalog.create_database("db")
    catalog.create_database("rows_only")
    table = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    table.write_arrow(pa.table({"id": [1, 2], "v": ["a", "b"]}, schema=SCHEMA))
    table.write_arrow(pa.table({"id": [2], "v": ["B"]}, schema=SCHEMA))

    script = Path(__file__).with_name("pypaimon_jdbc.py")
    done = subprocess.run(
        [str(oracle_python()), str(script), wh, catalog.options["uri"]], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-4000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["databases"] == ["db", "rows_only"] and seen["tables"] == ["t"]
    assert sorted(seen["rows"], key=lambda r: r["id"]) == [{"id": 1, "v": "a"}, {"id": 2, "v": "B"}]
    assert seen["tables_after"] == ["p", "t"]
    assert catalog.list_tables("db") == ["p", "t"]
    assert sorted(catalog.get_table("db.p").to_arrow().to_pylist(), key=lambda r: r["id"]) == [{"id": 7, "v": "p"}, {"id": 8, "v": "q"}]
