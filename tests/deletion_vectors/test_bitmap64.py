"""64-bit deletion vectors (``deletion-vectors.bitmap64``, Paimon 1.2+): byte-exact against Paimon
2.0's ``Bitmap64DeletionVector`` (checked-in bytes, and live through Paimon2Vectors.java when the
2.0 jars are installed), round trips, index-file ranges counting the size int and CRC, a table
Paimon 2.0 wrote read and continued by lakestore, and lakestore's tables read by Paimon 2.0."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lakestore
import tests.interop.test_java_merge_engines as scenario
from lakestore.compact.deletion_vectors import DeletionVectorsMaintainer
from lakestore.errors import CorruptMetadataError
from lakestore.format.deletion_vector import (
    MAGIC_NUMBER_64,
    decode_index_file,
    decode_vector,
    deserialize_vector,
    encode_index_file,
    is_bitmap64,
    read_vector,
    serialize_vector,
)
from lakestore.meta.index_manifest import read_index_manifest
from lakestore.meta.schema_change import SetOption
from lakestore.read.deletion_vectors import DeletionFile, read_index_files, read_vectors_and_kinds
from tests.interop.conftest import same_rows

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
JAVA_PROGRAM = Path(__file__).with_name("Paimon2Vectors.java")
JARS = ROOT / ".jars"


def _positions(spec: list[int] | dict[str, list[int]]) -> list[int]:
    return list(range(*spec["range"])) if isinstance(spec, dict) else list(spec)


def _framed(vector: bytes) -> bytes:
    """What ``DeletionVector.serializeToBytes`` returns: size int, vector bytes, CRC."""
    return struct.pack(">i", len(vector)) + vector + struct.pack(">I", zlib.crc32(vector))


def _java(*args: str, stdin: str) -> str:
    """Run Paimon2Vectors.java against Paimon 2.0.0's jars; skip when they are not installed."""
    if shutil.which("java") is None:
        pytest.skip("java is not installed")
    if not list((JARS / "paimon-2.0.0").glob("*.jar")) or not list((JARS / "lib").glob("*.jar")):
        pytest.skip("Paimon 2.0.0 jars missing (bash scripts/install_jars.sh)")
    classpath = f"{JARS / 'paimon-2.0.0'}/*:{JARS / 'lib'}/*"
    done = subprocess.run(
        ["java", "-cp", classpath, str(JAVA_PROGRAM), *args], input=stdin, capture_output=True, text=True, timeout=600, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return done.stdout


# ---------------------------------------------------------------- bytes


def test_vectors_byte_exact_with_paimon_2_fixture() -> None:
    doc = json.loads((FIXTURES / "paimon2_bitmap64_vectors.json").read_text())
    assert len(doc["vectors"]) >= 9
    for case in doc["vectors"]:
        positions = _positions(case["positions"])
        java_bytes = bytes.fromhex(case["bytes"])
        ours = serialize_vector(np.array(positions, dtype=np.uint64), bitmap64=True)
        assert _framed(ours) == java_bytes, positions[:5]
        assert deserialize_vector(java_bytes[4:-4]).tolist() == positions


@pytest.mark.oracle
def test_vectors_byte_exact_with_paimon_2_live() -> None:
    rng = np.random.default_rng(3)
    cases = [
        sorted(set(rng.integers(0, 300_000, 20_000).tolist())),  # all container kinds, offsets header
        list(range(4097)),
        list(range(0, 8192, 2)),
        sorted(set(rng.integers(2**32 - 100_000, 2**32 + 100_000, 5_000).tolist())),  # across the 32-bit key boundary
        [7, 5 * 2**32],  # empty bitmaps for the keys between
    ]
    out = _java("bytes", stdin="".join(" ".join(map(str, c)) + "\n" for c in cases)).split()
    for positions, java_hex in zip(cases, out, strict=True):
        assert _framed(serialize_vector(np.array(positions, dtype=np.uint64), bitmap64=True)).hex() == java_hex, positions[:5]
        assert deserialize_vector(bytes.fromhex(java_hex)[4:-4]).tolist() == positions


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, 2**33), max_size=2000),
    st.lists(st.tuples(st.integers(0, 2**32 + 200_000), st.integers(1, 70_000)), max_size=3),
)
def test_round_trip(values: list[int], runs: list[tuple[int, int]]) -> None:
    positions = set(values)
    for start, length in runs:
        positions.update(range(start, start + length))
    expected = np.array(sorted(positions), dtype=np.uint64)
    data = serialize_vector(expected, bitmap64=True)
    assert is_bitmap64(data)
    got = deserialize_vector(data)
    assert got.tolist() == expected.tolist()
    assert got.dtype == (np.uint64 if len(expected) and expected[-1] >= 2**32 else np.uint32)


