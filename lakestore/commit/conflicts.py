"""Conflict detection of a commit (Paimon's ``ConflictDetection``): what a concurrent commit that
landed first may have changed under this one, which retrying cannot fix.

``TableCommit`` re-reads the live files of the partitions a commit touches before each publish
attempt and asks these checks; a conflict raises ``CommitConflictError`` (nothing of the attempt
is published, and the committer deletes what its writers wrote):

- a file this commit deletes (a compaction's input, an overwritten file) is no longer live;
- a partition's bucket count changed without an overwrite;
- on primary-key tables, two files on one level (above 0) of a bucket overlap in key range;
- an index file this commit retires (a deletion-vector or hash index) is no longer live.
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import dataclass, field

from lakestore.errors import CommitConflictError
from lakestore.format.binary_row import decode_row
from lakestore.format.types import DataType
from lakestore.meta.commit_message import CommitMessage
from lakestore.meta.index_manifest import ADD as INDEX_ADD
from lakestore.meta.index_manifest import DELETE as INDEX_DELETE
from lakestore.meta.index_manifest import IndexManifestEntry
from lakestore.meta.manifest import ADD, DELETE, DataFileMeta, ManifestEntry

__all__ = ["IndexChanges", "check_file_conflicts", "check_level_overlaps"]


@dataclass
class IndexChanges:
    """Index files one snapshot adds and retires."""

    added: list[IndexManifestEntry] = field(default_factory=list)
    deleted: list[IndexManifestEntry] = field(default_factory=list)

    def add(self, message: CommitMessage, *, types: Container[str]) -> None:
        """The message's index files of the given index types."""
        m = message
        self.added += [IndexManifestEntry(INDEX_ADD, m.partition, m.bucket, f) for f in m.new_index_files if f.index_type in types]
        self.deleted += [IndexManifestEntry(INDEX_DELETE, m.partition, m.bucket, f) for f in m.deleted_index_files if f.index_type in types]

    def with_deleted(self, entries: Sequence[IndexManifestEntry]) -> IndexChanges:
        """These changes, also retiring ``entries`` (an overwrite's replaced index files)."""
        names = {e.index_file.file_name for e in self.deleted}
        extra = [
            IndexManifestEntry(INDEX_DELETE, e.partition, e.bucket, e.index_file) for e in entries if e.index_file.file_name not in names
        ]
        return IndexChanges(list(self.added), self.deleted + extra)

    def __bool__(self) -> bool:
        return bool(self.added or self.deleted)

    def check_conflicts(self, live: Sequence[IndexManifestEntry]) -> None:
        """Raises:
        CommitConflictError: an index file these changes retire is no longer in ``live``."""
        names = {e.index_file.file_name for e in live}
        for entry in self.deleted:
            if entry.index_file.file_name not in names:
                raise CommitConflictError(
                    f"index file {entry.index_file.file_name} (bucket {entry.bucket}) is no longer live: a concurrent commit replaced it"
                )


def check_file_conflicts(
    base_live: Sequence[ManifestEntry], delta: Sequence[ManifestEntry], *, key_types: Sequence[DataType] | None, source: str
) -> None:
    """Check ``delta`` (a commit's manifest entries) against ``base_live`` (the live entries of
    the partitions it touches in the latest snapshot). ``key_types``: the trimmed primary key's
    types of a primary-key table (None: an append table, whose levels are not checked);
    ``source`` names the manifests in errors.

    Raises:
        CommitConflictError: a deleted file is no longer live, a partition's bucket count
            changed, or (primary-key tables) files of one level overlap in key range.
    """
    live_ids = {e.identifier for e in base_live}
    for entry in delta:
        if entry.kind == DELETE and entry.identifier not in live_ids:
            raise CommitConflictError(
                f"file {entry.file.file_name} (partition bucket {entry.bucket}) is no longer live: a concurrent commit removed it"
            )
    # as Paimon's ConflictDetection: entries without a bucket count (postpone bucket -2,
    # dynamic buckets -1) stand beside a partition's real buckets
    totals: dict[bytes, int] = {}
    for e in base_live:
        if e.total_buckets > 0:
            totals.setdefault(e.partition, e.total_buckets)
    for entry in delta:
        existing = totals.get(entry.partition)
        if entry.kind == ADD and entry.total_buckets > 0 and existing is not None and existing != entry.total_buckets:
            raise CommitConflictError(f"bucket count changed from {existing} to {entry.total_buckets} without an overwrite")
    if key_types is not None:
        check_level_overlaps(base_live, delta, key_types=key_types, source=source)


def check_level_overlaps(
    base_live: Sequence[ManifestEntry], delta: Sequence[ManifestEntry], *, key_types: Sequence[DataType], source: str
) -> None:
    """Files on one level above 0 of a bucket must not overlap in key range after ``delta``.

    Raises:
        CommitConflictError: two files of a level ``delta`` adds to overlap.
    """
    touched = {(e.partition, e.bucket) for e in delta if e.kind == ADD and e.file.level > 0}
    if not touched:
        return
    deleted = {e.identifier for e in delta if e.kind == DELETE}
    by_level: dict[tuple[bytes, int, int], list[DataFileMeta]] = {}
    for e in [*base_live, *(d for d in delta if d.kind == ADD)]:
        if (e.partition, e.bucket) in touched and e.file.level > 0 and e.identifier not in deleted:
            by_level.setdefault((e.partition, e.bucket, e.file.level), []).append(e.file)
    for (_, bucket, level), files in by_level.items():
        ranges = sorted(
            (decode_row(f.min_key, key_types, source=source), decode_row(f.max_key, key_types, source=source), f.file_name) for f in files
        )
        for (_, prev_max, prev_name), (cur_min, _, cur_name) in zip(ranges, ranges[1:], strict=False):
            if cur_min <= prev_max:
                raise CommitConflictError(f"files {prev_name} and {cur_name} overlap in key range on level {level} of bucket {bucket}")
