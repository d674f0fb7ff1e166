"""Table options: Paimon's names and defaults, parsed and validated in one place.

Policy: options a user passes to create/alter a table are checked strictly. An unknown key, a
bad value, or a Paimon option lakestore does not implement yet is refused with ``OptionError``
(pypaimon silently ignores some of these; lakestore never does). Options read back from an
existing table must parse, and are then classified by ``unsupported`` with the registry in
``lakestore.meta.option_keys`` (every key of Paimon 2.0's ``CoreOptions``): runtime settings of
other engines are ignored; any other unknown or unimplemented option makes writes and maintenance
refuse by name (``UnsupportedTableError``), and reads refuse only when ignoring it would change
the rows they return.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from lakestore.errors import OptionError, UnsupportedTableError
from lakestore.format.avro import AVRO_CODECS
from lakestore.format.fileindex.registry import key_type as file_index_key_type
from lakestore.format.formats import FORMATS, UNIMPLEMENTED
from lakestore.format.orc import ORC_CODECS
from lakestore.format.parquet import PARQUET_CODECS
from lakestore.meta.kinds import ChangelogProducer, MergeEngine
from lakestore.meta.option_keys import FALLBACK_KEYS, IGNORED, IGNORED_PREFIXES, REFUSED, Refusal, file_index_refusal
from lakestore.units import parse_duration_ms, parse_memory

# Java DateTimeFormatter letters -> strptime directives (the ones partition values use).
_JAVA_TOKENS = {"yyyy": "%Y", "MM": "%m", "dd": "%d", "HH": "%H", "mm": "%M", "ss": "%S", "SSS": "%f"}
_JAVA_TOKEN = re.compile(r"yyyy|MM|dd|HH|mm|ss|SSS|[A-Za-z]")


def java_pattern_to_strptime(pattern: str) -> str:
    """``yyyy-MM-dd HH:mm:ss`` -> ``%Y-%m-%d %H:%M:%S``; other pattern letters are refused."""

    def convert(match: re.Match[str]) -> str:
        token = match.group(0)
        if token not in _JAVA_TOKENS:
            raise ValueError(f"pattern letter {token!r} is not supported (use yyyy, MM, dd, HH, mm, ss, SSS)")
        return _JAVA_TOKENS[token]

    return _JAVA_TOKEN.sub(convert, str(pattern).replace("%", "%%"))


def _int(text: str) -> int:
    return int(str(text).strip())


def _positive_int(text: str) -> int:
    value = _int(text)
    if value <= 0:
        raise ValueError("must be > 0")
    return value


def _non_negative_int(text: str) -> int:
    value = _int(text)
    if value < 0:
        raise ValueError("must be >= 0")
    return value


def _bool(text: str) -> bool:
    lowered = str(text).strip().lower()
    if lowered not in ("true", "false"):
        raise ValueError("must be 'true' or 'false'")
    return lowered == "true"


# Paimon 2.0's ``StartupMode`` values (``scan.mode``); lakestore's reads refuse compacted-full and
# from-creation-timestamp (``lakestore.scan.time_travel``).
SCAN_MODES = (
    "default",
    "latest-full",
    "full",
    "latest",
    "from-timestamp",
    "from-snapshot",
    "from-snapshot-full",
    "incremental",
    "compacted-full",
    "from-file-creation-time",
    "from-creation-timestamp",
)


def _choice(*allowed: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        value = str(text).strip().lower()
        if value not in allowed:
            raise ValueError(f"must be one of {', '.join(allowed)}")
        return value

    return parse


def _name_list(text: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in str(text).split(",") if p.strip())


_STATS_MODE = re.compile(r"none|counts|full|truncate\((\d+)\)")


def stats_mode(text: str) -> str:
    """Paimon's column statistics modes: ``none``, ``counts``, ``truncate(N)`` (N > 0), ``full``
    (case-insensitive, as ``SimpleColStatsCollector.from`` parses them); returned lower-case."""
    value = str(text).strip().lower()
    match = _STATS_MODE.fullmatch(value)
    if match is None or (match.group(1) is not None and int(match.group(1)) <= 0):
        raise ValueError("lakestore implements the statistics modes none, counts, truncate(N) with N > 0, and full")
    return value


def _level_map(parse: Callable[[str], str]) -> Callable[[str], dict[int, str]]:
    """Paimon's per-level map options: ``0:none,3:full`` (``{}`` or empty: no entry)."""

    def parsed(text: str) -> dict[int, str]:
        body = str(text).strip()
        if body in ("", "{}"):
            return {}
        out: dict[int, str] = {}
        for item in body.split(","):
            level, sep, value = item.partition(":")
            if not sep or not level.strip().isdigit():
                raise ValueError("must be a list of <level>:<value> entries, e.g. 0:none,3:full")
            out[int(level)] = parse(value)
        return out

    return parsed


# Codecs Paimon's writers name (``none`` writes uncompressed files): parquet's and ORC's
# (lakestore/format/parquet.py, orc.py; which format takes which is checked per table, see
# ``_check_format_codecs``). lzo is not among them because pyarrow cannot write it. brotli is
# accepted on tables another engine created (lakestore reads and continues them), never for new
# tables: Paimon's Java parquet reader has no brotli codec unless one is added to its classpath.
FILE_COMPRESSIONS = tuple(dict.fromkeys(PARQUET_CODECS + ORC_CODECS + AVRO_CODECS))