def test_index_file_ranges_and_checks() -> None:
    data, ranges = encode_index_file({"a": np.array([3, 1]), "b": np.array([0, 5, 6])}, bitmap64=True)
    assert data[0] == 1
    first, second = ranges
    (size,) = struct.unpack_from(">i", data, first.offset)
    assert (first.offset, first.length, first.cardinality, first.bitmap64) == (1, size + 8, 2, True)  # size int and CRC counted
    assert second.offset == first.offset + first.length
    assert struct.unpack_from("<i", data, 5)[0] == MAGIC_NUMBER_64
    assert read_vector(data, first.offset, first.length, source="idx")[1] is True
    vectors = decode_index_file(data, [(r.data_file, r.offset, r.length) for r in ranges], source="idx")
    assert {k: v.tolist() for k, v in vectors.items()} == {"a": [1, 3], "b": [0, 5, 6]}
    # a 64-bit range read with a 32-bit length (or vice versa) is refused, not misread
    with pytest.raises(CorruptMetadataError, match="size"):
        decode_vector(data, first.offset, size, source="idx")
    damaged = bytearray(data)
    damaged[20] ^= 0xFF
    with pytest.raises(CorruptMetadataError, match="checksum"):
        decode_vector(bytes(damaged), first.offset, first.length, source="idx")
    # one file may hold both kinds: a vector keeps the kind it was read in
    mixed, mixed_ranges = encode_index_file({"old": np.array([1]), "new": np.array([2])}, bitmap64=True, kinds={"old": False})
    assert [(r.data_file, r.bitmap64, r.length) for r in mixed_ranges][0][:2] == ("old", False)
    assert [read_vector(mixed, r.offset, r.length, source="idx") for r in mixed_ranges][1][1] is True
    assert mixed_ranges[0].length == struct.unpack_from(">i", mixed, 1)[0]  # 32-bit: the vector bytes only
    with pytest.raises(ValueError):
        encode_index_file({"c": np.array([2**31])})  # beyond a 32-bit vector
    assert decode_vector(*_single(encode_index_file({"c": np.array([2**31, 2**40])}, bitmap64=True)), source="x").tolist() == [2**31, 2**40]


def _single(encoded: tuple[bytes, list]) -> tuple[bytes, int, int]:
    data, ranges = encoded
    return data, ranges[0].offset, ranges[0].length


def test_truncated_and_garbage_vectors_are_corrupt() -> None:
    data = serialize_vector(np.array([1, 2, 2**32 + 9], dtype=np.uint64), bitmap64=True)
    for cut in (6, 14, len(data) - 1):
        with pytest.raises(CorruptMetadataError):
            deserialize_vector(data[:cut])
    with pytest.raises(CorruptMetadataError, match="trailing|holds"):
        deserialize_vector(data + b"\x00")
    with pytest.raises(CorruptMetadataError, match="magic"):
        deserialize_vector(b"\x00" * 12)


# ---------------------------------------------------------------- tables

FIXTURE_ROWS = [(1, "aa"), (2, "bb"), (4, "d"), (6, "f"), (7, "gg"), (8, "h"), (9, "i")]
SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])


def _rows(table: lakestore.Table) -> list[tuple[int, str | None]]:
    return sorted((r["id"], r["v"]) for r in table.to_arrow().select(["id", "v"]).to_pylist())


def _kinds(table: lakestore.Table) -> dict[str, bool]:
    where = {
        name: DeletionFile(f.file_name, offset, length, external_path=f.external_path)
        for f in read_index_files(table.store.file_io, table.path, table.latest_snapshot())
        for name, offset, length in f.ranges
    }
    return {name: wide for name, (_, wide) in read_vectors_and_kinds(table.store.file_io, table.path, where).items()}


def _fixture_table(tmp_path: Path) -> lakestore.Table:
    shutil.copytree(FIXTURES / "paimon2_bitmap64_table", tmp_path / "wh" / "db.db" / "t")
    return lakestore.Catalog(str(tmp_path / "wh")).get_table("db.t")


