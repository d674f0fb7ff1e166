"""Choosing a FileIO for a warehouse or table URI, and for a file's own URI (Paimon's
``_EXTERNAL_PATH``: data files a table keeps outside its directory, maybe on another file system),
and the publisher of a catalog's tables' metadata: the FileIO with the catalog lock the options
ask for (``lakestore.io.publish``)."""

from __future__ import annotations

import threading
from collections.abc import Mapping

from lakestore.errors import OptionError
from lakestore.io.fileio import FileIO, LocalFileIO, uri_scheme
from lakestore.io.fileio import local_path as local_path  # re-exported: callers import it from here
from lakestore.io.hive_lock import HIVE_LOCK_KEY, HiveCatalogLock, hive_lock_requested
from lakestore.io.lock import JdbcCatalogLock, lock_enabled
from lakestore.io.publish import MetadataPublisher
from lakestore.io.s3 import S3FileIO


def file_io_for(uri: str, options: Mapping[str, str] | None = None) -> FileIO:
    """The file system of ``uri``: ``s3://``/``s3a://`` -> ``S3FileIO`` configured from
    ``options`` (then the AWS_* environment); a local path or ``file://`` -> ``LocalFileIO``
    (link(2) publish). A file system holds no lock: ``publisher_for`` adds the catalog lock.

    Raises:
        OptionError: an unsupported scheme, or an invalid file-system option.
    """
    options = {str(k): str(v) for k, v in (options or {}).items()}
    text = str(uri)
    scheme = uri_scheme(text)
    if scheme in ("s3", "s3a"):
        return S3FileIO.from_options(options)
    if scheme in ("", "file"):
        return LocalFileIO()
    raise OptionError(f"unsupported warehouse scheme {scheme!r} in {uri!r}: use a local path or s3://bucket/path")


def publisher_for(file_io: FileIO, options: Mapping[str, str] | None = None) -> MetadataPublisher:
    """How the tables of a catalog with ``options`` publish their metadata through ``file_io``:
    with ``lock.enabled``, holding the catalog lock Paimon Java's commits hold (for tables both
    engines commit to, and object stores without conditional writes). The lock is Paimon's JDBC
    lock (lock id ``{catalog-key}.{database}.{table}``), or the Hive Metastore's table lock
    (``lakestore.io.hive_lock``) with ``lock.type=hive`` or in a ``metastore=hive`` catalog.

    Raises:
        OptionError: an invalid lock option (no lock database ``uri``, an unknown ``lock.type``,
            a bad duration).
        InvalidCatalogUriError: the Hive lock without a metastore address.
    """
    options = {str(k): str(v) for k, v in (options or {}).items()}
    if hive_lock_requested(options):  # Paimon's HiveCatalogLock (lock.type=hive, or a metastore=hive catalog)
        return MetadataPublisher(file_io, HiveCatalogLock.from_options(options), catalog_key=HIVE_LOCK_KEY)
    if lock_enabled(options):
        lock = JdbcCatalogLock.from_options(options)
        return MetadataPublisher(file_io, lock, catalog_key=lock.options.catalog_key)
    return MetadataPublisher(file_io)


_OTHERS: dict[tuple[str, frozenset[tuple[str, str]]], FileIO] = {}
_OTHERS_LOCK = threading.Lock()


def io_for(file_io: FileIO, path: str, options: Mapping[str, str] | None = None) -> FileIO:
    """The FileIO that opens ``path``: ``file_io`` (the table's) when ``path`` is on its file
    system, else one for the path's scheme (an external data path on another file system, e.g.
    a local table whose ``data-file.external-paths`` are on S3), built once per scheme and
    ``options`` (S3 credentials; then the environment)."""
    if file_io.handles(path):
        return file_io
    key = (uri_scheme(path), frozenset((str(k), str(v)) for k, v in (options or {}).items()))
    with _OTHERS_LOCK:
        other = _OTHERS.get(key)
        if other is None:
            try:
                other = file_io_for(path, options)
            except OptionError as exc:
                raise OptionError(f"data file {path!r} is on a file system lakestore cannot open: {exc}") from exc
            _OTHERS[key] = other
        return other