def _file_compression(text: str) -> str:
    value = str(text).strip().lower()
    if value not in FILE_COMPRESSIONS:
        raise ValueError(
            f"lakestore writes parquet files compressed with {', '.join(PARQUET_CODECS)}, orc files with {', '.join(ORC_CODECS)}"
            f" and avro files with {', '.join(AVRO_CODECS)}"
        )
    return value


def _file_format(text: str) -> str:
    value = str(text).strip().lower()
    if value not in FORMATS:
        reason = UNIMPLEMENTED.get(value, f"{value} data files are not implemented")
        raise ValueError(f"{reason}; lakestore reads and writes {' and '.join(FORMATS)} data files")
    return value


_COMPRESSION_KEYS = ("file.compression", "changelog-file.compression", "file.compression.per.level")


def _zstd_level(text: str) -> int:
    value = _int(text)
    if not -131072 <= value <= 22:
        raise ValueError("zstd levels run from -131072 to 22")
    return value


def _keep_first_n(text: str) -> int:
    value = _int(text)
    if value < -1:
        raise ValueError("must be -1 (every column) or a column count")
    return value


def _bucket(text: str) -> int:
    value = _int(text)
    if value == -2:
        return value  # postpone buckets (lakestore/write/postpone.py, lakestore/compact/postpone.py)
    if value == 0 or value < -2:
        raise ValueError("must be a positive bucket count or -1 (dynamic buckets for primary-key tables, bucket-unaware append tables)")
    return value


@dataclass(frozen=True, slots=True)
class OptionSpec:
    key: str
    default: str | None
    parse: Callable[[str], Any]


