"""Table lifecycle: snapshot expiration, orphan cleanup, tags, rollback, and the commit
callbacks that run them after commits (``lakestore.lifecycle.callbacks``)."""

from __future__ import annotations

from lakestore.lifecycle.callbacks import CallbackHost, table_callbacks
from lakestore.lifecycle.expire import ExpireResult, expire_snapshots
from lakestore.lifecycle.orphans import OrphanResult, remove_orphan_files
from lakestore.lifecycle.partition_expire import expire_partitions
from lakestore.lifecycle.rollback import rollback_to
from lakestore.lifecycle.tags import TagManager, auto_create_tags

__all__ = [
    "CallbackHost",
    "ExpireResult",
    "OrphanResult",
    "TagManager",
    "auto_create_tags",
    "expire_partitions",
    "expire_snapshots",
    "remove_orphan_files",
    "rollback_to",
    "table_callbacks",
]
