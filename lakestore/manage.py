"""``table.manage``: a table's references to its history, with the verbs Paimon users know:
tags, branches, rollback and streaming consumers (as pyiceberg's ``table.manage_snapshots()``).
It works on the table's ``FileStore`` (``lakestore.store``), with the implementations in
``lakestore.lifecycle``; the table passes in how to update its Iceberg metadata and how to open
itself on a branch."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from lakestore.errors import OptionError
from lakestore.iceberg import IcebergSources, after_rollback, update_tag_ref
from lakestore.lifecycle.branches import create_branch, delete_branch, fast_forward
from lakestore.lifecycle.rollback import rollback_to
from lakestore.lifecycle.tags import TagManager
from lakestore.meta.branch import branch_names
from lakestore.meta.consumer import ConsumerManager
from lakestore.meta.snapshot import Snapshot
from lakestore.meta.tag import Tag
from lakestore.scan.time_travel import snapshot_at_watermark
from lakestore.store import FileStore
from lakestore.units import parse_duration_ms

# What ``create_branch`` returns: the table on the new branch (``lakestore.Table``).
TableT = TypeVar("TableT")


class TableManagement(Generic[TableT]):
    """Tags, branches, rollback and consumers of one table on its branch; obtain it as
    ``table.manage``. Tags and rollback keep the table's Iceberg metadata (when it writes one)
    in step, as Paimon's tag callbacks do.

    Example::

        table.manage.create_tag("2024-01-01", time_retained="30 d")
        dev = table.manage.create_branch("dev", tag="2024-01-01")
        dev.write_arrow(rows)
        table.manage.fast_forward("dev")
        table.manage.rollback_to(tag="2024-01-01")
    """

    def __init__(
        self,
        store: FileStore,
        *,
        open_branch: Callable[[str], TableT],
        iceberg_sources: Callable[[], IcebergSources | None] = lambda: None,
    ) -> None:
        """A management view of ``store``.

        Args:
            store: the table's ``FileStore`` (``table.store``).
            open_branch: opens the table on a branch (what ``create_branch`` returns).
            iceberg_sources: the table's Iceberg metadata sources (None: no Iceberg metadata),
                updated when tags change and after a rollback.
        """
        self.store = store
        self._open_branch = open_branch
        self._iceberg_sources = iceberg_sources

    def __repr__(self) -> str:
        return f"TableManagement({self.store.identifier!r})"

    def _tags(self) -> TagManager:
        return TagManager(self.store)

    # -- tags ---------------------------------------------------------------------------------
    def create_tag(
        self, name: str, snapshot_id: int | None = None, time_retained: int | str | None = None, *, watermark: int | None = None
    ) -> Tag:
        """Tag a snapshot: a read at the tag (``table.to_arrow(tag=...)``) sees it, and its
        files outlive snapshot expiration while the tag lives.

        Args:
            name: the tag's name.
            snapshot_id: the snapshot to tag (default: the latest).
            time_retained: millis or a duration such as ``"7 d"``; the tag expires that long
                after its creation (None: it never expires).
            watermark: tag the first snapshot whose watermark reached this (instead of
                ``snapshot_id``).

        Returns:
            The new ``Tag``.

        Raises:
            InvalidTagNameError: a blank or all-digit name, or one with ``/`` or a leading ``.``.
            TagAlreadyExistsError: the tag exists.
            SnapshotNotFoundError: the snapshot does not exist, or none reached ``watermark``.
            OptionError: ``time_retained`` is not a duration.
            ValueError: both ``snapshot_id`` and ``watermark``.

        Example::

            table.manage.create_tag("2024-01-01", time_retained="30 d")
            table.to_arrow(tag="2024-01-01")
        """
        try:
            retained = parse_duration_ms(time_retained) if isinstance(time_retained, str) else time_retained
        except ValueError as exc:
            raise OptionError(f"time_retained: {exc}") from exc
        if watermark is not None:
            if snapshot_id is not None:
                raise ValueError("give snapshot_id or watermark, not both")
            snapshot_id = snapshot_at_watermark(self.store, watermark).id
        tag = self._tags().create(name, snapshot_id, time_retained_ms=retained)
        sources = self._iceberg_sources()
        if sources is not None:  # Paimon's tag callback: the tag becomes an Iceberg ref
            update_tag_ref(sources, self.store.latest_snapshot(), name, tag.snapshot_id)
        return tag

    def delete_tag(self, name: str) -> None:
        """Delete a tag, and the files only it kept alive (when its snapshot expired).

        Args:
            name: the tag to delete.

        Raises:
            TagNotFoundError: the tag does not exist.
        """
        self._tags().delete(name)
        sources = self._iceberg_sources()
        if sources is not None:
            update_tag_ref(sources, self.store.latest_snapshot(), name, None)

    def rename_tag(self, old_name: str, new_name: str) -> None:
        """Rename a tag.

        Args:
            old_name: the tag's name.
            new_name: its new name.

        Raises:
            TagNotFoundError: ``old_name`` does not exist.
            TagAlreadyExistsError: ``new_name`` exists.
            InvalidTagNameError: ``new_name`` is not a valid tag name.
        """
        self._tags().rename(old_name, new_name)

    def tags(self) -> list[Tag]:
        """Every tag of the branch.

        Returns:
            The tags, by snapshot id.

        Raises:
            CorruptMetadataError: a tag file is not valid Paimon metadata.
            OSError: the file system failed.
        """
        return self._tags().tags()

    # -- branches -----------------------------------------------------------------------------
    def branches(self) -> list[str]:
        """The table's branches other than ``main``.

        Returns:
            The branch names, sorted.

        Raises:
            OSError: the file system failed.
        """
        return branch_names(self.store.file_io, self.store.path)

    def create_branch(self, name: str, *, tag: str | None = None) -> TableT:
        """Create a branch from a tag (or empty, with the current schema); open it later as
        ``"db.t$branch_<name>"`` or with ``table.on_branch(name)``.

        Args:
            name: the branch's name.
            tag: the tag the branch starts from (its snapshot and schemas); None: an empty branch.

        Returns:
            The table on the new branch.

        Raises:
            BranchError: the branch exists, or this table is not on the main branch.
            TagNotFoundError: ``tag`` does not exist.
            InvalidIdentifierError: an invalid branch name (``main``, all digits, ...).
            UnsupportedTableError: the table uses options or features lakestore cannot maintain.

        Example::

            dev = table.manage.create_branch("dev", tag="2024-01-01")
            dev.write_arrow(rows)
            table.manage.fast_forward("dev")
        """
        create_branch(self.store, name, tag=tag)
        return self._open_branch(name)

    def delete_branch(self, name: str) -> None:
        """Delete a branch's metadata; files only it referenced become orphans (for
        ``table.maintenance.remove_orphan_files``), as in Paimon.

        Args:
            name: the branch to delete.

        Raises:
            BranchError: the branch does not exist, or this table is not on the main branch.
            InvalidIdentifierError: an invalid branch name.
        """
        delete_branch(self.store, name)

    def fast_forward(self, name: str) -> None:
        """Make the main branch equal to a branch: main's snapshots, schemas and tags from the
        branch's first snapshot on are replaced by the branch's (Paimon's ``fast_forward``).

        Args:
            name: the branch to fast-forward the main branch to.

        Raises:
            BranchError: the branch does not exist or has no snapshot, or this table is not on
                the main branch.
            InvalidIdentifierError: an invalid branch name.
            UnsupportedTableError: the table uses options or features lakestore cannot maintain.
        """
        fast_forward(self.store, name)

    # -- rollback -----------------------------------------------------------------------------
    def rollback_to(self, snapshot_id: int | None = None, *, tag: str | None = None, watermark: int | None = None) -> Snapshot:
        """Make a snapshot the latest again; newer snapshots, their tags and the files only they
        referenced are deleted.

        Args:
            snapshot_id: the snapshot to roll back to.
            tag: roll back to this tag's snapshot (even an expired one, restored from the tag).
            watermark: roll back to the last snapshot whose watermark is at most this.

        Returns:
            The snapshot that is now the latest.

        Raises:
            SnapshotNotFoundError: the snapshot does not exist (expired: roll back to a tag), or
                none has a watermark at most ``watermark``.
            TagNotFoundError: ``tag`` does not exist.
            ValueError: not exactly one of ``snapshot_id``, ``tag`` and ``watermark``.
            UnsupportedTableError: the table uses options or features lakestore cannot maintain.
        """
        if watermark is not None:
            if snapshot_id is not None or tag is not None:
                raise ValueError("rollback_to needs exactly one of snapshot_id=, tag= or watermark=")
            snapshot_id = snapshot_at_watermark(self.store, watermark, at_or_before=True).id
        target = rollback_to(self.store, snapshot_id=snapshot_id, tag=tag)
        sources = self._iceberg_sources()
        if sources is not None:  # Iceberg readers follow the rollback
            after_rollback(sources, target)
        return target

    # -- consumers ----------------------------------------------------------------------------
    def consumers(self) -> dict[str, int]:
        """The branch's streaming consumers (``table.stream(consumer_id=...)``).

        Returns:
            Consumer id -> the next snapshot it will read.

        Raises:
            CorruptMetadataError: a consumer file is not valid Paimon metadata.
            OSError: the file system failed.
        """
        return ConsumerManager(self.store.file_io, self.store.metadata_path).consumers()

    def reset_consumer(self, consumer_id: str, next_snapshot: int) -> None:
        """Store a consumer's position, as Paimon's ``reset_consumer`` procedure; the consumer
        resumes there and keeps the snapshots from there on from expiring.

        Args:
            consumer_id: the consumer (created when it does not exist).
            next_snapshot: the next snapshot it will read.

        Raises:
            InvalidIdentifierError: ``consumer_id`` is not a valid consumer name.
            OSError: the file system failed.
        """
        ConsumerManager(self.store.file_io, self.store.metadata_path).record(consumer_id, next_snapshot)
