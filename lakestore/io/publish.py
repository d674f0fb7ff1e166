"""Publishing a table's metadata files (``snapshot-N``, ``schema-N``, ``tag-<name>``), under the
catalog lock when the catalog configured one.

A ``FileIO`` only moves bytes: ``FileIO.try_publish`` is the file system's atomic create-if-absent
(link(2) locally, a conditional ``PUT`` on object stores), and ``FileIO.try_publish_under_lock``
is the same for a caller that holds an exclusive lock on the table (an object store without
conditional writes may then check for the object and put it). A ``MetadataPublisher`` adds the
lock: with ``lock.enabled`` the catalog builds one holding Paimon's JDBC lock
(``lakestore.io.lock``) or the Hive Metastore's table lock (``lakestore.io.hive_lock``), and every
publish of the table takes it around the publish, with Paimon's lock id
``{catalog-key}.{database}.{table}``, as Paimon's ``RenamingSnapshotCommit`` does around its
absence check and rename. Paimon Java writers of the same table, sharing the lock database or
the metastore, then exclude lakestore's writers and the other way round.

The catalog chooses the publisher (``lakestore.io.factory.publisher_for``), the table's
``FileStore`` holds it, and ``RenamingSnapshotCommit``, ``SchemaManager.publish`` and the tag
manager publish through it.
"""

from __future__ import annotations

from dataclasses import dataclass

from lakestore.io.fileio import FileIO
from lakestore.io.lock import CatalogLock, LockOptions, run_publish_locked


@dataclass(frozen=True, eq=False)
class MetadataPublisher:
    """Publishes a table's metadata files with ``file_io``, holding ``lock`` (when not None)
    under the lock id ``{catalog_key}.{database}.{table}``.

    Picklable when its file system and lock are (lakestore's are: only their options travel).
    """

    file_io: FileIO
    lock: CatalogLock | None = None
    catalog_key: str = "jdbc"

    def __repr__(self) -> str:
        return f"MetadataPublisher({self.file_io!r}, lock={self.lock!r})"

    def try_publish(self, path: str, data: bytes) -> bool:
        """Create ``path`` (``<table>/{snapshot,schema,tag}/<name>``) with ``data`` iff it does not
        exist, atomically; with a lock, while holding the table's lock.

        Returns:
            True when this call created it; False when it existed (nothing was changed).

        Raises:
            UnsafePublishError: object storage with neither a lock nor conditional writes.
            LockAcquireTimeoutError: the lock was not acquired in ``lock-acquire-timeout``.
            OSError: the file system failed; whether the file landed is then unknown.
        """
        if self.lock is None:
            return self.file_io.try_publish(path, data)
        file_io = self.file_io
        return run_publish_locked(self.lock, self.catalog_key, path, lambda: file_io.try_publish_under_lock(path, data))

    def catalog_options(self) -> dict[str, str] | None:
        """The catalog options from which ``lakestore.io.factory`` builds this file system and
        this publisher again in another process (Spark's executors open tables that way): the
        file system's (``FileIO.catalog_options``) and the JDBC lock's, credentials included
        (``lakestore.io.secrets`` tells them apart). None: a file system or lock built in code
        (or the Hive lock, whose metastore options the catalog holds), which options do not
        describe."""
        options = self.file_io.catalog_options()
        if options is None or self.lock is None:
            return options
        lock_options = getattr(self.lock, "options", None)
        if not isinstance(lock_options, LockOptions):
            return None
        return {**options, **lock_options.to_options()}
