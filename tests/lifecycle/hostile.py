"""Hostile table metadata for the confinement and commit-validation tests: snapshots whose
manifests name files outside their table (``..`` names, absolute and undeclared external paths,
extra files, bucket directories linked out of the table), and a fingerprint of a directory tree
to show that nothing anywhere changed."""

from __future__ import annotations

import dataclasses
import os
import time
import uuid
from pathlib import Path

from lakestore.meta.file_scan import live_entries
from lakestore.meta.manifest import ADD, ManifestEntry
from lakestore.meta.snapshot import Snapshot
from lakestore.table import Table

UP = "../../../../outside"  # from <tmp>/wh/db.db/t/bucket-N to <tmp>/outside
KINDS = ("dotdot", "absolute", "external", "extra", "symlink")


def tree_state(root: Path) -> dict[str, tuple]:
    """Every file, directory and link under ``root``: size and mtime, or the link's target."""
    out: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            if os.path.islink(path):
                out[rel] = ("link", os.readlink(path))
            elif os.path.isfile(path):
                st = os.stat(path)
                out[rel] = ("file", st.st_size, st.st_mtime_ns)
            else:
                out[rel] = ("dir",)
    return out


def victim(tmp: Path) -> Path:
    """A file outside the warehouse that hostile metadata points at (old, as orphans are)."""
    folder = tmp / "outside"
    folder.mkdir(exist_ok=True)
    path = folder / "victim.parquet"
    path.write_bytes(b"not the table's")
    os.utime(path, (time.time() - 30 * 86400,) * 2)
    return path


def hostile_entry(table: Table, kind: str, tmp: Path) -> ManifestEntry:
    """A live entry of ``table`` (unpartitioned) turned into one naming ``<tmp>/outside``."""
    target = victim(tmp)
    entry = live_entries(table.store.manifest_store, table.latest_snapshot())[0]
    f = entry.file
    if kind == "dotdot":
        f = dataclasses.replace(f, file_name=f"{UP}/{target.name}")
    elif kind == "absolute":
        f = dataclasses.replace(f, external_path=str(target))
    elif kind == "external":  # a URI, but under none of the declared data-file.external-paths
        f = dataclasses.replace(f, external_path=f"file:{target}")
    elif kind == "extra":
        f = dataclasses.replace(f, extra_files=(f"{UP}/{target.name}",))
    elif kind == "symlink":  # bucket-9 is a link to <tmp>/outside
        link = Path(table.path) / "bucket-9"
        if not link.exists():
            link.symlink_to(target.parent, target_is_directory=True)
        f = dataclasses.replace(f, file_name=target.name)
        return dataclasses.replace(entry, bucket=9, file=f)
    else:
        raise ValueError(kind)
    return dataclasses.replace(entry, file=f)


def craft_snapshot(table: Table, entries: list[ManifestEntry], **fields) -> Snapshot:
    """Write a manifest with ``entries`` and the manifest lists of the next snapshot of
    ``table`` (its delta adds them); returns that snapshot, unpublished."""
    store = table.store.manifest_store
    latest = table.latest_snapshot()
    assert latest is not None
    stats = store.read_list(latest.delta_manifest_list)[0].partition_stats
    meta = store.write_entries(entries, schema_id=table.schema.id, partition_stats=stats)
    base = store.read_list(latest.base_manifest_list) + store.read_list(latest.delta_manifest_list)
    base_name, base_size = store.write_list(base)
    delta_name, delta_size = store.write_list([meta])
    rows = sum(e.file.row_count for e in entries if e.kind == ADD)
    values = {
        "id": latest.id + 1,
        "uuid": str(uuid.uuid4()),
        "base_manifest_list": base_name,
        "base_manifest_list_size": base_size,
        "delta_manifest_list": delta_name,
        "delta_manifest_list_size": delta_size,
        "commit_kind": "APPEND",
        "time_millis": int(time.time() * 1000),
        "total_record_count": latest.total_record_count + rows,
        "delta_record_count": rows,
        **fields,
    }
    return dataclasses.replace(latest, **values)


def publish(table: Table, snapshot: Snapshot) -> Snapshot:
    """Publish ``snapshot`` directly (a writer that bypasses every check)."""
    assert table.store.snapshot_commit.commit(table.store.snapshot_manager, snapshot)
    return snapshot