_SPECS: dict[str, OptionSpec] = {
    s.key: s
    for s in (
        OptionSpec("bucket", "-1", _bucket),
        OptionSpec("bucket-key", None, _name_list),
        # bucket counts the postpone compaction gives partitions without real buckets (Paimon's PostponeUtils)
        OptionSpec("postpone.default-bucket-num", "1", _positive_int),
        OptionSpec("postpone.target-row-num-per-bucket", None, _positive_int),
        # lets an alter switch deletion-vectors.enabled (lakestore/meta/schema_change.py, Paimon's SchemaManager)
        OptionSpec("deletion-vectors.modifiable", "false", _bool),
        # data-file formats (lakestore/format/formats.py); each existing file's from its name
        OptionSpec("file.format", "parquet", _file_format),
        OptionSpec("file.format.per.level", "{}", _level_map(_file_format)),
        OptionSpec("file.compression", "zstd", _file_compression),
        OptionSpec("file.compression.zstd-level", "1", _zstd_level),
        OptionSpec("file.compression.per.level", "{}", _level_map(_file_compression)),
        # changelog files (changelog producers): unset = as data files
        OptionSpec("changelog-file.format", None, _file_format),
        OptionSpec("changelog-file.compression", None, _file_compression),
        OptionSpec("changelog-file.stats-mode", None, stats_mode),
        OptionSpec("manifest.format", "avro", _choice("avro")),
        OptionSpec("manifest.compression", "zstd", _choice("zstd", "null", "deflate", "snappy")),
        OptionSpec("merge-engine", "deduplicate", _choice("deduplicate", "partial-update", "aggregation", "first-row")),
        OptionSpec("ignore-delete", "false", _bool),
        OptionSpec("partial-update.ignore-delete", "false", _bool),
        OptionSpec("first-row.ignore-delete", "false", _bool),
        OptionSpec("fields.default-aggregate-function", None, str),
        OptionSpec("sequence.field", None, _name_list),
        # merge options (lakestore/merge): Paimon 2.0's UserDefinedSeqComparator, RowKindFilter,
        # PartialUpdate/AggregateMergeFunction and RecordLevelExpire
        OptionSpec("sequence.field.sort-order", "ascending", _choice("ascending", "descending")),
        OptionSpec("ignore-update-before", "false", _bool),
        OptionSpec("partial-update.remove-record-on-delete", "false", _bool),
        OptionSpec("aggregation.remove-record-on-delete", "false", _bool),
        # Table.delete with a filter on partition columns only deletes row by row instead of dropping
        # the partitions (lakestore/dml, Spark's OptimizeMetadataOnlyDeleteFromPaimonTable)
        OptionSpec("delete.force-produce-changelog", "false", _bool),
        OptionSpec("partial-update.remove-record-on-sequence-group", None, _name_list),
        OptionSpec("record-level.expire-time", None, parse_duration_ms),
        OptionSpec("record-level.time-field", None, str),
        OptionSpec("rowkind.field", None, str),
        OptionSpec("changelog-producer", "none", _choice("none", "input", "lookup", "full-compaction")),
        OptionSpec("changelog-producer.row-deduplicate", "false", _bool),
        OptionSpec("full-compaction.delta-commits", None, _positive_int),
        OptionSpec("target-file-size", None, parse_memory),
        OptionSpec("write-buffer-size", "256 mb", parse_memory),
        # Paimon 2.0's default: a full write buffer spills to local disk; a commit writes one
        # sorted run per bucket (lakestore/write/spill.py)
        OptionSpec("write-buffer-spillable", "true", _bool),
        OptionSpec("write-only", "false", _bool),
        OptionSpec("manifest.target-file-size", "8 mb", parse_memory),
        OptionSpec("manifest.merge-min-count", "30", _positive_int),
        OptionSpec("commit.max-retries", "10", _int),
        OptionSpec("commit.min-retry-wait", "10 ms", parse_duration_ms),
        OptionSpec("commit.max-retry-wait", "10 s", parse_duration_ms),
        OptionSpec("num-sorted-run.compaction-trigger", "5", _positive_int),
        OptionSpec("num-sorted-run.stop-trigger", None, _positive_int),
        OptionSpec("num-levels", None, _positive_int),
        OptionSpec("compaction.max-size-amplification-percent", "200", _int),
        OptionSpec("compaction.size-ratio", "1", _int),
        OptionSpec("compaction.min.file-num", "5", _positive_int),
        OptionSpec("compaction.max.file-num", "50", _positive_int),
        # Paimon 2.0's EarlyFullCompaction, forced rewrites and append-compaction limits (lakestore/compact)
        OptionSpec("compaction.force-rewrite-all-files", "false", _bool),
        OptionSpec("compaction.total-size-threshold", None, parse_memory),
        OptionSpec("compaction.file-num-limit", "100000", _positive_int),
        OptionSpec("compaction.delete-ratio-threshold", "0.2", float),
        OptionSpec("snapshot.num-retained.min", "10", _positive_int),
        OptionSpec("snapshot.num-retained.max", None, _positive_int),
        OptionSpec("snapshot.time-retained", "1 h", parse_duration_ms),
        OptionSpec("snapshot.expire.limit", "50", _positive_int),
        # changelog retention; unset = the snapshot retention (lakestore/lifecycle/changelog_expire.py)
        OptionSpec("changelog.num-retained.min", None, _positive_int),
        OptionSpec("changelog.num-retained.max", None, _positive_int),
        OptionSpec("changelog.time-retained", None, parse_duration_ms),
        # lifecycle (lakestore/lifecycle): expiration after commit, automatic tags
        OptionSpec("snapshot.expire.execution-mode", "sync", _choice("sync", "async")),
        OptionSpec("tag.automatic-creation", "none", _choice("none", "process-time", "watermark", "batch")),
        OptionSpec("tag.batch.customized-name", None, str),  # the name of tag.automatic-creation=batch tags
        OptionSpec("tag.creation-period", "daily", _choice("daily", "hourly", "two-hours")),
        OptionSpec("tag.creation-period-duration", None, parse_duration_ms),
        OptionSpec("tag.period-formatter", "with_dashes", _choice("with_dashes", "without_dashes", "without_dashes_and_spaces")),
        OptionSpec("tag.automatic-completion", "false", _bool),
        OptionSpec("tag.time-expire-enabled", "true", _bool),
        OptionSpec("sink.watermark-time-zone", "UTC", str),  # the zone of watermark tags (lakestore/lifecycle/tags.py)
        OptionSpec("sink.process-time-zone", None, str),  # the zone of process-time tags; unset = the local zone
        # consumers (lakestore/meta/consumer.py, lakestore/lifecycle/expire.py)
        OptionSpec("consumer.mode", "exactly-once", _choice("exactly-once", "at-least-once")),
        OptionSpec("consumer.expiration-time", None, parse_duration_ms),
        OptionSpec("tag.creation-delay", "0 ms", parse_duration_ms),
        OptionSpec("tag.num-retained-max", None, _positive_int),
        OptionSpec("tag.default-time-retained", None, parse_duration_ms),
        OptionSpec("partition.default-name", "__DEFAULT_PARTITION__", str),
        # partition expiration (lakestore/lifecycle/partition_expire.py)
        OptionSpec("partition.expiration-time", None, parse_duration_ms),
        OptionSpec("partition.expiration-check-interval", "1 h", parse_duration_ms),
        OptionSpec("partition.expiration-strategy", "values-time", _choice("values-time")),
        OptionSpec("partition.timestamp-formatter", None, java_pattern_to_strptime),
        OptionSpec("partition.timestamp-pattern", None, str),
        OptionSpec("partition.legacy-name", "true", _bool),
        # value statistics of data files (lakestore/meta/stats.py); Paimon 2.0's defaults
        OptionSpec("metadata.stats-mode", "truncate(16)", stats_mode),
        OptionSpec("metadata.stats-mode.per.level", "{}", _level_map(stats_mode)),
        OptionSpec("metadata.stats-dense-store", "true", _bool),
        OptionSpec("metadata.stats-keep-first-n-columns", "-1", _keep_first_n),
        OptionSpec("deletion-vectors.enabled", "false", _bool),  # lakestore/read|compact/deletion_vectors.py
        # file indexes of data files (lakestore/format/fileindex, written by lakestore/write/file_writer.py)
        OptionSpec("file-index.in-manifest-threshold", "500 b", parse_memory),
        OptionSpec("file-index.read.enabled", "true", _bool),
        OptionSpec("force-lookup", "false", _bool),  # the lookup merge of reads and compaction (lakestore/merge/lookup.py)
        OptionSpec("deletion-vectors.bitmap64", "false", _bool),  # 64-bit vectors (Paimon 1.2+): lakestore/format/deletion_vector.py
        # row tracking and data evolution (Paimon 1.3+): lakestore/write/row_tracking.py, lakestore/read/data_evolution.py
        OptionSpec("row-tracking.enabled", "false", _bool),
        OptionSpec("data-evolution.enabled", "false", _bool),
        OptionSpec("row-tracking.partition-group-on-commit", "true", _bool),
        # dynamic bucket mode (bucket = -1 with a primary key; lakestore/write/dynamic_bucket.py)
        OptionSpec("dynamic-bucket.target-row-num", "2000000", _positive_int),
        OptionSpec("dynamic-bucket.initial-buckets", None, _positive_int),
        OptionSpec("dynamic-bucket.assigner-parallelism", None, _positive_int),
        # data-file paths and commit (lakestore/meta/paths.py, lakestore/commit/commit.py)
        OptionSpec("data-file.prefix", "data-", str),
        OptionSpec("changelog-file.prefix", "changelog-", str),
        OptionSpec("file.suffix.include.compression", "false", _bool),
        OptionSpec("data-file.path-directory", None, str),
        OptionSpec("data-file.external-paths", None, str),
        OptionSpec(
            "data-file.external-paths.strategy", "none", _choice("none", "specific-fs", "round-robin", "entropy-inject", "weight-robin")
        ),
        OptionSpec("data-file.external-paths.specific-fs", None, str),
        OptionSpec("data-file.external-paths.weights", None, lambda text: tuple(_positive_int(w) for w in str(text).split(","))),
        OptionSpec("snapshot.ignore-empty-commit", None, _bool),
        OptionSpec("commit.discard-duplicate-files", "false", _bool),
        OptionSpec("manifest.delete-file-drop-stats", "false", _bool),
        # batch-read options stored on the table, honoured as Paimon's batch reads honour them
        # (lakestore/scan/time_travel.py, lakestore/scan/incremental.py)
        OptionSpec("scan.snapshot-id", None, _positive_int),
        OptionSpec("scan.tag-name", None, str),
        OptionSpec("scan.timestamp-millis", None, _int),
        OptionSpec("scan.timestamp", None, str),
        OptionSpec("scan.watermark", None, _int),
        OptionSpec("scan.version", None, str),
        OptionSpec("scan.mode", "default", _choice(*SCAN_MODES)),  # lakestore/scan/time_travel.py refuses two of them
        OptionSpec("incremental-between", None, str),
        OptionSpec("incremental-between-timestamp", None, str),
        OptionSpec("incremental-between-scan-mode", "auto", _choice("auto", "delta", "changelog", "diff")),
        OptionSpec("incremental-between-tag-to-snapshot", "false", _bool),
        OptionSpec("scan.bucket", None, _int),
        OptionSpec("scan.file-creation-time-millis", None, _int),
        # fixed-bucket writes and bucket pruning (lakestore/format/bucket.py)
        OptionSpec("bucket-function.type", "default", _choice("default", "mod", "hive")),
        # batch reads over two branches (lakestore/lifecycle/branches.py, Paimon's FallbackReadFileStoreTable)
        OptionSpec("scan.fallback-branch", None, str),
        OptionSpec("scan.primary-branch", None, str),
        # Iceberg-compatible metadata written after each commit (lakestore/iceberg); Paimon's IcebergOptions
        OptionSpec("metadata.iceberg.storage", "disabled", _choice("disabled", "table-location", "hadoop-catalog")),
        OptionSpec("metadata.iceberg.storage-location", None, _choice("table-location", "catalog-location")),
        OptionSpec("metadata.iceberg.format-version", "2", _choice("2")),  # 3 (Iceberg deletion vectors) is not implemented
        OptionSpec("metadata.iceberg.compaction.min.file-num", "10", _positive_int),
        OptionSpec("metadata.iceberg.compaction.max.file-num", "50", _positive_int),
        OptionSpec("metadata.iceberg.delete-after-commit.enabled", "true", _bool),
        OptionSpec("metadata.iceberg.previous-versions-max", "0", _non_negative_int),
        OptionSpec("metadata.iceberg.manifest-compression", "snappy", _choice("snappy", "null", "deflate", "zstd")),
        OptionSpec("metadata.iceberg.manifest-legacy-version", "false", _choice("false")),
    )
}


