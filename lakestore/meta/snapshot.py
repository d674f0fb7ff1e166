"""Snapshots (``snapshot/snapshot-N``): the commit points of a table, and the LATEST/EARLIEST hints."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from lakestore.errors import CorruptMetadataError, SnapshotNotFoundError
from lakestore.io.fileio import FileIO
from lakestore.meta.kinds import COMMIT_KINDS, CommitKind

SNAPSHOT_VERSION = 3
BATCH_COMMIT_IDENTIFIER = 9223372036854775807

# Snapshot JSON key of every field, in the order Paimon 2.0 writes them (``logOffsets``, gone
# since 1.4, last: only carried when a parent has offsets).
_WIRE_NAMES = {
    "version": "version",
    "uuid": "uuid",
    "id": "id",
    "schema_id": "schemaId",
    "base_manifest_list": "baseManifestList",
    "base_manifest_list_size": "baseManifestListSize",
    "delta_manifest_list": "deltaManifestList",
    "delta_manifest_list_size": "deltaManifestListSize",
    "changelog_manifest_list": "changelogManifestList",
    "changelog_manifest_list_size": "changelogManifestListSize",
    "index_manifest": "indexManifest",
    "commit_user": "commitUser",
    "commit_identifier": "commitIdentifier",
    "commit_kind": "commitKind",
    "time_millis": "timeMillis",
    "total_record_count": "totalRecordCount",
    "delta_record_count": "deltaRecordCount",
    "changelog_record_count": "changelogRecordCount",
    "watermark": "watermark",
    "statistics": "statistics",
    "properties": "properties",
    "next_row_id": "nextRowId",
    "operation": "operation",
    "log_offsets": "logOffsets",
}
_REQUIRED = (
    "version",
    "id",
    "schema_id",
    "base_manifest_list",
    "delta_manifest_list",
    "total_record_count",
    "delta_record_count",
    "commit_user",
    "commit_identifier",
    "commit_kind",
    "time_millis",
)


@dataclass(frozen=True)
class Snapshot:
    id: int
    schema_id: int
    base_manifest_list: str
    delta_manifest_list: str
    commit_user: str
    commit_identifier: int
    commit_kind: CommitKind
    time_millis: int
    total_record_count: int
    delta_record_count: int
    version: int = SNAPSHOT_VERSION
    base_manifest_list_size: int | None = None
    delta_manifest_list_size: int | None = None
    changelog_manifest_list: str | None = None
    changelog_manifest_list_size: int | None = None
    index_manifest: str | None = None
    log_offsets: dict[str, int] | None = None
    changelog_record_count: int | None = None
    watermark: int | None = None
    statistics: str | None = None
    properties: dict[str, str] | None = None
    next_row_id: int | None = None
    uuid: str | None = None  # Paimon 2.0: a fresh random UUID per snapshot (None in older ones)
    operation: str | None = None  # Paimon 2.0: set only by some engine operations (e.g. TRUNCATE)
    # JSON fields lakestore does not interpret (written by another engine or a newer Paimon):
    # kept verbatim and carried into the next snapshot.
    unknown_fields: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The snapshot's JSON document as Paimon writes it, unknown fields carried over."""
        out: dict[str, Any] = {}
        for attr, wire in _WIRE_NAMES.items():
            value = getattr(self, attr)
            if value is not None:
                out[wire] = value
        for key, value in self.unknown_fields.items():
            out.setdefault(key, value)
        return out

    def to_json(self) -> str:
        """The ``snapshot-N`` file's text."""
        return json.dumps(self.to_dict(), indent=2)

    @classmethod
    def from_dict(cls, doc: dict[str, Any], *, source: str) -> Snapshot:
        """The snapshot a parsed ``snapshot-N`` document describes (``source``: where it was read,
        for errors); fields lakestore does not interpret are kept (``unknown_fields``).

        Raises:
            CorruptMetadataError: a required field is missing or mistyped, or an unknown commit kind.
        """
        try:
            if not isinstance(doc, dict):
                raise ValueError("not a JSON object")
            reverse = {wire: attr for attr, wire in _WIRE_NAMES.items()}
            values: dict[str, Any] = {reverse[k]: v for k, v in doc.items() if k in reverse}
            values["unknown_fields"] = {k: v for k, v in doc.items() if k not in reverse}
            for attr in _REQUIRED:
                if attr not in values or values[attr] is None and attr != "commit_user":
                    raise ValueError(f"missing required field {_WIRE_NAMES[attr]!r}")
            for attr in ("id", "schema_id", "commit_identifier", "time_millis", "total_record_count", "delta_record_count"):
                if isinstance(values[attr], bool) or not isinstance(values[attr], int):
                    raise ValueError(f"field {_WIRE_NAMES[attr]!r} is not an integer")
            for attr in ("base_manifest_list", "delta_manifest_list", "commit_kind"):
                if not isinstance(values[attr], str):
                    raise ValueError(f"field {_WIRE_NAMES[attr]!r} is not a string")
            if values["commit_kind"] not in COMMIT_KINDS:
                raise ValueError(f"unknown commitKind {values['commit_kind']!r}")
            if values.get("log_offsets") == {}:
                values["log_offsets"] = None
            return cls(**values)
        except (ValueError, TypeError, KeyError) as exc:
            raise CorruptMetadataError(source, f"invalid snapshot: {exc}") from exc

    @classmethod
    def from_json(cls, text: str | bytes, *, source: str) -> Snapshot:
        """The snapshot of a ``snapshot-N`` file's text (``source``: its path, for errors).

        Raises:
            CorruptMetadataError: not JSON, or not a valid Paimon snapshot.
        """
        try:
            doc = json.loads(text)
        except (ValueError, UnicodeDecodeError) as exc:
            raise CorruptMetadataError(source, f"invalid JSON: {exc}") from exc
        return cls.from_dict(doc, source=source)