def test_lakestore_reads_and_continues_a_paimon_2_table(tmp_path) -> None:
    table = _fixture_table(tmp_path)
    assert _rows(table) == FIXTURE_ROWS
    entries = read_index_manifest(table.store.file_io, table.path, table.latest_snapshot().index_manifest)
    ranges = [r for e in entries for r in e.index_file.dv_ranges or ()]
    assert ranges and all(r.cardinality for r in ranges)
    assert set(_kinds(table).values()) == {True}
    # time travel: after the second commit and its compaction
    assert sorted((r["id"], r["v"]) for r in table.to_arrow(snapshot_id=4).to_pylist()) == [
        (1, "a"), (2, "bb"), (4, "d"), (5, "e"), (6, "f"), (7, "g"), (8, "h"),
    ]  # fmt: skip
    table.write_arrow(pa.table({"id": [2, 4, 10], "v": ["b3", "d3", "j"]}, schema=SCHEMA))
    assert _rows(table) == [(1, "aa"), (2, "b3"), (4, "d3"), (6, "f"), (7, "gg"), (8, "h"), (9, "i"), (10, "j")]
    assert set(_kinds(table).values()) == {True}
    entries = read_index_manifest(table.store.file_io, table.path, table.latest_snapshot().index_manifest)
    assert all(r.cardinality is not None for e in entries for r in e.index_file.dv_ranges or ())


def _lakestore_table(tmp_path: Path, options: dict[str, str]) -> lakestore.Table:
    catalog = lakestore.Catalog(str(tmp_path / "wh"))
    catalog.create_database("db", exist_ok=True)
    schema = pa.schema([*SCHEMA, ("op", pa.string())])
    base = {"bucket": "1", "deletion-vectors.enabled": "true", "rowkind.field": "op"}
    table = catalog.create_table("db.t", schema=schema, primary_keys=["id"], options={**base, **options})
    for batch in COMMITS:
        ids, values, ops = zip(*batch, strict=True)
        table.write_arrow(pa.table({"id": list(ids), "v": list(values), "op": list(ops)}, schema=schema))
    return table


COMMITS = [
    [(i, f"v{i}", "+I") for i in range(1, 9)],
    [(2, "b", "+U"), (3, None, "-D"), (7, "g", "+U")],
    [(1, "a", "+U"), (5, None, "-D"), (9, "i", "+I")],
    [(4, "d", "+U"), (10, "j", "+I")],
]
EXPECTED = [(1, "a"), (2, "b"), (4, "d"), (6, "v6"), (7, "g"), (8, "v8"), (9, "i"), (10, "j")]


@pytest.mark.parametrize("bitmap64", [False, True])
def test_lakestore_writes_the_kind_the_option_asks_for(tmp_path, bitmap64) -> None:
    table = _lakestore_table(tmp_path, {"deletion-vectors.bitmap64": str(bitmap64).lower()})
    assert _rows(table) == EXPECTED
    kinds = _kinds(table)
    assert kinds and set(kinds.values()) == {bitmap64}


def test_a_vector_keeps_its_kind_when_the_option_changes(tmp_path) -> None:
    """Paimon's maintainer keeps a restored vector's class: switching ``deletion-vectors.bitmap64``
    on makes new vectors 64-bit and leaves the 32-bit ones 32-bit, also when they grow."""
    table = _lakestore_table(tmp_path, {})
    old = _kinds(table)
    assert old and set(old.values()) == {False}
    table = lakestore.Catalog(str(tmp_path / "wh")).alter_table("db.t", [SetOption("deletion-vectors.bitmap64", "true")])
    snapshot = table.latest_snapshot()
    (index_file,) = read_index_files(table.store.file_io, table.path, snapshot)
    maintainer = DeletionVectorsMaintainer.restore(table.store.file_io, table.path, snapshot, partition=index_file.partition, bucket=0)
    assert maintainer.bitmap64  # from the latest schema
    (restored,) = old
    maintainer.delete(restored, np.array([0], dtype=np.int64))
    maintainer.delete("data-new.parquet", np.array([4, 2], dtype=np.int64))
    (written,), replaced = maintainer.write_index()
    assert [f.file_name for f in replaced] == [index_file.file_name]
    data = (Path(table.path) / "index" / written.file_name).read_bytes()
    got = {r.data_file: read_vector(data, r.offset, r.length, source="idx") for r in written.dv_ranges or ()}
    assert got[restored][1] is False and 0 in got[restored][0].tolist()
    assert got["data-new.parquet"][1] is True and got["data-new.parquet"][0].tolist() == [2, 4]
    assert {r.data_file: r.cardinality for r in written.dv_ranges or ()} == {restored: len(got[restored][0]), "data-new.parquet": 2}
    maintainer.delete_written()


@pytest.mark.oracle
@pytest.mark.parametrize("bitmap64", [False, True])
def test_paimon_2_reads_lakestore_vectors(tmp_path, bitmap64) -> None:
    table = _lakestore_table(tmp_path, {"deletion-vectors.bitmap64": str(bitmap64).lower()})
    out = _java("read", str(tmp_path / "wh"), "db.t", stdin="")
    got = sorted((int(k), None if v == "null" else v) for k, v in (line.split(":", 1) for line in out.split()))
    assert got == EXPECTED == _rows(table)


