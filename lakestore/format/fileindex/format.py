"""Paimon's file index container (``FileIndexFormat``): all indexes of one data file in one blob.

Layout (big-endian, as Java's ``DataOutputStream`` writes it)::

    magic            8 bytes  1493475289347502
    version          4 bytes  1
    head length      4 bytes  bytes from the magic to the end of the head (the body's offset)
    column count     4 bytes
    per column:      column name (Java modified UTF-8, 2-byte length), index count (4 bytes),
                     per index: type name (modified UTF-8), start (4 bytes, from the blob's
                     start; -1: the index is empty), length (4 bytes)
    redundant length 4 bytes  0
    body             the indexes' bytes, in head order

Java fills the head from ``HashMap``s, so its column (and type) order is that of a ``HashMap``
of the names: :func:`java_hash_order` gives it, and :func:`write_file_index` keeps the order it
is handed, so lakestore's blobs are Java's byte for byte.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from lakestore.errors import CorruptMetadataError, UnsupportedTableError
from lakestore.format.fileindex.base import REMAIN, SKIP, FileIndexReader, FileIndexResult
from lakestore.format.fileindex.java_hashmap import put_order

MAGIC = 1493475289347502
VERSION = 1
EMPTY_INDEX_FLAG = -1
INDEX_FILE_SUFFIX = ".index"


def java_utf(text: str) -> bytes:
    """``DataOutput.writeUTF``: Java's modified UTF-8 after a 2-byte length. Raises
    ``ValueError`` for a text longer than 65535 encoded bytes (Java's UTFDataFormatException)."""
    units = text.encode("utf-16-be", "surrogatepass")
    out = bytearray()
    for (code,) in struct.iter_unpack(">H", units):
        if 0 < code < 0x80:
            out.append(code)
        elif code < 0x800:
            out += bytes((0xC0 | (code >> 6), 0x80 | (code & 0x3F)))
        else:
            out += bytes((0xE0 | (code >> 12), 0x80 | ((code >> 6) & 0x3F), 0x80 | (code & 0x3F)))
    if len(out) > 0xFFFF:
        raise ValueError(f"name too long for Java's writeUTF ({len(out)} bytes)")
    return struct.pack(">H", len(out)) + bytes(out)


def _read_java_utf(data: bytes, pos: int) -> tuple[str, int]:
    (length,) = struct.unpack_from(">H", data, pos)
    raw = data[pos + 2 : pos + 2 + length]
    if len(raw) != length:
        raise ValueError("truncated name")
    units: list[int] = []
    i = 0
    while i < length:
        b = raw[i]
        if b < 0x80:
            units.append(b)
            i += 1
        elif b >> 5 == 0b110:
            units.append(((b & 0x1F) << 6) | (raw[i + 1] & 0x3F))
            i += 2
        elif b >> 4 == 0b1110:
            units.append(((b & 0x0F) << 12) | ((raw[i + 1] & 0x3F) << 6) | (raw[i + 2] & 0x3F))
            i += 3
        else:
            raise ValueError("malformed modified UTF-8")
    text = struct.pack(f">{len(units)}H", *units).decode("utf-16-be", "surrogatepass")
    return text, pos + 2 + length


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode`` (over UTF-16 code units, 32-bit wrap-around), signed."""
    h = 0
    for (code,) in struct.iter_unpack(">H", text.encode("utf-16-be", "surrogatepass")):
        h = (31 * h + code) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def java_hash_order(names: Iterable[str]) -> list[str]:
    """The iteration order of a ``java.util.HashMap`` the ``names`` are ``put`` in, in this order
    (:func:`~lakestore.format.fileindex.java_hashmap.put_order`). Names in one bucket keep their
    given order."""
    given = list(dict.fromkeys(names))
    hashes = np.array([java_string_hash(n) & 0xFFFFFFFF for n in given], dtype=np.uint32)
    return [given[i] for i in put_order(hashes).tolist()]


def write_file_index(indexes: Mapping[str, Mapping[str, bytes | None]]) -> bytes:
    """The blob of ``indexes`` (column -> index type -> serialized index, None for an empty
    one), columns and types in the mappings' order. Raises ``ValueError`` for a name Java's
    ``writeUTF`` cannot write."""
    body = bytearray()
    entries: list[tuple[bytes, list[tuple[bytes, int, int]]]] = []
    for column, by_type in indexes.items():
        infos = []
        for type_name, data in by_type.items():
            if data is None:
                infos.append((java_utf(type_name), EMPTY_INDEX_FLAG, 0))
            else:
                infos.append((java_utf(type_name), len(body), len(data)))
                body += data
        entries.append((java_utf(column), infos))
    count = sum(len(infos) for _, infos in entries)
    names = sum(len(c) + sum(len(t) for t, _, _ in infos) for c, infos in entries)
    head_length = 8 + 4 + 4 + 4 + count * 8 + len(entries) * 4 + 4 + names
    head = bytearray(struct.pack(">qiii", MAGIC, VERSION, head_length, len(entries)))
    for column_utf, infos in entries:
        head += column_utf + struct.pack(">i", len(infos))
        for type_utf, start, length in infos:
            head += type_utf + struct.pack(">ii", start if start == EMPTY_INDEX_FLAG else start + head_length, length)
    head += struct.pack(">i", 0)
    assert len(head) == head_length
    return bytes(head + body)


@dataclass(frozen=True)
class IndexSlot:
    """Where one (column, type) index sits in a blob; ``start`` -1 for an empty index."""

    start: int
    length: int


def read_file_index_head(data: bytes, *, source: str = "file index") -> dict[str, dict[str, IndexSlot]]:
    """Column -> index type -> slot, from the head of ``data``. Raises ``CorruptMetadataError``
    when ``data`` is not a file index blob, ``UnsupportedTableError`` for a newer version."""
    try:
        magic, version, head_length = struct.unpack_from(">qii", data, 0)
    except struct.error as exc:
        raise CorruptMetadataError(source, f"too short for a Paimon file index ({len(data)} bytes)") from exc
    if magic != MAGIC:
        raise CorruptMetadataError(source, f"not a Paimon file index (magic {magic})")
    if version != VERSION:
        raise UnsupportedTableError(f"{source}: Paimon file index version {version} (lakestore reads version {VERSION})")
    out: dict[str, dict[str, IndexSlot]] = {}
    try:
        (columns,) = struct.unpack_from(">i", data, 16)
        pos = 20
        for _ in range(columns):
            column, pos = _read_java_utf(data, pos)
            (count,) = struct.unpack_from(">i", data, pos)
            pos += 4
            slots = out.setdefault(column, {})
            for _ in range(count):
                type_name, pos = _read_java_utf(data, pos)
                start, length = struct.unpack_from(">ii", data, pos)
                pos += 8
                if start != EMPTY_INDEX_FLAG and (start < head_length or length < 0 or start + length > len(data)):
                    raise ValueError(f"index {column}/{type_name} at {start}+{length} is outside the blob")
                slots[type_name] = IndexSlot(start, length)
    except (struct.error, ValueError, IndexError) as exc:
        raise CorruptMetadataError(source, f"corrupt Paimon file index head: {exc}") from exc
    if pos > head_length:
        raise CorruptMetadataError(source, f"file index head overruns its length {head_length}")
    return out


def read_file_index(data: bytes, *, source: str = "file index") -> dict[str, dict[str, bytes | None]]:
    """Every index of a blob: column -> index type -> bytes (None: an empty index). Raises as
    :func:`read_file_index_head`."""
    head = read_file_index_head(data, source=source)
    return {
        column: {t: None if s.start == EMPTY_INDEX_FLAG else data[s.start : s.start + s.length] for t, s in slots.items()}
        for column, slots in head.items()
    }


class EmptyFileIndexReader(FileIndexReader):
    """An index written over no value (Paimon's ``EmptyFileIndexReader``): no row of the file
    has a value in the column, so whatever compares a value skips the file."""

    def equal(self, value: Any) -> FileIndexResult:
        return SKIP

    def is_in(self, values: Any) -> FileIndexResult:
        return SKIP

    def compare(self, op: str, value: Any) -> FileIndexResult:
        return SKIP

    def is_not_null(self) -> FileIndexResult:
        return SKIP

    def is_null(self) -> FileIndexResult:
        return REMAIN


EMPTY_READER = EmptyFileIndexReader()