# Implemented options that steer only what lakestore writes and maintains (statistics, compression,
# file and manifest sizes, commit retries, compaction triggers, expiration, tags): on a table
# another engine wrote with a value lakestore does not implement (tag.automatic-creation=watermark,
# metadata.stats-mode=...) they refuse writes and maintenance by name, and the table stays readable.
# (file.compression is not among them: data-file names may carry the codec, see meta/paths.py.)
_WRITE_SIDE_KEYS = frozenset(
    {
        "file.format",  # each existing file's format comes from its name
        "file.format.per.level",
        "changelog-file.format",
        "file.compression.zstd-level",
        "file.compression.per.level",
        "changelog-file.compression",
        "changelog-file.stats-mode",
        "manifest.target-file-size",
        "manifest.merge-min-count",
        "target-file-size",
        "write-buffer-size",
        "write-buffer-spillable",
        "commit.max-retries",
        "commit.min-retry-wait",
        "commit.max-retry-wait",
        "compaction.max-size-amplification-percent",
        "compaction.size-ratio",
        "compaction.min.file-num",
        "compaction.max.file-num",
        "full-compaction.delta-commits",
        "compaction.force-rewrite-all-files",
        "compaction.total-size-threshold",
        "compaction.file-num-limit",
        "compaction.delete-ratio-threshold",
        "consumer.mode",
        "consumer.expiration-time",
    }
)
_WRITE_SIDE_PREFIXES = (
    "metadata.stats-",
    "metadata.iceberg.",
    "snapshot.",
    "changelog.",
    "tag.",
    "partition.expiration-",
    "partition.timestamp-",
)


def _write_side(key: str) -> bool:
    return key in _WRITE_SIDE_KEYS or (key in _SPECS and key.startswith(_WRITE_SIDE_PREFIXES))


