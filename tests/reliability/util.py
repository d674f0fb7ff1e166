"""Shared checks of the reliability tests: what a table references, what is on disk, and
whether every snapshot is whole."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa

import lakestore
from lakestore.format.binary_row import decode_row
from lakestore.format.partition_path import bucket_dir, partition_path
from lakestore.io.fileio import LocalFileIO
from lakestore.meta.file_scan import data_manifests, live_entries
from lakestore.meta.manifest import ManifestStore
from lakestore.meta.schema import SchemaManager
from lakestore.meta.snapshot import SnapshotManager

WORKER = str(Path(__file__).with_name("worker.py"))
REPO = str(Path(__file__).resolve().parents[2])


def run_worker(*args: str, timeout: float = 240, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run ``worker.py`` in a fresh interpreter (a real process, as a second job would be)."""
    env = dict(os.environ, PYTHONPATH=REPO)
    proc = subprocess.run([sys.executable, WORKER, *args], capture_output=True, text=True, timeout=timeout, env=env)
    if check and proc.returncode != 0:
        raise AssertionError(f"worker {args} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def spawn_worker(*args: str) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=REPO)
    return subprocess.Popen([sys.executable, WORKER, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def all_files(table_path: str) -> set[str]:
    out = set()
    for root, _, names in os.walk(table_path):
        out.update(os.path.join(root, n) for n in names)
    return out


def is_temp(path: str) -> bool:
    return os.path.basename(path).startswith(".")


def _table_files(table_path: str) -> tuple[set[str], set[str]]:
    """(needed, mentioned): files some snapshot needs to be read (its snapshot file, lists,
    manifests and live data files, plus schemas and hints), and every file any retained
    manifest entry mentions (a DELETE entry may name a file expiration already removed).
    Reads without caches so a corrupt file fails loudly."""
    io = LocalFileIO()
    schemas = SchemaManager(io, table_path)
    schema = schemas.latest()
    assert schema is not None
    options = schema.core_options()
    store = ManifestStore(io, table_path, compression=options.manifest_compression)
    needed = {schemas.path(i) for i in schemas.list_ids()}
    snap_dir = f"{table_path}/snapshot"
    needed |= {f"{snap_dir}/{h}" for h in ("LATEST", "EARLIEST") if os.path.exists(f"{snap_dir}/{h}")}
    manager = SnapshotManager(io, table_path)
    types = schema.types_of(schema.partition_keys)

    def data_path(entry) -> str:
        values = decode_row(entry.partition, types)
        part = partition_path(schema.partition_keys, types, values, default_name=options.partition_default_name)
        return f"{bucket_dir(table_path, part, entry.bucket)}/{entry.file.file_name}"

    mentioned: set[str] = set()
    for snap in manager.snapshots():
        needed.add(manager.path(snap.id))
        needed.add(store.path(snap.base_manifest_list))
        needed.add(store.path(snap.delta_manifest_list))
        for meta in data_manifests(store, snap):
            needed.add(store.path(meta.file_name))
            mentioned.update(data_path(e) for e in store.read_entries(meta.file_name))
        needed.update(data_path(e) for e in live_entries(store, snap))
    return needed, needed | mentioned


def referenced_files(table_path: str) -> set[str]:
    """Every file the retained snapshots need or mention."""
    return _table_files(table_path)[1]


def assert_consistent(table_path: str) -> set[str]:
    """Every snapshot parses and every file it needs exists; returns the referenced set."""
    needed, mentioned = _table_files(table_path)
    missing = sorted(p for p in needed if not os.path.exists(p))
    assert not missing, f"snapshots reference missing files: {missing[:5]}"
    return {p for p in mentioned if os.path.exists(p)}


def unreferenced(table_path: str) -> set[str]:
    return all_files(table_path) - referenced_files(table_path)


def sorted_rows(table: pa.Table, columns: list[str] | None = None) -> list[tuple]:
    columns = columns or table.column_names
    data = table.select(columns).to_pydict()
    return sorted(zip(*(data[c] for c in columns), strict=False))


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def make_catalog(root: Path | str, **kwargs) -> lakestore.Catalog:
    catalog = lakestore.Catalog(str(root), **kwargs)
    catalog.create_database("db", exist_ok=True)
    return catalog
