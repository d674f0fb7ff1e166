"""Deletion-vector index files: RoaringBitmap portable encoding, byte-exact against Paimon Java's
``BitmapDeletionVector`` (2.0.0, 1.4.2 and 0.9) and round trips of every container kind."""

from __future__ import annotations

import json
import os
import subprocess
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lakestore.errors import CorruptMetadataError
from lakestore.format.deletion_vector import (
    MAGIC_NUMBER,
    decode_index_file,
    decode_vector,
    deletion_mask,
    deserialize_vector,
    encode_index_file,
    serialize_vector,
)
from tests.oracle.java09_driver import _hadoop_classpath, java_python
from tests.oracle.java09_driver import java_unavailable_reason as java09_unavailable_reason
from tests.oracle.java_driver import java_oracle

HERE = Path(__file__).resolve().parent
RNG = np.random.default_rng(7)
CASES: list[list[int]] = [
    [0],
    [1, 2, 3],
    [0, 2, 4],
    list(range(100)),  # one run
    list(range(0, 10000, 2)),  # bitmap container
    list(range(70000, 80000)),  # run container past the first key
    sorted(set(RNG.integers(0, 300000, 20000).tolist())),  # mixed containers, offsets header
    list(range(4097)),
    list(range(0, 8192, 2)),  # 4096 values: the largest array container
    [65535, 65536, 131072],
    [2**31 - 1],
]


def _java_serialize(cases: list[list[int]], version: str) -> list[bytes]:
    if version != "0.9":
        return java_oracle(version).dv_bitmaps(cases)
    reason = java09_unavailable_reason()
    if reason is not None:
        if os.environ.get("LAKESTORE_REQUIRE_ALL") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env["_PYPAIMON_HADOOP_CLASSPATH"] = _hadoop_classpath() or ""
    env["_PYPAIMON_JVM_ARGS"] = "--add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED"
    done = subprocess.run(
        [str(java_python()), str(HERE / "java_bitmaps.py")], input=json.dumps(cases), capture_output=True, text=True, env=env, timeout=300
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("@@bitmaps@@ ")]
    assert lines, done.stderr[-3000:]
    return [bytes.fromhex(h) for h in json.loads(lines[0].split(" ", 1)[1])]


@pytest.mark.oracle
@pytest.mark.parametrize("version", ["2.0.0", "1.4.2", "0.9"])
def test_vectors_byte_exact_with_java(version: str) -> None:
    for positions, java_bytes in zip(CASES, _java_serialize(CASES, version), strict=True):
        assert serialize_vector(np.array(positions)) == java_bytes, positions[:5]
        assert deserialize_vector(java_bytes).tolist() == positions


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 300_000), max_size=3000), st.lists(st.tuples(st.integers(0, 200_000), st.integers(1, 70_000)), max_size=3))
def test_round_trip(values: list[int], runs: list[tuple[int, int]]) -> None:
    positions = set(values)
    for start, length in runs:
        positions.update(range(start, start + length))
    expected = np.array(sorted(positions), dtype=np.uint32)
    assert np.array_equal(deserialize_vector(serialize_vector(expected)), expected)


def test_index_file_layout_and_checks() -> None:
    data, ranges = encode_index_file({"a.parquet": np.array([3, 1]), "b.parquet": np.array([0, 5, 6])})
    assert data[0] == 1
    assert [(r.data_file, r.offset, r.cardinality) for r in ranges] == [("a.parquet", 1, 2), ("b.parquet", 1 + 4 + ranges[0].length + 4, 3)]
    body = data[5 : 5 + ranges[0].length]
    assert int.from_bytes(body[:4], "big") == MAGIC_NUMBER
    assert int.from_bytes(data[5 + ranges[0].length : 9 + ranges[0].length], "big", signed=True) == np.int32(np.uint32(zlib.crc32(body)))
    vectors = decode_index_file(data, [(r.data_file, r.offset, r.length) for r in ranges], source="idx")
    assert {k: v.tolist() for k, v in vectors.items()} == {"a.parquet": [1, 3], "b.parquet": [0, 5, 6]}
    assert deletion_mask(vectors["b.parquet"], 8).tolist() == [True, False, False, False, False, True, True, False]
    damaged = bytearray(data)
    damaged[10] ^= 0xFF
    with pytest.raises(CorruptMetadataError, match="checksum"):
        decode_vector(bytes(damaged), ranges[0].offset, ranges[0].length, source="idx")
    with pytest.raises(CorruptMetadataError, match="size"):
        decode_vector(data, ranges[0].offset, ranges[0].length + 1, source="idx")
    with pytest.raises(CorruptMetadataError, match="beyond"):
        deletion_mask(vectors["b.parquet"], 6)
    with pytest.raises(ValueError):
        encode_index_file({"c": np.array([2**31])})