def _unparsable(key: str, value: str) -> str | None:
    try:
        _SPECS[key].parse(value)
    except ValueError as exc:
        return str(exc)
    return None


def _ignorable(key: str) -> bool:
    return key in IGNORED or key.startswith(tuple(IGNORED_PREFIXES))


def _implemented(key: str) -> bool:
    if file_index_key_type(key) is not None:
        return file_index_refusal(key) is None  # file-index.<type>.* of a type lakestore implements
    return key in _SPECS or _parse_field_option(key) is not None or FALLBACK_KEYS.get(key, "") in _SPECS


def _refusal(key: str) -> Refusal:
    found = file_index_refusal(key)
    return found if found is not None else REFUSED[key if key in REFUSED else FALLBACK_KEYS[key]]


def classify(key: str) -> Literal["implemented", "ignored", "refused", "unknown"]:
    """What lakestore does with option ``key`` set on an existing table (see ``option_keys``)."""
    if _implemented(key):
        return "implemented"
    if file_index_refusal(key) is not None:
        return "refused"
    key = key if key in REFUSED or key in IGNORED else FALLBACK_KEYS.get(key, key)
    if key in REFUSED:
        return "refused"
    if _ignorable(key):
        return "ignored"
    return "unknown"


@dataclass(frozen=True, slots=True)
class Unsupported:
    """What of an existing table lakestore cannot honour: ``(option, why)`` pairs."""

    blocks_writes: tuple[tuple[str, str], ...]
    blocks_reads: tuple[tuple[str, str], ...]
    blocks_compaction: tuple[tuple[str, str], ...] = ()


def unsupported(options: Mapping[str, str], *, primary_keys: Sequence[str], partition_keys: Sequence[str] = ()) -> Unsupported:
    """Classify the options of an existing table (possibly written by another engine)."""
    writes: list[tuple[str, str]] = []
    reads: list[tuple[str, str]] = []
    for key, value in options.items():
        kind = classify(key)
        if kind == "implemented" and _write_side(key):
            problem = _unparsable(key, value)
            if problem is not None:
                writes.append((key, f"{key}={value} is not implemented: {problem}"))
            continue
        if kind in ("implemented", "ignored"):
            continue
        if kind == "refused":
            refusal = _refusal(key)
            if str(value).strip().lower() in refusal.allowed:
                continue
            reason = f"{key}={value}: {refusal.reason}"
            writes.append((key, reason))
            if refusal.blocks_reads:
                reads.append((key, reason))
        else:
            writes.append((key, f"{key}={value} is an option lakestore does not know"))
    dv_append: tuple[tuple[str, str], ...] = ()
    if not primary_keys and options.get("deletion-vectors.enabled", "false").strip().lower() == "true":
        # Appends, overwrites (the partitions' vectors go with their files) and row deletes
        # (lakestore.dml.append_vectors) are written as paimon-spark writes them; compaction
        # would have to apply and retire the vectors, which is not implemented.
        dv_append = (("deletion-vectors.enabled", "deletion-vectors.enabled=true on an append table: compaction is not implemented"),)
    if options.get("bucket", "-1").strip() == "-2":
        writes += _postpone_refusals(options, primary_keys)
    if (
        primary_keys
        and options.get("bucket", "-1").strip() == "-1"
        and not set(partition_keys) <= set(primary_keys)
        and options.get("deletion-vectors.enabled", "false").strip().lower() == "true"
    ):
        writes.append(
            (
                "bucket",
                "bucket=-1 with a primary key that lacks partition keys (Paimon's cross-partition upsert) and deletion"
                " vectors is not implemented",
            )
        )
    compaction = _row_tracking_refusals(options, primary_keys, writes, reads) + dv_append
    return Unsupported(tuple(writes), tuple(reads), compaction)


def _row_tracking_refusals(
    options: Mapping[str, str], primary_keys: Sequence[str], writes: list[tuple[str, str]], reads: list[tuple[str, str]]
) -> tuple[tuple[str, str], ...]:
    """Row tracking (append tables with bucket = -1 only, as Paimon's SchemaValidation demands) and
    data evolution (only with row tracking). Compaction of row-tracking tables keeps each row's
    _ROW_ID and _SEQUENCE_NUMBER as columns of the new file, as Paimon 2.0's core append compaction
    (lakestore/compact/row_tracking.py); that of data-evolution tables (Paimon's
    DataEvolutionCompactCoordinator, which merges files of a row-id range) is refused."""
    tracking = options.get("row-tracking.enabled", "false").strip().lower() == "true"
    evolution = options.get("data-evolution.enabled", "false").strip().lower() == "true"
    if not tracking and not evolution:
        return ()
    if evolution and not tracking:
        reason = "data-evolution.enabled=true without row-tracking.enabled=true (Paimon refuses such tables)"
        writes.append(("data-evolution.enabled", reason))
        reads.append(("data-evolution.enabled", reason))
    if tracking and (primary_keys or options.get("bucket", "-1").strip() != "-1"):
        writes.append(("row-tracking.enabled", "row-tracking.enabled=true needs an append table with bucket = -1 (as Paimon)"))
    if evolution and options.get("deletion-vectors.enabled", "false").strip().lower() == "true":
        reason = "deletion vectors of data-evolution tables (anchored on a row-id range) are not implemented"
        writes.append(("data-evolution.enabled", reason))
        reads.append(("data-evolution.enabled", reason))
    if evolution and options.get("vector.file.format"):
        reason = "vector.file.format: vector-store files (.vector.<format>) of data-evolution tables are not implemented"
        writes.append(("vector.file.format", reason))
        reads.append(("vector.file.format", reason))
    if not evolution:
        return ()
    return (("data-evolution.enabled", "data-evolution.enabled=true: compaction (merging the files of a row-id range) is not implemented"),)


