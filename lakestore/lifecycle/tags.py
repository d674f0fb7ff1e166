"""Writing tags: create, rename and delete them (``lakestore.meta.tag`` reads them), Paimon's
automatic tags and tag retention, and what the tags and snapshots of every branch keep alive.

A tag is created with the store's publisher (``FileStore.publisher``: the file system's atomic
create-if-absent, under the catalog lock when there is one), so two creators of one name cannot
both win.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import re
import weakref
import zoneinfo
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lakestore.errors import (
    InvalidTagNameError,
    OptionError,
    SnapshotNotFoundError,
    TagAlreadyExistsError,
    TagNotFoundError,
)
from lakestore.lifecycle.files import References, TableFiles, chain_references, changelog_references, delete_files
from lakestore.meta.branch import MAIN_BRANCH, branch_names, branch_root
from lakestore.meta.confine import METADATA, delete_confined
from lakestore.meta.snapshot import BATCH_COMMIT_IDENTIFIER, Snapshot, SnapshotManager
from lakestore.meta.tag import Tag, TagReader, tag_to_json, validate_tag_name

if TYPE_CHECKING:
    from lakestore.store import FileStore


class TagManager(TagReader):
    """The tags of a table's branch, read and written."""

    def __init__(self, table: FileStore) -> None:
        super().__init__(table.file_io, table.metadata_path)
        self.table = table

    def create(self, name: str, snapshot_id: int | None = None, *, time_retained_ms: int | None = None) -> Tag:
        validate_tag_name(name)
        if snapshot_id is None:
            snapshot = self.table.latest_snapshot()
            if snapshot is None:
                raise SnapshotNotFoundError(f"cannot tag {self.table.identifier}: the table has no snapshot")
        else:
            snapshot = self.table.snapshot(snapshot_id)
        return self.create_from_snapshot(name, snapshot, time_retained_ms=time_retained_ms)

    def create_from_snapshot(self, name: str, snapshot: Snapshot, *, time_retained_ms: int | None = None, automatic: bool = False) -> Tag:
        """``automatic``: a name of Paimon's automatic tags, which may be all digits
        (``tag.period-formatter`` without dashes); Paimon's TagManager refuses only blank names."""
        if not automatic:
            validate_tag_name(name)
        elif not name.strip():
            raise InvalidTagNameError("a tag name must not be blank")
        create_time = dt.datetime.now()
        if not self.table.publisher.try_publish(self.path(name), tag_to_json(snapshot, create_time, time_retained_ms).encode()):
            raise TagAlreadyExistsError(f"tag {name!r} already exists")
        return Tag(name, snapshot, create_time, time_retained_ms)

    def rename(self, old: str, new: str) -> None:
        validate_tag_name(new)
        try:
            data = self.file_io.read_bytes(self.path(old))
        except FileNotFoundError as exc:
            raise TagNotFoundError(f"tag {old!r} does not exist") from exc
        if not self.table.publisher.try_publish(self.path(new), data):
            raise TagAlreadyExistsError(f"tag {new!r} already exists")
        self.file_io.delete(self.path(old))

    def delete(self, name: str) -> Tag:
        """Delete the tag file, then the files only it kept alive (its snapshot has expired)."""
        tag = self.get(name)
        if not self.table.snapshot_manager.exists(tag.snapshot_id):
            self.table.schema.require_supported("delete an expired snapshot's tag of", table=self.table.path)
        expired = not self.table.snapshot_manager.exists(tag.snapshot_id)
        files = TableFiles(self.table)
        candidates = chain_references(files, [tag.snapshot], tolerant=True) if expired else None
        if candidates is not None:
            files.require_inside(candidates, source=self.path(name))  # hostile metadata: nothing changes
        delete_confined(self.file_io, files.folders, [(METADATA, [self.path(name)])], source=self.table.path)
        if candidates is not None:
            delete_files(self.table, files, candidates, retained_references(self.table, files))
        return tag


# -- automatic tags ------------------------------------------------------------------------------
# Paimon 2.0's TagAutoCreation / TagPeriodHandler / TagTimeExtractor. A snapshot's time (its
# commit time in ``sink.process-time-zone``, or its watermark in ``sink.watermark-time-zone``)
# is compared with the next tag time; once ``time - tag.creation-delay`` reaches the end of the
# period after the latest automatic tag, that snapshot is tagged with the period before its
# time's (or, with ``tag.automatic-completion``, with the next missing period).
_HOUR_MS = 3_600_000
_DAY_MS = 24 * _HOUR_MS
# (regex, strftime) per name format; fields have fixed widths as Paimon's strict formatters
_DAY_DASHES = (r"(\d{4})-(\d{2})-(\d{2})", "%Y-%m-%d")
_DAY_PLAIN = (r"(\d{4})(\d{2})(\d{2})", "%Y%m%d")
_HOUR_DASHES = (r"(\d{4})-(\d{2})-(\d{2}) (\d{2})", "%Y-%m-%d %H")
_HOUR_PLAIN = (r"(\d{4})(\d{2})(\d{2}) (\d{2})", "%Y%m%d %H")
_HOUR_COMPACT = (r"(\d{4})(\d{2})(\d{2})(\d{2})", "%Y%m%d%H")
_MINUTE = (r"(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})", "%Y%m%d%H%M")


