"""lakestore.format.roaring: the portable RoaringBitmap codec. Round trips against a set model,
the container kind Java's ``runOptimize`` picks, reads at an offset, corrupt input, and Java's
own bytes (``RoaringBitmap32`` through the Paimon 2.0 oracle) for the three container kinds."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lakestore.errors import CorruptMetadataError
from lakestore.format.roaring import deserialize_bitmap, read_bitmap, serialize_bitmap, serialize_bitmaps
from tests.oracle.java_driver import java_oracle

positions_strategy = st.builds(
    lambda values, runs: sorted(set(values).union(*(range(s, s + n) for s, n in runs))),
    st.lists(st.integers(0, 2**31 - 1) | st.integers(0, 300_000), max_size=3000),
    st.lists(st.tuples(st.integers(0, 2**31 - 80_000), st.integers(1, 70_000)), max_size=3),
)


@settings(max_examples=80, deadline=None)
@given(positions_strategy, st.binary(max_size=8))
def test_round_trip_and_size(positions: list[int], tail: bytes) -> None:
    data = serialize_bitmap(np.array(positions, dtype=np.uint32))
    assert deserialize_bitmap(data).tolist() == positions
    # read_bitmap finds the bitmap's end inside a longer buffer, at an offset
    got, size = read_bitmap(b"\x07" * 3 + data + tail, 3)
    assert size == len(data)
    assert got.tolist() == positions


@settings(max_examples=40, deadline=None)
@given(st.lists(positions_strategy, max_size=5))
def test_many_bitmaps_at_once(groups: list[list[int]]) -> None:
    positions = np.array([p for g in groups for p in g], dtype=np.uint32)
    bounds = np.cumsum([0] + [len(g) for g in groups])
    blob, sizes = serialize_bitmaps(positions, bounds)
    assert sizes.sum() == len(blob)
    at = 0
    for group, size in zip(groups, sizes.tolist(), strict=True):
        got, used = read_bitmap(blob, at)
        assert (got.tolist(), used) == (group, size)
        assert blob[at : at + size] == serialize_bitmap(np.array(group, dtype=np.uint32))
        at += size


def _container_kinds(data: bytes) -> list[str]:
    """The kind of each container of a serialized bitmap: run, array or bitmap."""
    (cookie,) = struct.unpack_from("<I", data)
    if cookie & 0xFFFF == 12347:
        size = (cookie >> 16) + 1
        flags = np.unpackbits(np.frombuffer(data, np.uint8, (size + 7) // 8, 4), bitorder="little")[:size]
        header_at = 4 + (size + 7) // 8
    else:
        size = struct.unpack_from("<I", data, 4)[0]
        flags = np.zeros(size, dtype=np.uint8)
        header_at = 8
    cards = np.frombuffer(data, "<u2", 2 * size, header_at)[1::2].astype(int) + 1
    return ["run" if f else ("array" if c <= 4096 else "bitmap") for f, c in zip(flags, cards, strict=True)]


@pytest.mark.parametrize(
    ("positions", "kinds"),
    [
        ([], []),
        ([5], ["array"]),
        (list(range(0, 8192, 2)), ["array"]),  # 4096 values: an array (8192 bytes) beats 4096 runs
        (list(range(0, 8194, 2)), ["bitmap"]),  # 4097 values: a bitmap
        (list(range(100_000)), ["run", "run"]),  # two containers of one run each
        ([1, 2, 3, 10], ["array"]),  # 2 runs (10 bytes) are not smaller than the array (8 bytes)
        ([1, 2, 3, 4, 5, 6], ["run"]),  # 1 run (6 bytes) is smaller than the array (12 bytes)
        ([0, 1 << 16, 2 << 16, 3 << 16, 4 << 16], ["array"] * 5),
    ],
)
def test_container_kinds_as_run_optimize_picks(positions: list[int], kinds: list[str]) -> None:
    data = serialize_bitmap(np.array(positions, dtype=np.uint32))
    assert _container_kinds(data) == kinds
    assert deserialize_bitmap(data).tolist() == positions


def test_offsets_header_only_from_four_containers_with_runs() -> None:
    # with run containers, the offsets table is written only from 4 containers on
    three = [p for key in range(3) for p in range(key << 16, (key << 16) + 10)]
    four = [p for key in range(4) for p in range(key << 16, (key << 16) + 10)]
    assert len(serialize_bitmap(np.array(three, dtype=np.uint32))) == 4 + 1 + 3 * 4 + 3 * 6
    assert len(serialize_bitmap(np.array(four, dtype=np.uint32))) == 4 + 1 + 4 * 4 + 4 * 4 + 4 * 6


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x00\x00\x00\x00", "not a portable RoaringBitmap"),
        (struct.pack("<II", 12346, 1), "truncated"),
        (struct.pack("<IIHH", 12346, 1, 0, 5000), "truncated"),
        (b"\x3b\x30", "truncated"),
    ],
)
def test_corrupt_bytes(data: bytes, message: str) -> None:
    with pytest.raises(CorruptMetadataError, match=message):
        deserialize_bitmap(data, source="test bitmap")


@pytest.mark.oracle
def test_bytes_equal_java_roaring_bitmap() -> None:
    rng = np.random.default_rng(7)
    cases = [
        [],
        [3],
        sorted(set(rng.integers(0, 300_000, 20_000).tolist())),  # array, bitmap and run containers
        list(range(70_000)),
        list(range(0, 8194, 2)),
        [1, 2, 3, 10, 2**31 - 1],
    ]
    for positions, java_vector in zip(cases, java_oracle().dv_bitmaps(cases), strict=True):
        java_bytes = java_vector[4:]  # after the deletion vector's magic number
        assert serialize_bitmap(np.array(positions, dtype=np.uint32)) == java_bytes, positions[:5]
        assert deserialize_bitmap(java_bytes).tolist() == positions
