"""Work after a commit: ``CommitCallback``s, and the typed per-commit switches (``CommitProperties``).

A commit that landed snapshots runs its table's callbacks in order (``FileStore.callbacks``; for a
``lakestore.Table``: Iceberg metadata, automatic tags, partition expiration, snapshot expiration,
then the Iceberg metadata again without the expired snapshots; a Hive catalog's table then syncs
its partitions to the metastore). Each callback is switched

- per table by its table option (``CommitCallback.enabled``; Paimon's option where Paimon has
  one: ``metadata.iceberg.storage``, ``tag.automatic-creation``, ``partition.expiration-time``,
  the ``snapshot.*`` retention options), and
- per commit by ``CommitProperties`` (``post_commit_hooks=False`` runs none; ``skip_callbacks``
  names those not to run), as delta-rs's ``CommitProperties`` / ``PostCommitHookProperties``.

A callback never turns a landed commit into a reported failure: its ``LakestoreError`` or
``OSError`` is logged, and it runs again after the next commit.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import ClassVar

from lakestore.errors import LakestoreError
from lakestore.meta.options import CoreOptions
from lakestore.meta.snapshot import Snapshot

__all__ = ["CommitCallback", "CommitProperties", "function_callback", "run_callbacks"]

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CommitProperties:
    """How one commit behaves after it landed (pass to ``Table.write_arrow``,
    ``TableCommit.commit`` or the commit protocol's functions).

    Attributes:
        post_commit_hooks: False: no callback runs after this commit (no tags, expiration or
            Iceberg metadata; the next commit's callbacks catch up).
        skip_callbacks: names of callbacks (``CommitCallback.name``) not to run after this commit,
            e.g. ``frozenset({"snapshot-expiration"})``.
    """

    post_commit_hooks: bool = True
    skip_callbacks: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if not isinstance(self.post_commit_hooks, bool):
            raise ValueError(f"post_commit_hooks must be a bool, got {self.post_commit_hooks!r}")
        if isinstance(self.skip_callbacks, str) or not all(isinstance(n, str) for n in self.skip_callbacks):
            raise ValueError(f"skip_callbacks must be a set of callback names, got {self.skip_callbacks!r}")
        object.__setattr__(self, "skip_callbacks", frozenset(self.skip_callbacks))

    def runs(self, name: str) -> bool:
        """Whether the callback called ``name`` runs after this commit."""
        return self.post_commit_hooks and name not in self.skip_callbacks


DEFAULT_PROPERTIES = CommitProperties()


class CommitCallback(ABC):
    """One piece of work after a commit that landed snapshots (Paimon's ``CommitCallback``).

    ``name`` is what ``CommitProperties.skip_callbacks`` names; :meth:`enabled` is the
    per-table switch (the table's options); :meth:`__call__` does the work."""

    name: ClassVar[str] = ""

    def enabled(self, options: CoreOptions) -> bool:
        """Whether the table with ``options`` runs this callback after its commits."""
        return True

    @abstractmethod
    def __call__(self, snapshots: Sequence[Snapshot]) -> None:
        """Run after a commit that created ``snapshots`` (oldest first).

        Raises:
            LakestoreError: the work failed (logged by the committer, never raised to the writer).
            OSError: the file system failed (likewise).
        """


def run_callbacks(
    callbacks: Iterable[CommitCallback],
    snapshots: Sequence[Snapshot],
    options: CoreOptions,
    properties: CommitProperties | None = None,
    *,
    table: str = "",
) -> list[str]:
    """Run each callback the table's ``options`` enable and ``properties`` do not skip, in order,
    after a commit that created ``snapshots``; returns the names of those that ran. A
    callback's failure is logged (naming ``table``) and the next one runs."""
    properties = properties or DEFAULT_PROPERTIES
    ran: list[str] = []
    if not snapshots or not properties.post_commit_hooks:
        return ran
    for callback in callbacks:
        if not properties.runs(callback.name) or not callback.enabled(options):
            continue
        ran.append(callback.name)
        try:
            callback(snapshots)
        except (LakestoreError, OSError) as exc:
            _log.warning("post-commit %s of %s failed (snapshot %d landed): %s", callback.name, table, snapshots[-1].id, exc)
    return ran


class _FunctionCallback(CommitCallback):
    name = "post-commit"

    def __init__(self, function: Callable[[Sequence[Snapshot]], None]) -> None:
        self.function = function

    def __call__(self, snapshots: Sequence[Snapshot]) -> None:
        self.function(snapshots)


def function_callback(function: Callable[[Sequence[Snapshot]], None]) -> CommitCallback:
    """``function`` as a callback named ``post-commit``, enabled on every table (what the
    deprecated ``post_commit=`` arguments hand in)."""
    return _FunctionCallback(function)
