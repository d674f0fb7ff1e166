"""Child-process jobs of the reliability tests (run as ``python worker.py <mode> ...``).

Each mode is what one independent writer process would do; the tests start several at once or
kill one part-way through a commit.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sys
import time
from contextlib import contextmanager

import pyarrow as pa

import lakestore
from lakestore.errors import CommitConflictError
from lakestore.io.fileio import LocalFileIO
from lakestore.meta.commit_message import CommitMessage
from lakestore.read.planner import Split
from lakestore.write.file_writer import DataFileWriter, FileTarget
from lakestore.write.input import partition_spec


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _rows(ids: list[int], tag: str) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "dt": [f"p{i % 3}" for i in ids], "v": [f"{tag}-{i}" for i in ids]})


def append(table_path: str, writer: int, commits: int) -> None:
    """``commits`` commits of 3 rows each; ids are unique per writer and commit."""
    table = lakestore.Table(table_path)
    landed = []
    for i in range(commits):
        ids = [writer * 100_000 + i * 10 + k for k in range(3)]
        snap = table.write_arrow(_rows(ids, f"w{writer}"), commit_user=f"writer-{writer}", commit_identifier=i)
        landed.append(snap.id)
    print(json.dumps(landed))


def compact_once(table: lakestore.Table, rng: random.Random, user: str, identifier: int) -> str:
    """Rewrite 2+ live files of one bucket into one (same rows) and commit them as a compaction
    through CommitMessage compact_before/compact_after; returns "landed", "conflict" or "skip"."""
    splits = [s for s in table.scan().plan() if len(s.files) >= 2]
    if not splits:
        return "skip"
    split = rng.choice(splits)
    files = tuple(rng.sample(list(split.files), k=min(len(split.files), rng.randint(2, 4))))
    rows = table.store.split_reader().read(
        Split(split.partition, split.partition_values, split.bucket, split.total_buckets, files, True), table.schema.field_names, None
    )
    spec = partition_spec(table.schema, split.partition_values)
    writer = DataFileWriter(table.store.file_io, table.schema, FileTarget(table.path, spec.path, split.bucket))
    after = writer.write_append(rows, first_sequence=min(f.min_sequence_number for f in files))
    message = CommitMessage(split.partition, split.bucket, split.total_buckets, compact_before=files, compact_after=tuple(after))
    try:
        table.new_commit(commit_user=user).commit([message], identifier)
    except CommitConflictError:
        return "conflict"
    return "landed"


def race(table_path: str, worker: int, rounds: int, out_path: str) -> None:
    """Mixed appends and compactions racing other workers; logs every outcome for the model."""
    rng = random.Random(worker)
    table = lakestore.Table(table_path)
    log = []
    for i in range(rounds):
        user = f"racer-{worker}"
        if worker % 2 == 0 or rng.random() < 0.3:
            ids = [worker * 100_000 + i * 10 + k for k in range(2)]
            try:
                table.write_arrow(_rows(ids, f"r{worker}"), commit_user=user, commit_identifier=i)
                log.append({"kind": "append", "ids": ids, "outcome": "landed"})
            except CommitConflictError as exc:
                log.append({"kind": "append", "ids": ids, "outcome": "conflict", "error": str(exc)})
        elif hasattr(table, "compact") and rng.random() < 0.3:
            try:
                table.compact(full=True)
                log.append({"kind": "table.compact", "outcome": "landed"})
            except CommitConflictError as exc:
                log.append({"kind": "table.compact", "outcome": "conflict", "error": str(exc)})
        else:
            try:
                log.append({"kind": "compact", "outcome": compact_once(table, rng, user, i)})
            except lakestore.LakestoreError as exc:
                log.append({"kind": "compact", "outcome": "error", "error": repr(exc)})
    with open(out_path, "w") as fh:
        json.dump(log, fh)


def expire(table_path: str, stop_path: str, out_path: str) -> None:
    """Expire aggressively (keep 3 snapshots) until ``stop_path`` appears; log what expired."""
    table = lakestore.Table(table_path)
    expired = 0
    errors = []
    while not os.path.exists(stop_path):
        try:
            result = table.maintenance.expire_snapshots(num_retained_min=3, num_retained_max=3, time_retained_ms=0)
            expired += result.expired
        except Exception as exc:  # noqa: BLE001 - logged for the test to judge
            errors.append(repr(exc))
        time.sleep(0.05)
    with open(out_path, "w") as fh:
        json.dump({"expired": expired, "errors": errors}, fh)


class _DyingFileIO(LocalFileIO):
    """Kills the process while the ``n``-th data file is being written (bytes on disk under the
    temporary name, not yet published)."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.left = n

    @contextmanager
    def open_output(self, path: str):
        with super().open_output(path) as sink:
            yield sink
            self.left -= 1
            if self.left == 0:
                sink.flush()
                _die()


def crash(table_path: str, step: str, user: str, identifier: int, first_id: int, messages_path: str) -> None:
    """Write 6 rows over 3 partitions, checkpoint the commit messages, then commit and die at
    ``step`` ("during-data", "after-data" or a TableCommit hook step)."""
    file_io = _DyingFileIO(2) if step == "during-data" else LocalFileIO()
    table = lakestore.Table(table_path, file_io=file_io)
    write = table.new_write(commit_user=user)
    write.write_arrow(_rows(list(range(first_id, first_id + 6)), "crash"))
    messages = write.prepare_commit()
    with open(messages_path + ".tmp", "wb") as fh:  # the job's checkpoint of its committables
        fh.write(json.dumps([m.to_bytes().hex() for m in messages]).encode())
    os.replace(messages_path + ".tmp", messages_path)
    if step == "after-data":
        _die()

    def hook(name: str) -> None:
        if name == step:
            _die()

    table.new_commit(commit_user=user, hook=hook).commit(messages, identifier)
    print("no crash")


def big_writes(table_path: str, commits: int) -> None:
    """Commits of multi-megabyte data files, so a non-atomic write would be caught half-done."""
    table = lakestore.Table(table_path)
    rng = random.Random(1)
    for i in range(commits):
        n = 40_000
        ids = [i * n + k for k in range(n)]
        payload = [rng.randbytes(24).hex() for _ in range(n)]
        table.write_arrow(pa.table({"id": pa.array(ids, pa.int64()), "dt": [f"p{i % 2}"] * n, "v": payload}))
        time.sleep(0.01)


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "append":
        append(args[0], int(args[1]), int(args[2]))
    elif mode == "race":
        race(args[0], int(args[1]), int(args[2]), args[3])
    elif mode == "crash":
        crash(args[0], args[1], args[2], int(args[3]), int(args[4]), args[5])
    elif mode == "expire":
        expire(args[0], args[1], args[2])
    elif mode == "big":
        big_writes(args[0], int(args[1]))
    else:
        raise SystemExit(f"unknown mode {mode}")