@dataclass(frozen=True)
class TagPeriod:
    """How automatic tags of one table are named and spaced (Paimon's TagPeriodHandler)."""

    period_ms: int
    pattern: str
    fmt: str
    daily: bool = False  # a daily name is its date; Paimon ignores anything after a space

    @classmethod
    def of(cls, period: str, formatter: str = "with_dashes", duration_ms: int | None = None) -> TagPeriod:
        if duration_ms is not None:  # tag.creation-period-duration overrides tag.creation-period
            if duration_ms <= 0:
                raise OptionError(f"tag.creation-period-duration must be positive, got {duration_ms} ms")
            return cls(duration_ms, *_MINUTE)
        if period == "daily":
            return cls(_DAY_MS, *(_DAY_DASHES if formatter == "with_dashes" else _DAY_PLAIN), daily=True)
        if period == "hourly":
            fmt = {"with_dashes": _HOUR_DASHES, "without_dashes": _HOUR_PLAIN}.get(formatter, _HOUR_COMPACT)
            return cls(_HOUR_MS, *fmt)
        if period == "two-hours":
            return cls(2 * _HOUR_MS, *_HOUR_DASHES)  # Paimon formats two-hour tags with dashes always
        raise OptionError(f"unsupported tag.creation-period {period!r}")

    def tag_to_time(self, name: str) -> dt.datetime | None:
        """The period start a tag name stands for, or None for a name not of this format."""
        if self.daily:
            name = name.split(" ")[0]
        match = re.fullmatch(self.pattern, name)
        if match is None:
            return None
        parts = [int(g) for g in match.groups()]
        try:
            hour, minute = (parts + [0, 0])[3:5] if not self.daily else (0, 0)
            return dt.datetime(parts[0], parts[1], parts[2], hour, minute)
        except ValueError:
            return None

    def time_to_tag(self, start: dt.datetime) -> str:
        return start.strftime(self.fmt)

    def previous_period(self, time_: dt.datetime) -> dt.datetime:
        """The start of the period before the one ``time_`` falls in; periods are counted from
        1970-01-01 00:00 of the same wall clock (local times taken as UTC, as Paimon does)."""
        millis = (time_ - _EPOCH) // dt.timedelta(milliseconds=1)
        start = _EPOCH + dt.timedelta(milliseconds=(millis // self.period_ms) * self.period_ms)
        return start - dt.timedelta(milliseconds=self.period_ms)

    def next_period(self, start: dt.datetime) -> dt.datetime:
        return start + dt.timedelta(milliseconds=self.period_ms)


_EPOCH = dt.datetime(1970, 1, 1)


def tag_period(options: Any) -> TagPeriod:
    """The table's TagPeriod (``tag.creation-period``, ``tag.period-formatter``,
    ``tag.creation-period-duration``)."""
    period = TagPeriod.of(
        options.get("tag.creation-period"), options.get("tag.period-formatter"), options.get("tag.creation-period-duration")
    )
    delay = options.get("tag.creation-delay")
    if delay >= period.period_ms:  # Paimon's validateDelay
        raise OptionError(f"tag.creation-delay ({delay} ms) must be shorter than one tag period ({period.period_ms} ms)")
    return period


def _zone(name: str | None) -> dt.tzinfo | None:
    """A Java zone id: a region (``Asia/Shanghai``), ``UTC``/``Z``, or an offset (``GMT+08:00``,
    ``+08:00``); None = the local zone."""
    if name is None:
        return None
    text = name.strip()
    offset = re.fullmatch(r"(?:GMT|UTC|UT)?([+-])(\d{1,2})(?::?(\d{2}))?", text)
    if text in ("Z", "UTC", "GMT", "UT"):
        return dt.UTC
    if offset is not None:
        sign = -1 if offset.group(1) == "-" else 1
        return dt.timezone(sign * dt.timedelta(hours=int(offset.group(2)), minutes=int(offset.group(3) or 0)))
    try:
        return zoneinfo.ZoneInfo(text)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
        raise OptionError(f"unknown time zone {name!r}") from exc


def _local_time(millis: int, zone: dt.tzinfo | None) -> dt.datetime:
    moment = dt.datetime.fromtimestamp(millis / 1000, tz=zone or None)
    return moment.replace(tzinfo=None)


def snapshot_tag_time(snapshot: Snapshot, options: Any) -> dt.datetime | None:
    """The time automatic tagging sees for a snapshot (Paimon's TagTimeExtractor): its commit time
    (process-time) or its watermark (watermark mode; None when it has none)."""
    if options.get("tag.automatic-creation") == "watermark":
        if snapshot.watermark is None or snapshot.watermark == _LONG_MIN:
            return None
        return _local_time(snapshot.watermark, _zone(options.get("sink.watermark-time-zone")))
    return _local_time(snapshot.time_millis, _zone(options.get("sink.process-time-zone")))


_LONG_MIN = -(2**63)


def auto_create_tags(table: FileStore) -> list[str]:
    """Paimon's TagAutoCreation, run after a commit: walk the snapshots after the latest
    automatic tag's; tag each whose time minus ``tag.creation-delay`` has reached the end of the
    period after the latest tag with the period before its time; keep at most
    ``tag.num-retained-max`` automatic tags (oldest snapshots' go). Nothing on ``write-only``
    tables. Returns the names created."""
    options = table.options
    if options.get("tag.automatic-creation") == "batch":
        return create_batch_tag(table)
    if options.get("tag.automatic-creation") in (None, "none") or options.write_only:
        return []  # Paimon's committer of a write-only table creates no tags
    period = tag_period(options)
    delay = dt.timedelta(milliseconds=options.get("tag.creation-delay"))
    completion = options.get("tag.automatic-completion")
    manager = TagManager(table)
    snapshots = table.snapshot_manager
    auto = {n: t for n in manager.names() if (t := period.tag_to_time(n)) is not None}
    latest = max(auto, key=lambda n: auto[n]) if auto else None
    settings = (period, delay, completion, options.get("tag.automatic-creation"))
    cached = _PROGRESS.get(table)
    next_tag: dt.datetime | None = None
    latest_id = snapshots.latest_id()
    if cached is not None and cached[0] == latest and cached[3] == settings and cached[1] <= (latest_id or 0) + 1:
        # this store walked up to here before, and no automatic tag appeared since (Paimon's
        # committer keeps this position in memory, and restores it from the latest tag)
        next_snapshot, next_tag = cached[1], cached[2]
    elif latest is not None:
        try:
            next_snapshot = manager.get(latest).snapshot_id + 1
            next_tag = period.next_period(auto[latest])
        except TagNotFoundError:  # deleted concurrently: start over, as a new committer would
            next_snapshot = snapshots.earliest_id() or 1
    else:
        next_snapshot = snapshots.earliest_id() or 1
    created: list[str] = []
    while latest_id is not None and next_snapshot <= latest_id:
        if not snapshots.exists(next_snapshot):
            earliest = snapshots.earliest_id()
            if earliest is not None and earliest > next_snapshot:
                next_snapshot = earliest  # expired meanwhile
                continue
            break
        snapshot = snapshots.get(next_snapshot)
        next_snapshot += 1
        when = snapshot_tag_time(snapshot, options)
        if when is None:
            continue
        if next_tag is not None and when - delay < period.next_period(next_tag):
            continue
        this_tag = next_tag if (completion and next_tag is not None) else period.previous_period(when)
        name = period.time_to_tag(this_tag)
        try:
            manager.create_from_snapshot(name, snapshot, time_retained_ms=options.tag_default_time_retained_ms, automatic=True)
            created.append(name)
        except TagAlreadyExistsError:
            pass  # Paimon ignores an existing tag of that name
        next_tag = period.next_period(this_tag)
        latest = name
        _retain_auto_tags(manager, period, options.tag_num_retained_max)
    if latest is None or manager.exists(latest):
        _PROGRESS[table] = (latest, next_snapshot, next_tag, settings)
    return created


BATCH_TAG_PREFIX = "batch-write-"


def create_batch_tag(table: FileStore) -> list[str]:
    """``tag.automatic-creation`` = ``batch``: after a batch commit (commit identifier
    ``BATCH_COMMIT_IDENTIFIER``: ``write_arrow``, compaction, a ``TableCommit`` without an
    identifier) the latest snapshot is tagged ``tag.batch.customized-name``, else
    ``batch-write-<yyyy-MM-dd>`` of its commit time in ``sink.process-time-zone``, replacing a tag
    of that name; then the oldest tags go down to ``tag.num-retained-max`` (Paimon's
    ``TagBatchCreation``, which Flink's batch sinks run when their job ends). Returns the name."""
    snapshot = table.latest_snapshot()
    if snapshot is None or snapshot.commit_identifier != BATCH_COMMIT_IDENTIFIER:
        return []  # streaming commits (an identifier per checkpoint) create no batch tags
    options = table.options
    name = options.get("tag.batch.customized-name")
    if name is None:
        day = _local_time(snapshot.time_millis, _zone(options.get("sink.process-time-zone")))
        name = BATCH_TAG_PREFIX + day.strftime("%Y-%m-%d")
    manager = TagManager(table)
    with contextlib.suppress(TagNotFoundError):
        manager.delete(name)
    manager.create_from_snapshot(name, snapshot, time_retained_ms=options.tag_default_time_retained_ms, automatic=True)
    _retain_tags(manager, options.tag_num_retained_max)
    return [name]


def _retain_tags(manager: TagManager, limit: int | None) -> None:
    """At most ``limit`` tags of any kind (Paimon's ``TagBatchCreation.expireTag``): the tags of
    the oldest snapshots go, whole snapshots' worth while that stays above the limit, then the
    earliest created of the next snapshot's."""
    if limit is None:
        return
    groups: dict[int, list[Tag]] = {}
    for tag in manager.tags():
        groups.setdefault(tag.snapshot_id, []).append(tag)
    count = sum(len(g) for g in groups.values())
    for snapshot_id in sorted(groups):
        if count <= limit:
            return
        for tag in sorted(groups[snapshot_id], key=lambda t: t.create_time or dt.datetime.min):
            if count <= limit:
                return
            with contextlib.suppress(TagNotFoundError):
                manager.delete(tag.name)
            count -= 1


# FileStore -> (latest automatic tag, next snapshot to look at, next tag time, settings) of its last walk
_PROGRESS: weakref.WeakKeyDictionary[Any, tuple[str | None, int, dt.datetime | None, tuple[Any, ...]]] = weakref.WeakKeyDictionary()


def _retain_auto_tags(manager: TagManager, period: TagPeriod, limit: int | None) -> None:
    """At most ``limit`` automatic tags: those of the oldest snapshots go first."""
    if limit is None:
        return
    auto = [t for t in manager.tags() if period.tag_to_time(t.name) is not None]  # ordered by snapshot
    for tag in auto[: max(0, len(auto) - limit)]:
        with contextlib.suppress(TagNotFoundError):
            manager.delete(tag.name)


def retained_references(
    table: FileStore, files: TableFiles, *, exclude_ids: Iterable[int] = (), extra: Iterable[Snapshot] = ()
) -> References:
    """Everything the table still needs: the snapshots of this table's branch (minus
    ``exclude_ids``) and ``extra`` snapshots, plus every snapshot and tag of every branch, main
    included: branches share the data and manifest files (a branch's consumers only pin that
    branch's own snapshots, which are all kept). Never tolerant: a retained snapshot with missing
    metadata is corrupt."""
    excluded = set(exclude_ids)
    refs = References()
    for branch in [MAIN_BRANCH, *branch_names(table.file_io, table.path)]:
        root = branch_root(table.path, branch)
        manager = SnapshotManager(table.file_io, root)
        skip = excluded if root == table.metadata_path else set()
        refs.update(chain_references(files, [manager.get(i) for i in manager.list_ids() if i not in skip]))
        for tag in TagReader(table.file_io, root).tags():
            refs.update(_tag_references(files, tag.snapshot))
        produces_changelog = table.options.changelog_producer != "none"
        for changelog_id in manager.changelog_ids():
            try:
                changelog = manager.get_changelog(changelog_id)
            except SnapshotNotFoundError:
                continue  # expired while listing
            refs.update(changelog_references(files, changelog, produces_changelog=produces_changelog))
    for snapshot in extra:
        refs.update(chain_references(files, [snapshot]))
    return refs


def _tag_references(files: TableFiles, snapshot: Snapshot) -> References:
    """What a tag keeps: its snapshot's data, manifests and index files, and, while they exist,
    its changelog. Paimon's expiration deletes a tagged snapshot's changelog (manifest list
    included) with the snapshot, since reading a tag never needs it; its orphan cleanup reads
    a missing changelog manifest list as empty."""
    refs = chain_references(files, [dataclasses.replace(snapshot, changelog_manifest_list=None)])
    name = snapshot.changelog_manifest_list
    if name and files.exists(name):
        refs.manifests.add(name)
        refs.manifests.update(m.file_name for m in files.read_list(name, tolerant=True))
        refs.changelog |= files.changelog_paths(snapshot, tolerant=True)
    return refs