@pytest.mark.oracle
def test_lakestore_reads_a_table_paimon_2_writes(tmp_path) -> None:
    _java("write", str(tmp_path / "wh"), stdin="1:a 2:b 3:c 4:d 5:e 6:f 7:g 8:h\n2:bb 3:-\n1:aa 5:-\n7:gg 9:i 4:dd\n")
    table = lakestore.Catalog(str(tmp_path / "wh")).get_table("db.t")
    assert _rows(table) == [(1, "aa"), (2, "bb"), (4, "dd"), (6, "f"), (7, "gg"), (8, "h"), (9, "i")]
    assert set(_kinds(table).values()) == {True}
    # and Paimon 2.0 reads what lakestore adds to its table
    table.write_arrow(pa.table({"id": [2, 10], "v": ["b3", "j"]}, schema=SCHEMA))
    out = _java("read", str(tmp_path / "wh"), "db.t", stdin="")
    assert sorted(out.split()) == sorted(f"{k}:{v}" for k, v in _rows(table))


# ---------------------------------------------------------------- through the Java oracle (2.0.0, 1.4.2)

ENGINES = ["deduplicate", "partial-update", "aggregation"]


def _options64(engine: str) -> dict[str, str]:
    return {**scenario.options(engine), "deletion-vectors.enabled": "true", "deletion-vectors.bitmap64": "true"}


@pytest.mark.oracle
@pytest.mark.parametrize("engine", ENGINES)
def test_java_writes_bitmap64_lakestore_reads(java_any, catalog, warehouse, engine) -> None:
    java = java_any
    java.create_table(warehouse, "db.t", scenario.SCHEMA, primary_keys=scenario.KEYS, partition_keys=["dt"], options=_options64(engine))
    kinds: dict[str, bool] = {}
    for index in range(len(scenario.COMMITS)):
        java.write(warehouse, "db.t", scenario.as_table(scenario.commit_rows(engine, index)))
        table = catalog.get_table("db.t")
        same_rows(table.to_arrow(), scenario.model(engine, index + 1), scenario.KEYS)
        kinds.update(_kinds(table))
    assert kinds and set(kinds.values()) == {True}


@pytest.mark.oracle
@pytest.mark.parametrize("engine", ENGINES)
def test_bitmap64_writers_of_both_engines_interleave(java_any, catalog, warehouse, engine) -> None:
    java = java_any
    table = catalog.create_table(
        "db.t", schema=scenario.SCHEMA, partition_keys=["dt"], primary_keys=scenario.KEYS, options=_options64(engine)
    )
    kinds: dict[str, bool] = {}
    steps = ["lakestore", "java", "lakestore+compact", "java+compact", "lakestore"]
    for index, step in enumerate(steps):
        data = scenario.as_table(scenario.commit_rows(engine, index))
        if step.startswith("java"):
            java.write(warehouse, "db.t", data)
            if step.endswith("compact"):
                java.compact(warehouse, "db.t")
        else:
            table = catalog.get_table("db.t")
            table.write_arrow(data)
            if step.endswith("compact"):
                table.compact()
        expected = scenario.model(engine, index + 1)
        same_rows(catalog.get_table("db.t").to_arrow(), expected, scenario.KEYS)
        same_rows(java.read(warehouse, "db.t"), expected, scenario.KEYS)
        kinds.update(_kinds(catalog.get_table("db.t")))
    assert kinds and set(kinds.values()) == {True}


@pytest.mark.oracle
def test_bitmap64_index_files_byte_exact_with_java(java_any, catalog, warehouse) -> None:
    """The same commits give 64-bit index files of the same bytes (names aside) from both engines."""
    java = java_any
    opts = _options64("deduplicate")
    java.create_table(warehouse, "db.j", scenario.SCHEMA, primary_keys=scenario.KEYS, partition_keys=["dt"], options=opts)
    ours = catalog.create_table("db.l", schema=scenario.SCHEMA, partition_keys=["dt"], primary_keys=scenario.KEYS, options=opts)
    for index in range(3):
        data = scenario.as_table(scenario.commit_rows("deduplicate", index))
        java.write(warehouse, "db.j", data)
        ours.write_arrow(data)
    theirs = catalog.get_table("db.j")

    def shape(table: lakestore.Table) -> list[tuple[bytes, int, int, list[tuple[int, int | None]]]]:
        out = []
        for e in read_index_manifest(table.store.file_io, table.path, table.latest_snapshot().index_manifest):
            ranges = [(r.length, r.cardinality) for r in e.index_file.dv_ranges or ()]
            out.append((e.partition, e.bucket, e.index_file.file_size, sorted(ranges)))
        return sorted(out)

    assert shape(ours) == shape(theirs)
    assert any(ranges for *_, ranges in shape(ours))