def _postpone_refusals(options: Mapping[str, str], primary_keys: Sequence[str]) -> list[tuple[str, str]]:
    """Postpone-bucket tables lakestore does not write (it reads them all: real buckets only)."""
    out = []
    if not primary_keys:
        out.append(("bucket", "bucket=-2 (postpone buckets) on a table without a primary key is not implemented"))
    if options.get("deletion-vectors.enabled", "false").strip().lower() == "true":
        out.append(("deletion-vectors.enabled", "bucket=-2 (postpone buckets) with deletion vectors is not implemented"))
    producer = options.get("changelog-producer", "none").strip().lower()
    if producer not in ("none", "input"):
        out.append(("changelog-producer", f"bucket=-2 (postpone buckets) with changelog-producer={producer} is not implemented"))
    return out


def require_supported(unsupported_options: Unsupported, *, operation: str, table: str) -> None:
    """Raise ``UnsupportedTableError`` naming every option that forbids ``operation``
    ("read", or a write/maintenance verb such as "write", "compact", "expire")."""
    blockers = unsupported_options.blocks_reads if operation == "read" else unsupported_options.blocks_writes
    if operation == "compact":
        blockers = blockers + unsupported_options.blocks_compaction
    if blockers:
        reasons = "; ".join(reason for _, reason in blockers)
        raise UnsupportedTableError(
            f"cannot {operation} table {table}: {reasons}. lakestore refuses rather than risk changing what Paimon reads",
            options=tuple(key for key, _ in blockers),
        )


AGGREGATE_FUNCTIONS = (
    "sum",
    "product",
    "min",
    "max",
    "count",
    "last_value",
    "last_non_null_value",
    "first_value",
    "first_non_null_value",
    "bool_and",
    "bool_or",
    "listagg",
    "collect",
    "merge_map",
    "nested_update",
    "primary-key",
)

_FIELD_SUFFIXES: dict[str, Callable[[str], Any]] = {
    "aggregate-function": _choice(*AGGREGATE_FUNCTIONS),
    "ignore-retract": _bool,
    "list-agg-delimiter": str,
    "sequence-group": _name_list,
    "distinct": _bool,
    "nested-key": _name_list,
    "stats-mode": stats_mode,
}


def _parse_field_option(key: str) -> tuple[str, str] | None:
    """``fields.<name>.<suffix>`` -> (name, suffix) for known suffixes."""
    if not key.startswith("fields."):
        return None
    for suffix in _FIELD_SUFFIXES:
        if key.endswith("." + suffix) and len(key) > len("fields.") + len(suffix) + 1:
            return key[len("fields.") : -len(suffix) - 1], suffix
    return None


def validate(options: Mapping[str, str], *, strict: bool = True) -> dict[str, str]:
    """Check keys and values; returns the options as a ``dict[str, str]``."""
    cleaned: dict[str, str] = {}
    for key, raw in options.items():
        if not isinstance(key, str):
            raise OptionError(f"option keys must be strings, got {key!r}")
        value = str(raw).lower() if isinstance(raw, bool) else str(raw)
        if strict and key in _COMPRESSION_KEYS and "brotli" in value.lower():
            raise OptionError(
                f"option {key!r} = {value!r} is not supported for new tables: Paimon's Java parquet reader has no brotli codec"
            )
        if key in REFUSED and key not in _SPECS:
            if strict:
                raise OptionError(f"option {key!r} is a Paimon option that lakestore does not implement: {REFUSED[key].reason}")
            cleaned[key] = value  # written by another engine: ``unsupported`` decides what it blocks
            continue
        if file_index_key_type(key) is not None:
            refusal = file_index_refusal(key)
            if refusal is not None and strict:
                raise OptionError(f"option {key!r} is not supported: {refusal.reason}")
            cleaned[key] = value  # checked against the columns when a file is written (registry.file_index_options)
            continue
        spec = _SPECS.get(key)
        if spec is None:
            field_option = _parse_field_option(key)
            if field_option is not None:
                try:
                    _FIELD_SUFFIXES[field_option[1]](value)
                except ValueError as exc:
                    raise OptionError(f"option {key!r} = {value!r} is not supported: {exc}") from exc
                cleaned[key] = value
                continue
            if key.startswith("fields.") and strict:
                raise OptionError(f"option {key!r}: unknown per-field option (known: {sorted(_FIELD_SUFFIXES)})")
            if strict:
                why = "a runtime setting of other engines" if _ignorable(key) else "an option lakestore does not know"
                raise OptionError(f"option {key!r} is {why}; lakestore accepts only options it implements")
            cleaned[key] = value  # written by another engine; irrelevant to lakestore
            continue
        try:
            spec.parse(value)
        except ValueError as exc:
            if strict or not _write_side(key):
                raise OptionError(f"option {key!r} = {value!r} is not supported: {exc}") from exc
            # written by another engine: ``unsupported`` refuses writes by name, reads go on
        cleaned[key] = value
    if strict:
        _check_format_codecs(cleaned)
    return cleaned


