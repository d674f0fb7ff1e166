"""Deterministic benchmark data (same seed -> same rows for every system).

The upsert table of the benchmark: dt string, id bigint, name string, value double, version int,
ts bigint; 3 dt partitions, primary key (dt, id), bucket 4."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

DTS = ("2024-01-01", "2024-01-02", "2024-01-03")
SCHEMA = pa.schema(
    [
        pa.field("dt", pa.string(), nullable=False),
        pa.field("id", pa.int64(), nullable=False),
        pa.field("name", pa.string()),
        pa.field("value", pa.float64()),
        pa.field("version", pa.int32()),
        pa.field("ts", pa.int64()),
    ]
)
PRIMARY_KEYS = ("dt", "id")
PARTITION_KEYS = ("dt",)
OPTIONS = {"bucket": "4"}

# Workload 1: (new keys, updates of existing keys) per commit, in rows of the full 1M-row run.
UPSERT_PLAN = ((300_000, 0), (100_000, 150_000), (150_000, 100_000), (0, 200_000))
# Workload 4: 1M rows in 5 runs (every run touches every bucket).
COMPACTION_PLAN = ((200_000, 0), (100_000, 100_000), (100_000, 100_000), (100_000, 100_000), (100_000, 100_000))


def rows_for(ids: np.ndarray, version: int, rng: np.random.Generator) -> pa.Table:
    """Rows for ``ids``; the partition of a key is fixed (id % 3) so updates hit the same key."""
    ids = np.asarray(ids, dtype=np.int64)
    dt_dict = pa.array(DTS, pa.string())
    dt = pc.take(dt_dict, pa.array(ids % len(DTS)))
    name = pc.binary_join_element_wise(pa.scalar("customer-"), pc.cast(pa.array(ids % 1_000_003), pa.string()), pa.scalar(""))
    value = rng.random(len(ids))
    ts = 1_700_000_000_000 + version * 1_000_000 + rng.integers(0, 1_000_000, len(ids))
    return pa.Table.from_arrays(
        [
            dt,
            pa.array(ids),
            name,
            pa.array(value),
            pa.array(np.full(len(ids), version, dtype=np.int32)),
            pa.array(ts.astype(np.int64)),
        ],
        schema=SCHEMA,
    )


def upsert_commits(plan: tuple[tuple[int, int], ...], scale: float, *, seed: int = 10) -> list[pa.Table]:
    """One shuffled table per commit: new keys plus updates of keys written earlier."""
    rng = np.random.default_rng(seed)
    sized = [(int(round(n * scale)), int(round(u * scale))) for n, u in plan]
    total_new = sum(n for n, _ in sized)
    pool = rng.permutation(np.arange(total_new, dtype=np.int64) * 7 + 1_000_000_000)
    written = 0
    commits = []
    for version, (n_new, n_upd) in enumerate(sized, start=1):
        new_ids = pool[written : written + n_new]
        upd_ids = rng.choice(pool[:written], size=min(n_upd, written), replace=False) if n_upd and written else np.empty(0, np.int64)
        written += n_new
        ids = np.concatenate([new_ids, upd_ids])[rng.permutation(len(new_ids) + len(upd_ids))]
        commits.append(rows_for(ids, version, rng))
    return commits


def headline_commits(scale: float = 1.0, *, seed: int = 10) -> list[pa.Table]:
    """The headline workload: workload 1's upserts (1M rows, 4 commits, 550k keys, 3 partitions)
    with a ``name`` that differs on every row (key, version and timestamp), so string encoding
    and dictionary fallback cost what they cost on real data rather than on repeated values."""
    out = []
    for commit in upsert_commits(UPSERT_PLAN, scale, seed=seed):
        parts = [pc.cast(commit.column(c), pa.string()) for c in ("id", "version", "ts")]
        name = pc.binary_join_element_wise(
            pa.scalar("customer-"), parts[0], pa.scalar("-v"), parts[1], pa.scalar("-"), parts[2], pa.scalar("")
        )
        out.append(commit.set_column(SCHEMA.get_field_index("name"), SCHEMA.field("name"), name))
    return out


def small_commit(i: int, rows: int, *, key_space: int = 100_000, seed: int = 5) -> pa.Table:
    """Commit ``i`` of the commit-latency workload: a few upserts into one partition."""
    rng = np.random.default_rng(seed * 1_000_003 + i)
    ids = rng.choice(key_space, size=rows, replace=False).astype(np.int64) * 3 + (i % 3)
    return rows_for(ids, i, rng)


def write_ipc(table: pa.Table, path: Path) -> Path:
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    return path


def new_key_chunks(total_rows: int, *, chunk: int = 500_000, seed: int = 6):
    """A big all-new-keys input, chunk by chunk (never all in memory)."""
    rng = np.random.default_rng(seed)
    ids = rng.permutation(total_rows).astype(np.int64) + 5_000_000_000
    for start in range(0, total_rows, chunk):
        yield rows_for(ids[start : start + chunk], 1, rng)


def write_stream(path: Path, total_rows: int, *, chunk: int = 500_000, seed: int = 6) -> Path:
    """As an Arrow IPC stream (read back batch by batch)."""
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_stream(sink, SCHEMA) as writer:
        for t in new_key_chunks(total_rows, chunk=chunk, seed=seed):
            writer.write_table(t, max_chunksize=chunk)
    return path


def write_parquet(path: Path, total_rows: int, *, chunk: int = 500_000, seed: int = 7) -> Path:
    """As one parquet file (row groups of ``chunk`` rows) that Spark and pyarrow both read."""
    import pyarrow.parquet as pq  # noqa: PLC0415

    with pq.ParquetWriter(str(path), SCHEMA, compression="zstd") as writer:
        for t in new_key_chunks(total_rows, chunk=chunk, seed=seed):
            writer.write_table(t, row_group_size=chunk)
    return path
