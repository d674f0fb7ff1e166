"""Row tracking at commit time, as Paimon 2.0's ``FileStoreCommitImpl`` with
``row-tracking.enabled`` (``RowTrackingCommitUtils``):

- the commit's entries are first grouped by partition (``row-tracking.partition-group-on-commit``,
  default true) in the order Paimon's ``HashMap`` keyed by the partition's ``BinaryRow`` gives
  them (``paimon_partition_order``), so that row ids are contiguous per partition;
- every entry's sequence numbers take the new snapshot id: a new file (min sequence 0) gets it as
  min and max, a file whose max is 0 keeps its min, any other (a compaction output) keeps both;
- every new APPEND file without ``_FIRST_ROW_ID`` (and without a ``_ROW_ID`` column of its own)
  gets the next row ids, from the parent snapshot's ``nextRowId``; the snapshot's ``nextRowId``
  is where they end. A file's row i then has ``_ROW_ID`` = first row id + i and
  ``_SEQUENCE_NUMBER`` = its max sequence number.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import replace

from lakestore.meta.manifest import FILE_SOURCE_APPEND, ManifestEntry

ROW_ID = "_ROW_ID"
SEQUENCE_NUMBER = "_SEQUENCE_NUMBER"
ROW_TRACKING_COLUMNS = (ROW_ID, SEQUENCE_NUMBER)

_M32 = 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M32


def java_binary_row_hash(payload: bytes) -> int:
    """Java ``BinaryRow.hashCode()`` (MurmurHash3 x86 32 by words, seed 42) of a row serialized
    with the manifests' 4-byte arity prefix (which the hash does not cover)."""
    data = payload[4:]
    h = 42
    for (word,) in struct.iter_unpack("<I", data[: len(data) // 4 * 4]):
        k = _rotl((word * 0xCC9E2D51) & _M32, 15)
        k = (k * 0x1B873593) & _M32
        h = _rotl(h ^ k, 13)
        h = (h * 5 + 0xE6546B64) & _M32
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _M32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _M32
    h ^= h >> 16
    return h  # unsigned 32-bit; Java's int has the same bits


def paimon_partition_order(keys: Sequence[bytes]) -> list[bytes]:
    """The distinct partitions ``keys`` (BinaryRows, in the order a commit's files name them) in
    the order Paimon 2.0 gives them row ids: its commit groups the files in a ``java.util.HashMap``,
    iterated by table slot (``hash ^ hash >>> 16`` masked by the capacity, which starts at 16 and
    doubles past a 0.75 load). Within one slot, Paimon's writers hand over the partition written
    last first (observed on Paimon 2.0.0: two and three partitions of one slot come out in reverse
    order of first write), so the later partition comes first here too."""
    distinct = list(dict.fromkeys(keys))
    capacity = 16
    while len(distinct) > capacity * 3 // 4:
        capacity *= 2

    def slot(key: bytes) -> int:
        h = java_binary_row_hash(key)
        return (h ^ (h >> 16)) & (capacity - 1)

    order = {key: i for i, key in enumerate(distinct)}
    return sorted(distinct, key=lambda k: (slot(k), -order[k]))


def assign_row_tracking(
    snapshot_id: int, first_row_id: int, delta: Sequence[ManifestEntry], *, group_by_partition: bool = True
) -> tuple[list[ManifestEntry], int]:
    """The entries of a commit as snapshot ``snapshot_id`` of a row-tracking table records them,
    and the snapshot's ``nextRowId``. ``first_row_id``: the parent's ``nextRowId`` (0 without)."""
    entries = list(delta)
    if group_by_partition:
        groups: dict[bytes, list[ManifestEntry]] = {}
        for entry in entries:
            groups.setdefault(entry.partition, []).append(entry)
        entries = [e for key in paimon_partition_order([e.partition for e in entries]) for e in groups[key]]
    out: list[ManifestEntry] = []
    next_row_id = first_row_id
    for entry in entries:
        f = entry.file
        if f.min_sequence_number == 0:
            f = replace(f, min_sequence_number=snapshot_id, max_sequence_number=snapshot_id)
        elif f.max_sequence_number == 0:
            f = replace(f, max_sequence_number=snapshot_id)
        if f.file_source == FILE_SOURCE_APPEND and f.first_row_id is None and ROW_ID not in (f.write_cols or ()):
            f = replace(f, first_row_id=next_row_id)
            next_row_id += f.row_count
        out.append(entry if f is entry.file else replace(entry, file=f))
    return out, next_row_id
