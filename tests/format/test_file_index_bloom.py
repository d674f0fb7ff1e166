"""Paimon's file index container and bloom-filter index: hashes, bytes, answers; and tables that
write them and skip files with them."""

from __future__ import annotations

import datetime as dt
import struct

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lakestore
from lakestore import col
from lakestore.errors import CorruptMetadataError, OptionError, UnsupportedTableError
from lakestore.format.fileindex.base import FileIndexResult
from lakestore.format.fileindex.bloom import BLOOM_FILTER, BloomFilter64, fast_hash, long_hash, xxh64
from lakestore.format.fileindex.format import (
    MAGIC,
    java_hash_order,
    java_string_hash,
    java_utf,
    read_file_index,
    write_file_index,
)
from lakestore.format.fileindex.registry import FileIndexOptions, file_index_options
from lakestore.format.types import parse_type
from lakestore.read.file_index import evaluate


def _xxh(data: bytes) -> int:
    arr = pa.array([data], pa.large_binary())
    offsets = np.frombuffer(arr.buffers()[1], np.int64)
    body = np.frombuffer(arr.buffers()[2], np.uint8) if arr.buffers()[2] is not None else np.zeros(0, np.uint8)
    return int(xxh64(body, offsets)[0]) & (2**64 - 1)


def test_xxh64_matches_the_reference_vectors() -> None:
    # XXH64 with seed 0, from the xxHash reference implementation
    assert _xxh(b"") == 0xEF46DB3751D8E999
    assert _xxh(b"a") == 0xD24EC4F1A98C6E5B
    assert _xxh(b"abc") == 0x44BC2CF5AD770999
    assert _xxh(b"Nobody inspects the spammish repetition") == 0xFBCEA83C8A378BF1


def _xxh_scalar(data: bytes) -> int:
    """XXH64 (seed 0) written plainly, one value at a time: the reference for the vectorised one."""
    m = 2**64 - 1
    p1, p2, p3, p4, p5 = 0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5

    def rotl(x: int, r: int) -> int:
        return ((x << r) | (x >> (64 - r))) & m

    def rnd(acc: int, lane: int) -> int:
        return rotl((acc + lane * p2) & m, 31) * p1 & m

    n, i = len(data), 0
    if n >= 32:
        v = [(p1 + p2) & m, p2, 0, (-p1) & m]
        while i + 32 <= n:
            for j in range(4):
                v[j] = rnd(v[j], int.from_bytes(data[i + 8 * j : i + 8 * j + 8], "little"))
            i += 32
        h = (rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18)) & m
        for x in v:
            h = ((h ^ rnd(0, x)) * p1 + p4) & m
    else:
        h = p5
    h = (h + n) & m
    while i + 8 <= n:
        h = (rotl(h ^ rnd(0, int.from_bytes(data[i : i + 8], "little")), 27) * p1 + p4) & m
        i += 8
    if i + 4 <= n:
        h = (rotl(h ^ (int.from_bytes(data[i : i + 4], "little") * p1 & m), 23) * p2 + p3) & m
        i += 4
    while i < n:
        h = rotl(h ^ (data[i] * p5 & m), 11) * p1 & m
        i += 1
    h ^= h >> 33
    h = h * p2 & m
    h ^= h >> 29
    h = h * p3 & m
    return h ^ (h >> 32)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.binary(max_size=140), min_size=1, max_size=30))
def test_xxh64_vectorised_equals_scalar(values: list[bytes]) -> None:
    hashes = fast_hash(pa.array(values, pa.binary()), parse_type("BYTES"))
    assert [int(h) & (2**64 - 1) for h in hashes] == [_xxh_scalar(v) for v in values]


def _wang(key: int) -> int:
    """Java's getLongHash with Python ints (64-bit two's complement)."""

    def s64(x: int) -> int:
        x &= 2**64 - 1
        return x - 2**64 if x >= 2**63 else x

    key = s64(~key + (key << 21))
    key = s64(key ^ (key >> 24))
    key = s64(key + (key << 3) + (key << 8))
    key = s64(key ^ (key >> 14))
    key = s64(key + (key << 2) + (key << 4))
    key = s64(key ^ (key >> 28))
    return s64(key + (key << 31))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=40))
def test_long_hash_is_javas_wrap_around_arithmetic(values: list[int]) -> None:
    assert long_hash(np.array(values, dtype=np.int64)).tolist() == [_wang(v) for v in values]


