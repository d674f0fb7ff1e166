"""The REST catalog's operations over a lakestore warehouse, each checked against the caller's
grants before anything is read or written. Answers are the protocol's JSON objects; failures
are ``RestError`` (the protocol's error body). No HTTP here (``lakestore.rest.app`` routes).

Snapshot commits are serialised per table (and branch) in this process and published with the
table's ``SnapshotCommit`` (``lakestore.commit.snapshot_commit``: an atomic create-if-absent),
so a second server or a direct writer on the same warehouse can never overwrite one either. A snapshot is published only
once ``lakestore.commit.validate`` accepted it (every file it names inside the table and there,
fields in Paimon's ranges, a schema the server trusts: ``lakestore.rest.schemas``); fields of a
client's snapshot that lakestore does not know are dropped.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import logging
import threading
import time
import urllib.parse
import uuid
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

from lakestore.catalog import Catalog, parse_identifier, split_branch
from lakestore.commit.validate import SnapshotValidator, ValidatedManifests
from lakestore.errors import CorruptMetadataError, InvalidCommitError, LakestoreError, PathOutsideTableError, SnapshotNotFoundError
from lakestore.meta.branch import MAIN_BRANCH, branch_root
from lakestore.meta.schema import SchemaManager
from lakestore.meta.schema_change import apply_changes
from lakestore.meta.snapshot import Snapshot, SnapshotManager
from lakestore.rest import protocol as p
from lakestore.rest.auth import LEVELS, Principal
from lakestore.rest.schemas import SchemaLedger
from lakestore.rest.vending import S3CredentialVendor
from lakestore.table import Table

READ, WRITE, ADMIN = LEVELS["read"], LEVELS["write"], LEVELS["admin"]
T = TypeVar("T")
log = logging.getLogger("lakestore.rest")
TOKEN_LIFETIME_MS = 3_600_000
# the audit fields' principal: the warehouse keeps no record of who created what (clients such
# as Paimon's Flink catalog refuse missing values)
OWNER = "lakestore"


class CatalogService:
    """``CatalogService(Catalog(warehouse), prefix="lakestore")``: one warehouse; with
    ``vendor`` (an S3 warehouse) the table-token endpoint answers table-scoped credentials."""

    def __init__(self, catalog: Catalog, *, prefix: str = "lakestore", vendor: S3CredentialVendor | None = None) -> None:
        self.catalog = catalog
        self.prefix = prefix
        self.vendor = vendor
        self._locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()
        self._stats: OrderedDict[tuple[str, int], dict[str, int]] = OrderedDict()
        self.schemas = SchemaLedger(catalog.file_io, catalog.warehouse)  # the schemas it trusts
        self._validated = ValidatedManifests()  # manifests commits named and validation accepted

    # -- helpers -----------------------------------------------------------------------------
    def _lock(self, key: str) -> threading.Lock:
        with self._locks_guard:
            return self._locks.setdefault(key, threading.Lock())

    @staticmethod
    def _require(principal: Principal, level: int, database: str | None = None, table: str | None = None) -> None:
        if principal.level(database, table) < level:
            name = database if table is None else f"{database}.{table}"
            what = "the catalog" if database is None else (f"database {database}" if table is None else f"table {name}")
            wanted = next(k for k, v in LEVELS.items() if v == level)
            resource = None if database is None else (p.DATABASE if table is None else p.TABLE)
            raise p.RestError(403, f"principal {principal.name!r} has no {wanted} grant on {what}", resource, name)

    @staticmethod
    def _guard(call: Callable[[], T], *, resource_type: str | None = None, resource_name: str | None = None) -> T:
        try:
            return call()
        except PathOutsideTableError as exc:  # hostile or damaged metadata: nothing was deleted
            message = f"the table's metadata names {len(exc.paths)} file(s) outside the table; nothing was deleted"
            raise p.RestError(409, message, resource_type, resource_name) from exc
        except LakestoreError as exc:
            raise p.from_lakestore(exc, resource_type=resource_type, resource_name=resource_name) from exc

    @staticmethod
    def _names(database: str, table: str) -> tuple[str, str, str]:
        """(database, base table name, branch) of a path's table segment (``t$branch_dev``)."""
        base, branch = CatalogService._guard(lambda: split_branch(f"{database}.{table}"), resource_type=p.TABLE)
        db, name = CatalogService._guard(lambda: parse_identifier(base), resource_type=p.TABLE, resource_name=base)
        return db, name, branch

    def _table(self, database: str, table: str) -> Table:
        """The table at its newest schema the server trusts (``lakestore.rest.schemas``): a newer
        schema file it did not write is not served."""
        full = f"{database}.{table}"
        t = self._guard(lambda: self.catalog.get_table(full), resource_type=p.TABLE, resource_name=full)
        trusted = self._guard(lambda: self.schemas.latest_trusted(t.path, t.branch), resource_type=p.TABLE, resource_name=full)
        if trusted is None:
            raise p.RestError(409, f"table {full} has no schema written through the server", p.TABLE, full)
        if trusted.id != t.schema.id:
            log.warning("table %s: schema %d was not written through the server; serving schema %d", full, t.schema.id, trusted.id)
            t.store = dataclasses.replace(t.store, schema=trusted)
        return t

    def table_id(self, table: Table) -> str:
        """A stable id: from the bytes of the first schema (kept by renames, new for a re-created table)."""
        schemas = SchemaManager(table.store.file_io, table.path)
        data = table.store.file_io.read_bytes(schemas.path(schemas.list_ids()[0]))
        return str(uuid.uuid5(uuid.NAMESPACE_OID, data.hex()))

    # -- config and databases ----------------------------------------------------------------
    def config(self, principal: Principal) -> dict[str, Any]:
        defaults = {"prefix": self.prefix}
        if self.vendor is not None:  # clients then ask the token endpoint for the files' credentials
            defaults["data-token.enabled"] = "true"
        return {"defaults": defaults, "overrides": {}}

    def list_databases(self, principal: Principal, query: dict[str, str]) -> dict[str, Any]:
        match = p.like(query.get("databaseNamePattern"))
        names = [d for d in self.catalog.list_databases() if principal.sees_database(d) and match(d)]
        items, token = p.page(names, query.get("maxResults"), query.get("pageToken"))
        return {"databases": items, "nextPageToken": token}

    def create_database(self, principal: Principal, body: dict[str, Any]) -> dict[str, Any]:
        name = p.field(body, "name", str)
        self._require(principal, ADMIN)
        options = p.string_map(body.get("options"), "options")
        # Spark's CREATE NAMESPACE always sends its user as 'owner' (SupportsNamespaces.PROP_OWNER):
        # an audit field the warehouse keeps no record of (answered as OWNER), as Paimon's
        # filesystem catalog discards it; any other option would be lost, so it is refused
        options.pop("owner", None)
        if options:
            raise p.not_implemented("database options (a filesystem warehouse keeps none)")
        self._guard(lambda: self.catalog.create_database(name), resource_type=p.DATABASE, resource_name=name)
        return {}

    def get_database(self, principal: Principal, database: str) -> dict[str, Any]:
        if not principal.sees_database(database):
            self._require(principal, READ, database)
        if not self._guard(lambda: self.catalog.database_exists(database), resource_type=p.DATABASE, resource_name=database):
            raise p.RestError(404, f"database {database!r} does not exist", p.DATABASE, database)
        location = self.catalog.database_path(database)
        mtime = next((st.mtime_ms for st in self.catalog.file_io.list_status(self.catalog.warehouse) if st.path.rstrip("/") == location), 0)
        audit = {"owner": OWNER, "createdAt": mtime, "createdBy": OWNER, "updatedAt": mtime, "updatedBy": OWNER}
        return {"id": database, "name": database, "location": location, "options": {}, **audit}

    def drop_database(self, principal: Principal, database: str) -> dict[str, Any]:
        self._require(principal, ADMIN, database)
        self._guard(lambda: self.catalog.drop_database(database, cascade=True), resource_type=p.DATABASE, resource_name=database)
        self.schemas.forget(self.catalog.database_path(database))
        return {}

    def alter_database(self, principal: Principal, database: str) -> dict[str, Any]:
        self._require(principal, ADMIN, database)
        raise p.not_implemented("database options (a filesystem warehouse keeps none)")

    # -- views and functions (a lakestore warehouse has none) ----------------------------------
    def _require_visible(self, principal: Principal, database: str) -> None:
        if not principal.sees_database(database):
            self._require(principal, READ, database)
        if not self._guard(lambda: self.catalog.database_exists(database), resource_type=p.DATABASE, resource_name=database):
            raise p.RestError(404, f"database {database!r} does not exist", p.DATABASE, database)

    def list_none(self, principal: Principal, database: str, key: str) -> dict[str, Any]:
        """Views, view details, functions or function details of a database: none."""
        self._require_visible(principal, database)
        return {key: [], "nextPageToken": None}

    def get_none(self, principal: Principal, database: str, kind: str, name: str) -> dict[str, Any]:
        """A view or function: never there (404, so clients fall back to tables)."""
        self._require_visible(principal, database)
        raise p.RestError(404, f"{kind.lower()} {database}.{name} does not exist", kind, f"{database}.{name}")

    # -- tables ------------------------------------------------------------------------------
    def _visible_tables(self, principal: Principal, database: str) -> list[str]:
        if not principal.sees_database(database):
            self._require(principal, READ, database)
        names = self._guard(lambda: self.catalog.list_tables(database), resource_type=p.DATABASE, resource_name=database)
        return [t for t in names if principal.level(database, t) >= READ]

    def list_tables(self, principal: Principal, database: str, query: dict[str, str]) -> dict[str, Any]:
        match = p.like(query.get("tableNamePattern"))
        names = [t for t in self._visible_tables(principal, database) if match(t)]
        items, token = p.page(names, query.get("maxResults"), query.get("pageToken"))
        return {"tables": items, "nextPageToken": token}

    def list_table_details(self, principal: Principal, database: str, query: dict[str, str]) -> dict[str, Any]:
        match = p.like(query.get("tableNamePattern"))
        names = [t for t in self._visible_tables(principal, database) if match(t)]
        items, token = p.page(names, query.get("maxResults"), query.get("pageToken"))
        return {"tableDetails": [self._table_json(database, t) for t in items], "nextPageToken": token}

    def _table_json(self, database: str, table: str) -> dict[str, Any]:
        t = self._table(database, table)
        schema = t.schema
        first = t.store.schema_manager.get(t.store.schema_manager.list_ids()[0])
        audit = {"owner": OWNER, "createdAt": first.time_millis, "createdBy": OWNER, "updatedAt": schema.time_millis, "updatedBy": OWNER}
        return {
            **audit,
            "id": self.table_id(t),
            "name": table,
            "path": t.path,
            "isExternal": False,
            "schemaId": schema.id,
            "schema": p.schema_json(schema),
        }

    def get_table(self, principal: Principal, database: str, table: str) -> dict[str, Any]:
        db, name, _ = self._names(database, table)
        self._require(principal, READ, db, name)
        return self._table_json(database, table)

    def create_table(self, principal: Principal, database: str, body: dict[str, Any]) -> dict[str, Any]:
        ident = body.get("identifier")
        if not isinstance(ident, dict):
            raise p.bad_request("missing field 'identifier'")
        name = p.field(ident, "object", str)
        if ident.get("database", database) != database:
            raise p.bad_request("identifier.database differs from the path's database")
        db, table, branch = self._names(database, name)
        if branch != MAIN_BRANCH:
            raise p.bad_request("create a branch with the branches endpoint")
        self._require(principal, ADMIN, db, table)
        schema = p.schema_from_json(body.get("schema"))
        full = f"{db}.{table}"

        def create() -> None:
            if not self.catalog.database_exists(db):
                raise p.RestError(404, f"database {db!r} does not exist", p.DATABASE, db)
            path = self.catalog.table_path(full)
            if SchemaManager(self.catalog.file_io, path).latest() is not None:
                raise p.RestError(409, f"table {full!r} already exists", p.TABLE, full)
            self.schemas.forget(path)  # a table of that name dropped outside the server
            if not SchemaManager(self.catalog.file_io, path, publisher=self.catalog.publisher).publish(schema):
                raise p.RestError(409, f"table {full!r} already exists", p.TABLE, full)
            self.schemas.record(path, MAIN_BRANCH, schema.id, schema.to_json().encode())

        self._guard(create, resource_type=p.TABLE, resource_name=full)
        return {}

    def drop_table(self, principal: Principal, database: str, table: str) -> dict[str, Any]:
        db, name, branch = self._names(database, table)
        self._require(principal, ADMIN, db, name)
        if branch != MAIN_BRANCH:
            raise p.bad_request("drop a branch with the branches endpoint")
        full = f"{db}.{name}"
        with self._lock(f"{self.catalog.table_path(full)}#{MAIN_BRANCH}"):
            self._guard(lambda: self.catalog.drop_table(full), resource_type=p.TABLE, resource_name=full)
            self.schemas.forget(self.catalog.table_path(full))
        return {}

    def rename_table(self, principal: Principal, body: dict[str, Any]) -> dict[str, Any]:
        src, dst = body.get("source"), body.get("destination")
        if not isinstance(src, dict) or not isinstance(dst, dict):
            raise p.bad_request("rename needs 'source' and 'destination' identifiers")
        sdb, sname, sbranch = self._names(p.field(src, "database", str), p.field(src, "object", str))
        ddb, dname, dbranch = self._names(p.field(dst, "database", str), p.field(dst, "object", str))
        if sbranch != MAIN_BRANCH or dbranch != MAIN_BRANCH:
            raise p.bad_request("branches cannot be renamed as tables")
        self._require(principal, ADMIN, sdb, sname)
        self._require(principal, ADMIN, ddb, dname)
        source, target = f"{sdb}.{sname}", f"{ddb}.{dname}"
        with self._lock(f"{self.catalog.table_path(source)}#{MAIN_BRANCH}"):
            self.schemas.trusted(self.catalog.table_path(source))  # adopted before it moves, if new
            self._guard(lambda: self.catalog.rename_table(source, target), resource_type=p.TABLE, resource_name=source)
            self.schemas.move(self.catalog.table_path(source), self.catalog.table_path(target))
        return {}

    def alter_table(self, principal: Principal, database: str, table: str, body: dict[str, Any]) -> dict[str, Any]:
        db, name, _ = self._names(database, table)
        self._require(principal, ADMIN, db, name)
        changes = p.changes_from_json(body.get("changes"))
        full = f"{database}.{table}"
        t = self._table(database, table)
        with self._lock(f"{t.path}#{t.branch}#schema"):
            current = t.schema  # the newest trusted schema
            if t.store.schema_manager.list_ids()[-1] != current.id:
                foreign = f"table {full} holds a schema file not written through the server (after schema {current.id})"
                raise p.RestError(409, foreign, p.TABLE, full)
            expected = self._guard(lambda: apply_changes(current, changes), resource_type=p.TABLE, resource_name=full)
            self._guard(lambda: self.catalog.alter_table(full, changes), resource_type=p.TABLE, resource_name=full)
            written = t.store.file_io.read_bytes(t.store.schema_manager.path(expected.id))
            landed = t.store.schema_manager.get(expected.id)
            if dataclasses.replace(landed, time_millis=expected.time_millis) != expected:
                raise p.RestError(409, f"table {full}: schema {expected.id} changed concurrently; alter it again", p.TABLE, full)
            self.schemas.record(t.path, t.branch, expected.id, written)
        return {}

    def table_token(self, principal: Principal, database: str, table: str) -> dict[str, Any]:
        """Credentials for the table's files: with a vendor, fresh STS credentials limited to the
        table's prefix (read-only below ``write``), expiring when they do; without one (a local
        warehouse) an empty token (clients read and write the table's files at its path)."""
        db, name, _ = self._names(database, table)
        self._require(principal, READ, db, name)
        t = self._table(database, table)
        if self.vendor is None:
            return {"token": {}, "expiresAtMillis": int(time.time() * 1000) + TOKEN_LIFETIME_MS}
        write = principal.level(db, name) >= WRITE
        try:
            data_directory = t.schema.options.get("data-file.path-directory")
            token, expires = self.vendor.vend(t.path, write=write, principal=principal.name, data_directory=data_directory)
        except LakestoreError as exc:
            raise p.from_lakestore(exc, resource_type=p.TABLE, resource_name=f"{database}.{table}") from exc
        except Exception as exc:  # STS refused or is unreachable: no detail (nothing secret leaks)
            code = getattr(exc, "response", {}).get("Error", {}).get("Code", type(exc).__name__)
            log.warning("credential vending for %s.%s failed: %s", database, table, code)
            raise p.RestError(503, f"the server could not vend credentials for {database}.{table} ({code})") from exc
        return {"token": token, "expiresAtMillis": expires}

    def auth_query(self, principal: Principal, database: str, table: str) -> dict[str, Any]:
        db, name, _ = self._names(database, table)
        self._require(principal, READ, db, name)
        self._table(database, table)
        return {"filter": [], "columnMasking": {}}

    # -- snapshots and commits ---------------------------------------------------------------
    def _table_snapshot(self, t: Table, snapshot: Snapshot) -> dict[str, Any]:
        key = (f"{t.path}#{t.branch}", snapshot.id)
        stats = self._stats.get(key)
        if stats is None:
            files = t.store.live_files(snapshot)
            stats = {
                "fileCount": len(files),
                "fileSizeInBytes": sum(f.bytes for f in files),
                "lastFileCreationTime": snapshot.time_millis,
            }
            self._stats[key] = stats
            while len(self._stats) > 1024:
                self._stats.popitem(last=False)
        return {"snapshot": snapshot.to_dict(), "recordCount": snapshot.total_record_count, **stats}

    def load_snapshot(self, principal: Principal, database: str, table: str) -> dict[str, Any]:
        db, name, _ = self._names(database, table)
        self._require(principal, READ, db, name)
        t = self._table(database, table)
        latest = self._guard(t.latest_snapshot, resource_type=p.TABLE, resource_name=f"{database}.{table}")
        if latest is None:
            raise p.RestError(404, f"table {database}.{table} has no snapshot", p.SNAPSHOT, f"{database}.{table}")
        return {"snapshot": self._guard(lambda: self._table_snapshot(t, latest))}

    def get_snapshot(self, principal: Principal, database: str, table: str, version: str) -> dict[str, Any]:
        db, name, _ = self._names(database, table)
        self._require(principal, READ, db, name)
        t = self._table(database, table)
        try:
            if version.isdigit():
                return t.snapshot(int(version)).to_dict()
            if version == "LATEST" and t.latest_snapshot() is not None:
                return t.latest_snapshot().to_dict()  # type: ignore[union-attr]
            if version == "EARLIEST" and t.snapshots():
                return t.snapshots()[0].to_dict()
            for tag in t.manage.tags():
                if tag.name == version:
                    return tag.snapshot.to_dict()
        except SnapshotNotFoundError:
            pass
        except LakestoreError as exc:
            raise p.from_lakestore(exc) from exc
        raise p.RestError(404, f"snapshot {version!r} of table {database}.{table} does not exist", p.SNAPSHOT, version)

    def list_snapshots(self, principal: Principal, database: str, table: str, query: dict[str, str]) -> dict[str, Any]:
        db, name, _ = self._names(database, table)
        self._require(principal, READ, db, name)
        t = self._table(database, table)
        snapshots = self._guard(t.snapshots)
        ids = [f"{s.id:020d}" for s in snapshots]
        items, token = p.page(ids, query.get("maxResults"), query.get("pageToken"))
        by_id = {s.id: s for s in snapshots}
        return {"snapshots": [by_id[int(i)].to_dict() for i in items], "nextPageToken": token}

    def commit(self, principal: Principal, database: str, table: str, body: dict[str, Any]) -> dict[str, Any]:
        """Publish the client's snapshot iff it is based on the latest one (its uuid), names
        the next id and passes ``lakestore.commit.validate`` (else 400, nothing published);
        ``success: false`` asks the client to retry on the new latest. A retried request whose
        snapshot landed already answers ``success: true`` again. Fields lakestore does not know
        are dropped: the parent-carrying rule for other engines' metadata is no licence for a
        client to make the server write what it cannot check."""
        db, name, branch = self._names(database, table)
        self._require(principal, WRITE, db, name)
        full = f"{database}.{table}"
        t = self._table(database, table)
        table_id = p.field(body, "tableId", str, required=False)
        if table_id is not None and table_id != self.table_id(t):
            raise p.RestError(404, f"table {full!r} is not the table {table_id} (dropped and re-created?)", p.TABLE, full)
        raw = p.field(body, "snapshot", dict)
        try:
            snapshot = Snapshot.from_dict(raw, source="the commit request")
        except CorruptMetadataError as exc:
            raise p.bad_request(str(exc)) from exc
        if snapshot.unknown_fields:
            log.info("commit to %s: dropped unknown snapshot fields %s", full, sorted(snapshot.unknown_fields)[:10])
            snapshot = dataclasses.replace(snapshot, unknown_fields={})
        base_uuid = p.field(body, "baseSnapshotUuid", str, required=False)
        root = branch_root(t.path, branch)
        snapshots = SnapshotManager(t.store.file_io, root)
        with self._lock(f"{t.path}#{branch}"):
            try:
                existing = snapshots.get(snapshot.id)
            except SnapshotNotFoundError:
                existing = None
            if existing is not None:  # a retry of a commit that landed, or a lost race
                same = existing.uuid == snapshot.uuid if snapshot.uuid else existing.to_dict() == snapshot.to_dict()
                return {"success": same}
            latest = snapshots.latest()
            if (latest.uuid if latest else None) != base_uuid or snapshot.id != (latest.id + 1 if latest else 1):
                return {"success": False}
            self._check_commit_files(t, root, snapshot)
            if not t.store.snapshot_commit.commit(snapshots, snapshot):
                return {"success": False}
            with contextlib.suppress(OSError):  # a hint only
                snapshots.write_latest_hint(snapshot.id)
        return {"success": True}

    def _check_commit_files(self, t: Table, root: str, snapshot: Snapshot) -> None:
        """Refuse (400, nothing written) a snapshot ``lakestore.commit.validate`` refuses, or one
        naming a schema the server did not write or adopt (``lakestore.rest.schemas``)."""
        trusted = {snapshot.schema_id} if self.schemas.is_trusted(t.path, t.branch, snapshot.schema_id) else set()
        try:
            SnapshotValidator(t.store.file_io, t.path, t.schema, cache=self._validated).validate(snapshot, schema_ids=trusted)
        except InvalidCommitError as exc:
            raise p.bad_request(str(exc)) from exc
        except (CorruptMetadataError, OSError) as exc:
            raise p.bad_request(f"snapshot {snapshot.id} cannot be validated: {type(exc).__name__}") from exc

    def rollback(self, principal: Principal, database: str, table: str, body: dict[str, Any]) -> dict[str, Any]:
        db, name, branch = self._names(database, table)
        self._require(principal, WRITE, db, name)
        t = self._table(database, table)
        instant = p.field(body, "instant", dict)
        kind = str(instant.get("type", "")).lower()
        from_snapshot = p.field(body, "fromSnapshot", int, required=False)
        with self._lock(f"{t.path}#{branch}"):
            latest = t.latest_snapshot()
            if from_snapshot is not None and (latest is None or latest.id != from_snapshot):
                raise p.RestError(409, f"the latest snapshot is not {from_snapshot}", p.SNAPSHOT, str(from_snapshot))
            if kind == "snapshot":
                snapshot_id = p.field(instant, "snapshotId", int)
                self._guard(lambda: t.manage.rollback_to(snapshot_id), resource_type=p.SNAPSHOT, resource_name=str(snapshot_id))
            elif kind == "tag":
                tag = p.field(instant, "tagName", str)
                self._guard(lambda: t.manage.rollback_to(tag=tag), resource_type=p.TAG, resource_name=tag)
            else:
                raise p.bad_request("instant.type must be 'snapshot' or 'tag'")
        return {}

    # -- partitions --------------------------------------------------------------------------
    def list_partitions(self, principal: Principal, database: str, table: str, query: dict[str, str]) -> dict[str, Any]:
        db, name, _ = self._names(database, table)
        self._require(principal, READ, db, name)
        t = self._table(database, table)
        latest = t.latest_snapshot()
        groups: dict[str, dict[str, Any]] = {}
        if latest is not None and t.partition_keys:
            for f in self._guard(lambda: t.store.live_files(latest)):
                g = groups.setdefault(f.partition_path, {"records": 0, "bytes": 0, "files": 0, "buckets": set()})
                g["records"] += f.rows
                g["bytes"] += f.bytes
                g["files"] += 1
                g["buckets"].add(f.bucket)
        match = p.like(query.get("partitionNamePattern"))
        names = [n for n in groups if match(n)]
        items, token = p.page(names, query.get("maxResults"), query.get("pageToken"))
        parts = []
        for path in items:
            g = groups[path]
            spec = dict(urllib.parse.unquote(kv).split("=", 1) for kv in path.split("/"))
            parts.append(
                {
                    "spec": spec,
                    "recordCount": g["records"],
                    "fileSizeInBytes": g["bytes"],
                    "fileCount": g["files"],
                    "lastFileCreationTime": latest.time_millis if latest else 0,
                    "totalBuckets": len(g["buckets"]),
                    "done": False,
                }
            )
        return {"partitions": parts, "nextPageToken": token}

    def create_partitions(self, principal: Principal, database: str, table: str, body: dict[str, Any]) -> dict[str, Any]:
        """A filesystem warehouse registers no partitions (they exist by their files)."""
        db, name, _ = self._names(database, table)
        self._require(principal, WRITE, db, name)
        self._table(database, table)
        specs = body.get("partitionSpecs")
        if not isinstance(specs, list):
            raise p.bad_request("partitionSpecs must be a list")
        return {"created": [], "existed": []}

    def drop_partitions(self, principal: Principal, database: str, table: str, body: dict[str, Any]) -> dict[str, Any]:
        db, name, branch = self._names(database, table)
        self._require(principal, WRITE, db, name)
        t = self._table(database, table)
        specs = body.get("partitionSpecs")
        if not isinstance(specs, list) or not specs:
            raise p.bad_request("partitionSpecs must be a non-empty list")
        checked = [p.partition_spec(s) for s in specs]
        with self._lock(f"{t.path}#{branch}"):
            self._guard(lambda: t.drop_partitions(checked), resource_type=p.TABLE, resource_name=f"{database}.{table}")
        return {}

    # -- tags and branches -------------------------------------------------------------------
    def list_tags(self, principal: Principal, database: str, table: str, query: dict[str, str]) -> dict[str, Any]:
        db, name, _ = self._names(database, table)
        self._require(principal, READ, db, name)
        t = self._table(database, table)
        prefix = query.get("tagNamePrefix") or ""
        names = [tag.name for tag in self._guard(t.manage.tags) if tag.name.startswith(prefix)]
        items, token = p.page(names, query.get("maxResults"), query.get("pageToken"))
        return {"tags": items, "nextPageToken": token}

    def get_tag(self, principal: Principal, database: str, table: str, tag: str) -> dict[str, Any]:
        db, name, _ = self._names(database, table)
        self._require(principal, READ, db, name)
        t = self._table(database, table)
        for found in self._guard(t.manage.tags):
            if found.name == tag:
                created = found.create_time
                return {
                    "tagName": found.name,
                    "snapshot": found.snapshot.to_dict(),
                    "tagCreateTime": int(created.replace(tzinfo=dt.UTC).timestamp() * 1000) if created else None,
                    "tagTimeRetained": f"{found.time_retained_ms} ms" if found.time_retained_ms is not None else None,
                }
        raise p.RestError(404, f"tag {tag!r} does not exist", p.TAG, tag)

    def create_tag(self, principal: Principal, database: str, table: str, body: dict[str, Any]) -> dict[str, Any]:
        db, name, _ = self._names(database, table)
        self._require(principal, WRITE, db, name)
        t = self._table(database, table)
        tag = p.field(body, "tagName", str)
        snapshot_id = p.field(body, "snapshotId", int, required=False)
        retained = p.field(body, "timeRetained", str, required=False)
        if snapshot_id is not None:
            try:
                t.snapshot(snapshot_id)
            except SnapshotNotFoundError as exc:
                raise p.RestError(404, str(exc), p.SNAPSHOT, str(snapshot_id)) from exc
        self._guard(lambda: t.manage.create_tag(tag, snapshot_id, retained), resource_type=p.TAG, resource_name=tag)
        return {}

    def delete_tag(self, principal: Principal, database: str, table: str, tag: str) -> dict[str, Any]:
        db, name, _ = self._names(database, table)
        self._require(principal, WRITE, db, name)
        t = self._table(database, table)
        self._guard(lambda: t.manage.delete_tag(tag), resource_type=p.TAG, resource_name=tag)
        return {}

    def list_branches(self, principal: Principal, database: str, table: str) -> dict[str, Any]:
        db, name, _ = self._names(database, table)
        self._require(principal, READ, db, name)
        return {"branches": self._guard(self._table(database, table).manage.branches)}

    def create_branch(self, principal: Principal, database: str, table: str, body: dict[str, Any]) -> dict[str, Any]:
        db, name, _ = self._names(database, table)
        self._require(principal, WRITE, db, name)
        t = self._table(database, table)
        branch = p.field(body, "branch", str)
        tag = p.field(body, "fromTag", str, required=False)
        self._guard(lambda: t.manage.create_branch(branch, tag=tag), resource_type=p.BRANCH, resource_name=branch)
        self.schemas.adopt(t.path, branch)  # the server wrote them: copies of schemas it trusts
        return {}

    def drop_branch(self, principal: Principal, database: str, table: str, branch: str) -> dict[str, Any]:
        db, name, _ = self._names(database, table)
        self._require(principal, WRITE, db, name)
        t = self._table(database, table)
        self._guard(lambda: t.manage.delete_branch(branch), resource_type=p.BRANCH, resource_name=branch)
        self.schemas.forget(t.path, branch)
        return {}

    def fast_forward(self, principal: Principal, database: str, table: str, branch: str) -> dict[str, Any]:
        db, name, _ = self._names(database, table)
        self._require(principal, WRITE, db, name)
        t = self._table(database, table)
        with self._lock(f"{t.path}#{MAIN_BRANCH}"):
            branch_schemas = SchemaManager(t.store.file_io, branch_root(t.path, branch)).list_ids()
            if not all(self.schemas.is_trusted(t.path, branch, i) for i in branch_schemas):
                raise p.RestError(409, f"branch {branch!r} holds a schema file not written through the server", p.BRANCH, branch)
            self._guard(lambda: t.manage.fast_forward(branch), resource_type=p.BRANCH, resource_name=branch)
            self.schemas.adopt(t.path, MAIN_BRANCH)  # main's schemas are now the branch's copies
        return {}
