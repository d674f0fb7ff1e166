"""The README's pypaimon example of ``lakestore serve`` runs as written in pypaimon's own venv,
against a test server with a token the test issued: the catalog it opens lists the databases
that token's principal may see."""

from __future__ import annotations

import ast
import subprocess
from collections.abc import Iterator

import pytest

import lakestore
from tests._support import readme_python_blocks
from tests.oracle.driver import oracle_python
from tests.rest.clients import require_pypaimon
from tests.rest.server import Server, start_server

README_URI = '"http://127.0.0.1:8181"'
README_TOKEN = '"<token>"'


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = start_server(tmp_path_factory.mktemp("rest-readme"))
    yield srv
    srv.stop()


def test_pypaimon_snippet_lists_the_principals_databases(server: Server):
    require_pypaimon()
    catalog = lakestore.Catalog(str(server.warehouse))
    catalog.create_database("tpch", exist_ok=True)
    catalog.create_database("hidden", exist_ok=True)
    token = server.principal("etl", ("write", "tpch"))  # as the README's serve-admin lines set it up
    (snippet,) = readme_python_blocks("REST catalog server (`lakestore serve`)")
    assert snippet.count(README_URI) == 1 and snippet.count(README_TOKEN) == 1
    code = snippet.replace(README_URI, repr(server.uri)).replace(README_TOKEN, repr(token)) + "print(catalog.list_databases())\n"
    res = subprocess.run([str(oracle_python()), "-c", code], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-4000:]
    assert ast.literal_eval(res.stdout.strip().splitlines()[-1]) == ["tpch"]
