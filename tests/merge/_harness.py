"""Drive a lakestore primary-key table and a plain-dict model through the same history:
several commits, each of several batches (a tiny write-buffer-size flushes every batch as its
own level-0 run), automatic compaction by the writers, and explicit table.compact() calls."""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from hypothesis import strategies as st

import lakestore
from lakestore.meta.file_scan import live_entries

# Small but real LSM: every batch is flushed on its own, compaction triggers after 3 runs.
LSM_OPTIONS = {
    "bucket": "2",
    "write-buffer-size": "1 b",
    "num-sorted-run.compaction-trigger": "3",
    "num-sorted-run.stop-trigger": "4",
}

ACTIONS = st.sampled_from(["none", "none", "compact", "full"])


@dataclass
class History:
    commits: list[tuple[list[list[dict[str, Any]]], str]] = field(default_factory=list)


def histories(row: st.SearchStrategy[dict[str, Any]], *, max_commits: int = 4) -> st.SearchStrategy[list]:
    batch = st.lists(row, min_size=1, max_size=5)
    commit = st.tuples(st.lists(batch, min_size=1, max_size=3), ACTIONS)
    return st.lists(commit, min_size=1, max_size=max_commits)


def new_table(schema: pa.Schema, options: dict[str, str], *, tmp: str) -> lakestore.Table:
    catalog = lakestore.Catalog(tmp)
    catalog.create_database("db", exist_ok=True)
    return catalog.create_table("db.t", schema=schema, partition_keys=["p"], primary_keys=["p", "id"], options={**LSM_OPTIONS, **options})


def commit_batches(table: lakestore.Table, schema: pa.Schema, batches: Sequence[Sequence[dict[str, Any]]]) -> None:
    user = f"u-{uuid.uuid4()}"
    write = table.new_write(commit_user=user)
    for rows in batches:
        write.write_arrow(pa.Table.from_pylist(list(rows), schema=schema))
    messages = write.prepare_commit()
    if messages:
        table.new_commit(commit_user=user).commit(messages, 1)


def as_dict(table: pa.Table) -> dict[tuple[Any, Any], dict[str, Any]]:
    out = {}
    for r in table.to_pylist():
        out[(r["p"], r["id"])] = r
    assert len(out) == table.num_rows, "duplicate keys in a read"
    return out


def levels(table: lakestore.Table) -> list[int]:
    return sorted(e.file.level for e in live_entries(table.store.manifests(), table.latest_snapshot()))


def run_history(
    schema: pa.Schema,
    options: dict[str, str],
    history: list,
    model_apply: Callable[[dict, list[dict[str, Any]]], None],
    *,
    check: Callable[[dict, dict], None] | None = None,
) -> None:
    """Apply ``history`` to a fresh table and to the model; compare after every step."""
    model: dict = {}
    compare = check or _assert_equal
    with tempfile.TemporaryDirectory(prefix="lakestore-prop-") as tmp:
        table = new_table(schema, options, tmp=tmp)
        for batches, action in history:
            commit_batches(table, schema, batches)
            for rows in batches:
                model_apply(model, rows)
            compare(as_dict(table.to_arrow()), model)
            if action == "compact":
                table.compact()
            elif action == "full":
                table.compact(full=True)
            compare(as_dict(table.to_arrow()), model)
        table.compact(full=True)
        max_level = table.options.num_levels - 1
        assert all(level == max_level for level in levels(table)), levels(table)
        compare(as_dict(table.to_arrow()), model)


def _assert_equal(got: dict, model: dict) -> None:
    assert got.keys() == model.keys(), (sorted(got), sorted(model))
    for key in model:
        assert got[key] == model[key], f"key {key}: got {got[key]} expected {model[key]}"
