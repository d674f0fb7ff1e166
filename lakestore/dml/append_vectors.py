"""DELETE on append tables with ``deletion-vectors.enabled``, as paimon-spark writes it
(``DeleteFromPaimonTableCommand`` -> ``PaimonSparkWriter.persistDeletionVectors``): the positions
of the selected rows are marked in their data files' deletion vectors; no data file is written.

- Tables without buckets (``bucket=-1``, Paimon's ``AppendDeleteFileMaintainer``, bucket 0): a
  partition may hold several index files. Each index file holding a vector of a data file that
  gets new deletions is retired, its other vectors rewritten unchanged into a new index file; the
  new vectors (merged with the old ones of their files) go into one more new index file.
- Tables with fixed buckets (``BucketedAppendDeleteFileMaintainer``): the bucket's one index file
  is rewritten whole (``lakestore.compact.deletion_vectors.DeletionVectorsMaintainer``).
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import uuid
from collections.abc import Callable, Mapping

import numpy as np
import pyarrow as pa

from lakestore.commit.commit import CommitHook, TableCommit
from lakestore.commit.protocol import commit_or_abort
from lakestore.compact.deletion_vectors import DeletionVectorsMaintainer
from lakestore.dml.checks import check_vectors_writable
from lakestore.dml.target import RowChangeTable
from lakestore.errors import CommitConflictError
from lakestore.format.arrow_ops import as_numpy, from_numpy, indices
from lakestore.format.deletion_vector import encode_index_file
from lakestore.meta.bucket_mode import BucketMode
from lakestore.meta.commit_message import CommitMessage
from lakestore.meta.file_scan import live_entries
from lakestore.meta.index_manifest import (
    ADD,
    DELETION_VECTORS_INDEX,
    DeletionVectorRange,
    IndexFileMeta,
    IndexManifestEntry,
    read_index_manifest,
)
from lakestore.meta.snapshot import Snapshot
from lakestore.read.deletion_vectors import DeletionFile as Where
from lakestore.read.deletion_vectors import index_dir, read_vectors, read_vectors_and_kinds
from lakestore.read.planner import ScanPlanner
from lakestore.read.predicate import Predicate, apply_filter

_POSITION = "__position"
_DV = "deletion-vectors.enabled"
BucketKey = tuple[bytes, int]


def delete_with_vectors(table: RowChangeTable, predicate: Predicate | None, *, commit_user: str) -> Snapshot | None:
    """Mark the rows ``predicate`` selects deleted; one commit of index files only (None: no row matched)."""
    return change_with_vectors(table, predicate, commit_user=commit_user, operation="DELETE")


def change_with_vectors(
    table: RowChangeTable,
    predicate: Predicate | None,
    *,
    commit_user: str,
    operation: str,
    rewrite: Callable[[pa.Table], pa.Table] | None = None,
) -> Snapshot | None:
    """Mark the rows ``predicate`` selects deleted and, with ``rewrite`` (paimon-spark's UPDATE of
    a deletion-vector append table), append ``rewrite(those rows)`` as new data files (written
    without compaction), all in one commit; None when no row matched."""
    schema = table.schema
    check_vectors_writable(schema, table=table.store.path)
    snapshot = table.store.latest_snapshot()
    if snapshot is None:
        return None
    deleted, total_buckets, selected = _selected_positions(table, snapshot, predicate, keep_rows=rewrite is not None)
    if not deleted:
        return None
    bitmap64 = bool(schema.core_options().get("deletion-vectors.bitmap64"))
    writer = _IndexWriter(table)

    def recheck(step: str) -> None:  # right before each publish attempt: no commit since the check may slip in
        if step == "before-publish":
            _check_base(table, snapshot, deleted)

    committer = committer_for(table, commit_user, hook=recheck)
    with _append_view(table).new_write(commit_user=commit_user) as write:  # aborts on any error
        try:
            messages = _messages(table, snapshot, writer, deleted, total_buckets, bitmap64=bitmap64)
            if rewrite is not None:
                messages += write.write_arrow([rewrite(rows) for rows in selected]).prepare_commit()
            _check_base(table, snapshot, deleted)
        except BaseException:
            writer.delete_written()  # nothing was committed
            raise
        # the one protocol: the vectors (and the rewrite's files, by the write's context) are
        # deleted when the commit provably did not land; a publish that may have landed keeps them
        return commit_or_abort(committer, messages, operation=operation, abort=writer.delete_written, keep=write.close)


def _append_view(table: RowChangeTable) -> RowChangeTable:
    """The table as a writer of new data files that never compacts (``write-only``), so no file
    with a vector is rewritten; its vectors are this module's to keep."""
    view = copy.copy(table)
    options = {k: v for k, v in table.schema.options.items() if k != _DV}
    view.schema = dataclasses.replace(table.schema, options={**options, "write-only": "true"})
    return view


