"""Time travel: the snapshot a read sees for a snapshot id, a tag name, a timestamp or a watermark
(Paimon's ``scan.snapshot-id`` / ``scan.tag-name`` / ``scan.timestamp-millis`` /
``scan.watermark``), the batch read a table's ``scan.*`` options ask for, and ``scan.bucket``.

These read a branch's snapshots and tags only: they take any ``TableVersions`` (a ``FileStore``
is one)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from lakestore.errors import SnapshotNotFoundError, UnsupportedTableError
from lakestore.io.fileio import FileIO
from lakestore.meta.snapshot import Snapshot, SnapshotManager
from lakestore.meta.tag import TagReader

if TYPE_CHECKING:
    from lakestore.read.planner import Split


class TableVersions(Protocol):
    """The versions of one branch of a table that time travel chooses among: ``path`` is the
    table directory (named in errors), ``metadata_path`` the branch's directory holding its
    snapshots (``snapshot_manager``) and tags."""

    @property
    def path(self) -> str: ...

    @property
    def file_io(self) -> FileIO: ...

    @property
    def metadata_path(self) -> str: ...

    @property
    def snapshot_manager(self) -> SnapshotManager: ...


def tag_reader(table: TableVersions) -> TagReader:
    """The branch's tags."""
    return TagReader(table.file_io, table.metadata_path)


def snapshot_at(table: TableVersions, timestamp_ms: int) -> Snapshot:
    """The latest snapshot committed at or before ``timestamp_ms`` (binary search over ids:
    commit times grow with ids)."""
    manager = table.snapshot_manager
    ids = manager.list_ids()
    lo, hi, found = 0, len(ids) - 1, None
    while lo <= hi:
        mid = (lo + hi) // 2
        snapshot = manager.get(ids[mid])
        if snapshot.time_millis <= timestamp_ms:
            found, lo = snapshot, mid + 1
        else:
            hi = mid - 1
    if found is None:
        raise SnapshotNotFoundError(
            f"no snapshot of {table.path} was committed at or before {timestamp_ms} (earliest retained: {ids[0] if ids else None})"
        )
    return found


# Paimon writes Long.MIN_VALUE for "no watermark".
_NO_WATERMARK = -9223372036854775808


def snapshot_at_watermark(table: TableVersions, watermark: int, *, at_or_before: bool = False) -> Snapshot:
    """The first snapshot whose watermark is at or after ``watermark`` (Paimon's
    ``scan.watermark``), or with ``at_or_before`` the last one at or before it (its
    rollback-to-watermark). Snapshots without a watermark never match."""
    manager = table.snapshot_manager
    ids = manager.list_ids()
    for snapshot_id in reversed(ids) if at_or_before else ids:
        snapshot = manager.get(snapshot_id)
        mark = snapshot.watermark
        if mark is None or mark == _NO_WATERMARK:
            continue
        if (mark <= watermark) if at_or_before else (mark >= watermark):
            return snapshot
    relation = "at or before" if at_or_before else "at or after"
    raise SnapshotNotFoundError(f"no retained snapshot of {table.path} has a watermark {relation} {watermark}")


def resolve(
    table: TableVersions,
    *,
    snapshot_id: int | None = None,
    tag: str | None = None,
    timestamp_ms: int | None = None,
    watermark: int | None = None,
) -> Snapshot | None:
    given = [x is not None for x in (snapshot_id, tag, timestamp_ms, watermark)]
    if sum(given) > 1:
        raise ValueError("give at most one of snapshot_id=, tag=, timestamp_ms=, watermark=")
    if watermark is not None:
        return snapshot_at_watermark(table, watermark)
    if tag is not None:
        return tag_reader(table).get(tag).snapshot
    if timestamp_ms is not None:
        return snapshot_at(table, timestamp_ms)
    if snapshot_id is not None:
        return table.snapshot_manager.get(snapshot_id)
    return table.snapshot_manager.latest()


# Paimon's ``TimeTravelUtil.SCAN_KEYS``: at most one may be set.
TIME_TRAVEL_KEYS = ("scan.snapshot-id", "scan.tag-name", "scan.watermark", "scan.timestamp", "scan.timestamp-millis")
_UNIMPLEMENTED_MODES = ("compacted-full", "from-creation-timestamp")
_WATERMARK_PREFIX = "watermark-"


@dataclass(frozen=True)
class OptionScan:
    """What a batch read of a table sees when its options say (Paimon's ``startupMode`` for a
    batch scan): the latest snapshot (nothing set), a time travel (``travel``: the keywords of
    ``resolve``), an incremental read (``incremental``: the options that name it), or the latest
    snapshot's files created at or after ``created_after`` (epoch millis,
    ``scan.file-creation-time-millis``: Paimon's ``FileCreationTimeStartingScanner``)."""

    travel: dict[str, Any] | None = None
    incremental: bool = False
    created_after: int | None = None

    @property
    def latest(self) -> bool:
        return self.travel is None and not self.incremental and self.created_after is None


def _timestamp_ms(text: str) -> int:
    # Paimon's DateTimeUtils.parseTimestampData in the JVM's default time zone
    return int(dt.datetime.fromisoformat(str(text).strip()).timestamp() * 1000)


