"""A ``write`` principal's hostile commits, replayed against a real ``lakestore serve`` on
loopback: the principal writes manifests and lists into its table's folder as any local writer
can, then asks the server to publish a snapshot naming them. Each attack class (paths out of the
table: ``..``, absolute, undeclared external, extra files, linked bucket directories, another
table's manifests; missing manifests, lists, data, index and statistics files; unknown or
hand-written schemas; fields outside Paimon's ranges) answers 400 in the protocol's error body,
no file anywhere changed (the warehouse, the auth database's folder, a file outside the
warehouse), nothing was published, and the server still answers. Unknown snapshot fields are
dropped; a rollback through the server over a snapshot written around it deletes nothing
outside the table."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import lakestore
from lakestore.meta.file_scan import live_entries
from lakestore.meta.snapshot import Snapshot
from tests.lifecycle.hostile import KINDS, craft_snapshot, hostile_entry, publish, tree_state
from tests.rest.server import Server, start_server

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])
T = "/databases/db1/tables/t1"
ERROR_KEYS = {"message", "code", "resourceType", "resourceName"}


@dataclass
class Setup:
    server: Server
    root: Path
    writer: str  # write on db1.t1 only
    table: lakestore.Table  # db1.t1, opened directly (as the writer's own files are written)
    other: lakestore.Table  # db2.s1

    def state(self) -> dict[str, tuple]:
        """Every file, folder and link under the test's root but the server's log and the auth
        database (which the server updates as tokens are used)."""
        return {k: v for k, v in tree_state(self.root).items() if k != "server.log" and ".lakestore-auth.sqlite" not in k}

    def alive(self) -> None:
        status, body = self.server.call("GET", T, self.writer)
        assert status == 200 and body["name"] == "t1", body

    def latest_id(self) -> int:
        return self.table.store.snapshot_manager.latest_id() or 0

    def commit(self, snapshot: dict[str, Any] | Snapshot) -> tuple[int, Any]:
        doc = snapshot.to_dict() if isinstance(snapshot, Snapshot) else snapshot
        latest = self.table.store.snapshot_manager.latest()
        body = {"snapshot": doc, "baseSnapshotUuid": latest.uuid if latest else None}
        return self.server.call("POST", f"{T}/commit", self.writer, body)


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    root = tmp_path_factory.mktemp("rest-commits")
    server = start_server(root)
    catalog = lakestore.Catalog(str(server.warehouse))
    for db in ("db1", "db2"):
        catalog.create_database(db)
    options = {"data-file.external-paths": f"file:{root / 'ext'}"}  # declared, and not where the attacks point
    table = catalog.create_table("db1.t1", schema=SCHEMA, options=options)
    table.write_arrow(pa.table({"id": [1, 2], "v": ["a", "b"]}, schema=SCHEMA))
    other = catalog.create_table("db2.s1", schema=SCHEMA)
    other.write_arrow(pa.table({"id": [7], "v": ["secret"]}, schema=SCHEMA))
    writer = server.principal("writer", ("write", "db1.t1"))
    s = Setup(server, root, writer, catalog.get_table("db1.t1"), other)
    s.alive()  # the server has met the table (and adopted its schemas)
    yield s
    server.stop()


def _refused(setup: Setup, attack: Callable[[Setup], dict[str, Any] | Snapshot], expected: str) -> None:
    doc = attack(setup)  # the attacker's files are written first: they are not the server's doing
    before, latest = setup.state(), setup.latest_id()
    status, body = setup.commit(doc)
    assert status == 400, body
    assert isinstance(body, dict) and set(body) == ERROR_KEYS and body["code"] == 400, body
    assert expected in body["message"], body["message"]
    warehouse = str(setup.server.warehouse)
    assert warehouse not in body["message"] and os.path.realpath(warehouse) not in body["message"], body
    assert setup.state() == before
    assert setup.latest_id() == latest
    setup.alive()


def _entry(setup: Setup):
    return live_entries(setup.table.store.manifest_store, setup.table.latest_snapshot())[0]


def _with_file(setup: Setup, **changes: Any) -> Snapshot:
    entry = _entry(setup)
    return craft_snapshot(setup.table, [dataclasses.replace(entry, file=dataclasses.replace(entry.file, **changes))])


def _foreign_manifest(setup: Setup) -> Snapshot:
    """A base list naming db2.s1's manifest (a read of t1 would show s1's rows)."""
    theirs = setup.other.store.manifest_store.read_list(setup.other.latest_snapshot().delta_manifest_list)[0]
    store = setup.table.store.manifest_store
    name, size = store.write_list([dataclasses.replace(theirs, file_name=f"../../../db2.db/s1/manifest/{theirs.file_name}")])
    return dataclasses.replace(craft_snapshot(setup.table, [_entry(setup)]), base_manifest_list=name, base_manifest_list_size=size)


def _missing_manifest(setup: Setup) -> Snapshot:
    snapshot = craft_snapshot(setup.table, [_entry(setup)])
    store = setup.table.store.manifest_store
    meta = store.read_list(snapshot.delta_manifest_list)[0]
    name, size = store.write_list([dataclasses.replace(meta, file_name="manifest-00000000-0000-0000-0000-000000000000-0")])
    return dataclasses.replace(snapshot, delta_manifest_list=name, delta_manifest_list_size=size)


def _hand_written_schema(setup: Setup) -> Snapshot:
    """schema-1 written into the table folder by the writer (an admin-only change)."""
    doc = json.loads((Path(setup.table.path) / "schema" / "schema-0").read_text())
    doc.update(id=1, options={**doc["options"], "bucket": "-1", "evil": "true"})
    (Path(setup.table.path) / "schema" / "schema-1").write_text(json.dumps(doc))
    return dataclasses.replace(craft_snapshot(setup.table, [_entry(setup)]), schema_id=1)


def _fields(**changes: Any) -> Callable[[Setup], dict[str, Any]]:
    def attack(setup: Setup) -> dict[str, Any]:
        return {**craft_snapshot(setup.table, [_entry(setup)]).to_dict(), **changes}

    return attack


ATTACKS: dict[str, tuple[Callable[[Setup], Any], str]] = {
    **{f"entry-{kind}": (lambda s, kind=kind: craft_snapshot(s.table, [hostile_entry(s.table, kind, s.root)]), "") for kind in KINDS},
    "foreign-manifest": (_foreign_manifest, "is not a file name"),
    "missing-manifest": (_missing_manifest, "does not exist"),
    "missing-manifest-list": (
        lambda s: dataclasses.replace(craft_snapshot(s.table, [_entry(s)]), base_manifest_list="manifest-list-gone"),
        "does not exist",
    ),
    "list-out-of-table": (_fields(baseManifestList="../../../db2.db/s1/manifest/manifest-list-x"), "is not a file name"),
    "missing-data-file": (lambda s: _with_file(s, file_name="data-00000000-gone-0.parquet"), "do not exist"),
    "unknown-schema": (_fields(schemaId=99), "schema 99"),
    "hand-written-schema": (_hand_written_schema, "schema 1"),
    "version": (_fields(version=99), "version"),
    "negative-count": (_fields(totalRecordCount=-1), "total_record_count"),
    "negative-time": (_fields(timeMillis=-5), "time_millis"),
    "long-overflow": (_fields(commitIdentifier=2**64), "commit_identifier"),
    "negative-size": (_fields(deltaManifestListSize=-3), "delta_manifest_list_size"),
    "statistics-out": (_fields(statistics="../../../../outside/victim.parquet"), "statistics"),
    "statistics-missing": (_fields(statistics="stats-gone"), "statistics"),
    "index-out": (_fields(indexManifest="../../../db2.db/s1/manifest/x"), "indexManifest"),
    "index-missing": (_fields(indexManifest="index-manifest-gone"), "indexManifest"),
}


@pytest.mark.parametrize("name", list(ATTACKS))
def test_hostile_commits_answer_400_and_change_nothing(setup: Setup, name: str):
    attack, expected = ATTACKS[name]
    try:
        _refused(setup, attack, expected)
    finally:
        (Path(setup.table.path) / "schema" / "schema-1").unlink(missing_ok=True)


def test_a_hand_written_schema_is_not_served(setup: Setup):
    path = Path(setup.table.path) / "schema" / "schema-1"
    _hand_written_schema(setup)
    try:
        status, body = setup.server.call("GET", T, setup.writer)
        assert status == 200 and body["schemaId"] == 0 and "evil" not in body["schema"]["options"], body
        status, body = setup.server.call(
            "POST", f"{T}", setup.server.admin_token, {"changes": [{"action": "setOption", "key": "a", "value": "b"}]}
        )
        assert status == 409, body  # the server builds no schema on one it did not write
    finally:
        path.unlink(missing_ok=True)


def test_unknown_snapshot_fields_are_dropped(setup: Setup):
    snapshot = craft_snapshot(setup.table, [_entry(setup)])
    status, body = setup.commit({**snapshot.to_dict(), "junk": "x" * 100_000})
    assert status == 200 and body == {"success": True}, body
    published = json.loads((Path(setup.table.path) / "snapshot" / f"snapshot-{snapshot.id}").read_text())
    assert "junk" not in published and published["uuid"] == snapshot.uuid
    assert setup.table.maintenance.check().invalid_snapshots == ()


def test_rollback_over_a_snapshot_written_around_the_server_deletes_nothing_outside(setup: Setup):
    for kind in KINDS:
        publish(setup.table, craft_snapshot(setup.table, [hostile_entry(setup.table, kind, setup.root)]))
        before = setup.state()
        status, body = setup.server.call("POST", f"{T}/rollback", setup.writer, {"instant": {"type": "snapshot", "snapshotId": 1}})
        assert status == 409 and "outside the table" in body["message"], body
        assert setup.state() == before
        assert {s.snapshot_id for s in setup.table.maintenance.check().invalid_snapshots} == {setup.latest_id()}
        # an admin removes the hostile snapshot by hand; the table is whole again
        (Path(setup.table.path) / "snapshot" / f"snapshot-{setup.latest_id()}").unlink()
    setup.alive()
    status, body = setup.server.call("POST", f"{T}/rollback", setup.writer, {"instant": {"type": "snapshot", "snapshotId": 1}})
    assert status == 200, body
    assert (setup.root / "outside" / "victim.parquet").read_bytes() == b"not the table's"