def test_float_hash_uses_canonical_nan_and_sign_extended_bits() -> None:
    floats = fast_hash(pa.array([float("nan"), -1.5, 0.0], pa.float32()), parse_type("FLOAT"))
    bits = [0x7FC00000, struct.unpack(">i", struct.pack(">f", -1.5))[0], 0]
    assert floats.tolist() == [_wang(b) for b in bits]
    doubles = fast_hash(pa.array([float("nan"), 2.25], pa.float64()), parse_type("DOUBLE"))
    assert doubles.tolist() == [_wang(0x7FF8000000000000), _wang(struct.unpack(">q", struct.pack(">d", 2.25))[0])]


def test_timestamps_hash_millis_up_to_precision_3_else_micros() -> None:
    t = dt.datetime(1969, 12, 31, 23, 59, 59, 999_500)
    ms = fast_hash(pa.array([t], pa.timestamp("ms")), parse_type("TIMESTAMP(3)"))
    assert ms.tolist() == [_wang(-1)]  # floor to the millisecond, as Timestamp.getMillisecond
    us = fast_hash(pa.array([t], pa.timestamp("us")), parse_type("TIMESTAMP(6)"))
    assert us.tolist() == [_wang(-500)]
    ns = fast_hash(pa.array([-1500], pa.timestamp("ns")), parse_type("TIMESTAMP(9)"))
    assert ns.tolist() == [_wang(-2)]  # Timestamp.toMicros floors