def _travel_from(options: Mapping[str, Any], table: TableVersions) -> dict[str, Any]:
    """``TimeTravelUtil.tryTravelToSnapshot``: ``scan.version`` read as a tag, a watermark
    (``watermark-<n>``) or a snapshot id; then the one time-travel key set."""
    keys = {k: options[k] for k in TIME_TRAVEL_KEYS if options.get(k) is not None}
    version = options.get("scan.version")
    if version is not None:
        version = str(version)
        if tag_reader(table).exists(version):
            keys["scan.tag-name"] = version
        elif version.startswith(_WATERMARK_PREFIX):
            keys["scan.watermark"] = version[len(_WATERMARK_PREFIX) :]
        elif version.isdigit():
            keys["scan.snapshot-id"] = version
        else:
            raise SnapshotNotFoundError(f"cannot find a time travel version for scan.version={version!r} (no such tag)")
    if len(keys) > 1:
        raise ValueError(f"only one of the following options may be set: {', '.join(TIME_TRAVEL_KEYS)} (set: {', '.join(keys)})")
    if not keys:
        return {}
    key, value = next(iter(keys.items()))
    if key == "scan.snapshot-id":
        return {"snapshot_id": int(value)}
    if key == "scan.tag-name":
        return {"tag": str(value)}
    if key == "scan.watermark":
        return {"watermark": int(value)}
    if key == "scan.timestamp":
        return {"timestamp_ms": _timestamp_ms(value)}
    return {"timestamp_ms": int(value)}


def scan_from_options(table: TableVersions, options: Mapping[str, Any]) -> OptionScan:
    """The batch read that ``scan.*`` / ``incremental-between*`` options (of the table, or given
    for one read) ask for, as Paimon 2.0's ``CoreOptions.startupMode`` and
    ``AbstractDataTableScan.createStartingScanner`` decide it for a batch scan."""
    mode = str(options.get("scan.mode") or options.get("log.scan") or "default").strip().lower()
    if mode in _UNIMPLEMENTED_MODES:
        raise UnsupportedTableError(
            f"cannot read table {table.path}: scan.mode={mode} is not implemented in lakestore", options=("scan.mode",)
        )
    if "log.scan.timestamp-millis" in options and "scan.timestamp-millis" not in options:
        options = {**options, "scan.timestamp-millis": options["log.scan.timestamp-millis"]}
    incremental = options.get("incremental-between") is not None or options.get("incremental-between-timestamp") is not None
    if mode == "default":
        if any(options.get(k) is not None for k in (*TIME_TRAVEL_KEYS, "scan.version")):
            return OptionScan(travel=_travel_from(options, table))
        if options.get("scan.file-creation-time-millis") is not None:
            return OptionScan(created_after=int(options["scan.file-creation-time-millis"]))
        if options.get("scan.creation-time-millis") is not None:
            raise UnsupportedTableError(
                f"cannot read table {table.path}: scan.creation-time-millis is not implemented in lakestore",
                options=("scan.creation-time-millis",),
            )
        return OptionScan(incremental=incremental)
    if mode in ("latest-full", "full", "latest"):
        return OptionScan()
    if mode == "from-file-creation-time":
        if options.get("scan.file-creation-time-millis") is None:
            raise ValueError("scan.mode=from-file-creation-time needs scan.file-creation-time-millis")
        return OptionScan(created_after=int(options["scan.file-creation-time-millis"]))
    if mode == "incremental":
        if not incremental:
            raise ValueError("scan.mode=incremental needs incremental-between or incremental-between-timestamp")
        return OptionScan(incremental=True)
    if mode == "from-timestamp":
        if options.get("scan.timestamp-millis") is not None:
            return OptionScan(travel={"timestamp_ms": int(options["scan.timestamp-millis"])})
        if options.get("scan.timestamp") is not None:
            return OptionScan(travel={"timestamp_ms": _timestamp_ms(options["scan.timestamp"])})
        raise ValueError("scan.mode=from-timestamp needs scan.timestamp-millis or scan.timestamp")
    # from-snapshot: the snapshot id, else the watermark, else the tag; from-snapshot-full: the id
    if options.get("scan.snapshot-id") is not None:
        return OptionScan(travel={"snapshot_id": int(options["scan.snapshot-id"])})
    if mode == "from-snapshot" and options.get("scan.watermark") is not None:
        return OptionScan(travel={"watermark": int(options["scan.watermark"])})
    if mode == "from-snapshot" and options.get("scan.tag-name") is not None:
        return OptionScan(travel={"tag": str(options["scan.tag-name"])})
    raise ValueError(f"scan.mode={mode} needs scan.snapshot-id" + (", scan.watermark or scan.tag-name" if mode == "from-snapshot" else ""))


def scan_bucket(options: Mapping[str, Any]) -> int | None:
    """``scan.bucket``: the one bucket a batch read plans (Paimon's ``SnapshotReader.withBucket``)."""
    value = options.get("scan.bucket")
    return None if value is None or not str(value).strip() else int(value)


def only_scan_bucket(options: Mapping[str, Any], splits: list[Split]) -> list[Split]:
    bucket = scan_bucket(options)
    return splits if bucket is None else [s for s in splits if s.bucket == bucket]


def file_created_epoch_ms(creation_time_ms: int) -> int:
    """A data file's creation time as Paimon's ``creationTimeEpochMillis``: the stored timestamp
    is a local date-time, read in this machine's time zone."""
    local = dt.datetime.fromtimestamp(creation_time_ms / 1000, tz=dt.UTC).replace(tzinfo=None)
    return int(local.timestamp() * 1000)
