"""The one write/commit protocol every writer follows (``Table.write_arrow``, row-level changes,
column updates, deletion-vector deletes, the Spark and stream writers).

A commit that fails either provably did not land, and then everything its writer wrote is
deleted, or it may have landed (its publish was attempted: the error came after the attempt, or
the attempt's outcome is unknown), and then every file stays, because a snapshot may reference
it; ``remove_orphan_files`` reclaims them if it did not land. A retry with the same
:class:`CommitId` recognises its own landed commit (``TableCommit.commit``).

A write has two halves, which may run in different processes: :func:`write_messages` (fill a
``TableWrite``, return its messages; a failure deletes its files) and :func:`commit_written`
(commit them as one ``CommitId``), where "did it land?" is decided, once: a failure that
provably did not land deletes the files, one that may have keeps them, and a ``CommitId`` that
had landed before commits nothing and deletes the rerun's files (``CommitOutcome.already_landed``).
:func:`write_and_commit` (``Table.write_arrow``, row-level changes) runs both; Spark tasks run the
write half and the driver the commit half. An abort that runs after the commit step in another
process (Spark's) uses :func:`abort_written`, which knows whether that step was reached and asks
nothing again; a process that cannot know it asks the snapshots (:func:`abort_unless_landed`,
:func:`find_landed`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from lakestore.commit.callbacks import CommitProperties
from lakestore.commit.commit import CommitHook, CommitResult, Overwrite, TableCommit
from lakestore.meta.commit_message import CommitMessage
from lakestore.meta.kinds import CommitKind
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
    commit_properties: CommitProperties | None = None,
) -> Snapshot | None:
    """Commit ``messages``; returns the last snapshot created (None: nothing committed).
    ``commit_properties``: the commit's switches (``TableCommit.commit``).

    On failure ``abort`` runs when the commit provably did not land (delete what was written),
    ``keep`` when it may have landed (keep every file); then the error propagates.

    Raises:
        CommitConflictError: the commit conflicts with one that landed first.
        CommitRetriesExhaustedError: concurrent commits kept winning the race.
    """
    result = _commit_or_abort(
        committer,
        messages,
        identifier=identifier,
        abort=abort,
        keep=keep,
        overwrite=overwrite,
        watermark=watermark,
        operation=operation,
        commit_properties=commit_properties,
    )
    return result[-1] if result else None


def _commit_or_abort(
    committer: TableCommit,
    messages: Sequence[CommitMessage],
    *,
    identifier: int,
    abort: Callable[[], None] | None,
    keep: Callable[[], None] | None,
    overwrite: Overwrite,
    watermark: int | None,
    operation: str | None,
    commit_properties: CommitProperties | None,
) -> CommitResult:
    try:
        return committer.commit(
            messages, identifier, overwrite=overwrite, watermark=watermark, operation=operation, commit_properties=commit_properties
        )
    except BaseException:
        # a failure has no result: the committer says whether the publish was attempted
        if committer.publish_attempted:
            if keep is not None:
                keep()
        elif abort is not None:
            abort()
        raise


class Committer(Protocol):
    """What commits messages (``lakestore.Table``, its ``FileStore``)."""

    def new_commit(self, *, commit_user: str, hook: CommitHook | None = None) -> TableCommit: ...


class WriteTarget(Committer, Protocol):
    """What a write and its commit are made from (``lakestore.Table``)."""

    def new_write(self, *, commit_user: str | None = None, overwrite: Overwrite = None) -> TableWrite: ...


@dataclass(frozen=True)
class CommitOutcome:
    """What the commit half of the protocol (:func:`commit_written`) came to: ``snapshot``, the
    last snapshot created, or the one an earlier commit of the same ``CommitId`` landed as (None:
    nothing to commit); ``already_landed``: that earlier commit had landed, so nothing was
    committed and the files of these messages, which no snapshot names, were deleted."""

    snapshot: Snapshot | None
    already_landed: bool = False


def write_messages(
    target: WriteTarget, fill: Callable[[TableWrite], object], commit_user: str, *, overwrite: Overwrite = None
) -> list[CommitMessage]:
    """The write half of the protocol: a write of ``target`` by ``commit_user`` filled by
    ``fill``; returns its messages for :func:`commit_written` (in this process or another: a
    Spark task's messages go to the driver). Whatever fails, every file of the write is deleted."""
    with target.new_write(commit_user=commit_user, overwrite=overwrite) as write:  # aborts on any error
        fill(write)
        return write.prepare_commit()


def commit_written(
    target: Committer,
    messages: Sequence[CommitMessage],
    commit_id: CommitId,
    *,
    check: Callable[[], None] | None = None,
    overwrite: Overwrite = None,
    watermark: int | None = None,
    operation: str | None = None,
    commit_empty: bool = False,
    commit_properties: CommitProperties | None = None,
) -> CommitOutcome:
    """The commit half of the protocol: commit the messages of :func:`write_messages` as
    ``commit_id``, deciding once what becomes of their files. ``operation``: the snapshots'
    ``operation``; ``commit_properties``: the commit's switches (``TableCommit.commit``).

    - ``check`` runs first: if it raises, the files are deleted (nothing was attempted);
    - no messages and not ``commit_empty`` (as an overwrite that empties partitions needs):
      nothing is committed;
    - a failed commit deletes them only if it provably did not land (:func:`commit_or_abort`);
    - when ``commit_id`` had landed already (a rerun), nothing is committed and the files, which
      no snapshot names, are deleted (``already_landed``).

    Raises:
        CommitConflictError: the commit conflicts with one that landed first.
        CommitRetriesExhaustedError: concurrent commits kept winning the race.
    """
    committer = target.new_commit(commit_user=commit_id.user)
    if check is not None:
        try:
            check()
        except BaseException:
            committer.abort(messages)
            raise
    if not messages and not commit_empty:
        return CommitOutcome(None)
    result = _commit_or_abort(
        committer,
        messages,
        identifier=commit_id.identifier,
        abort=lambda: committer.abort(messages),
        keep=None,
        overwrite=None if overwrite is False else overwrite,
        watermark=watermark,
        operation=operation,
        commit_properties=commit_properties,
    )
    snapshot = result[-1] if result else None
    if snapshot is not None and snapshot.id in result.recognised:
        committer.abort(messages)  # an earlier commit of this CommitId landed; no snapshot names these files
        return CommitOutcome(snapshot, already_landed=True)
    return CommitOutcome(snapshot)


def write_and_commit(
    target: WriteTarget,
    fill: Callable[[TableWrite], object],
    commit_id: CommitId,
    *,
    overwrite: Overwrite = None,
    watermark: int | None = None,
    operation: str | None = None,
    commit_empty: bool = False,
    commit_properties: CommitProperties | None = None,
) -> Snapshot | None:
    """One write of ``target`` filled by ``fill`` and committed as ``commit_id``: the write half
    (:func:`write_messages`) then the commit half (:func:`commit_written`). Nothing is committed
    when the write produced nothing (unless ``commit_empty``, as an overwrite that empties
    partitions needs). Whatever fails, no file of the write stays behind unless the commit may
    have landed."""
    messages = write_messages(target, fill, commit_id.user, overwrite=overwrite)
    if not messages and not commit_empty:
        return None
    outcome = commit_written(
        target,
        messages,
        commit_id,
        overwrite=overwrite,
        watermark=watermark,
        operation=operation,
        commit_empty=commit_empty,
        commit_properties=commit_properties,
    )
    return outcome.snapshot


class CommitTarget(Committer, Protocol):
    """What commits messages and knows which commits landed (``lakestore.Table``, its ``FileStore``)."""

    def find_commit(
        self, commit_user: str, commit_identifier: int, *, kind: CommitKind = "APPEND", after_id: int | None = None
    ) -> Snapshot | None: ...


def commit_kind(overwrite: Overwrite) -> CommitKind:
    """The kind of snapshot a write with ``overwrite`` lands as: OVERWRITE or APPEND."""
    return "APPEND" if overwrite is None or overwrite is False else "OVERWRITE"


def find_landed(target: CommitTarget, commit_id: CommitId, kind: CommitKind, *, after_id: int | None) -> Snapshot | None:
    """The ``kind`` snapshot ``commit_id`` landed as, None if it has not landed.

    An explicit identifier names one commit: every retained snapshot is searched. The batch
    identifier (``BATCH_COMMIT_IDENTIFIER``) is shared by all batch commits of a user, so only
    the snapshots after ``after_id`` (the latest snapshot id when the write began) are.
    """
    scope = after_id if commit_id.identifier == BATCH_COMMIT_IDENTIFIER else None
    return target.find_commit(commit_id.user, commit_id.identifier, kind=kind, after_id=scope)


def commit_messages(
    target: Committer,
    messages: Sequence[CommitMessage],
    commit_id: CommitId,
    *,
    check: Callable[[], None] | None = None,
    overwrite: Overwrite = None,
    commit_empty: bool = False,
    operation: str | None = None,
    commit_properties: CommitProperties | None = None,
) -> Snapshot | None:
    """Commit ``messages`` written by other processes (tasks) as ``commit_id``; returns the last
    snapshot created or recognised (None: nothing to commit): :func:`commit_written`'s snapshot.

    Raises:
        CommitConflictError: the commit conflicts with one that landed first.
        CommitRetriesExhaustedError: concurrent commits kept winning the race.
    """
    outcome = commit_written(
        target,
        messages,
        commit_id,
        check=check,
        overwrite=overwrite,
        commit_empty=commit_empty,
        operation=operation,
        commit_properties=commit_properties,
    )
    return outcome.snapshot


def abort_written(target: Committer, messages: Sequence[CommitMessage], commit_user: str, *, commit_reached: bool) -> bool:
    """Abort a write whose messages were handed to a commit step that runs elsewhere (Spark
    aborts a job in another process, after failed tasks or after a failed commit step), without
    asking the snapshots again: when the commit step was never reached, the commit provably did
    not land and the messages' files are deleted; when it was reached, :func:`commit_written`
    has decided already (it deleted the files of a commit that provably did not land and kept
    those of one that may have), and every file stays. Returns whether files were deleted."""
    if commit_reached:
        return False
    if messages:
        target.new_commit(commit_user=commit_user).abort(messages)
    return True


def abort_unless_landed(
    target: CommitTarget, commit_id: CommitId, kind: CommitKind, messages: Sequence[CommitMessage], *, after_id: int | None
) -> bool:
    """Abort ``commit_id``'s ``messages`` from a process that cannot know whether their commit was
    attempted: delete their files unless the commit landed (``find_landed``), when every file
    stays (a snapshot references them; what it does not is for ``remove_orphan_files``).
    Returns whether the files were deleted."""
    if find_landed(target, commit_id, kind, after_id=after_id) is not None:
        return False
    if messages:
        target.new_commit(commit_user=commit_id.user).abort(messages)
    return True
