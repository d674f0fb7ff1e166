"""Readers never see a partial file: every file is written under a temporary (dot) name and
published whole. A reader polls the table directory while another process writes large files
and parses every non-temporary file it sees; a control run with a non-atomic writer shows the
poller does catch partial files."""

from __future__ import annotations

import io
import os
import threading
import time

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lakestore.meta.schema import TableSchema
from lakestore.meta.snapshot import Snapshot

from .conftest import SCHEMA
from .util import is_temp, make_catalog, spawn_worker


def check_whole(path: str) -> bool:
    """Parse ``path`` completely; False if it vanished meanwhile. Raises if it is partial."""
    try:
        data = open(path, "rb").read()
    except FileNotFoundError:
        return False
    name = os.path.basename(path)
    if name.startswith("snapshot-"):
        Snapshot.from_json(data, source=path)
    elif name.startswith("schema-"):
        TableSchema.from_json(data, source=path)
    elif name in ("LATEST", "EARLIEST"):
        assert data.decode().strip().isdigit(), f"partial hint {path}: {data!r}"
    elif name.startswith("manifest"):
        list(fastavro.reader(io.BytesIO(data)))
    elif name.endswith(".parquet"):
        pq.read_table(pa.BufferReader(data))
    return True


class Poller(threading.Thread):
    def __init__(self, root: str) -> None:
        super().__init__(daemon=True)
        self.root = root
        self.stop = threading.Event()
        self.checked: set[str] = set()
        self.failures: list[tuple[str, str]] = []

    def run(self) -> None:
        while not self.stop.is_set():
            for folder, _, names in os.walk(self.root):
                for name in names:
                    path = os.path.join(folder, name)
                    if is_temp(path) or path in self.checked:
                        continue
                    try:
                        # hints are replaced in place: check them every round
                        if check_whole(path) and name not in ("LATEST", "EARLIEST"):
                            self.checked.add(path)
                    except Exception as exc:  # noqa: BLE001 - any parse failure is a partial file
                        self.failures.append((path, repr(exc)))
                        self.checked.add(path)


@pytest.mark.slow
def test_reader_never_sees_partial_files(tmp_path):
    table = make_catalog(tmp_path / "wh").create_table(
        "db.t", schema=SCHEMA, partition_keys=["dt"], options={"compaction.min.file-num": "3"}
    )
    poller = Poller(table.path)
    poller.start()
    proc = spawn_worker("big", table.path, "8")
    _, err = proc.communicate(timeout=240)
    poller.stop.set()
    poller.join()
    assert proc.returncode == 0, err
    assert not poller.failures, poller.failures[:3]
    parquet = [p for p in poller.checked if p.endswith(".parquet")]
    assert len(parquet) >= 8 and any(os.path.getsize(p) > 1_000_000 for p in parquet if os.path.exists(p))
    assert any("/snapshot/snapshot-" in p for p in poller.checked)
    assert any("/manifest/manifest-list" in p for p in poller.checked)


def test_poller_catches_a_non_atomic_writer(tmp_path):
    """Control: writing a parquet file in place, slowly, is observed half-written."""
    root = tmp_path / "t"
    root.mkdir()
    sink = pa.BufferOutputStream()
    pq.write_table(pa.table({"x": list(range(200_000))}), sink)
    data = sink.getvalue().to_pybytes()
    poller = Poller(str(root))
    poller.start()
    with open(root / "data-0.parquet", "wb") as fh:
        for start in range(0, len(data), len(data) // 20):
            fh.write(data[start : start + len(data) // 20])
            fh.flush()
            time.sleep(0.02)
    time.sleep(0.1)
    poller.stop.set()
    poller.join()
    assert poller.failures and poller.failures[0][0].endswith("data-0.parquet")