class SnapshotManager:
    """Locates snapshots of one table. LATEST/EARLIEST are hints only: they are checked against
    the files and ignored when missing, stale or garbage."""

    def __init__(self, file_io: FileIO, table_path: str) -> None:
        self.file_io = file_io
        self.table_path = table_path
        self.snapshot_dir = f"{table_path}/snapshot"
        # Long-lived changelogs (``changelog/changelog-N``): the metadata of expired snapshots
        # whose changelog outlives them when changelog retention exceeds snapshot retention.
        self.changelog_dir = f"{table_path}/changelog"

    def path(self, snapshot_id: int) -> str:
        return f"{self.snapshot_dir}/snapshot-{snapshot_id}"

    def exists(self, snapshot_id: int) -> bool:
        return self.file_io.exists(self.path(snapshot_id))

    def get(self, snapshot_id: int) -> Snapshot:
        path = self.path(snapshot_id)
        try:
            data = self.file_io.read_bytes(path)
        except FileNotFoundError as exc:
            raise SnapshotNotFoundError(f"snapshot {snapshot_id} does not exist in {self.table_path}") from exc
        snapshot = Snapshot.from_json(data, source=path)
        if snapshot.id != snapshot_id:
            raise CorruptMetadataError(path, f"holds snapshot id {snapshot.id}")
        return snapshot

    def list_ids(self) -> list[int]:
        ids = []
        for name in self.file_io.list_names(self.snapshot_dir):
            if name.startswith("snapshot-") and name[9:].isascii() and name[9:].isdigit():
                ids.append(int(name[9:]))
        return sorted(ids)

    def _hint(self, name: str) -> int | None:
        try:
            text = self.file_io.read_bytes(f"{self.snapshot_dir}/{name}").decode().strip()
        except (FileNotFoundError, UnicodeDecodeError, OSError):
            return None
        return int(text) if text.isascii() and text.isdigit() else None  # int() also takes "²"-like digits

    def latest_id(self) -> int | None:
        hint = self._hint("LATEST")
        if hint is not None and self.exists(hint):
            latest = hint
            while self.exists(latest + 1):
                latest += 1
            return latest
        ids = self.list_ids()
        return ids[-1] if ids else None

    def earliest_id(self) -> int | None:
        hint = self._hint("EARLIEST")
        if hint is not None and self.exists(hint) and not self.exists(hint - 1):
            return hint
        ids = self.list_ids()
        return ids[0] if ids else None

    def latest(self) -> Snapshot | None:
        latest = self.latest_id()
        return self.get(latest) if latest is not None else None

    def snapshots(self) -> Iterator[Snapshot]:
        for snapshot_id in self.list_ids():
            try:
                yield self.get(snapshot_id)
            except SnapshotNotFoundError:
                continue  # expired while listing

    # -- long-lived changelogs ------------------------------------------------------------------
    def changelog_path(self, snapshot_id: int) -> str:
        return f"{self.changelog_dir}/changelog-{snapshot_id}"

    def changelog_ids(self) -> list[int]:
        ids = []
        for name in self.file_io.list_names(self.changelog_dir):
            if name.startswith("changelog-") and name[10:].isascii() and name[10:].isdigit():
                ids.append(int(name[10:]))
        return sorted(ids)

    def get_changelog(self, snapshot_id: int) -> Snapshot:
        path = self.changelog_path(snapshot_id)
        try:
            data = self.file_io.read_bytes(path)
        except FileNotFoundError as exc:
            raise SnapshotNotFoundError(f"changelog {snapshot_id} does not exist in {self.table_path}") from exc
        return Snapshot.from_json(data, source=path)

    def publish_changelog(self, snapshot: Snapshot) -> None:
        """Keep an expiring snapshot's metadata as ``changelog/changelog-N`` (overwriting a copy a
        crashed expiration left), then move the ``LATEST`` hint of that folder."""
        self.file_io.write_bytes(self.changelog_path(snapshot.id), snapshot.to_json().encode())
        self.file_io.write_bytes(f"{self.changelog_dir}/LATEST", str(snapshot.id).encode())

    def get_for_changes(self, snapshot_id: int) -> Snapshot:
        """Snapshot ``snapshot_id`` for reading its changes: the snapshot itself, or its
        long-lived changelog once the snapshot expired."""
        try:
            return self.get(snapshot_id)
        except SnapshotNotFoundError:
            if self.file_io.exists(self.changelog_path(snapshot_id)):
                return self.get_changelog(snapshot_id)
            raise

    def write_latest_hint(self, snapshot_id: int) -> None:
        self.file_io.write_bytes(f"{self.snapshot_dir}/LATEST", str(snapshot_id).encode())

    def write_earliest_hint(self, snapshot_id: int) -> None:
        self.file_io.write_bytes(f"{self.snapshot_dir}/EARLIEST", str(snapshot_id).encode())

    def find_committed(self, commit_user: str, commit_identifier: int, commit_kind: CommitKind, *, after_id: int | None) -> Snapshot | None:
        """The snapshot committed by ``commit_user`` with this identifier and kind, if it landed
        after snapshot ``after_id`` (None = search all retained snapshots, newest first).

        The scan stops at the first missing (expired) snapshot instead of listing the snapshot
        folder. It does not stop at a smaller identifier of the same user: pipelines re-run old
        partitions with their old identifiers, out of order."""
        latest = self.latest_id()
        if latest is None:
            return None
        lower = (after_id or 0) + 1
        for snapshot_id in range(latest, lower - 1, -1):
            try:
                snapshot = self.get(snapshot_id)
            except SnapshotNotFoundError:
                break
            if snapshot.commit_user != commit_user:
                continue
            if snapshot.commit_identifier == commit_identifier and snapshot.commit_kind == commit_kind:
                return snapshot
        return None

    def latest_identifier_of(self, commit_user: str) -> int | None:
        """Highest commit identifier ``commit_user`` has landed (for ``filter_committed``)."""
        latest = self.latest_id()
        if latest is None:
            return None
        for snapshot_id in range(latest, 0, -1):
            try:
                snapshot = self.get(snapshot_id)
            except SnapshotNotFoundError:
                break
            if snapshot.commit_user == commit_user:
                return snapshot.commit_identifier
        return None