def _check_base(table: RowChangeTable, base: Snapshot, deleted: Mapping[BucketKey, Mapping[str, np.ndarray]]) -> None:
    """``CommitConflictError`` when a commit since ``base`` removed a data file this delete marks
    (a compaction rewrote it: the vector would miss the rows) or added deletion vectors where this
    one writes (bucket-unaware tables: for the same data files; bucketed ones: in the same
    buckets, whose one index file this commit replaces), as Paimon's commit conflict detection."""
    latest = table.store.latest_snapshot()
    if latest is None or latest.id == base.id:
        return
    files = {name for per in deleted.values() for name in per}
    gone = sorted(files - {e.file.file_name for e in live_entries(table.store.manifests(), latest)})
    if gone:
        raise CommitConflictError(f"{table.store.path}: data files {gone} were rewritten or removed since snapshot {base.id}")
    before = {e.index_file.file_name for e in _dv_entries(table, base)}
    unaware = table.schema.bucket_mode is BucketMode.BUCKET_UNAWARE
    for e in _dv_entries(table, latest):
        if e.index_file.file_name in before:
            continue
        named = {r.data_file for r in e.index_file.dv_ranges or ()}
        if (files & named) if unaware else (e.partition, e.bucket) in deleted:
            raise CommitConflictError(
                f"{table.store.path}: a commit since snapshot {base.id} changed the deletion vectors this delete writes"
            )


def committer_for(table: RowChangeTable, user: str, *, hook: CommitHook | None = None) -> TableCommit:
    """The table's own commit. On an append table with deletion vectors, for commits of index files
    or dropped partitions only: the table's commits refuse such tables, since lakestore's appends
    and compactions would not keep their vectors, so this one is made on a view of the table whose
    schema lacks that one option (everything else, the schema id included, is the table's)."""
    if table.schema.primary_keys or not table.schema.core_options().deletion_vectors:
        return table.new_commit(commit_user=user, hook=hook)
    options = {k: v for k, v in table.schema.options.items() if k != _DV}
    return dataclasses.replace(table.store, schema=dataclasses.replace(table.schema, options=options)).new_commit(
        commit_user=user, hook=hook
    )


def _messages(
    table: RowChangeTable,
    snapshot: Snapshot,
    writer: _IndexWriter,
    deleted: dict[BucketKey, dict[str, np.ndarray]],
    total_buckets: dict[BucketKey, int],
    *,
    bitmap64: bool,
) -> list[CommitMessage]:
    """One message per touched bucket: the index files written and the ones they replace."""
    entries = _dv_entries(table, snapshot)
    messages = []
    for (partition, bucket), positions in sorted(deleted.items()):
        if table.schema.bucket_mode is BucketMode.BUCKET_UNAWARE:
            new, retired = _unaware(table, writer, [e for e in entries if e.partition == partition], positions, bitmap64=bitmap64)
        else:
            maintainer = DeletionVectorsMaintainer.restore(
                table.store.file_io, table.store.path, snapshot, partition=partition, bucket=bucket, bitmap64=bitmap64
            )
            writer.adopt(maintainer)
            for name, rows in positions.items():
                maintainer.delete(name, rows)
            new, retired = maintainer.write_index()
        messages.append(
            CommitMessage(partition, bucket, total_buckets[(partition, bucket)], new_index_files=new, deleted_index_files=retired)
        )
    return messages


