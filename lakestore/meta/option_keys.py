"""What lakestore does with every option key of Paimon's ``CoreOptions`` (2.0, 1.x and 0.9).

The classification data behind ``lakestore.meta.options``; a key is exactly one of:

- implemented: it has an ``OptionSpec`` in ``options._SPECS`` (or is a ``fields.<f>.<suffix>``
  option); not listed here, except as a fallback key in ``FALLBACK_KEYS``;
- ``IGNORED``: a runtime setting of another engine (Flink/Spark jobs, caches, spilling,
  parallelism, lookup joins, read-side indexes, system-table plumbing) or a knob of a feature that
  only takes effect together with another, refused, option. Ignoring it changes nothing
  lakestore reads or writes: every file lakestore writes is one Paimon's writers could have
  written, and every read returns the rows Paimon returns;
- ``REFUSED``: a Paimon feature lakestore does not implement. Set on an existing table it makes
  writes and maintenance refuse by name; ``blocks_reads`` also makes reads refuse, where ignoring
  it would change the rows (or columns) returned. ``allowed`` lists the values at which ignoring
  the option is exactly Paimon's behaviour (usually its default), so a table that merely spells
  out the default stays usable.

``tests/meta/test_option_classification.py`` lists the keys of Paimon 2.0.0's and 1.4.2's
``CoreOptions.getOptions()`` through Paimon's own jars and fails on any key classified nowhere.
Keys Paimon generates (``fields.<f>.*``, ``commit.callback.<class>.param``) are matched by
``IGNORED_PREFIXES`` / ``options._parse_field_option``; ``file-index.<type>.*`` keys by
:func:`file_index_refusal` (implemented for the index types of ``lakestore.format.fileindex.registry``).
"""

from __future__ import annotations

from dataclasses import dataclass

from lakestore.format.fileindex import registry as file_index_registry


@dataclass(frozen=True, slots=True)
class Refusal:
    reason: str
    blocks_reads: bool
    allowed: tuple[str, ...] = ()  # values at which ignoring the option is Paimon's behaviour


IGNORED: dict[str, str] = {}
REFUSED: dict[str, Refusal] = {}

# A Paimon fallback key -> the key it stands for (Paimon reads the fallback when the key is unset).
FALLBACK_KEYS: dict[str, str] = {
    "write.compaction-skip": "write-only",
    "deduplicate.ignore-delete": "ignore-delete",
    "first-row.ignore-delete": "ignore-delete",
    "partial-update.ignore-delete": "ignore-delete",
    "log.scan": "scan.mode",
    "log.scan.timestamp-millis": "scan.timestamp-millis",
    "snapshot.expire.clean-empty-directories": "snapshot.clean-empty-directories",
    "orc.write.batch-size": "write.batch-size",
    "changelog-producer.lookup-wait": "lookup-wait",
    "delete-file.thread-num": "file-operation.thread-num",
    "parquet.variant.shreddingSchema": "variant.shreddingSchema",
    "sink.clustering.by-columns": "clustering.columns",
    "sink.clustering.strategy": "clustering.strategy",
    "blob.stored-descriptor-fields": "blob-descriptor-field",
}


def file_index_refusal(key: str) -> Refusal | None:
    """The refusal of a ``file-index.<type>.columns`` / ``file-index.<type>.<column>.<option>``
    key whose index type lakestore does not implement (reads go on: a file's unknown index is
    not consulted); None for the index types lakestore writes and reads, and other keys."""
    index_type = file_index_registry.key_type(key)
    if index_type is None or index_type in file_index_registry.TYPES:
        return None
    if index_type in file_index_registry.PAIMON_TYPES:
        return Refusal(
            f"the {index_type} file index is not implemented (lakestore writes {', '.join(sorted(file_index_registry.TYPES))})", False
        )
    return Refusal(f"{index_type!r} is not a file index type of Paimon", False)


def _ignore(why: str, *keys: str) -> None:
    for key in keys:
        assert key not in IGNORED and key not in REFUSED, key
        IGNORED[key] = why


