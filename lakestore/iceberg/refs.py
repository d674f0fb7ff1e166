"""What follows Paimon's tag, rollback and expiration operations in the Iceberg metadata: tags
become refs (Paimon's TagCallback), a rollback takes the metadata of the removed snapshots away,
and expired snapshots leave the latest metadata."""

from __future__ import annotations

import json
from typing import Any

from lakestore.errors import SnapshotNotFoundError
from lakestore.iceberg.commit import (
    VERSION_HINT,
    IcebergSources,
    MetadataGenerator,
    delete_quietly,
    enabled,
    metadata_directory,
    metadata_path,
    metadata_versions,
    read_metadata,
    write_iceberg_metadata,
)
from lakestore.meta.paths import join
from lakestore.meta.snapshot import Snapshot


def update_tag_ref(src: IcebergSources, latest: Snapshot | None, name: str, snapshot_id: int | None) -> bool:
    """Paimon's TagCallback: add tag ``name`` on ``snapshot_id`` (None: remove it) to the refs of
    the latest Iceberg metadata file, rewritten in place. A tag on a snapshot the Iceberg
    metadata no longer holds is left out (Iceberg readers refuse refs to unknown snapshots).
    Returns whether the metadata changed."""
    if latest is None or not enabled(src.schema.options):
        return False
    path = metadata_path(metadata_directory(src.table_path, src.schema.options), latest.id)
    if not src.file_io.exists(path):
        return False
    doc = read_metadata(src.file_io, path)
    refs = dict(doc.get("refs") or {})
    if snapshot_id is None:
        changed = refs.pop(name, None) is not None
        if changed:
            doc["refs"] = refs
            src.file_io.write_bytes(path, json.dumps(doc).encode(), overwrite=True)
        # an expired snapshot's files went with its last tag: its Iceberg snapshot goes too
        return bool(after_expire(src, latest, _earliest_retained(src, doc))) or changed
    else:
        if snapshot_id not in {s["snapshot-id"] for s in doc.get("snapshots", [])}:
            return False
        refs[name] = {"snapshot-id": snapshot_id, "type": "tag", "max-ref-age-ms": 2**63 - 1}
    doc["refs"] = refs
    src.file_io.write_bytes(path, json.dumps(doc).encode(), overwrite=True)
    return True


def _earliest_retained(src: IcebergSources, doc: dict[str, Any]) -> int | None:
    """The first snapshot of the Iceberg metadata the table still has (snapshots from it on are kept)."""
    for snap in doc.get("snapshots", []):
        try:
            src.snapshot_of(snap["snapshot-id"])
        except SnapshotNotFoundError:
            continue
        return int(snap["snapshot-id"])
    return None


def after_rollback(src: IcebergSources, target: Snapshot) -> str | None:
    """After a rollback to ``target``: the Iceberg metadata of the removed snapshots goes (their
    metadata files, manifest lists and the manifests they added) and ``version-hint.text`` points
    at ``target`` again, its metadata rebuilt when it was already deleted. Without this, Iceberg
    readers would keep reading the rolled-back rows, and the next commits would find stale
    metadata under their snapshot ids. Returns the metadata path of ``target``."""
    if not enabled(src.schema.options):
        return None
    gen = MetadataGenerator(src)
    file_io = src.file_io
    path = metadata_path(gen.directory, target.id)
    # metadata rebuilt afresh writes new manifests: then every file the removed versions name goes
    keep_upto = target.id if file_io.exists(path) else 0
    for version, old_path in metadata_versions(file_io, gen.directory):
        if version <= target.id:
            continue
        try:
            doc = read_metadata(file_io, old_path)
        except (OSError, ValueError):
            doc = {}
        for snap in doc.get("snapshots", []):
            if snap["snapshot-id"] <= keep_upto:
                continue
            name = snap["manifest-list"].rsplit("/", 1)[-1]
            try:
                metas = gen.io.read_list(name)
            except OSError:
                metas = []
            for meta in metas:
                if meta.added_snapshot_id > keep_upto:
                    delete_quietly(file_io, meta.manifest_path)
            delete_quietly(file_io, gen.io.path(name))
        delete_quietly(file_io, old_path)
    if keep_upto:
        file_io.write_bytes(join(gen.directory, VERSION_HINT), str(target.id).encode(), overwrite=True)
        return path
    return write_iceberg_metadata(src, target)


def after_expire(src: IcebergSources, latest: Snapshot | None, earliest_retained: int | None) -> list[int]:
    """After Paimon snapshots expired: the latest Iceberg metadata keeps only the snapshots from
    ``earliest_retained`` on (and those a tag refers to, whose files tags keep), rewritten in
    place; the manifest lists of the others and the manifests no kept snapshot lists are
    deleted, so Iceberg time travel never names deleted data files. Returns the Iceberg snapshot
    ids removed."""
    if latest is None or earliest_retained is None or not enabled(src.schema.options):
        return []
    gen = MetadataGenerator(src)
    path = metadata_path(gen.directory, latest.id)
    if not src.file_io.exists(path):
        return []
    doc = read_metadata(src.file_io, path)
    current = doc["current-snapshot-id"]
    if all(s["snapshot-id"] >= earliest_retained or s["snapshot-id"] == current for s in doc["snapshots"]):
        return []
    tagged = {sid for _, sid in src.tags()}  # the table's tags keep their files (Iceberg refs may be stale)
    kept: list[dict[str, Any]] = []
    removed: list[dict[str, Any]] = []
    for snap in doc["snapshots"]:
        sid = snap["snapshot-id"]
        (kept if sid >= earliest_retained or sid == current or sid in tagged else removed).append(snap)
    if not removed:
        return []
    in_use = {m.manifest_path for snap in kept for m in gen.io.read_list(snap["manifest-list"])}
    doc["snapshots"] = kept
    gone = {snap["snapshot-id"] for snap in removed}
    doc["refs"] = {n: ref for n, ref in (doc.get("refs") or {}).items() if ref["snapshot-id"] not in gone}
    src.file_io.write_bytes(path, json.dumps(doc).encode(), overwrite=True)
    for snap in removed:
        name = snap["manifest-list"].rsplit("/", 1)[-1]
        try:
            metas = gen.io.read_list(name)
        except OSError:
            metas = []
        for meta in metas:
            if meta.manifest_path not in in_use:
                delete_quietly(src.file_io, meta.manifest_path)
        delete_quietly(src.file_io, gen.io.path(name))
    return [snap["snapshot-id"] for snap in removed]
