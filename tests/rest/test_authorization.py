"""The authorization matrix of ``lakestore serve``: each principal x endpoint x resource is
allowed exactly when its grants say so; a denied request answers the protocol's error body
(401 without a valid token, 403 without the grant) and changes nothing in the warehouse.
Tokens appear in no log and not in the auth database; revoked tokens stop working at once."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pytest

import lakestore
from lakestore.rest.auth import AuthStore
from tests.rest.clients import pypaimon
from tests.rest.server import Server, start_server, warehouse_state

ALL = frozenset({"admin", "reader", "writer", "dbadmin", "other"})


@dataclass(frozen=True)
class Case:
    name: str
    method: str
    path: str
    allowed: frozenset[str]  # principals whose grants allow it
    body: Any = None


def _cases() -> list[Case]:
    t = "/databases/sec/tables/t"
    sees_sec = frozenset({"admin", "reader", "writer", "dbadmin"})
    read_t = frozenset({"admin", "reader", "writer", "dbadmin"})
    write_t = frozenset({"admin", "writer", "dbadmin"})
    admin_t = frozenset({"admin", "dbadmin"})
    snapshot = {"instant": {"type": "snapshot", "snapshotId": 1}}
    return [
        Case("config", "GET", "/v1/config", ALL),
        Case("list databases", "GET", "/databases", ALL),
        Case("create database", "POST", "/databases", frozenset({"admin"}), {"name": "made"}),
        Case("get database", "GET", "/databases/sec", sees_sec),
        Case("alter database", "POST", "/databases/sec", admin_t, {"removals": [], "updates": {"k": "v"}}),
        Case("drop database", "DELETE", "/databases/sec", admin_t),
        Case("list tables", "GET", "/databases/sec/tables", sees_sec),
        Case("table details", "GET", "/databases/sec/table-details", sees_sec),
        Case("list views", "GET", "/databases/sec/views", sees_sec),
        Case("get function", "GET", "/databases/sec/functions/f", sees_sec),
        Case("create table", "POST", "/databases/sec/tables", admin_t, "create"),
        Case("get table", "GET", t, read_t),
        Case("alter table", "POST", t, admin_t, {"changes": [{"action": "setOption", "key": "snapshot.num-retained.min", "value": "5"}]}),
        Case("drop table", "DELETE", t, admin_t),
        Case(
            "rename table",
            "POST",
            "/tables/rename",
            admin_t,
            {"source": {"database": "sec", "object": "t"}, "destination": {"database": "sec", "object": "t2"}},
        ),
        Case("commit", "POST", t + "/commit", write_t, "commit"),
        Case("rollback", "POST", t + "/rollback", write_t, snapshot),
        Case("token", "GET", t + "/token", read_t),
        Case("query auth", "POST", t + "/auth", read_t, {"select": None}),
        Case("latest snapshot", "GET", t + "/snapshot", read_t),
        Case("snapshot", "GET", t + "/snapshots/1", read_t),
        Case("snapshots", "GET", t + "/snapshots", read_t),
        Case("partitions", "GET", t + "/partitions", read_t),
        Case("create partitions", "POST", t + "/partitions", write_t, {"partitionSpecs": []}),
        Case("drop partitions", "POST", t + "/partitions/drop", write_t, {"partitionSpecs": [{"dt": "x"}]}),
        Case("tags", "GET", t + "/tags", read_t),
        Case("get tag", "GET", t + "/tags/v1", read_t),
        Case("create tag", "POST", t + "/tags", write_t, {"tagName": "v2"}),
        Case("delete tag", "DELETE", t + "/tags/v1", write_t),
        Case("branches", "GET", t + "/branches", read_t),
        Case("create branch", "POST", t + "/branches", write_t, {"branch": "b2"}),
        Case("drop branch", "DELETE", t + "/branches/b1", write_t),
        Case("fast-forward", "POST", t + "/branches/b1/forward", write_t, {}),
    ]


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, dict[str, str], Callable[[], dict[str, Any]]]]:
    server = start_server(tmp_path_factory.mktemp("rest-auth"))
    tokens = {
        "admin": server.admin_token,
        "reader": server.principal("reader", ("read", "sec")),
        "writer": server.principal("writer", ("write", "sec.t")),
        "dbadmin": server.principal("dbadmin", ("admin", "sec")),
        "other": server.principal("other", ("admin", "elsewhere")),
    }
    catalog = lakestore.Catalog(str(server.warehouse))
    schema = pa.schema([("dt", pa.string()), ("id", pa.int64())])

    def reset() -> dict[str, Any]:
        """The resources every case expects (re-made after an allowed request changed them)."""
        catalog.create_database("sec", exist_ok=True)
        catalog.create_database("elsewhere", exist_ok=True)
        catalog.drop_table("sec.t2", missing_ok=True)
        catalog.drop_table("sec.made_here", missing_ok=True)
        catalog.drop_database("made", cascade=True, missing_ok=True)
        table = catalog.create_table("sec.t", schema=schema, partition_keys=["dt"], exist_ok=True)
        if table.latest_snapshot() is None:
            table.write_arrow(pa.table({"dt": ["a"], "id": pa.array([1], pa.int64())}))
        if "v1" not in [tag.name for tag in table.manage.tags()]:
            table.manage.create_tag("v1", 1)
        for branch in ("b2",):
            if branch in table.manage.branches():
                table.manage.delete_branch(branch)
        if "b1" not in table.manage.branches():
            table.manage.create_branch("b1", tag="v1")
        snapshot = table.snapshot(1).to_dict()
        meta = server.call("GET", "/databases/sec/tables/t", tokens["admin"])[1]
        return {
            "commit": {"tableId": meta["id"], "snapshot": snapshot, "baseSnapshotUuid": None, "statistics": []},
            "create": {"identifier": {"database": "sec", "object": "made_here"}, "schema": meta["schema"]},
        }

    yield server, tokens, reset
    server.stop()


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c.name)
def test_every_principal_gets_exactly_its_grants(setup, case: Case):
    server, tokens, reset = setup
    callers: list[tuple[str, str | None]] = [("no token", None), ("bad token", "lks_0_bad"), *sorted(tokens.items())]
    for who, token in callers:
        bodies = reset()
        body = bodies.get(case.body, case.body) if isinstance(case.body, str) else case.body
        before = warehouse_state(server.warehouse)
        status, answer = server.call(case.method, case.path, token, body)
        if who in case.allowed:
            assert status not in (401, 403), f"{who} was refused {case.name}: {answer}"
            assert status < 500 or status == 501, f"{case.name} by {who}: {status} {answer}"
            continue
        expected = 401 if token not in tokens.values() else 403
        assert status == expected, f"{who} {case.name}: {status} {answer}"
        assert answer["code"] == expected and answer["message"], answer
        assert warehouse_state(server.warehouse) == before, f"a refused {case.name} by {who} changed the warehouse"


def test_listings_show_only_what_is_granted(setup):
    server, tokens, reset = setup
    reset()
    lakestore.Catalog(str(server.warehouse)).create_table("sec.hidden", schema=pa.schema([("x", pa.int64())]), exist_ok=True)
    databases = {who: server.call("GET", "/databases", tok)[1]["databases"] for who, tok in tokens.items()}
    assert databases == {"admin": ["elsewhere", "sec"], "reader": ["sec"], "writer": ["sec"], "dbadmin": ["sec"], "other": ["elsewhere"]}
    assert server.call("GET", "/databases/sec/tables", tokens["reader"])[1]["tables"] == ["hidden", "t"]
    assert server.call("GET", "/databases/sec/tables", tokens["writer"])[1]["tables"] == ["t"]  # its one table
    assert server.call("GET", "/databases/sec/tables/hidden", tokens["writer"])[0] == 403


def test_tokens_are_revocable_and_never_stored_or_logged(setup):
    server, tokens, reset = setup
    reset()
    token = server.principal("temp", ("read", "sec"))
    assert server.call("GET", "/databases/sec/tables/t", token)[0] == 200
    listed = server.admin("list")
    token_id = token.split("_")[1]
    assert token_id in listed and token not in listed
    server.admin("revoke-token", token_id)
    status, answer = server.call("GET", "/databases/sec/tables/t", token)
    assert status == 401 and answer["code"] == 401
    # grants change at once too
    store = AuthStore(str(server.warehouse / ".lakestore-auth.sqlite"))
    store.revoke("reader", "sec")
    assert server.call("GET", "/databases/sec/tables/t", tokens["reader"])[0] == 403
    store.grant("reader", "read", "sec")
    store.close()
    assert server.call("GET", "/databases/sec/tables/t", tokens["reader"])[0] == 200
    stored = b"".join(p.read_bytes() for p in server.warehouse.glob(".lakestore-auth.sqlite*"))
    log = server.log.read_bytes()
    for secret in [*tokens.values(), token]:
        assert secret.encode() not in stored
        assert secret.encode() not in log
        assert secret.split("_", 2)[2].encode() not in stored


def test_pypaimon_is_refused_without_the_grant(setup):
    server, tokens, reset = setup
    reset()
    before = warehouse_state(server.warehouse)
    results = pypaimon(
        server.catalog_options(tokens["reader"]),
        {"op": "read", "identifier": "sec.t"},
        {
            "op": "write",
            "identifier": "sec.t",
            "rows": {"dt": ["b"], "id": [2]},
            "table_options": {"commit.max-retries": "0"},
            "expect_error": True,
        },
        {"op": "create_table", "identifier": "sec.nope", "fields": [["x", "int64"]], "expect_error": True},
    )
    assert results[0]["ok"] == {"dt": ["a"], "id": [1]}
    assert results[1]["error"] == "RuntimeError"  # its commit was refused (403), retries disabled
    assert results[2]["error"] == "ForbiddenException"
    after = warehouse_state(server.warehouse)
    # the refused commit published nothing: its data and manifest files stay unreferenced
    assert {k for k in after if "/snapshot/" in k or "/schema/" in k} == {k for k in before if "/snapshot/" in k or "/schema/" in k}
    assert lakestore.Catalog(str(server.warehouse)).get_table("sec.t").to_arrow().num_rows == 1
