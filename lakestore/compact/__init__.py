"""Compaction: per-bucket compactors (used by writers and by dedicated compaction jobs,
``lakestore.compact.bucket``) and whole-table compaction committed as one COMPACT snapshot
(``lakestore.compact.table_compact``)."""

from lakestore.compact.bucket import BucketCompactor, deletion_vectors_of
from lakestore.compact.table_compact import bucket_files, compact_bucket, compact_table, select_buckets

__all__ = ["BucketCompactor", "bucket_files", "compact_bucket", "compact_table", "deletion_vectors_of", "select_buckets"]
