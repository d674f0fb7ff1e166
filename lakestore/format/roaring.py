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


def serialize_bitmap(positions: np.ndarray) -> bytes:
    """Sorted unique positions (< 2**32) -> RoaringBitmap portable bytes, as Java's
    ``RoaringBitmap32.serialize`` writes them (``runOptimize`` first)."""
    values = np.asarray(positions, dtype=np.uint32)
    return serialize_bitmaps(values, np.array([0, len(values)]))[0]


def serialize_bitmaps(positions: np.ndarray, bounds: np.ndarray) -> tuple[bytes, np.ndarray]:
    """Many bitmaps at once: ``positions[bounds[g]:bounds[g + 1]]`` (sorted, unique, < 2**32) is
    bitmap ``g``. Returns their portable bytes one after the other (each as
    :func:`serialize_bitmap` writes it) and each one's size. Vectorised over all containers; only
    bitmap containers (more than 4096 positions each) are packed one at a time."""
    p = np.asarray(positions, dtype=np.uint32)
    bounds = np.asarray(bounds, dtype=np.int64)
    groups, n = len(bounds) - 1, len(p)
    group_of = np.repeat(np.arange(groups), np.diff(bounds))
    high = (p >> np.uint32(16)).astype(np.int64)
    low = (p & np.uint32(0xFFFF)).astype(np.int64)
    # containers: a group's positions sharing their high 16 bits; runs: consecutive lows
    new_cont = np.ones(n, dtype=bool)
    new_cont[1:] = (high[1:] != high[:-1]) | (group_of[1:] != group_of[:-1])
    cstart = np.flatnonzero(new_cont)
    containers = len(cstart)
    card = np.diff(np.append(cstart, n))
    cgroup = group_of[cstart]
    elem_cont = np.cumsum(new_cont) - 1
    new_run = new_cont.copy()
    new_run[1:] |= low[1:] - low[:-1] != 1
    run_first = np.flatnonzero(new_run)
    run_last = np.append(run_first[1:], n) - 1
    run_cont = elem_cont[run_first]
    nruns = np.bincount(run_cont, minlength=containers)
    # the representation Java's runOptimize keeps: a run container when strictly smaller
    run_size = 2 + 4 * nruns
    small = card <= _ARRAY_MAX_SIZE
    use_run = np.where(small, run_size < 2 * card, run_size < _BITMAP_BYTES)
    use_array = small & ~use_run
    body = np.where(use_run, run_size, np.where(small, 2 * card, _BITMAP_BYTES))
    ncont = np.bincount(cgroup, minlength=groups)
    has_run = np.bincount(cgroup, weights=use_run, minlength=groups) > 0
    prefix = np.where(has_run, 4 + (ncont + 7) // 8, 8)
    has_offsets = ~has_run | (ncont >= _NO_OFFSET_THRESHOLD)
    header = prefix + 4 * ncont + np.where(has_offsets, 4 * ncont, 0)
    sizes = header + np.bincount(cgroup, weights=body, minlength=groups).astype(np.int64)
    gstart = np.cumsum(sizes) - sizes
    out = np.zeros(int(sizes.sum()), dtype=np.uint8)
    cookie = np.where(has_run, _SERIAL_COOKIE | ((np.maximum(ncont, 1) - 1) << 16), _SERIAL_COOKIE_NO_RUNCONTAINER)
    _put(out, gstart, cookie, 4)
    _put(out, gstart[~has_run] + 4, ncont[~has_run], 4)
    gfirst = np.cumsum(ncont) - ncont
    j = np.arange(containers) - gfirst[cgroup]  # a container's index in its bitmap
    flagged = np.flatnonzero(use_run)
    np.bitwise_or.at(out, gstart[cgroup[flagged]] + 4 + j[flagged] // 8, (1 << (j[flagged] % 8)).astype(np.uint8))
    descriptive = gstart[cgroup] + prefix[cgroup] + 4 * j
    _put(out, descriptive, high[cstart], 2)
    _put(out, descriptive + 2, card - 1, 2)
    body_before = np.cumsum(body) - body
    relative = header[cgroup] + body_before - body_before[gfirst[cgroup]]  # container offset in its bitmap
    with_offsets = has_offsets[cgroup]
    _put(out, (gstart[cgroup] + prefix[cgroup] + 4 * ncont[cgroup] + 4 * j)[with_offsets], relative[with_offsets], 4)
    at = gstart[cgroup] + relative  # each container's body in ``out``
    elems = np.flatnonzero(use_array[elem_cont])
    _put(out, at[elem_cont[elems]] + 2 * (elems - cstart[elem_cont[elems]]), low[elems], 2)
    _put(out, at[use_run], nruns[use_run], 2)
    runs = np.flatnonzero(use_run[run_cont])
    rank = np.arange(len(run_first)) - (np.cumsum(nruns) - nruns)[run_cont]
    dest = at[run_cont[runs]] + 2 + 4 * rank[runs]
    _put(out, dest, low[run_first[runs]], 2)
    _put(out, dest + 2, low[run_last[runs]] - low[run_first[runs]], 2)
    for c in np.flatnonzero(~small & ~use_run).tolist():
        bits = np.zeros(65536, dtype=bool)
        bits[low[cstart[c] : cstart[c] + card[c]]] = True
        out[at[c] : at[c] + _BITMAP_BYTES] = np.packbits(bits, bitorder="little")
    return out.tobytes(), sizes


def _put(out: np.ndarray, dest: np.ndarray, values: np.ndarray, width: int) -> None:
    """Write ``values`` little-endian, ``width`` bytes each, at byte positions ``dest``."""
    values = np.asarray(values, dtype=np.int64)
    for b in range(width):
        out[dest + b] = (values >> (8 * b)) & 0xFF


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
