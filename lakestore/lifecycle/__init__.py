"""Table lifecycle: snapshot expiration, orphan cleanup, tags, rollback, time travel."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakestore.lifecycle.expire import ExpireResult, expire_snapshots, should_expire_after_commit
from lakestore.lifecycle.orphans import OrphanResult, remove_orphan_files
from lakestore.lifecycle.rollback import rollback_to
from lakestore.lifecycle.tags import Tag, TagManager, auto_create_tags
from lakestore.lifecycle.time_travel import resolve, snapshot_at

if TYPE_CHECKING:
    from lakestore.table import Table

__all__ = [
    "ExpireResult",
    "OrphanResult",
    "Tag",
    "TagManager",
    "after_commit",
    "auto_create_tags",
    "expire_snapshots",
    "remove_orphan_files",
    "resolve",
    "rollback_to",
    "snapshot_at",
]


def after_commit(table: Table) -> None:
    """Post-commit maintenance Paimon runs in its committer: automatic tags, then expiration
    (only when the table's options ask for them)."""
    auto_create_tags(table)
    if should_expire_after_commit(table):
        expire_snapshots(table)
