"""The 32-bit RoaringBitmap portable serialization, encoded and decoded with NumPy.

The format (RoaringFormatSpec, little-endian): a cookie (``12346`` then the container count when no
container is run-length encoded; else ``12347 | (count - 1) << 16`` and a bit set of which
containers are runs), per container its key (the positions' high 16 bits) and cardinality - 1, the
containers' byte offsets (omitted when runs are present and there are fewer than 4 containers),
then the containers: arrays of uint16 (up to 4096 values), bitmaps of 8192 bytes, or runs (count,
then start and length - 1 pairs).

Writes pick each container's representation as Java's ``RoaringBitmap.runOptimize`` does for a
bitmap built by adding positions (array up to 4096 values, else bitmap; then run-length when
strictly smaller), byte for byte what Paimon's ``RoaringBitmap32.serialize`` writes: it calls
``runOptimize`` first, for deletion vectors and for the bitmap and bsi file indexes alike. Reads
accept array, bitmap and run containers. The work is NumPy per container (65536 positions).
"""

from __future__ import annotations

import struct

import numpy as np

from lakestore.errors import CorruptMetadataError

_SERIAL_COOKIE_NO_RUNCONTAINER = 12346
_SERIAL_COOKIE = 12347
_NO_OFFSET_THRESHOLD = 4
_ARRAY_MAX_SIZE = 4096
_BITMAP_BYTES = 8192


def _runs(lows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted unique uint16 values -> (run starts, run lengths - 1)."""
    breaks = np.flatnonzero(np.diff(lows.astype(np.int32)) != 1) + 1
    starts_idx = np.concatenate(([0], breaks))
    ends_idx = np.concatenate((breaks - 1, [len(lows) - 1]))
    return lows[starts_idx], (lows[ends_idx].astype(np.int32) - lows[starts_idx].astype(np.int32))


def serialize_bitmap(positions: np.ndarray) -> bytes:
    """Sorted unique positions (< 2**31) -> RoaringBitmap portable bytes, as Java's
    ``RoaringBitmap32.serialize`` writes them (``runOptimize`` first)."""
    values = np.asarray(positions, dtype=np.uint32)
    highs = (values >> 16).astype(np.uint16)
    keys, starts = np.unique(highs, return_index=True)
    bounds = np.append(starts, len(values))
    kinds: list[str] = []
    bodies: list[bytes] = []
    cards: list[int] = []
    for i in range(len(keys)):
        lows = (values[bounds[i] : bounds[i + 1]] & 0xFFFF).astype(np.uint16)
        card = len(lows)
        run_starts, run_lengths = _runs(lows)
        run_size = 2 + 4 * len(run_starts)
        # Java's runOptimize: a run container when strictly smaller than the array or bitmap
        smaller = run_size < 2 * card if card <= _ARRAY_MAX_SIZE else run_size < _BITMAP_BYTES
        kind = "run" if smaller else ("array" if card <= _ARRAY_MAX_SIZE else "bitmap")
        if kind == "array":
            body = lows.astype("<u2").tobytes()
        elif kind == "bitmap":
            bits = np.zeros(65536, dtype=bool)
            bits[lows] = True
            body = np.packbits(bits, bitorder="little").tobytes()
        else:
            pairs = np.empty(2 * len(run_starts), dtype="<u2")
            pairs[0::2] = run_starts
            pairs[1::2] = run_lengths
            body = struct.pack("<H", len(run_starts)) + pairs.tobytes()
        kinds.append(kind)
        bodies.append(body)
        cards.append(card)
    size = len(keys)
    has_run = "run" in kinds
    out = bytearray()
    if has_run:
        out += struct.pack("<I", _SERIAL_COOKIE | ((size - 1) << 16))
        flags = np.packbits(np.array([k == "run" for k in kinds], dtype=bool), bitorder="little")
        out += flags.tobytes()
    else:
        out += struct.pack("<II", _SERIAL_COOKIE_NO_RUNCONTAINER, size)
    header = np.empty(2 * size, dtype="<u2")
    header[0::2] = keys
    header[1::2] = np.asarray(cards, dtype=np.int64) - 1
    out += header.tobytes()
    if not has_run or size >= _NO_OFFSET_THRESHOLD:
        offset = len(out) + 4 * size
        offsets = []
        for body in bodies:
            offsets.append(offset)
            offset += len(body)
        out += np.asarray(offsets, dtype="<u4").tobytes()
    for body in bodies:
        out += body
    return bytes(out)


def deserialize_bitmap(data: bytes | memoryview, *, source: str = "deletion vector") -> np.ndarray:
    """RoaringBitmap portable bytes -> sorted uint32 positions. Raises ``CorruptMetadataError``
    (naming ``source``) when the bytes are not a portable RoaringBitmap."""
    return read_bitmap(memoryview(data), source=source)[0]


def read_bitmap(buf: bytes | memoryview, offset: int = 0, *, source: str = "deletion vector") -> tuple[np.ndarray, int]:
    """The portable RoaringBitmap at ``offset`` of ``buf``: (sorted uint32 positions, its size in
    bytes). Raises ``CorruptMetadataError`` (naming ``source``) when it is not one."""
    if offset:
        buf = memoryview(buf)[offset:]
    try:
        (cookie,) = struct.unpack_from("<I", buf, 0)
        pos = 4
        run_flags: np.ndarray | None = None
        if cookie & 0xFFFF == _SERIAL_COOKIE:
            size = (cookie >> 16) + 1
            nbytes = (size + 7) // 8
            run_flags = np.unpackbits(np.frombuffer(buf, np.uint8, nbytes, pos), bitorder="little")[:size].astype(bool)
            pos += nbytes
        elif cookie == _SERIAL_COOKIE_NO_RUNCONTAINER:
            (size,) = struct.unpack_from("<I", buf, pos)
            pos += 4
        else:
            raise CorruptMetadataError(source, f"not a portable RoaringBitmap (cookie {cookie})")
        header = np.frombuffer(buf, "<u2", 2 * size, pos).astype(np.uint32)
        pos += 4 * size
        keys, cards = header[0::2], header[1::2] + 1
        if run_flags is None or size >= _NO_OFFSET_THRESHOLD:
            pos += 4 * size  # offsets: containers follow each other, no need to seek
        parts = []
        for i in range(size):
            if run_flags is not None and run_flags[i]:
                (nruns,) = struct.unpack_from("<H", buf, pos)
                pairs = np.frombuffer(buf, "<u2", 2 * nruns, pos + 2).astype(np.int64)
                pos += 2 + 4 * nruns
                starts, lengths = pairs[0::2], pairs[1::2] + 1
                # arange per run without a Python loop: offsets within each run added to its start
                total = int(lengths.sum())
                run_of = np.repeat(np.arange(nruns), lengths)
                within = np.arange(total) - np.repeat(np.cumsum(lengths) - lengths, lengths)
                lows = starts[run_of] + within
            elif cards[i] <= _ARRAY_MAX_SIZE:
                lows = np.frombuffer(buf, "<u2", int(cards[i]), pos)
                pos += 2 * int(cards[i])
            else:
                bits = np.unpackbits(np.frombuffer(buf, np.uint8, _BITMAP_BYTES, pos), bitorder="little")
                lows = np.flatnonzero(bits)
                pos += _BITMAP_BYTES
            parts.append((np.uint32(keys[i]) << np.uint32(16)) | lows.astype(np.uint32))
    except (struct.error, ValueError) as exc:
        raise CorruptMetadataError(source, f"truncated RoaringBitmap ({exc})") from exc
    if not parts:
        return np.empty(0, dtype=np.uint32), pos
    return np.concatenate(parts), pos
