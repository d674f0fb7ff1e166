"""A local file system shared with Paimon Java writers: publishes hold the catalog lock.

lakestore's local publish (link(2)) is atomic and exclusive by itself. Paimon Java's is not:
``LocalFileIO.rename`` (2.0.0) checks that ``snapshot-N`` is absent under a lock private to its
own process, then moves its file with ``ATOMIC_MOVE``, which replaces a snapshot another process
published in between; a lakestore commit can be silently undone. Paimon's answer is its catalog
lock, which ``RenamingSnapshotCommit`` holds around the check and the rename. With ``lock.enabled``
lakestore holds the same lock (same database, same lock id) around its link, so the two engines
exclude each other.
"""

from __future__ import annotations

from lakestore.io.fileio import LocalFileIO
from lakestore.io.lock import CatalogLock, LockOptions, run_publish_locked


class LockedLocalFileIO(LocalFileIO):
    """``LocalFileIO`` whose ``try_publish`` holds the table's catalog lock."""

    def __init__(self, lock: CatalogLock, *, catalog_key: str = "jdbc") -> None:
        super().__init__()
        self.lock = lock
        self.catalog_key = catalog_key

    def __repr__(self) -> str:
        return f"LockedLocalFileIO({self.lock!r})"

    def catalog_options(self) -> dict[str, str] | None:
        options = getattr(self.lock, "options", None)
        return options.to_options() if isinstance(options, LockOptions) else None  # None: a lock built in code

    def try_publish(self, path: str, data: bytes) -> bool:
        return run_publish_locked(self.lock, self.catalog_key, path, lambda: LocalFileIO.try_publish(self, path, data))