def _refuse(why: str, *keys: str, reads: bool = False, allowed: tuple[str, ...] = ()) -> None:
    for key in keys:
        assert key not in IGNORED and key not in REFUSED, key
        REFUSED[key] = Refusal(why, reads, allowed)


_FALSE = ("false",)

# -- ignored: runtime settings of other engines ------------------------------------------------------
_ignore(
    "a runtime setting of Paimon's Flink/Spark jobs (memory, spilling, batching, threads, parallelism)",
    "sort-engine",
    "sort-spill-threshold",
    "sort-spill-buffer-size",
    "spill-compression",
    "spill-compression.zstd-level",
    "write-buffer-spill.max-disk-size",
    "write-buffer-for-append",
    "write-max-writers-to-spill",
    "write-manifest-cache",
    "local-sort.max-num-file-handles",
    "page-size",
    "cache-page-size",
    "read.batch-size",
    "write.batch-size",
    "write.batch-memory",
    "file-reader-async-threshold",
    "async-file-write",
    "file-operation.thread-num",
    "local-merge-buffer-size",
    "local-kv-db.block-size",
    "scan.parallelism",
    "scan.max-splits-per-task",
    "scan.manifest.parallelism",
    "source.split.target-size",
    "source.split.open-file-cost",
    "split.target-size",
    "split.open-file-cost",
    "format-table.scan.list-parallelism",
    "zorder.var-length-contribution",
    "sort-compaction.range-strategy",
    "sort-compaction.local-sample.magnification",
    "end-input.check-partition-expire",
    "commit.force-compact",
    "commit.user-prefix",
    "commit.timeout",
    "commit.force-create-snapshot",
    "auto-create",
    "continuous.discovery-interval",
    "streaming.read.snapshot.delay",
    "scan.plan-sort-partition",
    "visibility-callback.enabled",
    "visibility-callback.timeout",
    "visibility-callback.check-interval",
    "vector-search.distribute.enabled",
    "vector-search.lateral-join.batch-size",
    "lookup-wait",  # whether a Flink checkpoint waits for lookup compaction; the files are the same
    "consumer-id",  # the reading job's consumer (lakestore takes it as a read argument)
    "owner",
    "comment",
    "path",
    "branch",  # set by catalogs on a loaded table; lakestore finds branches by path
)
_ignore(
    "a downstream signal or external-system hook (callbacks, done markers, metastore sync)",
    "commit.callbacks",
    "commit.callback.#.param",
    "tag.callbacks",
    "tag.callback.#.param",
    "partition.mark-done-action",
    "partition.mark-done-action.custom.class",
    "partition.mark-done-action.http.url",
    "partition.mark-done-action.http.params",
    "partition.end-input-to-done",
    "partition.idle-time-to-report-statistic",
    "partition.sink-strategy",
    "metastore.partitioned-table",
    "metastore.tag-to-partition",
    "metastore.tag-to-partition.preview",
    "tag.create-success-file",
    "snapshot.watermark-idle-timeout",
    "materialized-table.definition-query",
    "materialized-table.interval-freshness",
    "materialized-table.interval-freshness.time-unit",
    "materialized-table.logical-refresh-mode",
    "materialized-table.refresh-mode",
    "materialized-table.refresh-status",
    "materialized-table.refresh-handler-description",
    "materialized-table.refresh-handler-bytes",
)
_ignore(
    "read-side only: lookup caches and global-index search",
    "global-index.enabled",
    "global-index.search-mode",
    "scalar-index.search-mode",
    "vector-index.search-mode",
    "full-text-index.search-mode",
    "global-index.thread-num",
    "consumer.ignore-progress",
    "consumer.changelog-only",
    "scan.ignore-corrupt-files",  # lakestore raises on such files instead of skipping them
    "scan.ignore-lost-files",
    "scan.plan-auto-tag-for-read.time-retained",
)
_ignore(
    "compaction policy (when and which files Paimon's writers compact, how big a sorted run may"
    " get); lakestore compacts by its own triggers and leaves an LSM tree Paimon reads and continues",
    "compaction.optimization-interval",
    "lookup-compact",
    "lookup-compact.max-interval",
    "compaction.force-up-level-0",
    "compaction.offpeak.start.hour",
    "compaction.offpeak.end.hour",
    "compaction.offpeak-ratio",
    "compaction.incremental-size-threshold",
    "compaction.small-file-ratio",
    "compaction.skip-expired-partitions",
    "overwrite-upgrade",
    "manifest.full-compaction-threshold-size",
    "manifest-sort.enabled",
    "manifest-sort.partition-field",
    "manifest-sort.max-rewrite-size",
    "partition.expiration-max-num",  # pacing: lakestore drops every expired partition at once
    "partition.expiration-batch-size",
    "snapshot.clean-empty-directories",  # empty directories hold nothing any reader looks at
)
_ignore(
    "file sizing: every reader accepts files and row groups of any size",
    "target-file-row-num",
    "file.block-size",
    "deletion-vector.index-file.target-size",
    "parquet.enable.dictionary",
    "bucket-append-ordered",  # lakestore reads an append bucket's files in sequence order anyway
)
_ignore(
    "ignored: it only takes effect together with another option, which lakestore refuses by name"
    " (BLOB/VECTOR/VARIANT columns, postpone-bucket sinks of Flink/Spark, format tables,"
    " chain tables, incremental clustering, global indexes)",
    "blob-compaction.enabled",
    "blob.target-file-size",
    "blob.split-by-file-size",
    "blob.copy-buffer-size",
    "blob-view.resolve.enabled",
    "blob-as-descriptor",
    "blob-descriptor.source-table",
    "blob-write-null-on-missing-file",
    "blob-write-null-on-fetch-failure",
    "vector.file.format",
    "vector.target-file-size",
    "variant.shreddingSchema",
    "variant.inferShreddingSchema",
    "variant.shredding.inferenceMode",
    "variant.shredding.maxSchemaWidth",
    "variant.shredding.maxSchemaDepth",
    "variant.shredding.minFieldCardinalityRatio",
    "variant.shredding.maxInferBufferRow",
    "variant.shredding.adaptive.maxInferBufferRow",
    "variant.shredding.adaptive.retentionRatio",
    "postpone.batch-write-fixed-bucket",  # Flink/Spark batch sinks; lakestore's writes postpone, as Java's core writers
    "postpone.merge-on-read",  # needs an engine that routes postponed rows to buckets while reading; off by default
    "postpone.batch-write-fixed-bucket.max-parallelism",
    "postpone.target-size-per-bucket",  # Spark batch sinks only
    "format-table.implementation",
    "format-table.partition-path-only-value",
    "format-table.file.compression",
    "format-table.commit-hive-sync-url",
    "chain-table.chain-partition-keys",
    "chain-table.streaming.merge-snapshot",
    "chain-table.split.key-range-enabled",
    "clustering.history-partition.limit",
    "clustering.history-partition.idle-to-full-sort",
    "clustering.incremental.optimize-write",
    "clustering.incremental.mode",
    "global-index.external-path",
    "global-index.column-update-action",
    "global-index.row-count-per-shard",
    "global-index.build.max-shard",
    "global-index.build.max-parallelism",
)
_ignore(
    "a knob of data-evolution operations lakestore does not run (row-id reassignment, MERGE INTO, data-evolution"
    " compaction, which is refused) or of optional row-sidecar files readers do not need",
    "data-evolution.reassign.skip-contiguous-row-count",
    "data-evolution.row-id-conflict-rewrite.max-size",
    "data-evolution.row-sidecar.enabled",
    "data-evolution.row-sidecar.max-selected-rows",
    "data-evolution.row-sidecar.max-selection-ratio",
    "data-evolution.merge-into.file-pruning",
    "data-evolution.merge-into.source-persist",
    "data-evolution.compaction.rewrite-row-ids",
)
_ignore(
    "the write-side sort of Flink's clustering sink: rows keep their values, only their order in an append table's files differs",
    "clustering.columns",
    "clustering.strategy",
)
_ignore(
    "a DDL default of Flink/Spark; the schema (keys, column order) is what lakestore reads",
    "primary-key",
    "partition",
    "disable-explicit-type-casting",
    "alter-column-null-to-not-null.disabled",  # lakestore never turns a nullable column NOT NULL
    # How SQL INSERT OVERWRITE without a static partition behaves in Flink/Spark. lakestore's API
    # says what it replaces: overwrite={"dt": ...} one partition, overwrite={} the whole table
    # (Paimon's behaviour with this option false; see the xfail in tests/interop/test_java_tables.py).
    "dynamic-partition-overwrite",
)
# Keys Paimon generates per field or type: matched by prefix (``fields.`` options are parsed by options.py).
IGNORED_PREFIXES: dict[str, str] = {
    "lookup.": "lookup-join caches of Paimon's Flink jobs",
    "sink.": "a runtime setting of Paimon's Flink sink",
    "source.": "a runtime setting of Paimon's Flink source",
    "scan.split-enumerator.": "a runtime setting of Paimon's Flink source",
    "scan.manifest.": "a runtime setting of Paimon's scans",
    "write-buffer-spill": "spilling of Paimon's writers",
    "sort-spill-": "spilling of Paimon's writers",
    "spill-compression": "spilling of Paimon's writers",
    "local-sort.": "spilling of Paimon's writers",
    "parquet.": "parquet writer tuning (files stay readable by every reader)",
    "orc.": "orc writer tuning (lakestore's ORC files keep pyarrow's settings; every reader reads them)",
    "partition.mark-done-action": "a downstream signal",
    "tag.callback": "a Java callback",
    "commit.callback": "a Java callback",
    "consumer.": "consumer bookkeeping of Paimon's streaming readers",
    "materialized-table.": "metadata of Flink materialized tables",
    "metadata.iceberg.rest.": "a setting of the Iceberg rest-catalog metadata storage (refused by metadata.iceberg.storage)",
    "hive.": "a table parameter Paimon's Hive catalog mirrors into the metastore (sync-all-properties=false)",
}