def test_bloom_filter_sizing_and_layout_follow_java() -> None:
    f = BloomFilter64.sized(100, 0.1)
    # nb = int(100 * ln 10 / ln2^2) = 479, rounded up to whole bytes (+8 when already whole)
    assert f.num_bits == 480 and f.num_hash_functions == 3
    f.add_hashes(np.array([0], dtype=np.int64))  # h1 = h2 = 0: bit 0
    data = f.to_bytes()
    assert data[:4] == b"\x00\x00\x00\x03" and data[4] == 1 and len(data) == 4 + 60
    again = BloomFilter64.from_bytes(data)
    assert again.num_hash_functions == 3 and again.num_bits == 480 and again.to_bytes() == data
    assert again.test_hashes(np.array([0, 12345], dtype=np.int64)).tolist() == f.test_hashes(np.array([0, 12345], dtype=np.int64)).tolist()


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["INT", "BIGINT", "SMALLINT", "STRING", "BYTES", "DOUBLE", "DATE"]),
    st.data(),
)
def test_bloom_filter_never_skips_a_value_in_the_file(type_text: str, data: st.DataObject) -> None:
    strategies = {
        "INT": st.integers(-(2**31), 2**31 - 1),
        "BIGINT": st.integers(-(2**63), 2**63 - 1),
        "SMALLINT": st.integers(-(2**15), 2**15 - 1),
        "STRING": st.text(max_size=40),
        "BYTES": st.binary(max_size=60),
        "DOUBLE": st.floats(allow_nan=False),
        "DATE": st.dates(),
    }
    values = data.draw(st.lists(st.one_of(st.none(), strategies[type_text]), min_size=1, max_size=200))
    dtype = parse_type(type_text)
    writer = BLOOM_FILTER.writer(dtype, {"items": "50", "fpp": "0.05"})
    arrow = pa.array(values, dtype.to_arrow())
    writer.add(arrow.slice(0, len(values) // 2))
    writer.add(arrow.slice(len(values) // 2))
    reader = BLOOM_FILTER.reader(dtype, {}, writer.to_bytes())
    for v in values:
        assert reader.equal(v).remain
    present = [v for v in values if v is not None]
    if present:
        assert reader.is_in([present[0]]).remain


def test_bloom_filter_skips_absent_values_and_keeps_null_literals() -> None:
    dtype = parse_type("BIGINT")
    writer = BLOOM_FILTER.writer(dtype, {"items": "1000", "fpp": "0.01"})
    writer.add(pa.array(range(1000), pa.int64()))
    reader = BLOOM_FILTER.reader(dtype, {}, writer.to_bytes())
    absent = sum(not reader.equal(v).remain for v in range(10_000, 12_000))
    assert absent > 1900  # fpp 0.01
    assert reader.equal(None).remain
    assert reader.is_in([None, 10_000_000]).remain
    assert reader.equal("not a number").remain  # a literal of another type: not decided
    assert reader.compare("<", 5).remain and reader.is_null().remain


def test_bloom_filter_refuses_bad_options_and_bytes() -> None:
    with pytest.raises(OptionError):
        BLOOM_FILTER.writer(parse_type("INT"), {"fpp": "2"})
    with pytest.raises(CorruptMetadataError):
        BLOOM_FILTER.reader(parse_type("INT"), {}, b"\x00\x00")
    assert not BLOOM_FILTER.supports(parse_type("BOOLEAN"))
    assert not BLOOM_FILTER.supports(parse_type("DECIMAL(10, 2)"))


# ---------------------------------------------------------------- container


def test_container_layout_byte_for_byte() -> None:
    blob = write_file_index({"a": {"bloom-filter": b"\x01\x02\x03"}, "bc": {"bitmap": None, "x": b"\xff"}})
    head_length = 8 + 4 + 4 + 4 + 3 * 8 + 2 * 4 + 4 + (2 + 1) + (2 + 12) + (2 + 2) + (2 + 6) + (2 + 1)
    expected = struct.pack(">qiii", MAGIC, 1, head_length, 2)
    expected += java_utf("a") + struct.pack(">i", 1) + java_utf("bloom-filter") + struct.pack(">ii", head_length, 3)
    expected += java_utf("bc") + struct.pack(">i", 2)
    expected += java_utf("bitmap") + struct.pack(">ii", -1, 0)
    expected += java_utf("x") + struct.pack(">ii", head_length + 3, 1)
    expected += struct.pack(">i", 0) + b"\x01\x02\x03\xff"
    assert blob == expected
    assert read_file_index(blob) == {"a": {"bloom-filter": b"\x01\x02\x03"}, "bc": {"bitmap": None, "x": b"\xff"}}


def test_container_refuses_what_is_not_an_index() -> None:
    with pytest.raises(CorruptMetadataError):
        read_file_index(b"\x00" * 30)
    with pytest.raises(CorruptMetadataError):
        read_file_index(b"\x01")
    newer = bytearray(write_file_index({"a": {"bloom-filter": b"\x00"}}))
    newer[11] = 2
    with pytest.raises(UnsupportedTableError):
        read_file_index(bytes(newer))


def test_java_modified_utf8_and_hash_order() -> None:
    assert java_utf("\x00é") == b"\x00\x04\xc0\x80\xc3\xa9"
    assert java_utf("😀") == b"\x00\x06\xed\xa0\xbd\xed\xb8\x80"  # each surrogate on its own
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("polygenelubricants") == -(2**31)
    # a HashMap of 16 buckets iterates by bucket: "a" (97 & 15 = 1) and "q" (113 & 15 = 1) in
    # insertion order, then "b" (98 & 15 = 2)
    assert java_hash_order(["b", "a", "q"]) == ["a", "q", "b"]
    assert java_hash_order(["q", "b", "a"]) == ["q", "a", "b"]


def test_options_parse_and_refuse() -> None:
    fields = {"id": parse_type("BIGINT"), "s": parse_type("STRING"), "m": parse_type({"type": "MAP", "key": "STRING", "value": "INT"})}
    spec = file_index_options(
        {
            "file-index.bloom-filter.columns": "id, s",
            "file-index.bloom-filter.s.fpp": "0.01",
            "file-index.in-manifest-threshold": "1 kb",
            "file-index.read.enabled": "false",
        },
        fields,
    )
    assert [(i.column, i.type_name, dict(i.options)) for i in spec.indexes] == [
        ("id", "bloom-filter", {}),
        ("s", "bloom-filter", {"fpp": "0.01"}),
    ]
    assert spec.in_manifest_threshold == 1024 and not spec.read_enabled
    assert file_index_options({}, fields) == FileIndexOptions()
    for bad in (
        {"file-index.bloom-filter.columns": "id,,s"},
        {"file-index.bloom-filter.columns": "nope"},
        {"file-index.bloom-filter.columns": "id", "file-index.bloom-filter.s.fpp": "0.1"},
        {"file-index.range-bitmap.columns": "id"},
        {"file-index.bloom-filter.columns": "m[k]"},
        {"file-index.bloom-filter.columns": "id", "file-index.bloom-filter.id.fpp": "x"},
    ):
        with pytest.raises(OptionError):
            file_index_options(bad, fields)


def test_evaluate_is_conservative_over_not_and_unknown_columns() -> None:
    dtype = parse_type("INT")
    writer = BLOOM_FILTER.writer(dtype, {"items": "100"})
    writer.add(pa.array([1, 2, 3], pa.int32()))
    reader = BLOOM_FILTER.reader(dtype, {}, writer.to_bytes())

    def readers(column: str) -> list:
        return [reader] if column == "x" else []

    def skips(p: lakestore.Predicate) -> bool:
        result: FileIndexResult = evaluate(p, readers)
        return not result.remain

    assert skips(col("x") == 1000)
    assert not skips(col("x") == 2)
    assert skips((col("x") == 1000) & (col("y") == 1))
    assert not skips((col("x") == 1000) | (col("y") == 1))
    assert skips((col("x") == 1000) | (col("x") == 2000))
    assert not skips(~(col("x") == 1000))
    assert not skips(~(col("x") == 2))
    assert skips(col("x").isin([1000, 2000]))
    assert not skips(col("x").isin([1000, 3]))


# ---------------------------------------------------------------- tables


@pytest.fixture
def catalog(tmp_path) -> lakestore.Catalog:
    c = lakestore.Catalog(str(tmp_path / "wh"))
    c.create_database("db")
    return c


def _files(table: lakestore.Table) -> list:
    return [f for s in table.scan().plan() for f in s.files]


@pytest.mark.parametrize("file_format", ["parquet", "orc", "avro"])
@pytest.mark.parametrize("threshold", ["500 b", "1 b"])
def test_append_table_writes_indexes_and_skips_files(catalog: lakestore.Catalog, file_format: str, threshold: str) -> None:
    schema = pa.schema([("id", pa.int64()), ("s", pa.string())])
    options = {
        "file.format": file_format,
        "file-index.bloom-filter.columns": "s",
        "file-index.bloom-filter.s.items": "200",
        "file-index.in-manifest-threshold": threshold,
    }
    table = catalog.create_table("db.t", schema=schema, options=options)
    for k in range(4):  # interleaved strings: statistics keep every file for any middle value
        table.write_arrow(pa.table({"id": list(range(k, 400, 4)), "s": [f"v{i:03d}" for i in range(k, 400, 4)]}))
    files = _files(table)
    assert len(files) == 4
    if threshold == "1 b":
        assert all(f.embedded_file_index is None and f.extra_files == (f.file_name + ".index",) for f in files)
        folder = table.path + "/bucket-0"
        assert all(table.store.file_io.exists(f"{folder}/{f.file_name}.index") for f in files)
    else:
        assert all(f.embedded_file_index is not None and f.extra_files == () for f in files)
    plan = table.scan().filter(col("s") == "v201").plan()
    assert plan.files_skipped_by_index == 3
    assert table.scan().filter(col("s") == "v201").to_arrow().to_pylist() == [{"id": 201, "s": "v201"}]
    assert table.scan().filter(col("s") == "v1505").plan().files_skipped_by_index == 4  # within every file's bounds
    assert table.scan().filter(col("s") != "v201").plan().files_skipped_by_index == 0
    assert table.scan().filter(col("s").isin(["v201", "v202"])).plan().files_skipped_by_index == 2
    # compaction output is indexed too
    table.compact(full=True)
    assert all(f.embedded_file_index is not None or f.extra_files for f in _files(table))
    assert table.scan().filter(col("s") == "v399").to_arrow().num_rows == 1


def test_read_enabled_false_reads_every_file(catalog: lakestore.Catalog) -> None:
    schema = pa.schema([("s", pa.string())])
    options = {"file-index.bloom-filter.columns": "s", "file-index.read.enabled": "false"}
    table = catalog.create_table("db.t", schema=schema, options=options)
    for k in range(2):
        table.write_arrow(pa.table({"s": [f"v{i}" for i in range(k, 20, 2)]}))
    assert table.scan().filter(col("s") == "v3").plan().files_skipped_by_index == 0


def test_primary_key_tables_use_indexes_only_with_deletion_vectors(catalog: lakestore.Catalog) -> None:
    schema = pa.schema([pa.field("k", pa.int64(), nullable=False), ("s", pa.string())])
    for dv in ("true", "false"):
        options = {"bucket": "1", "file-index.bloom-filter.columns": "s", "deletion-vectors.enabled": dv}
        table = catalog.create_table(f"db.pk_{dv}", schema=schema, primary_keys=["k"], options=options)
        for k in range(3):
            table.write_arrow(pa.table({"k": list(range(k, 60, 3)), "s": [f"v{i:02d}" for i in range(k, 60, 3)]}))
        plan = table.scan().filter(col("s") == "v31").plan()
        assert table.scan().filter(col("s") == "v31").to_arrow().to_pylist() == [{"k": 31, "s": "v31"}]
        if dv == "true":
            files = _files(table)  # levels >= 1 (the write's lookup compaction merges some runs)
            assert len(files) >= 2 and plan.files_skipped_by_index == len(files) - 1
        else:
            assert plan.files_skipped_by_index == 0


def test_unimplemented_index_types_are_refused_by_name(catalog: lakestore.Catalog) -> None:
    schema = pa.schema([("id", pa.int64())])
    with pytest.raises(OptionError, match="range-bitmap"):
        catalog.create_table("db.t", schema=schema, options={"file-index.range-bitmap.columns": "id"})
    with pytest.raises(OptionError, match="not a file index type"):
        catalog.create_table("db.u", schema=schema, options={"file-index.nope.columns": "id"})
    # a column the table lacks, or a type the index cannot hash: refused at create, as Paimon's
    # SchemaValidation refuses them, and nothing is created
    with pytest.raises(OptionError, match="missing"):
        catalog.create_table("db.v", schema=schema, options={"file-index.bloom-filter.columns": "missing"})
    with pytest.raises(OptionError, match="not supported"):
        catalog.create_table("db.w", schema=pa.schema([("b", pa.bool_())]), options={"file-index.bloom-filter.columns": "b"})
    assert not catalog.table_exists("db.v") and not catalog.table_exists("db.w")


def test_index_files_follow_their_data_files_through_maintenance(catalog: lakestore.Catalog) -> None:
    schema = pa.schema([("s", pa.string())])
    options = {"file-index.bloom-filter.columns": "s", "file-index.in-manifest-threshold": "1 b"}
    table = catalog.create_table("db.t", schema=schema, options=options)
    for k in range(3):
        table.write_arrow(pa.table({"s": [f"v{i}" for i in range(k, 30, 3)]}))
    folder = table.path + "/bucket-0"

    def on_disk() -> set[str]:
        return {p.rsplit("/", 1)[-1] for p in table.store.file_io.list_names(folder)}

    old = {f.file_name for f in _files(table)}
    assert {n + ".index" for n in old} <= on_disk()
    # live index files are not orphans
    assert not [p for p in table.maintenance.remove_orphan_files(older_than_ms=2**62).deleted if p.endswith(".index")]
    assert {n + ".index" for n in old} <= on_disk()
    table.compact(full=True)
    new = {f.file_name for f in _files(table)}
    assert new.isdisjoint(old) and {n + ".index" for n in new} <= on_disk()
    table.maintenance.expire_snapshots(num_retained_min=1, num_retained_max=1)
    assert on_disk() == new | {n + ".index" for n in new}  # expired files went with their indexes
    assert table.maintenance.check().ok
    assert table.scan().filter(col("s") == "v7").to_arrow().to_pylist() == [{"s": "v7"}]


def test_a_foreign_table_with_an_unimplemented_index_is_read_but_not_written() -> None:
    from lakestore.meta.options import classify, unsupported

    assert classify("file-index.bloom-filter.columns") == "implemented"
    assert classify("file-index.bloom-filter.s.fpp") == "implemented"
    assert classify("file-index.in-manifest-threshold") == "implemented"
    assert classify("file-index.range-bitmap.columns") == "refused"
    assert classify("file-index.range-bitmap.v.chunk-size") == "refused"
    assert classify("file-index.nope.columns") == "refused"
    found = unsupported({"file-index.range-bitmap.columns": "v", "file-index.bloom-filter.columns": "s"}, primary_keys=())
    assert [k for k, _ in found.blocks_writes] == ["file-index.range-bitmap.columns"]
    assert "range-bitmap file index is not implemented" in found.blocks_writes[0][1]
    assert found.blocks_reads == ()


def test_data_evolution_updates_index_the_columns_they_write(catalog: lakestore.Catalog) -> None:
    schema = pa.schema([("id", pa.int64()), ("v", pa.string())])
    options = {
        "row-tracking.enabled": "true",
        "data-evolution.enabled": "true",
        "file-index.bloom-filter.columns": "id,v",
        "file-index.bloom-filter.id.items": "10",
        "file-index.bloom-filter.v.items": "10",
    }
    table = catalog.create_table("db.t", schema=schema, options=options)
    table.write_arrow(pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"]}))
    table.update_columns(pa.table({"_ROW_ID": [1], "v": ["B"]}))
    files = _files(table)
    assert len(files) == 2 and all(f.embedded_file_index is not None for f in files)
    update = next(f for f in files if f.write_cols == ("v",))
    assert set(read_file_index(update.embedded_file_index)) == {"v"}
    # data-evolution reads do not use file indexes (a file holds some columns of its rows)
    assert table.scan().filter(col("v") == "B").plan().files_skipped_by_index == 0
    assert table.to_arrow(filter=col("v") == "B").to_pylist() == [{"id": 2, "v": "B"}]
