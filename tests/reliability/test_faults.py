"""Fault injection: a FileIO failing 1% of reads and writes at random (seeded) over more than
1000 operations. Every write either lands or raises, no snapshot is ever corrupt, a read either
returns exactly the landed rows or raises, and no file handle is left open."""

from __future__ import annotations

import contextlib
import gc
import os
import time
from collections import Counter

import pyarrow as pa
import pytest

import lakestore
from lakestore.errors import LakestoreError
from tests.faulty_io import FaultyFileIO

from .conftest import FAST_RETRY, SCHEMA
from .util import all_files, assert_consistent, make_catalog, open_fds, sorted_rows

MIN_OPS = 1000


def _landed(table_path: str, user: str, identifier: int) -> bool:
    """Ground truth, read without faults: did this write's APPEND snapshot land?"""
    return any(
        s.commit_user == user and s.commit_identifier == identifier and s.commit_kind == "APPEND"
        for s in lakestore.Table(table_path).snapshots()
    )


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["append", "pk"])
@pytest.mark.parametrize("seed", [1, 2])
def test_one_percent_faults_never_corrupt(tmp_path, kind, seed):
    io = FaultyFileIO(read_failure_rate=0.01, write_failure_rate=0.01, seed=seed)
    io.enabled = False
    catalog = make_catalog(tmp_path / "wh", file_io=io)
    options = dict(
        FAST_RETRY, **({"bucket": "2", "num-sorted-run.compaction-trigger": "3"} if kind == "pk" else {"compaction.min.file-num": "3"})
    )
    keys = {"primary_keys": ["dt", "id"]} if kind == "pk" else {}
    table = catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], options=options, **keys)
    gc.collect()
    fds_before = open_fds()
    io.enabled = True

    model: dict[int, tuple] = {}  # id -> row; PK writes upsert, append ids are unique
    outcomes: Counter[str] = Counter()
    i = 0
    while io.total_ops < MIN_OPS or i < 20:
        ids = [i * 10 + k for k in range(4)] + ([i * 10 - 7] if kind == "pk" and i else [])  # pk: also update an older key
        rows = [(x, f"p{x % 3}", f"v{i}") for x in ids]
        data = pa.table({"id": pa.array([r[0] for r in rows], pa.int64()), "dt": [r[1] for r in rows], "v": [r[2] for r in rows]})
        try:
            table.write_arrow(data, commit_user="u", commit_identifier=i)
            landed = True
            outcomes["write ok"] += 1
        except (OSError, LakestoreError):
            # the outcome of a failed publish is unknown to the writer; find out without faults
            landed = _landed(table.path, "u", i)
            outcomes["write failed, landed" if landed else "write failed"] += 1
        if landed:
            model.update({r[0]: r for r in rows})
        assert_consistent(table.path)
        try:
            got = sorted_rows(table.to_arrow())
        except (OSError, LakestoreError):
            outcomes["read failed"] += 1
        else:
            outcomes["read ok"] += 1
            assert got == sorted(model.values()), f"faulty read after write {i} returned wrong rows"
        i += 1

    io.enabled = False
    print(kind, seed, dict(outcomes), io.total_ops, len(io.faults))
    assert io.total_ops >= MIN_OPS
    assert io.faults, "no fault was injected: the test did not test anything"
    assert outcomes["write failed"] and outcomes["write ok"] and outcomes["read failed"], outcomes
    clean = lakestore.Table(table.path)
    assert sorted_rows(clean.to_arrow()) == sorted(model.values())
    refs = assert_consistent(table.path)
    assert not [p for p in refs if os.path.basename(p).startswith(".")], "a temporary file is referenced"
    # Failures leave only unreferenced files behind; orphan cleanup removes them all.
    clean.maintenance.remove_orphan_files(older_than_ms=int(time.time() * 1000) + 60_000)
    assert all_files(table.path) == refs
    assert sorted_rows(lakestore.Table(table.path).to_arrow()) == sorted(model.values())

    del table, clean
    gc.collect()
    assert io.open_handles == 0
    assert open_fds() == fds_before, "file descriptors leaked"


def test_faulty_io_counts_and_is_reproducible(tmp_path):
    """The wrapper itself: seeded, counts by operation, both fault timings happen."""

    def run(seed: int) -> list:
        io = FaultyFileIO(write_failure_rate=0.5, seed=seed)
        for n in range(40):
            with contextlib.suppress(OSError):
                io.write_bytes(str(tmp_path / f"f{seed}-{n}"), b"x")
        assert io.ops["write_bytes"] == 40
        return [(f.path.rsplit("-", 1)[-1], f.when) for f in io.faults]

    assert run(3) == run(3)
    faults = run(4)
    assert {w for _, w in faults} == {"before", "after"}
    io = FaultyFileIO(read_failure_rate=1.0)
    with pytest.raises(OSError, match="injected"):
        io.read_bytes(str(tmp_path / "f3-0"))
    with pytest.raises(OSError), FaultyFileIO(write_failure_rate=1.0, after_fraction=1.0).open_output(str(tmp_path / "out")) as sink:
        sink.write(b"data")
    assert not (tmp_path / "out").exists(), "a failed output stream must not publish its file"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "temporary file left behind"
