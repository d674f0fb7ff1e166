"""schemathesis fuzzes every operation of ``lakestore serve``'s OpenAPI description (the one it
serves at ``/openapi.json``) as an admin, on a warehouse reset before each request: no answer is
a 5xx (but 501 for what the server does not implement), every refusal carries the protocol's
error body, and a refused request (4xx) leaves the warehouse unchanged."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings

import lakestore
from lakestore.rest.openapi import openapi_document
from tests.rest.server import Server, start_server, warehouse_state

schemathesis = pytest.importorskip("schemathesis")

PATH_VALUES = {
    "prefix": ["lakestore"],
    "database": ["fz", "absent", "bad.name"],
    "table": ["t", "absent", "t$branch_b1", "t$branch_none"],
    "version": ["1", "2", "v1", "LATEST", "x"],
    "tag": ["v1", "absent"],
    "branch": ["b1", "absent", "main"],
}
SCHEMA = schemathesis.openapi.from_dict(openapi_document(PATH_VALUES))
OPERATIONS = [(o.method.upper(), o.path) for o in (result.ok() for result in SCHEMA.get_all_operations())]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = start_server(tmp_path_factory.mktemp("rest-fuzz"))
    yield srv
    srv.stop()


def _reset(server: Server) -> None:
    catalog = lakestore.Catalog(str(server.warehouse))
    catalog.create_database("fz", exist_ok=True)
    schema = pa.schema([("dt", pa.string()), ("id", pa.int64())])
    table = catalog.create_table(
        "fz.t", schema=schema, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "1"}, exist_ok=True
    )
    if table.latest_snapshot() is None:
        table.write_arrow(pa.table({"dt": ["a"], "id": pa.array([1], pa.int64())}))
    if "v1" not in [t.name for t in table.manage.tags()]:
        table.manage.create_tag("v1", table.latest_snapshot().id)
    if "b1" not in table.manage.branches():
        table.manage.create_branch("b1", tag="v1")


def test_the_served_description_is_the_fuzzed_one(server: Server):
    assert server.call("GET", "/v1/config", None)[0] == 401  # the protocol needs a token
    with urllib.request.urlopen(f"{server.uri}/openapi.json", timeout=10) as response:  # its description does not
        assert json.loads(response.read())["paths"].keys() == openapi_document()["paths"].keys()
    assert len(OPERATIONS) >= 30


@pytest.mark.parametrize("method,path", OPERATIONS, ids=[f"{m} {p}" for m, p in OPERATIONS])
def test_fuzz_operation(server: Server, method: str, path: str):
    operation = SCHEMA[path][method]
    token = server.admin_token

    @settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(case=operation.as_strategy())
    def run(case) -> None:  # type: ignore[no-untyped-def]
        _reset(server)
        before = warehouse_state(server.warehouse)
        response = case.call(base_url=server.uri, headers={"Authorization": f"Bearer {token}"})
        status = response.status_code
        assert status < 500 or status == 501, f"{case.method} {case.formatted_path} {case.body!r}: {status} {response.text}"
        body = response.json()
        if status >= 400:
            assert body.get("code") == status and body.get("message"), body
            assert warehouse_state(server.warehouse) == before, f"a refused {case.method} {case.formatted_path} changed the warehouse"

    run()