def _selected_positions(
    table: RowChangeTable, snapshot: Snapshot, predicate: Predicate | None, *, keep_rows: bool = False
) -> tuple[dict[BucketKey, dict[str, np.ndarray]], dict[BucketKey, int], list[pa.Table]]:
    """(partition, bucket) -> data file -> positions of live rows ``predicate`` selects, each
    bucket's total bucket count, and (``keep_rows``) those rows, every column. Every candidate
    file is read whole (positions count every row)."""
    schema = table.schema
    reader = table.store.split_reader(schema)
    columns = schema.field_names if keep_rows else sorted(predicate.columns()) if predicate is not None else [schema.field_names[0]]
    out: dict[BucketKey, dict[str, np.ndarray]] = {}
    totals: dict[BucketKey, int] = {}
    kept: list[pa.Table] = []
    for split in ScanPlanner(schema, table.store.manifests()).plan(snapshot, predicate):
        old = read_vectors(table.store.file_io, table.store.path, dict(split.deletion_files))
        for f in split.files:
            rows = reader.read_file(split.partition_values, split.bucket, f, columns, system=False)
            rows = rows.append_column(_POSITION, from_numpy(np.arange(rows.num_rows, dtype=np.int64)))
            positions = (
                as_numpy(apply_filter(rows, predicate).column(_POSITION).combine_chunks()) if predicate else np.arange(rows.num_rows)
            )
            if f.file_name in old:
                positions = np.setdiff1d(positions, old[f.file_name].astype(np.int64), assume_unique=True)
            if len(positions):
                out.setdefault((split.partition, split.bucket), {})[f.file_name] = positions.astype(np.int64)
                totals[(split.partition, split.bucket)] = split.total_buckets
                if keep_rows:
                    kept.append(rows.take(indices(positions)).drop_columns([_POSITION]))
    return out, totals, kept


def _dv_entries(table: RowChangeTable, snapshot: Snapshot) -> list[IndexManifestEntry]:
    if not snapshot.index_manifest:
        return []
    return [
        e
        for e in read_index_manifest(table.store.file_io, table.store.path, snapshot.index_manifest)
        if e.kind == ADD and e.index_file.index_type == DELETION_VECTORS_INDEX
    ]


def _unaware(
    table: RowChangeTable, writer: _IndexWriter, entries: list[IndexManifestEntry], deleted: Mapping[str, np.ndarray], *, bitmap64: bool
) -> tuple[tuple[IndexFileMeta, ...], tuple[IndexFileMeta, ...]]:
    """Paimon's ``AppendDeleteFileMaintainer.persist`` for one partition: touched index files
    rewritten without the changed vectors, the changed vectors (old positions merged in) in a new file."""
    new: list[IndexFileMeta] = []
    retired: list[IndexFileMeta] = []
    changed: dict[str, np.ndarray] = {}
    kinds: dict[str, bool] = {}
    for entry in entries:
        meta = entry.index_file
        ranges = {r.data_file: r for r in meta.dv_ranges or ()}
        if not set(ranges) & set(deleted):
            continue
        where = {name: Where(meta.file_name, r.offset, r.length, external_path=meta.external_path) for name, r in ranges.items()}
        read = read_vectors_and_kinds(table.store.file_io, table.store.path, where)
        unchanged = {name: read[name][0] for name in ranges if name not in deleted}
        if unchanged:
            new.append(writer.write(unchanged, bitmap64=bitmap64, kinds={n: read[n][1] for n in unchanged}))
        retired.append(meta)
        for name in ranges:
            if name in deleted:
                changed[name] = read[name][0]
    merged = {}
    for name in sorted(deleted):
        positions = deleted[name]
        if name in changed:
            positions = np.union1d(positions, changed[name].astype(np.int64))
        merged[name] = positions
        kinds[name] = bitmap64  # a new vector, merged with the old one: the table's kind (Paimon's merge keeps the new one's)
    new.append(writer.write(merged, bitmap64=bitmap64, kinds=kinds))
    return tuple(new), tuple(retired)


class _IndexWriter:
    """Writes deletion-vector index files (``index/index-<uuid>-<n>``) and can take them back."""

    def __init__(self, table: RowChangeTable) -> None:
        self.table = table
        self._prefix = f"index-{uuid.uuid4()}"
        self._counter = itertools.count()
        self._written: list[str] = []
        self._maintainers: list[DeletionVectorsMaintainer] = []

    def write(self, vectors: Mapping[str, np.ndarray], *, bitmap64: bool, kinds: Mapping[str, bool]) -> IndexFileMeta:
        data, ranges = encode_index_file(vectors, bitmap64=bitmap64, kinds=kinds)
        name = f"{self._prefix}-{next(self._counter)}"
        path = f"{index_dir(self.table.store.path)}/{name}"
        self.table.store.file_io.write_bytes(path, data)
        self._written.append(path)
        dv_ranges = tuple(DeletionVectorRange(r.data_file, r.offset, r.length, r.cardinality) for r in ranges)
        return IndexFileMeta(DELETION_VECTORS_INDEX, name, len(data), len(ranges), dv_ranges)

    def adopt(self, maintainer: DeletionVectorsMaintainer) -> None:
        self._maintainers.append(maintainer)

    def delete_written(self) -> None:
        for path in self._written:
            self.table.store.file_io.delete(path)
        for maintainer in self._maintainers:
            maintainer.delete_written()
        self._written.clear()
