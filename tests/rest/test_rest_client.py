"""lakestore's own REST catalog client (``metastore=rest``, ``lakestore.catalog.rest``) against
``lakestore serve``: databases, tables and schema changes through the server, every commit
through its commit endpoint (concurrent writers each land once), tokens refused as typed
errors; pypaimon reads what lakestore committed through the same server."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pyarrow as pa
import pytest

import lakestore
from lakestore.catalog.rest import RestCatalog, RestCatalogAccessError
from lakestore.errors import CatalogUnreachableError, DatabaseNotFoundError, TableAlreadyExistsError
from lakestore.meta.schema_change import AddColumn, SetOption
from tests.postgres import free_port
from tests.rest.clients import pypaimon
from tests.rest.server import Server, start_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = start_server(tmp_path_factory.mktemp("rest-client"))
    yield srv
    srv.stop()


def _catalog(server: Server, token: str) -> lakestore.Catalog:
    return lakestore.Catalog("lakestore", options={"metastore": "rest", "uri": server.uri, "token": token})


def test_lakestore_client_creates_writes_and_evolves_through_the_server(server: Server):
    catalog = _catalog(server, server.admin_token)
    assert isinstance(catalog, RestCatalog)
    catalog.create_database("cl", exist_ok=True)
    schema = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.float64())])
    table = catalog.create_table("cl.t", schema=schema, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "2"})
    with pytest.raises(TableAlreadyExistsError):
        catalog.create_table("cl.t", schema=schema)
    table.write_arrow(pa.table({"dt": ["a", "a"], "id": [1, 2], "v": [1.0, 2.0]}, schema=schema))
    table.write_arrow(pa.table({"dt": ["a"], "id": [1], "v": [9.0]}, schema=schema))
    assert catalog.list_databases() == ["cl"]
    assert catalog.list_tables("cl") == ["t"]
    assert sorted(catalog.get_table("cl.t").to_arrow()["v"].to_pylist()) == [2.0, 9.0]
    # each commit went through the server: its snapshots carry lakestore's uuids in order
    status, latest = server.call("GET", "/databases/cl/tables/t/snapshot", server.admin_token)
    assert status == 200 and latest["snapshot"]["snapshot"]["id"] == 2
    evolved = catalog.alter_table("cl.t", [AddColumn("note", pa.string()), SetOption("snapshot.num-retained.min", "3")])
    assert evolved.schema.field_names == ["dt", "id", "v", "note"]
    evolved.write_arrow(pa.table({"dt": ["b"], "id": [3], "v": [3.0], "note": ["x"]}))
    read = pypaimon(server.catalog_options(server.admin_token), {"op": "read", "identifier": "cl.t"})[0]["ok"]
    assert sorted(zip(read["id"], read["v"], read["note"], strict=True)) == [(1, 9.0, None), (2, 2.0, None), (3, 3.0, "x")]
    # a branch: created through the server, written through its commit endpoint
    assert server.call("POST", "/databases/cl/tables/t/tags", server.admin_token, {"tagName": "base"})[0] == 200
    assert server.call("POST", "/databases/cl/tables/t/branches", server.admin_token, {"branch": "dev", "fromTag": "base"})[0] == 200
    dev = catalog.get_table("cl.t$branch_dev")
    dev.write_arrow(pa.table({"dt": ["c"], "id": [5], "v": [5.0], "note": ["dev"]}))
    assert dev.to_arrow().num_rows == 4 and catalog.get_table("cl.t").to_arrow().num_rows == 3
    status, branch_latest = server.call("GET", "/databases/cl/tables/t$branch_dev/snapshot", server.admin_token)
    assert status == 200 and branch_latest["snapshot"]["snapshot"]["uuid"] == dev.latest_snapshot().uuid
    catalog.rename_table("cl.t", "cl.t2")
    assert catalog.list_tables("cl") == ["t2"] and catalog.get_table("cl.t2").to_arrow().num_rows == 3
    catalog.drop_table("cl.t2")
    assert not catalog.table_exists("cl.t2")


def test_concurrent_lakestore_writers_commit_through_the_server(server: Server):
    catalog = _catalog(server, server.admin_token)
    catalog.create_database("cc", exist_ok=True)
    schema = pa.schema([("writer", pa.int64()), ("seq", pa.int64())])
    catalog.create_table("cc.t", schema=schema, exist_ok=True)
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            table = _catalog(server, server.admin_token).get_table("cc.t")
            for seq in range(5):
                table.write_arrow(pa.table({"writer": [n], "seq": [seq]}, schema=schema))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    data = catalog.get_table("cc.t").to_arrow()
    assert sorted(zip(data["writer"].to_pylist(), data["seq"].to_pylist(), strict=True)) == [(n, s) for n in range(3) for s in range(5)]
    snapshots = catalog.get_table("cc.t").snapshots()
    assert [s.id for s in snapshots] == list(range(1, len(snapshots) + 1))
    assert [s.commit_kind for s in snapshots].count("APPEND") == 15  # (and the writers' own compactions)


def test_refusals_are_typed_and_commit_nothing(server: Server):
    admin = _catalog(server, server.admin_token)
    admin.create_database("ro", exist_ok=True)
    schema = pa.schema([("id", pa.int64())])
    admin.create_table("ro.t", schema=schema, exist_ok=True).write_arrow(pa.table({"id": [1]}, schema=schema))
    reader = _catalog(server, server.principal("ro_reader", ("read", "ro")))
    table = reader.get_table("ro.t")
    assert table.to_arrow()["id"].to_pylist() == [1]
    with pytest.raises(RestCatalogAccessError, match="no write grant"):
        table.write_arrow(pa.table({"id": [2]}, schema=schema))
    with pytest.raises(RestCatalogAccessError):
        reader.create_table("ro.u", schema=schema)
    assert admin.get_table("ro.t").latest_snapshot().id == 1
    with pytest.raises(RestCatalogAccessError):
        _catalog(server, "lks_0_wrong")
    with pytest.raises(DatabaseNotFoundError):
        admin.list_tables("missing")
    with pytest.raises(CatalogUnreachableError):
        lakestore.Catalog("lakestore", options={"metastore": "rest", "uri": f"http://127.0.0.1:{free_port()}", "token": "x"})


def test_the_dagster_resource_opens_the_rest_catalog(server: Server):
    from resources.lakestore_catalog import LakestoreResource

    resource = LakestoreResource(warehouse="lakestore", metastore="rest", catalog_uri=server.uri, catalog_token=server.admin_token)
    catalog = resource.open()
    assert isinstance(catalog, RestCatalog)
    catalog.create_database("dg", exist_ok=True)
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False)])
    table = catalog.create_table("dg.t", schema=schema, primary_keys=["id"], options=resource.lifecycle_options(), exist_ok=True)
    table.write_arrow(pa.table({"id": [1, 2]}, schema=schema))
    assert sorted(lakestore.Catalog(str(server.warehouse)).get_table("dg.t").to_arrow()["id"].to_pylist()) == [1, 2]


def test_create_database_takes_sparks_owner_option_only(server: Server):
    """Spark's CREATE NAMESPACE sends its user as the database option ``owner`` (Paimon's
    SparkCatalog passes it on): an audit field the warehouse keeps no record of, taken and
    dropped as Paimon's filesystem catalog drops it. Any other option would be lost: 501."""
    token = server.admin_token
    assert server.call("POST", "/databases", token, {"name": "owned", "options": {"owner": "root"}}) == (200, {})
    status, db = server.call("GET", "/databases/owned", token)
    assert status == 200 and db["options"] == {} and db["owner"] == "lakestore"
    status, answer = server.call("POST", "/databases", token, {"name": "opts", "options": {"owner": "root", "k": "v"}})
    assert status == 501 and "database options" in answer["message"]
    assert server.call("GET", "/databases/opts", token)[0] == 404