# -- refused: features lakestore does not implement ------------------------------------------------------
_refuse(
    "lakestore reads and writes only tables of type 'table' (format, object and chain tables are not implemented)",
    "type",
    reads=True,
    allowed=("table",),
)
_refuse("chain tables are not implemented", "chain-table.enabled", reads=True, allowed=_FALSE)
# scan.fallback-branch and scan.primary-branch are implemented (options.py, lakestore/lifecycle/branches.py).
_refuse(
    "chain tables (reading snapshot and delta branches together) are not implemented (reads would miss their rows)",
    "scan.fallback-snapshot-branch",
    "scan.fallback-delta-branch",
    reads=True,
)
_ignore(
    "lakestore raises when reading the fallback branch fails (Paimon's read-fail-fast=true; with false Paimon logs and"
    " reads that split again through the current branch): reads that succeed return the same rows either way",
    "scan.fallback-branch.read-fail-fast",
)
_refuse(
    "merge semantics lakestore does not implement: the merge would keep other rows than Paimon's",
    "sequence.snapshot-ordering",
    reads=True,
    allowed=_FALSE,
)
_refuse("INSERT INTO as MERGE INTO by upsert-key is not implemented: lakestore would append duplicates", "upsert-key")
_refuse(
    "BLOB, VECTOR and external blob columns are not implemented",
    "blob-field",
    "blob-descriptor-field",
    "blob-view-field",
    "blob-external-storage-field",
    "blob-external-storage-path",
    "vector-field",
    reads=True,
)
_refuse(
    "global and primary-key indexes are not implemented: files lakestore writes would be missing from them",
    "pk-vector.index.columns",
    "pk-btree.index.columns",
    "pk-bitmap.index.columns",
    "pk-full-text.index.columns",
)
_refuse(
    "primary-key files sorted by clustering columns are not implemented: lakestore merges key-sorted files",
    "pk-clustering-override",
    reads=True,
    allowed=_FALSE,
)
_refuse("incremental clustering (levels of append tables) is not implemented", "clustering.incremental", allowed=_FALSE)
_refuse(
    "data files without duplicated key columns (thin mode) are not implemented",
    "data-file.thin-mode",
    reads=True,
    allowed=_FALSE,
)
_refuse(
    "index files in the data directories are not implemented (deletion vectors would not be found)",
    "index-file-in-data-file-dir",
    reads=True,
    allowed=_FALSE,
)
_refuse(
    "reads that expose or order by sequence numbers are not implemented",
    "table-read.sequence-number.enabled",
    "key-value.sequence_number.enabled",
    reads=True,
    allowed=_FALSE,
)
_refuse(
    "REST-catalog query authorization (row filters, column masks) is not implemented: a read would show what it hides",
    "query-auth.enabled",
    reads=True,
    allowed=_FALSE,
)
_SCAN = (
    "read options of Paimon's scans (time travel, incremental and streaming modes) stored on the table:"
    " lakestore takes them as read arguments, and reading without them would return other rows"
)
# Implemented (options.py), honoured by batch reads as Paimon's: scan.snapshot-id, scan.tag-name,
# scan.timestamp-millis, scan.timestamp, scan.watermark, scan.version, scan.mode,
# incremental-between, incremental-between-timestamp, incremental-between-scan-mode,
# incremental-between-tag-to-snapshot, scan.bucket, scan.file-creation-time-millis
# (lakestore/scan/time_travel.py, lakestore/scan/incremental.py).
_refuse(
    _SCAN,
    "scan.creation-time-millis",
    "scan.bounded.watermark",
    "incremental-to-auto-tag",
    reads=True,
)
_refuse(_SCAN, "stream-scan-mode", "batch-scan-mode", reads=True, allowed=("none",))
_refuse(
    "streaming reads of overwrite commits are not implemented",
    "streaming-read-overwrite",
    "streaming-read-append-overwrite",
    reads=True,
    allowed=_FALSE,
)
# Paimon 0.9's unit of record-level.time-field; Paimon 1.0+ (and lakestore) ignore it and take the
# unit from the column's type (INT seconds, BIGINT seconds or milliseconds, TIMESTAMP).
_ignore("a Paimon 0.9 setting that Paimon 2.0 ignores: the unit comes from the time field's type", "record-level.time-field-type")
_ignore(
    "ignored: lakestore's cross-partition upsert reads the table's keys for its index in one pass",
    "cross-partition-upsert.bootstrap-parallelism",
)
_refuse(
    "a time to live of the cross-partition upsert index is not implemented",
    "cross-partition-upsert.index-ttl",
)
_refuse("changelog deduplication that ignores fields is not implemented", "changelog-producer.row-deduplicate-ignore-fields")
_refuse("a maximum number of dynamic buckets is not implemented", "dynamic-bucket.max-buckets", allowed=("-1",))
_refuse("sequence numbers not continued from the bucket's files are not implemented", "write.sequence-number-init-mode", allowed=("scan",))
# metadata.iceberg.storage (table-location, hadoop-catalog) and its options are implemented (lakestore/iceberg);
# these keys of Paimon's IcebergOptions only configure the hive-catalog and rest-catalog storages, which are refused
_ignore(
    "a setting of the Iceberg hive-catalog/rest-catalog metadata storage (metadata.iceberg.storage refuses those)",
    "metadata.iceberg.uri",
    "metadata.iceberg.hive-conf-dir",
    "metadata.iceberg.hadoop-conf-dir",
    "metadata.iceberg.hive-client-class",
    "metadata.iceberg.database",
    "metadata.iceberg.table",
    "metadata.iceberg.glue.skip-archive",
    "metadata.iceberg.hive-skip-update-stats",
)
_refuse("deletion vectors merged on read are not implemented", "deletion-vectors.merge-on-read", reads=True, allowed=_FALSE)
_refuse("strict commit mode is not implemented", "commit.strict-mode.last-safe-snapshot")
_refuse("adding columns before the partition columns is not implemented", "add-column-before-partition", allowed=_FALSE)
_refuse(
    "timestamp formats checked strictly by partition expiration are not implemented", "partition.timestamp-format.strict", allowed=_FALSE
)
