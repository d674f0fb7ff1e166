"""Real clients of Paimon's REST catalog protocol against ``lakestore serve``: pypaimon 2.1's
``RESTCatalog`` (its own venv) and Paimon 2.0.0 Java's ``RESTCatalog`` (the Java oracle, opened
with ``metastore=rest``) create tables, write, commit through the server's commit endpoint and
read; lakestore reads the same warehouse directly and agrees row for row."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

import lakestore
from tests.oracle.flink_driver import flink_oracle
from tests.oracle.java_driver import java_oracle
from tests.rest.clients import pypaimon
from tests.rest.server import Server, start_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = start_server(tmp_path_factory.mktemp("rest-clients"))
    yield srv
    srv.stop()


def _rows(table: pa.Table | dict, *keys: str) -> list[tuple]:
    data = table.to_pydict() if isinstance(table, pa.Table) else table
    return sorted(zip(*(data[k] for k in keys), strict=True))


def test_pypaimon_creates_writes_commits_and_reads(server: Server):
    opts = server.catalog_options(server.admin_token)
    fields = [["dt", "string"], ["id", "int64"], ["v", "string"]]
    results = pypaimon(
        opts,
        {"op": "create_database", "name": "py"},
        {
            "op": "create_table",
            "identifier": "py.orders",
            "fields": fields,
            "primary_keys": ["dt", "id"],
            "partition_keys": ["dt"],
            "options": {"bucket": "2"},
        },
        {"op": "write", "identifier": "py.orders", "rows": {"dt": ["d1", "d1", "d2"], "id": [1, 2, 3], "v": ["a", "b", "c"]}},
        {"op": "write", "identifier": "py.orders", "rows": {"dt": ["d1"], "id": [1], "v": ["a2"]}},  # upsert
        {"op": "create_tag", "identifier": "py.orders", "tag": "t1", "snapshot_id": 1},
        {"op": "list_tags", "identifier": "py.orders"},
        {"op": "read", "identifier": "py.orders"},
        {"op": "list_tables", "database": "py"},
        {"op": "create_table", "identifier": "py.orders", "fields": fields, "expect_error": True},
    )
    assert results[5]["ok"] == ["t1"]
    assert _rows(results[6]["ok"], "dt", "id", "v") == [("d1", 1, "a2"), ("d1", 2, "b"), ("d2", 3, "c")]
    assert results[7]["ok"] == ["orders"]
    assert results[8]["error"] == "TableAlreadyExistException"
    # the server published both snapshots; lakestore reads the warehouse directly and agrees
    table = lakestore.Catalog(str(server.warehouse)).get_table("py.orders")
    assert [s.id for s in table.snapshots()] == [1, 2]
    assert _rows(table.to_arrow(), "dt", "id", "v") == [("d1", 1, "a2"), ("d1", 2, "b"), ("d2", 3, "c")]
    assert _rows(table.to_arrow(tag="t1"), "dt", "id", "v") == [("d1", 1, "a"), ("d1", 2, "b"), ("d2", 3, "c")]
    # schema evolution through the server, then a write with the new column
    results = pypaimon(
        opts,
        {"op": "add_column", "identifier": "py.orders", "name": "note", "type": "STRING"},
        {"op": "write", "identifier": "py.orders", "rows": {"dt": ["d2"], "id": [4], "v": ["d"], "note": ["new"]}},
        {"op": "read", "identifier": "py.orders"},
    )
    assert ("d2", 4, "new") in _rows(results[2]["ok"], "dt", "id", "note")
    table = lakestore.Catalog(str(server.warehouse)).get_table("py.orders")
    assert table.schema.field_names == ["dt", "id", "v", "note"]
    assert table.to_arrow().num_rows == 4


def test_java_rest_catalog_and_pypaimon_share_tables(server: Server):
    java = java_oracle()
    key = f"rest:{server.uri}"
    java.use_catalog(key, server.catalog_options(server.admin_token))
    try:
        schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
        java.create_table(key, "jv.events", schema, primary_keys=["id"], options={"bucket": "1"})
        java.write(key, "jv.events", pa.table({"id": pa.array([1, 2], pa.int64()), "v": ["x", "y"]}))
        # pypaimon writes the Java table through the same server, Java reads both commits
        opts = server.catalog_options(server.admin_token)
        results = pypaimon(
            opts,
            {"op": "write", "identifier": "jv.events", "rows": {"id": [2, 3], "v": ["y2", "z"]}},
            {"op": "read", "identifier": "jv.events"},
        )
        expected = [(1, "x"), (2, "y2"), (3, "z")]
        assert _rows(results[1]["ok"], "id", "v") == expected
        assert _rows(java.read(key, "jv.events"), "id", "v") == expected
        assert _rows(lakestore.Catalog(str(server.warehouse)).get_table("jv.events").to_arrow(), "id", "v") == expected
        # and Java reads a table lakestore wrote directly on the warehouse
        catalog = lakestore.Catalog(str(server.warehouse))
        direct = catalog.create_table("jv.direct", schema=schema, primary_keys=["id"], options={"bucket": "1"})
        direct.write_arrow(pa.table({"id": pa.array([7], pa.int64()), "v": ["seven"]}))
        assert _rows(java.read(key, "jv.direct"), "id", "v") == [(7, "seven")]
        assert sorted(java.catalog(key, "list_tables", database="jv")) == ["direct", "events"]
    finally:
        java.use_catalog(key, {})


def test_commit_endpoint_recognises_retries_and_refuses_stale_bases(server: Server, tmp_path: Path):
    token = server.admin_token
    catalog = lakestore.Catalog(str(server.warehouse))
    catalog.create_database("raw", exist_ok=True)
    table = catalog.create_table("raw.t", schema=pa.schema([("id", pa.int64())]))
    table.write_arrow(pa.table({"id": pa.array([1], pa.int64())}))
    table.write_arrow(pa.table({"id": pa.array([2], pa.int64())}))
    status, meta = server.call("GET", "/databases/raw/tables/t", token)
    assert status == 200 and meta["schema"]["fields"][0]["name"] == "id"
    first, second = table.snapshot(1).to_dict(), table.snapshot(2).to_dict()
    # snapshot 2 exists: re-sending it (a client retrying after a lost answer) is a success
    body = {"tableId": meta["id"], "snapshot": second, "baseSnapshotUuid": first.get("uuid"), "statistics": []}
    assert server.call("POST", "/databases/raw/tables/t/commit", token, body) == (200, {"success": True})
    # a different snapshot 2, or one on a stale base, is refused: the client must retry
    other = dict(second, uuid="00000000-0000-0000-0000-000000000000")
    status, answer = server.call("POST", "/databases/raw/tables/t/commit", token, dict(body, snapshot=other))
    assert (status, answer) == (200, {"success": False})
    stale = dict(second, id=3, uuid="11111111-1111-1111-1111-111111111111")
    assert server.call("POST", "/databases/raw/tables/t/commit", token, dict(body, snapshot=stale))[1] == {"success": False}
    # the next snapshot on the right base lands once; its manifests must exist
    third = dict(second, id=3, uuid="22222222-2222-2222-2222-222222222222")
    base = dict(body, snapshot=third, baseSnapshotUuid=second.get("uuid"))
    assert (
        server.call("POST", "/databases/raw/tables/t/commit", token, dict(base, snapshot=dict(third, deltaManifestList="nope")))[0] == 400
    )
    assert server.call("POST", "/databases/raw/tables/t/commit", token, base) == (200, {"success": True})
    assert server.call("POST", "/databases/raw/tables/t/commit", token, base) == (200, {"success": True})
    assert [s.id for s in catalog.get_table("raw.t").snapshots()] == [1, 2, 3]
    # a wrong table id (dropped and re-created table) and malformed bodies change nothing
    assert server.call("POST", "/databases/raw/tables/t/commit", token, dict(base, tableId="x"))[0] == 404
    status, error = server.call("POST", "/databases/raw/tables/t/commit", token, b"{not json")
    assert status == 400 and error["code"] == 400 and "JSON" in error["message"]
    assert server.call("POST", "/databases/raw/tables/t/commit", token, {"snapshot": {"id": 4}})[0] == 400
    assert [s.id for s in catalog.get_table("raw.t").snapshots()] == [1, 2, 3]
    # snapshots, partitions, tags and branches as the protocol lists them
    status, latest = server.call("GET", "/databases/raw/tables/t/snapshot", token)
    assert status == 200 and latest["snapshot"]["snapshot"]["id"] == 3 and latest["snapshot"]["recordCount"] == 2
    assert server.call("GET", "/databases/raw/tables/t/snapshots/2", token)[1]["id"] == 2
    assert server.call("GET", "/databases/raw/tables/t/snapshots/9", token)[1]["resourceType"] == "SNAPSHOT"
    assert server.call("POST", "/databases/raw/tables/t/tags", token, {"tagName": "v1", "snapshotId": 2})[0] == 200
    assert server.call("GET", "/databases/raw/tables/t/tags/v1", token)[1]["snapshot"]["id"] == 2
    assert server.call("POST", "/databases/raw/tables/t/branches", token, {"branch": "dev", "fromTag": "v1"})[0] == 200
    assert server.call("GET", "/databases/raw/tables/t/branches", token)[1] == {"branches": ["dev"]}
    assert server.call("GET", "/databases/raw/tables/t$branch_dev", token)[0] == 200
    status, rolled = server.call("POST", "/databases/raw/tables/t/rollback", token, {"instant": {"type": "tag", "tagName": "v1"}})
    assert status == 200 and catalog.get_table("raw.t").latest_snapshot().id == 2
    assert server.call("GET", "/databases/nope/tables/t", token)[1]["resourceType"] == "DATABASE"
    assert server.call("GET", "/databases/raw/tables/nope", token)[1]["resourceType"] == "TABLE"


def test_flink_with_paimons_rest_catalog(server: Server):
    flink = flink_oracle()
    token = server.admin_token
    options = ", ".join(f"'{k}'='{v}'" for k, v in {**server.catalog_options(token), "type": "paimon"}.items())
    flink.sql("USE CATALOG default_catalog", "DROP CATALOG IF EXISTS r", f"CREATE CATALOG r WITH ({options})", "USE CATALOG r")
    try:
        flink.sql("CREATE DATABASE IF NOT EXISTS fl", mode="batch")
        flink.sql(
            "CREATE TABLE IF NOT EXISTS r.fl.t (id BIGINT, v STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('bucket'='1')", mode="batch"
        )
        job = flink.submit("INSERT INTO r.fl.t VALUES (1, 'a'), (2, 'b')")
        assert flink.wait(job) == "FINISHED"
        job = flink.submit("INSERT INTO r.fl.t VALUES (2, 'b2')")
        assert flink.wait(job) == "FINISHED"
        rows = sorted(tuple(r[1:]) for r in flink.query("SELECT id, v FROM r.fl.t"))
        assert rows == [(1, "a"), (2, "b2")]
        table = lakestore.Catalog(str(server.warehouse)).get_table("fl.t")
        assert _rows(table.to_arrow(), "id", "v") == [(1, "a"), (2, "b2")]
        assert all(s.uuid for s in table.snapshots())  # Paimon 2.0's commits, published by the server
    finally:
        flink.sql("USE CATALOG default_catalog", "DROP CATALOG IF EXISTS r")
