"""The one write/commit protocol every writer follows (``Table.write_arrow``, row-level changes,
column updates, deletion-vector deletes, the Spark and stream writers).

A commit that fails either provably did not land, and then everything its writer wrote is
deleted, or it may have landed (its publish was attempted: the error came after the attempt, or
the attempt's outcome is unknown), and then every file stays, because a snapshot may reference
it; ``remove_orphan_files`` reclaims them if it did not land. A retry with the same
:class:`CommitId` recognises its own landed commit (``TableCommit.commit``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from lakestore.commit.commit import CommitHook, Overwrite, TableCommit
from lakestore.meta.commit_message import CommitMessage
from lakestore.meta.snapshot import BATCH_COMMIT_IDENTIFIER, Snapshot
from lakestore.write.table_write import TableWrite


@dataclass(frozen=True)
class CommitId:
    """Who commits and which of their commits this is: Paimon's commit user and commit
    identifier. The same ``CommitId`` retried lands at most once."""

    user: str
    identifier: int = BATCH_COMMIT_IDENTIFIER

    def __post_init__(self) -> None:
        if not isinstance(self.user, str) or not self.user:
            raise ValueError("a commit user must be a non-empty string")
        if isinstance(self.identifier, bool) or not isinstance(self.identifier, int):
            raise ValueError(f"a commit identifier must be an integer, got {self.identifier!r}")


def commit_or_abort(
    committer: TableCommit,
    messages: Sequence[CommitMessage],
    *,
    identifier: int = BATCH_COMMIT_IDENTIFIER,
    abort: Callable[[], None] | None = None,
    keep: Callable[[], None] | None = None,
    overwrite: Overwrite = None,
    watermark: int | None = None,
    operation: str | None = None,
) -> Snapshot | None:
    """Commit ``messages``; returns the last snapshot created (None: nothing committed).

    On failure ``abort`` runs when the commit provably did not land (delete what was written),
    ``keep`` when it may have landed (keep every file); then the error propagates.

    Raises:
        CommitConflictError: the commit conflicts with one that landed first.
        CommitRetriesExhaustedError: concurrent commits kept winning the race.
    """
    try:
        snapshots = committer.commit(messages, identifier, overwrite=overwrite, watermark=watermark, operation=operation)
    except BaseException:
        if committer.publish_attempted:
            if keep is not None:
                keep()
        elif abort is not None:
            abort()
        raise
    return snapshots[-1] if snapshots else None


class WriteTarget(Protocol):
    """What a write and its commit are made from (``lakestore.Table``)."""

    def new_write(self, *, commit_user: str | None = None, overwrite: Overwrite = None) -> TableWrite: ...

    def new_commit(self, *, commit_user: str, hook: CommitHook | None = None) -> TableCommit: ...


def write_and_commit(
    target: WriteTarget,
    fill: Callable[[TableWrite], object],
    commit_id: CommitId,
    *,
    overwrite: Overwrite = None,
    watermark: int | None = None,
    operation: str | None = None,
    commit_empty: bool = False,
) -> Snapshot | None:
    """One write of ``target`` filled by ``fill`` and committed as ``commit_id``. Nothing is
    committed when the write produced nothing (unless ``commit_empty``, as an overwrite that
    empties partitions needs). Whatever fails, no file of the write stays behind unless the
    commit may have landed."""
    with target.new_write(commit_user=commit_id.user, overwrite=overwrite) as write:  # aborts on any error while open
        fill(write)
        messages = write.prepare_commit()
        if not messages and not commit_empty:
            return None
        committer = target.new_commit(commit_user=commit_id.user)
        snapshot = commit_or_abort(
            committer,
            messages,
            identifier=commit_id.identifier,
            keep=write.close,  # closed: the context manager no longer aborts
            overwrite=None if overwrite is False else overwrite,
            watermark=watermark,
            operation=operation,
        )
        if snapshot is not None and snapshot.id in committer.recognised:
            write.abort()  # an earlier commit of this CommitId landed; no snapshot names this write's files
        return snapshot
