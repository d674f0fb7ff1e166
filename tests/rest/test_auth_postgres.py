"""``lakestore serve --auth-db postgresql://...``: principals, tokens (digests only) and grants in
PostgreSQL (the session's server from the Debian packages), managed by ``serve-admin`` while the
server runs."""

from __future__ import annotations

import uuid
from pathlib import Path

import pyarrow as pa

import lakestore
from lakestore.rest.auth import AuthStore
from tests.postgres import Postgres
from tests.rest.server import start_server


def test_auth_in_postgresql(postgres: Postgres, tmp_path: Path):
    import psycopg

    dbname = f"auth_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(f"postgresql://lake@127.0.0.1:{postgres.port}/postgres", autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {dbname}")
    uri = f"postgresql://lake@127.0.0.1:{postgres.port}/{dbname}"
    server = start_server(tmp_path, auth_db=uri)
    try:
        admin = server.admin_token
        catalog = lakestore.Catalog(str(server.warehouse))
        catalog.create_database("pg", exist_ok=True)
        catalog.create_table("pg.t", schema=pa.schema([("id", pa.int64())]), exist_ok=True)
        assert server.call("GET", "/databases", admin)[1]["databases"] == ["pg"]
        store = AuthStore(uri)  # as serve-admin add-principal / grant do, beside the running server
        store.add_principal("bob")
        store.grant("bob", "read", "pg.t")
        store.close()
        token_id, token = server.admin("issue-token", "bob").split()
        assert server.call("GET", "/databases/pg/tables/t", token)[0] == 200
        assert server.call("DELETE", "/databases/pg/tables/t", token)[0] == 403
        server.admin("revoke-token", token_id)
        assert server.call("GET", "/databases/pg/tables/t", token)[0] == 401
        with psycopg.connect(uri) as conn:
            stored = conn.execute("SELECT id, digest FROM lakestore_tokens").fetchall()
        assert len(stored) == 2 and all(token not in row and admin not in row for row in stored)
        assert catalog.table_exists("pg.t")
    finally:
        server.stop()
