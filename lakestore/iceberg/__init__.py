"""Iceberg-compatible metadata of Paimon tables (``metadata.iceberg.storage``), as Paimon 2.0
writes it after each commit, so Iceberg readers (pyiceberg, DuckDB, Polars, Trino, ...) read the
table's data files. Generated from the store's pieces (paths, FileIO, schemas, snapshots,
manifests); the table runs it as a post-commit hook."""

from lakestore.iceberg.commit import IcebergSources, metadata_directory, write_iceberg_metadata
from lakestore.iceberg.commit import enabled as iceberg_enabled
from lakestore.iceberg.refs import after_expire, after_rollback, update_tag_ref

__all__ = [
    "IcebergSources",
    "after_expire",
    "after_rollback",
    "iceberg_enabled",
    "metadata_directory",
    "update_tag_ref",
    "write_iceberg_metadata",
]
