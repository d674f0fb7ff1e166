"""The marts' change feed: an upstream table's changes, read incrementally through a consumer id
(a lakestore streaming scan) and applied to a mart exactly once.

One run of a feed:
1. recover: a previous run may have committed the mart and died before its checkpoint. The mart
   commit's identifier is the last upstream snapshot it applied, so ``filter_committed`` over the
   snapshot ids from the consumer's stored position on tells which of them already landed; the
   consumer is moved past the newest landed one instead of applying those changes again.
2. read: the stream returns the full table as +I rows on the first run (no stored position), then
   every upstream snapshot's changes from the stored position up to the latest snapshot.
3. commit: the mart rows in one commit, commit user = the feed's, identifier = the last upstream
   snapshot consumed (a retry of the same commit finds the landed one).
4. checkpoint: only after the mart commit landed; the stored position also keeps upstream
   expiration from removing snapshots the consumer has not read yet.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

import lakestore
from lakestore.scan.changes import ROW_KIND_COLUMN

ADDS = ("+I", "+U")
RETRACTS = ("-U", "-D")


@dataclass(frozen=True)
class FeedResult:
    consumer_id: str
    start: int | None  # the consumer's stored position before the run (None: first run, full read)
    through: int  # last upstream snapshot applied so far (0: the upstream table is empty)
    change_rows: int  # change rows read in this run
    snapshot: lakestore.Snapshot | None  # this run's mart commit (None: nothing to apply)
    recovered: int | None  # a landed mart commit whose checkpoint was missing (its identifier)

    def metadata(self, prefix: str) -> dict[str, object]:
        return {
            f"{prefix}_consumer": self.consumer_id,
            f"{prefix}_from_snapshot": self.start if self.start is not None else "full read",
            f"{prefix}_through_snapshot": self.through,
            f"{prefix}_change_rows": self.change_rows,
            f"{prefix}_recovered_commit": self.recovered if self.recovered is not None else "none",
        }


class ChangeFeed:
    """Applies ``upstream``'s changes (``columns`` plus ``_row_kind``) to ``mart`` through
    ``consumer_id``; the rows to commit come from ``to_mart(changes, through_snapshot_id)``."""

    def __init__(
        self, upstream: lakestore.Table, mart: lakestore.Table, *, consumer_id: str, commit_user: str, columns: Sequence[str]
    ) -> None:
        self.upstream = upstream
        self.mart = mart
        self.consumer_id = consumer_id
        self.commit_user = commit_user
        self.columns = list(columns)

    def position(self) -> int | None:
        return self.upstream.manage.consumers().get(self.consumer_id)

    def recover(self) -> int | None:
        """Move the consumer past a mart commit that landed without its checkpoint; returns that
        commit's identifier (None when the consumer's position was already right)."""
        latest_snapshot = self.upstream.latest_snapshot()
        latest = latest_snapshot.id if latest_snapshot is not None else 0
        start = self.position() or 1
        candidates = list(range(start, latest + 1))
        if not candidates:
            return None
        pending = set(self.mart.new_commit(commit_user=self.commit_user).filter_committed(candidates))
        landed = [c for c in candidates if c not in pending]
        if not landed:
            return None
        self.upstream.manage.reset_consumer(self.consumer_id, landed[-1] + 1)
        return landed[-1]

    def run(self, to_mart: Callable[[pa.Table, int], pa.Table]) -> FeedResult:
        recovered = self.recover()
        start = self.position()
        scan = self.upstream.stream(consumer_id=self.consumer_id, columns=self.columns)
        batches = [b for b in scan if b.num_rows]
        through = scan.next_snapshot - 1
        changes = pa.concat_tables(batches) if batches else None
        snapshot = None
        if changes is not None:
            rows = to_mart(changes, through)
            if rows.num_rows:
                snapshot = self.mart.write_arrow(rows, commit_user=self.commit_user, commit_identifier=through)
        scan.checkpoint()  # only now: the mart commit (if any) has landed
        return FeedResult(self.consumer_id, start, through, changes.num_rows if changes is not None else 0, snapshot, recovered)


def adds(changes: pa.Table) -> pa.Array:
    """Boolean mask of the rows that add a value (+I, +U); the others retract one (-U, -D)."""
    return pc.is_in(changes.column(ROW_KIND_COLUMN), value_set=pa.array(ADDS))


def read_at(
    table: lakestore.Table, snapshot_id: int, *, columns: Sequence[str] | None = None, filter: lakestore.Predicate | None = None
) -> pa.Table:
    """``table.to_arrow`` at ``snapshot_id`` (the position a feed consumed through), or at the
    latest snapshot once that one has expired."""
    try:
        return table.to_arrow(snapshot_id=snapshot_id or None, columns=columns, filter=filter)
    except lakestore.SnapshotNotFoundError:
        return table.to_arrow(columns=columns, filter=filter)


def require_changelog(table: lakestore.Table) -> None:
    """The revenue retractions need before images (-U/-D): only a changelog producer gives them."""
    if table.options.changelog_producer == "none":
        raise RuntimeError(
            f"{table.identifier} has no changelog producer (created before changelog-producer=lookup was set): "
            "its deltas carry no before images, so the marts cannot retract old values; recreate the warehouse"
        )