def _check_format_codecs(options: Mapping[str, str]) -> None:
    """Every codec the options name is one the formats they name write (ORC has no gzip, parquet
    no zlib). Raises ``OptionError`` naming the option."""
    formats = {_file_format(options.get("file.format", "parquet"))}
    formats |= set(_level_map(_file_format)(options.get("file.format.per.level", "{}")).values())
    changelog_format = _file_format(options.get("changelog-file.format", options.get("file.format", "parquet")))
    codecs = [("file.compression", _file_compression(options.get("file.compression", "zstd")))]
    per_level = _level_map(_file_compression)(options.get("file.compression.per.level", "{}"))
    codecs += [("file.compression.per.level", c) for c in per_level.values()]
    checks = [(key, codec, fmt) for key, codec in codecs for fmt in sorted(formats)]
    if options.get("changelog-file.compression") is not None:
        checks.append(("changelog-file.compression", _file_compression(options["changelog-file.compression"]), changelog_format))
    for key, codec, fmt in checks:
        if codec not in FORMATS[fmt].codecs:
            raise OptionError(f"option {key!r} = {codec!r} is not supported: {fmt} files are written with {', '.join(FORMATS[fmt].codecs)}")


class CoreOptions:
    """Typed, read-only view over a table's options."""

    def __init__(self, options: Mapping[str, str], *, has_primary_key: bool) -> None:
        self._raw = dict(options)
        self._has_primary_key = has_primary_key

    def raw(self) -> dict[str, str]:
        return dict(self._raw)

    def get(self, key: str) -> Any:
        spec = _SPECS[key]
        value = self._raw.get(key)
        if value is None:  # Paimon reads a key's fallback keys when the key itself is unset
            value = next((self._raw[k] for k, primary in FALLBACK_KEYS.items() if primary == key and k in self._raw), spec.default)
        if value is None:
            return None
        try:
            return spec.parse(value)
        except ValueError as exc:
            raise OptionError(f"option {key!r} = {value!r} is not supported: {exc}") from exc

    def field_option(self, field: str, suffix: str) -> Any:
        value = self._raw.get(f"fields.{field}.{suffix}")
        return None if value is None else _FIELD_SUFFIXES[suffix](value)

    def field_options(self, suffix: str) -> dict[str, Any]:
        """Every ``fields.<f>.<suffix>`` option as {f: parsed value}."""
        out = {}
        for key, value in self._raw.items():
            parsed = _parse_field_option(key)
            if parsed is not None and parsed[1] == suffix:
                out[parsed[0]] = _FIELD_SUFFIXES[suffix](value)
        return out

    @property
    def ignore_delete(self) -> bool:
        return bool(self.get("ignore-delete") or self.get("partial-update.ignore-delete") or self.get("first-row.ignore-delete"))

    @property
    def row_tracking(self) -> bool:
        """``row-tracking.enabled``: commits give new files ``_FIRST_ROW_ID`` from ``nextRowId``."""
        return _bool(self._raw.get("row-tracking.enabled", "false"))

    @property
    def data_evolution(self) -> bool:
        """``data-evolution.enabled``: files sharing a row-id range are merged column-wise."""
        return _bool(self._raw.get("data-evolution.enabled", "false"))

    @property
    def deletion_vectors(self) -> bool:
        """``deletion-vectors.enabled``: readers skip level 0 and apply each file's vector."""
        return _bool(self._raw.get("deletion-vectors.enabled", "false"))

    @property
    def changelog_producer(self) -> ChangelogProducer:
        return self.get("changelog-producer")

    @property
    def bucket(self) -> int:
        return self.get("bucket")

    @property
    def dynamic_bucket_target_row_num(self) -> int:
        return self.get("dynamic-bucket.target-row-num")

    @property
    def dynamic_bucket_initial_buckets(self) -> int | None:
        return self.get("dynamic-bucket.initial-buckets")

    @property
    def dynamic_bucket_assigner_parallelism(self) -> int | None:
        return self.get("dynamic-bucket.assigner-parallelism")

    @property
    def bucket_key(self) -> tuple[str, ...]:
        return self.get("bucket-key") or ()

    @property
    def sequence_fields(self) -> tuple[str, ...]:
        return self.get("sequence.field") or ()

    @property
    def sequence_ascending(self) -> bool:
        """``sequence.field.sort-order``: descending makes the smallest sequence value win."""
        return self.get("sequence.field.sort-order") == "ascending"

    @property
    def ignore_update_before(self) -> bool:
        return self.get("ignore-update-before")

    @property
    def record_level_expire_ms(self) -> int | None:
        return self.get("record-level.expire-time")

    @property
    def record_level_time_field(self) -> str | None:
        return self.get("record-level.time-field")

    @property
    def rowkind_field(self) -> str | None:
        return self.get("rowkind.field")

    @property
    def merge_engine(self) -> MergeEngine:
        return self.get("merge-engine")

    @property
    def target_file_size(self) -> int:
        explicit = self.get("target-file-size")
        if explicit is not None:
            return explicit
        return (128 << 20) if self._has_primary_key else (256 << 20)

    @property
    def write_buffer_size(self) -> int:
        return self.get("write-buffer-size")

    @property
    def write_buffer_spillable(self) -> bool:
        return self.get("write-buffer-spillable")

    @property
    def write_only(self) -> bool:
        return self.get("write-only")

    @property
    def file_compression(self) -> str:
        return self.get("file.compression")

    @property
    def file_format(self) -> str:
        """``file.format``: the format new data files are written in (lakestore/format/formats.py)."""
        return self.get("file.format")

    @property
    def file_format_per_level(self) -> dict[int, str]:
        return self.get("file.format.per.level")

    @property
    def changelog_file_format(self) -> str:
        return self.get("changelog-file.format") or self.file_format

    @property
    def manifest_compression(self) -> str:
        return self.get("manifest.compression")

    @property
    def manifest_target_size(self) -> int:
        return self.get("manifest.target-file-size")

    @property
    def manifest_merge_min_count(self) -> int:
        return self.get("manifest.merge-min-count")

    @property
    def commit_max_retries(self) -> int:
        return self.get("commit.max-retries")

    @property
    def commit_min_retry_wait_ms(self) -> int:
        return self.get("commit.min-retry-wait")

    @property
    def commit_max_retry_wait_ms(self) -> int:
        return self.get("commit.max-retry-wait")

    @property
    def compaction_trigger(self) -> int:
        return self.get("num-sorted-run.compaction-trigger")

    @property
    def stop_trigger(self) -> int:
        explicit = self.get("num-sorted-run.stop-trigger")
        return explicit if explicit is not None else self.compaction_trigger + 3

    @property
    def num_levels(self) -> int:
        explicit = self.get("num-levels")
        return explicit if explicit is not None else self.compaction_trigger + 1

    @property
    def partition_default_name(self) -> str:
        return self.get("partition.default-name")

    @property
    def stats_mode(self) -> str:
        return self.get("metadata.stats-mode")

    def stats_mode_at(self, level: int) -> str:
        """``metadata.stats-mode.per.level`` for ``level``, else ``metadata.stats-mode``."""
        return self.stats_mode_per_level.get(level, self.stats_mode)

    @property
    def stats_mode_per_level(self) -> dict[int, str]:
        return self.get("metadata.stats-mode.per.level")

    @property
    def stats_dense_store(self) -> bool:
        return self.get("metadata.stats-dense-store")

    @property
    def stats_keep_first_n_columns(self) -> int:
        return self.get("metadata.stats-keep-first-n-columns")

    @property
    def field_stats_modes(self) -> dict[str, str]:
        """``fields.<f>.stats-mode`` as {f: mode}."""
        return self.field_options("stats-mode")

    @property
    def file_compression_zstd_level(self) -> int:
        return self.get("file.compression.zstd-level")

    @property
    def file_compression_per_level(self) -> dict[int, str]:
        return self.get("file.compression.per.level")

    @property
    def changelog_file_compression(self) -> str:
        return self.get("changelog-file.compression") or self.file_compression

    @property
    def changelog_file_stats_mode(self) -> str | None:
        return self.get("changelog-file.stats-mode")

    @property
    def partition_expiration_ms(self) -> int | None:
        return self.get("partition.expiration-time")

    @property
    def partition_expiration_check_interval_ms(self) -> int:
        return self.get("partition.expiration-check-interval")

    @property
    def partition_timestamp_pattern(self) -> str | None:
        return self.get("partition.timestamp-pattern")

    @property
    def partition_timestamp_formatter(self) -> str | None:
        """The Java pattern as written (``yyyyMMdd``); see ``java_pattern_to_strptime``."""
        return self._raw.get("partition.timestamp-formatter")

    # -- compaction, changelog, retention and tags: one typed property per option read elsewhere
    @property
    def compaction_max_size_amplification_percent(self) -> int:
        return self.get("compaction.max-size-amplification-percent")

    @property
    def compaction_size_ratio(self) -> int:
        return self.get("compaction.size-ratio")

    @property
    def compaction_min_file_num(self) -> int:
        return self.get("compaction.min.file-num")

    @property
    def compaction_max_file_num(self) -> int:
        return self.get("compaction.max.file-num")

    @property
    def full_compaction_delta_commits(self) -> int | None:
        return self.get("full-compaction.delta-commits")

    @property
    def changelog_row_deduplicate(self) -> bool:
        return self.get("changelog-producer.row-deduplicate")

    @property
    def default_aggregate_function(self) -> str | None:
        return self.get("fields.default-aggregate-function")

    @property
    def snapshot_num_retained_min(self) -> int:
        return self.get("snapshot.num-retained.min")

    @property
    def snapshot_num_retained_max(self) -> int | None:
        return self.get("snapshot.num-retained.max")

    @property
    def snapshot_time_retained_ms(self) -> int:
        return self.get("snapshot.time-retained")

    @property
    def snapshot_expire_limit(self) -> int:
        return self.get("snapshot.expire.limit")

    @property
    def changelog_num_retained_min(self) -> int | None:
        return self.get("changelog.num-retained.min")

    @property
    def changelog_num_retained_max(self) -> int | None:
        return self.get("changelog.num-retained.max")

    @property
    def changelog_time_retained_ms(self) -> int | None:
        return self.get("changelog.time-retained")

    @property
    def tag_automatic_creation(self) -> Literal["none", "process-time"]:
        return self.get("tag.automatic-creation")

    @property
    def tag_creation_period(self) -> Literal["daily", "hourly", "two-hours"]:
        return self.get("tag.creation-period")

    @property
    def tag_creation_delay_ms(self) -> int:
        return self.get("tag.creation-delay")

    @property
    def tag_num_retained_max(self) -> int | None:
        return self.get("tag.num-retained-max")

    @property
    def tag_default_time_retained_ms(self) -> int | None:
        return self.get("tag.default-time-retained")
