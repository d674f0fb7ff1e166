"""Tags (``tag/tag-<name>``): a snapshot's JSON plus ``tagCreateTime`` and ``tagTimeRetained``.

The file format is Paimon's (Java ``Tag``): ``tagCreateTime`` is a ``LocalDateTime`` in Jackson's
array form ``[y, mo, d, h, mi(, s(, ns))]`` (trailing zeros omitted), ``tagTimeRetained`` a
``Duration`` as decimal seconds. A tag keeps its snapshot's files alive after the snapshot
expires; a tag is created with ``try_publish``, so two creators of one name cannot both win.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import json
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lakestore.errors import CorruptMetadataError, SnapshotNotFoundError, TagAlreadyExistsError, TagNotFoundError
from lakestore.io.fileio import FileIO
from lakestore.lifecycle.files import References, TableFiles, chain_references, changelog_references, delete_files
from lakestore.meta.branch import MAIN_BRANCH, branch_names, branch_root
from lakestore.meta.snapshot import Snapshot, SnapshotManager

if TYPE_CHECKING:
    from lakestore.table import Table

TAG_PREFIX = "tag-"
_NUMERIC = re.compile(r"^\d+$")


@dataclass(frozen=True)
class Tag:
    name: str
    snapshot: Snapshot
    create_time: dt.datetime | None  # local time, as Paimon stores it
    time_retained_ms: int | None

    @property
    def snapshot_id(self) -> int:
        return self.snapshot.id

    def expired(self, now: dt.datetime | None = None) -> bool:
        if self.create_time is None or self.time_retained_ms is None:
            return False
        now = now or dt.datetime.now()
        return self.create_time + dt.timedelta(milliseconds=self.time_retained_ms) < now


def _datetime_to_array(value: dt.datetime) -> list[int]:
    out = [value.year, value.month, value.day, value.hour, value.minute]
    nanos = value.microsecond * 1000
    if value.second or nanos:
        out.append(value.second)
        if nanos:
            out.append(nanos)
    return out


def _array_to_datetime(values: Any) -> dt.datetime:
    if isinstance(values, str):  # ISO string, as some writers emit
        return dt.datetime.fromisoformat(values)
    parts = [int(v) for v in values] + [0] * (7 - len(values))
    return dt.datetime(parts[0], parts[1], parts[2], parts[3], parts[4], parts[5], parts[6] // 1000)


def tag_to_json(snapshot: Snapshot, create_time: dt.datetime, time_retained_ms: int | None) -> str:
    doc = snapshot.to_dict()
    doc["tagCreateTime"] = _datetime_to_array(create_time)
    if time_retained_ms is not None:
        doc["tagTimeRetained"] = time_retained_ms / 1000
    return json.dumps(doc, indent=2)


def validate_tag_name(name: str) -> str:
    if not isinstance(name, str) or not name.strip():
        raise ValueError("a tag name must not be blank")
    if _NUMERIC.match(name):
        # Paimon refuses these: ``VERSION AS OF 5`` must mean a snapshot id, not a tag.
        raise ValueError(f"tag name {name!r} must not be a number")
    if "/" in name or name.startswith("."):
        raise ValueError(f"tag name {name!r} must not contain '/' or start with '.'")
    return name


def parse_tag(name: str, data: bytes, *, source: str) -> Tag:
    """A tag file: the tagged snapshot's JSON plus Paimon's tag fields (not part of the snapshot,
    so a rollback republishing it writes a plain snapshot)."""
    try:
        doc = json.loads(data)
        if not isinstance(doc, dict):
            raise ValueError("not a JSON object")
        create = doc.pop("tagCreateTime", None)
        retained = doc.pop("tagTimeRetained", None)
        create_time = _array_to_datetime(create) if create is not None else None
        retained_ms = round(float(retained) * 1000) if retained is not None else None
    except (ValueError, TypeError, IndexError) as exc:
        raise CorruptMetadataError(source, f"invalid tag: {exc}") from exc
    return Tag(name, Snapshot.from_dict(doc, source=source), create_time, retained_ms)


class TagManager:
    def __init__(self, table: Table) -> None:
        self.table = table
        self.file_io = table.file_io
        self.tag_dir = f"{table.metadata_path}/tag"

    def path(self, name: str) -> str:
        return f"{self.tag_dir}/{TAG_PREFIX}{name}"

    def exists(self, name: str) -> bool:
        return self.file_io.exists(self.path(name))

    def names(self) -> list[str]:
        return sorted(n[len(TAG_PREFIX) :] for n in self.file_io.list_names(self.tag_dir) if n.startswith(TAG_PREFIX))

    def get(self, name: str) -> Tag:
        path = self.path(name)
        try:
            data = self.file_io.read_bytes(path)
        except FileNotFoundError as exc:
            raise TagNotFoundError(f"tag {name!r} does not exist in {self.table.path}") from exc
        return parse_tag(name, data, source=path)

    def tags(self) -> list[Tag]:
        out = []
        for name in self.names():
            try:
                out.append(self.get(name))
            except TagNotFoundError:
                continue  # deleted while listing
        return sorted(out, key=lambda t: (t.snapshot_id, t.name))

    def create(self, name: str, snapshot_id: int | None = None, *, time_retained_ms: int | None = None) -> Tag:
        validate_tag_name(name)
        if snapshot_id is None:
            snapshot = self.table.latest_snapshot()
            if snapshot is None:
                raise SnapshotNotFoundError(f"cannot tag {self.table.identifier}: the table has no snapshot")
        else:
            snapshot = self.table.snapshot(snapshot_id)
        return self.create_from_snapshot(name, snapshot, time_retained_ms=time_retained_ms)

    def create_from_snapshot(self, name: str, snapshot: Snapshot, *, time_retained_ms: int | None = None) -> Tag:
        validate_tag_name(name)
        create_time = dt.datetime.now()
        if not self.file_io.try_publish(self.path(name), tag_to_json(snapshot, create_time, time_retained_ms).encode()):
            raise TagAlreadyExistsError(f"tag {name!r} already exists")
        return Tag(name, snapshot, create_time, time_retained_ms)

    def rename(self, old: str, new: str) -> None:
        validate_tag_name(new)
        try:
            data = self.file_io.read_bytes(self.path(old))
        except FileNotFoundError as exc:
            raise TagNotFoundError(f"tag {old!r} does not exist") from exc
        if not self.file_io.try_publish(self.path(new), data):
            raise TagAlreadyExistsError(f"tag {new!r} already exists")
        self.file_io.delete(self.path(old))

    def delete(self, name: str) -> Tag:
        """Delete the tag file, then the files only it kept alive (its snapshot has expired)."""
        tag = self.get(name)
        if not self.table.snapshot_manager.exists(tag.snapshot_id):
            self.table.schema.require_supported("delete an expired snapshot's tag of", table=self.table.path)
        self.file_io.delete(self.path(name))
        if not self.table.snapshot_manager.exists(tag.snapshot_id):
            files = TableFiles(self.table)
            candidates = chain_references(files, [tag.snapshot], tolerant=True)
            delete_files(self.table, files, candidates, retained_references(self.table, files))
        return tag


# -- automatic tags ------------------------------------------------------------------------------
_PERIODS_MS = {"daily": 86_400_000, "hourly": 3_600_000, "two-hours": 7_200_000}


def _auto_tag_name(start: dt.datetime, period: str) -> str:
    return start.strftime("%Y-%m-%d") if period == "daily" else start.strftime("%Y-%m-%d %H")


def auto_create_tags(table: Table, *, now_ms: int | None = None) -> list[str]:
    """Paimon's process-time tag auto-creation, run after a commit: once a period (plus
    ``tag.creation-delay``) has ended, tag the latest snapshot with the period's name
    (``2024-01-01`` daily, ``2024-01-01 13`` hourly); keep at most ``tag.num-retained-max``
    automatic tags. Returns the names created."""
    options = table.options
    mode = options.tag_automatic_creation
    if mode in (None, "none"):
        return []
    if mode != "process-time":
        return []  # watermark/batch modes are refused by the option parser
    period = options.tag_creation_period
    delay_ms = options.tag_creation_delay_ms
    now = dt.datetime.fromtimestamp(((now_ms if now_ms is not None else int(time.time() * 1000)) - delay_ms) / 1000)
    step = dt.timedelta(milliseconds=_PERIODS_MS[period])
    if period == "daily":
        current = now.replace(hour=0, minute=0, second=0, microsecond=0)
    else:
        hours = _PERIODS_MS[period] // 3_600_000
        current = now.replace(hour=now.hour - now.hour % hours, minute=0, second=0, microsecond=0)
    previous = current - step  # the most recent period that has ended
    manager = TagManager(table)
    name = _auto_tag_name(previous, period)
    created: list[str] = []
    snapshot = table.latest_snapshot()
    auto = [n for n in manager.names() if _is_auto_name(n, period)]
    if snapshot is not None and name not in auto and (not auto or max(auto) < name):
        try:
            manager.create_from_snapshot(name, snapshot, time_retained_ms=options.tag_default_time_retained_ms)
            created.append(name)
            auto.append(name)
        except TagAlreadyExistsError:
            pass  # another committer created it
    limit = options.tag_num_retained_max
    if limit is not None:
        for old in sorted(auto)[: max(0, len(auto) - limit)]:
            with contextlib.suppress(TagNotFoundError):
                manager.delete(old)
    return created


def _is_auto_name(name: str, period: str) -> bool:
    fmt = "%Y-%m-%d" if period == "daily" else "%Y-%m-%d %H"
    try:
        dt.datetime.strptime(name, fmt)
    except ValueError:
        return False
    return True


def retained_references(table: Table, files: TableFiles, *, exclude_ids: Iterable[int] = (), extra: Iterable[Snapshot] = ()) -> References:
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
        for tag in _tags_under(table.file_io, f"{root}/tag"):
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


def _tags_under(file_io: FileIO, tag_dir: str) -> list[Tag]:
    out = []
    for name in sorted(file_io.list_names(tag_dir)):
        if name.startswith(TAG_PREFIX):
            path = f"{tag_dir}/{name}"
            try:
                out.append(parse_tag(name[len(TAG_PREFIX) :], file_io.read_bytes(path), source=path))
            except FileNotFoundError:
                continue  # deleted while listing
    return out
