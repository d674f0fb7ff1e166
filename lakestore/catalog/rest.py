"""Paimon's REST catalog as a lakestore catalog (``metastore=rest``): databases, tables and
schema changes go to a REST catalog server (``uri``, bearer ``token``, or without that option
the ``LAKESTORE_REST_TOKEN`` environment variable; ``warehouse`` is the
catalog name sent to ``/v1/config``), and every snapshot commit goes to the server's commit
endpoint, which publishes it (tables of a local warehouse; lakestore writes the data and
manifest files at the table's path as Paimon's clients do). Tested against ``lakestore serve``.

Raises ``CatalogUnreachableError`` when the server cannot be reached, ``RestCatalogAccessError``
for a missing or refused token (401/403), the catalog's not-found/already-exists errors for
404/409, ``CatalogError`` for any other refusal; with the server's message.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from typing import Any

from lakestore.catalog.base import Catalog, NewTable, parse_identifier, split_branch
from lakestore.catalog.rest_codec import RestError, change_json, identifier_json, schema_json
from lakestore.commit.snapshot_commit import CatalogCommit, CatalogSnapshotCommit
from lakestore.errors import (
    CatalogUnreachableError,
    CommitError,
    DatabaseAlreadyExistsError,
    DatabaseNotFoundError,
    OptionError,
    RestCatalogAccessError,
    TableAlreadyExistsError,
    TableNotFoundError,
)
from lakestore.io.fileio import FileIO, LocalFileIO
from lakestore.io.publish import MetadataPublisher
from lakestore.io.secrets import REST_TOKEN, REST_TOKEN_ENV
from lakestore.meta.branch import MAIN_BRANCH
from lakestore.meta.schema_change import SchemaChange
from lakestore.meta.snapshot import Snapshot
from lakestore.table import Table

__all__ = ["RestCatalog", "RestCatalogAccessError", "RestClient", "server_commit"]


class RestClient:
    """The HTTP side: JSON requests with the bearer token, the protocol's errors as lakestore's."""

    def __init__(self, uri: str, token: str | None, *, timeout: float = 60.0) -> None:
        self.uri = uri.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.prefix = ""

    def call(self, method: str, path: str, body: Any = None, query: Mapping[str, str] | None = None) -> Any:
        url = self.uri + path + (f"?{urllib.parse.urlencode(dict(query))}" if query else "")
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as err:
            raise RestError.from_response(err.code, err.read()).to_lakestore(f"{method} {path}") from None
        except OSError as exc:
            raise CatalogUnreachableError(f"REST catalog at {self.uri} cannot be reached: {exc}") from exc
        return json.loads(raw) if raw else {}

    def path(self, *segments: str) -> str:
        return "/v1/" + "/".join(urllib.parse.quote(s, safe="") for s in (self.prefix, *segments))


def server_commit(client: RestClient, database: str, table: str, table_id: str | None) -> CatalogCommit:
    """The REST server's commit endpoint for one table, as its ``CatalogSnapshotCommit`` sends
    commits: POST ``.../tables/<table>[$branch_<b>]/commit``; the answer's ``success`` says
    whether the snapshot was published.

    The returned function raises ``CommitError`` when the server answers something else."""

    def send(branch: str, snapshot: Snapshot, base_uuid: str | None) -> bool:
        name = table if branch == MAIN_BRANCH else f"{table}$branch_{branch}"
        body = {"tableId": table_id, "snapshot": json.loads(snapshot.to_json()), "baseSnapshotUuid": base_uuid, "statistics": []}
        answer = client.call("POST", client.path("databases", database, "tables", name, "commit"), body)
        if not isinstance(answer, dict) or not isinstance(answer.get("success"), bool):
            raise CommitError(f"the REST catalog answered a commit with {answer!r}")
        return bool(answer["success"])

    return send


class RestCatalog(Catalog):
    """``lakestore.Catalog("lakestore", options={"metastore": "rest", "uri": ..., "token": ...})``."""

    def __init__(self, warehouse: str, *, file_io: FileIO | None = None, options: Mapping[str, str] | None = None) -> None:
        self.options = {str(k): str(v) for k, v in (options or {}).items()}
        self.warehouse = str(warehouse)
        uri = self.options.get("uri")
        if not uri or not uri.startswith(("http://", "https://")):
            raise OptionError(f"metastore=rest needs option 'uri' = the server's http(s):// address, got {uri!r}")
        # the bearer token: the option, else the environment (a process not given the option)
        self.client = RestClient(uri, self.options.get(REST_TOKEN) or os.environ.get(REST_TOKEN_ENV) or None)
        config = self.client.call("GET", "/v1/config", query={"warehouse": self.warehouse})
        merged = {**(config.get("defaults") or {}), **self.options, **(config.get("overrides") or {})}
        self.client.prefix = str(merged.get("prefix", ""))
        self.file_io = file_io or LocalFileIO()
        self.publisher = MetadataPublisher(self.file_io)  # snapshots and schemas: the server publishes them

    def __repr__(self) -> str:
        return f"RestCatalog({self.client.uri!r}, warehouse={self.warehouse!r})"

    def _paged(self, path: str, key: str) -> list[str]:
        names: list[str] = []
        token: str | None = None
        while True:
            answer = self.client.call("GET", path, query={"pageToken": token} if token else None)
            names.extend(answer.get(key) or [])
            token = answer.get("nextPageToken")
            if not token:
                return names

    # -- databases ----------------------------------------------------------------------------
    def database_path(self, name: str) -> str:
        return str(self.client.call("GET", self.client.path("databases", name)).get("location"))

    def database_exists(self, name: str) -> bool:
        try:
            self.client.call("GET", self.client.path("databases", name))
        except DatabaseNotFoundError:
            return False
        return True

    def create_database(self, name: str, *, exist_ok: bool = False) -> None:
        try:
            self.client.call("POST", self.client.path("databases"), {"name": name, "options": {}})
        except DatabaseAlreadyExistsError:
            if not exist_ok:
                raise

    def list_databases(self) -> list[str]:
        return self._paged(self.client.path("databases"), "databases")

    def drop_database(self, name: str, *, cascade: bool = False, missing_ok: bool = False) -> None:
        try:
            if not cascade and self.list_tables(name):
                raise TableAlreadyExistsError(f"database {name!r} is not empty; pass cascade=True")
            self.client.call("DELETE", self.client.path("databases", name))
        except DatabaseNotFoundError:
            if not missing_ok:
                raise

    # -- tables -------------------------------------------------------------------------------
    def _meta(self, identifier: str) -> tuple[str, str, dict[str, Any]]:
        base, branch = split_branch(identifier)
        database, table = parse_identifier(base)
        name = table if branch == MAIN_BRANCH else f"{table}$branch_{branch}"
        return database, table, self.client.call("GET", self.client.path("databases", database, "tables", name))

    def table_path(self, identifier: str) -> str:
        return str(self._meta(identifier)[2]["path"])

    def table_exists(self, identifier: str) -> bool:
        try:
            self._meta(identifier)
        except (TableNotFoundError, DatabaseNotFoundError):
            return False
        return True

    def list_tables(self, database: str) -> list[str]:
        return self._paged(self.client.path("databases", database, "tables"), "tables")

    def _create_table(self, new: NewTable, *, exist_ok: bool) -> Table:
        body = {"identifier": identifier_json(new.database, new.name), "schema": schema_json(new.table_schema())}
        try:
            self.client.call("POST", self.client.path("databases", new.database, "tables"), body)
        except TableAlreadyExistsError:
            if not exist_ok:
                raise
        return self.get_table(new.identifier)

    def get_table(self, identifier: str) -> Table:
        database, table, meta = self._meta(identifier)
        path = str(meta.get("path") or "")
        if "://" in path and not path.startswith("file://"):
            raise OptionError(f"table {identifier!r} lives at {path}: the REST catalog client reads and writes local warehouses only")
        path = path.removeprefix("file://")
        commit = CatalogSnapshotCommit(
            server_commit(self.client, database, table, meta.get("id")), path, catalog=(self.warehouse, dict(self.options))
        )
        _, branch = split_branch(identifier)
        return Table(path, file_io=LocalFileIO(), identifier=f"{database}.{table}", branch=branch, snapshot_commit=commit)

    def alter_table(self, identifier: str, changes: Sequence[SchemaChange]) -> Table:
        database, table, _ = self._meta(identifier)
        base, branch = split_branch(identifier)
        name = table if branch == MAIN_BRANCH else f"{table}$branch_{branch}"
        body = {"changes": [change_json(c) for c in changes]}
        self.client.call("POST", self.client.path("databases", database, "tables", name), body)
        return self.get_table(identifier)

    def drop_table(self, identifier: str, *, missing_ok: bool = False) -> None:
        database, table = parse_identifier(identifier)
        try:
            self.client.call("DELETE", self.client.path("databases", database, "tables", table))
        except (TableNotFoundError, DatabaseNotFoundError):
            if not missing_ok:
                raise

    def rename_table(self, source: str, target: str) -> None:
        sdb, stable = parse_identifier(source)
        tdb, ttable = parse_identifier(target)
        body = {"source": identifier_json(sdb, stable), "destination": identifier_json(tdb, ttable)}
        self.client.call("POST", self.client.path("tables", "rename"), body)
