"""Tags (``tag/tag-<name>``): a snapshot's JSON plus ``tagCreateTime`` and ``tagTimeRetained``,
and reading them.

The file format is Paimon's (Java ``Tag``): ``tagCreateTime`` is a ``LocalDateTime`` in Jackson's
array form ``[y, mo, d, h, mi(, s(, ns))]`` (trailing zeros omitted), ``tagTimeRetained`` a
``Duration`` as decimal seconds. A tag keeps its snapshot's files alive after the snapshot
expires. Writing tags (creation, deletion, retention, automatic tags) is
``lakestore.lifecycle.tags``.

Paimon Java writes a tag file in place on a local file system (truncate, then write), so a reader
may meet one empty: ``TagReader`` reads a file once and raises ``CorruptMetadataError`` for one
that does not parse, which stops an expiration before it deletes anything (run it again).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass
from typing import Any

from lakestore.errors import CorruptMetadataError, InvalidTagNameError, TagNotFoundError
from lakestore.io.fileio import FileIO
from lakestore.meta.names import check_name
from lakestore.meta.snapshot import Snapshot

TAG_PREFIX = "tag-"
_NUMERIC = re.compile(r"\d+")


@dataclass(frozen=True)
class Tag:
    """A named snapshot (``tag/tag-<name>``): it keeps the snapshot's files after the snapshot
    expires. ``create_time`` is local time, as Paimon stores it; ``time_retained_ms`` is how long
    after it the tag expires (None: never)."""

    name: str
    snapshot: Snapshot
    create_time: dt.datetime | None
    time_retained_ms: int | None

    @property
    def snapshot_id(self) -> int:
        """The id of the tagged snapshot."""
        return self.snapshot.id

    def expired(self, now: dt.datetime | None = None) -> bool:
        """Whether ``time_retained_ms`` has passed since ``create_time`` at ``now`` (local time;
        default: the current time). A tag without either never expires."""
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
    """A name for a new tag: Paimon's rules, and one file name (``tag-<name>``).

    Raises:
        InvalidTagNameError: blank, all digits, holding ``/`` or starting with ``.``, holding a
            control character, or longer than a file name may be.
    """
    if not isinstance(name, str) or not name.strip():
        raise InvalidTagNameError("a tag name must not be blank")
    check_name(name, "tag", prefix=TAG_PREFIX, error=InvalidTagNameError)
    if _NUMERIC.fullmatch(name):
        # Paimon refuses these: ``VERSION AS OF 5`` must mean a snapshot id, not a tag.
        raise InvalidTagNameError(f"tag name {name!r} must not be a number")
    if "/" in name or name.startswith("."):
        raise InvalidTagNameError(f"tag name {name!r} must not contain '/' or start with '.'")
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


class TagReader:
    """The tags of one branch, read only: ``metadata_path`` is the branch's directory (the table
    directory for main), whose ``tag/`` folder holds them."""

    def __init__(self, file_io: FileIO, metadata_path: str) -> None:
        self.file_io = file_io
        self.metadata_path = metadata_path
        self.tag_dir = f"{metadata_path}/tag"

    def path(self, name: str) -> str:
        """The tag's file. Raises ``InvalidTagNameError`` when ``tag-<name>`` is not one file name."""
        return f"{self.tag_dir}/{TAG_PREFIX}{check_name(name, 'tag', prefix=TAG_PREFIX, error=InvalidTagNameError)}"

    def exists(self, name: str) -> bool:
        return self.file_io.exists(self.path(name))

    def names(self) -> list[str]:
        """The tag names, sorted."""
        return sorted(n[len(TAG_PREFIX) :] for n in self.file_io.list_names(self.tag_dir) if n.startswith(TAG_PREFIX))

    def get(self, name: str) -> Tag:
        """Raises ``TagNotFoundError`` (no such tag) or ``CorruptMetadataError`` (a file that does
        not parse)."""
        path = self.path(name)
        try:
            data = self.file_io.read_bytes(path)
        except FileNotFoundError as exc:
            raise TagNotFoundError(f"tag {name!r} does not exist in {self.metadata_path}") from exc
        return parse_tag(name, data, source=path)

    def tags(self) -> list[Tag]:
        """Every tag, by snapshot id then name (a tag deleted while listing is left out)."""
        out = []
        for name in self.names():
            try:
                out.append(self.get(name))
            except TagNotFoundError:
                continue  # deleted while listing
        return sorted(out, key=lambda t: (t.snapshot_id, t.name))
