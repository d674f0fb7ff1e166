"""ORC data files both ways against Paimon Java 2.0.0 (and a Paimon 0.9 ``file.format=orc``
table): Java writes ORC primary-key and append tables, lakestore reads them row for row, writes
more ORC files and compacts; Java reads lakestore's result. Value statistics of lakestore's ORC
files equal those Paimon records for the same rows (``_VALUE_STATS``, ``_VALUE_STATS_COLS``)."""

from __future__ import annotations

import datetime
import glob
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.orc as po
import pytest

import tests.interop.test_java_merge_engines as scenario
from tests.compact._tables import live_files
from tests.interop.conftest import same_rows
from tests.oracle.java_driver import java_oracle
from tests.oracle.test_oracle_driver import ALL_TYPES, all_types

pytestmark = pytest.mark.oracle
ORC = {"file.format": "orc"}


def orc_safe_types() -> pa.Table:
    """ALL_TYPES without timestamps before 1970 that have a fraction of a second: Paimon Java's ORC
    writer stores those one second late (Java reads back 1970-01-01 00:00:00.999 for -1 ms), so
    they cannot compare across engines. ts3 moves 20 years on, ts6 a day on, ts9 -1 ns becomes +1 us."""
    data = all_types()
    ts3 = [None if v is None else v + datetime.timedelta(days=365 * 20) for v in data.column("ts3").to_pylist()]
    ts6 = [None if v is None else v + datetime.timedelta(days=1) for v in data.column("ts6").to_pylist()]
    ts9 = [None if v is None else v + 1_001 for v in data.column("ts9").cast(pa.int64()).to_pylist()]
    data = data.set_column(data.schema.get_field_index("ts3"), data.schema.field("ts3"), pa.array(ts3, pa.timestamp("ms")))
    data = data.set_column(data.schema.get_field_index("ts6"), data.schema.field("ts6"), pa.array(ts6, pa.timestamp("us")))
    return data.set_column(data.schema.get_field_index("ts9"), data.schema.field("ts9"), pa.array(ts9, pa.int64()).cast(pa.timestamp("ns")))


def rows(table: pa.Table, names: list[str]) -> list[dict]:
    return sorted(table.select(names).to_pylist(), key=lambda r: r["id"])


def data_files(table_path: str) -> list[str]:
    return sorted(p for p in glob.glob(f"{table_path}/**/data-*", recursive=True))


def live_stats(table_path: str) -> list[tuple]:
    """(_VALUE_STATS_COLS, min bytes, max bytes, null counts) of the live files' manifest entries."""
    out = []
    for manifest in sorted(glob.glob(f"{table_path}/manifest/manifest-*")):
        if "manifest-list" in manifest:
            continue
        with open(manifest, "rb") as fh:
            for record in fastavro.reader(fh):
                f = record["_FILE"]
                stats = f["_VALUE_STATS"]
                cols = f["_VALUE_STATS_COLS"]
                out.append((tuple(cols) if cols is not None else None, stats["_MIN_VALUES"], stats["_MAX_VALUES"], stats["_NULL_COUNTS"]))
    return out


@pytest.mark.parametrize("primary_keys", [["id"], []], ids=["pk", "append"])
def test_java_writes_orc_lakestore_reads_writes_compacts(java, catalog, warehouse, primary_keys):
    options = {**ORC, "bucket": "1"} if primary_keys else dict(ORC)
    java.create_table(warehouse, "db.t", ALL_TYPES, primary_keys=primary_keys, options=options)
    data = orc_safe_types()
    java.write(warehouse, "db.t", data)
    table = catalog.get_table("db.t")
    assert all(p.endswith(".orc") for p in data_files(table.path))
    assert rows(table.to_arrow(), ALL_TYPES.names) == rows(data, ALL_TYPES.names)
    assert rows(table.to_arrow(columns=["id", "s", "r"]), ["id", "s", "r"]) == rows(data, ["id", "s", "r"])  # projection
    table.write_arrow(data.slice(1, 2))
    table.compact(full=True)
    expected = data if primary_keys else pa.concat_tables([data, data.slice(1, 2)])
    table = catalog.get_table("db.t")
    assert all(p.endswith(".orc") for p in data_files(table.path))
    assert rows(table.to_arrow(), ALL_TYPES.names) == rows(expected, ALL_TYPES.names)
    assert rows(java.read(warehouse, "db.t"), ALL_TYPES.names) == rows(expected, ALL_TYPES.names)


@pytest.mark.parametrize("primary_keys", [["id"], []], ids=["pk", "append"])
def test_lakestore_writes_orc_java_reads_and_continues(java, catalog, warehouse, primary_keys):
    options = {**ORC, "bucket": "1"} if primary_keys else dict(ORC)
    table = catalog.create_table("db.t", schema=ALL_TYPES, primary_keys=primary_keys, options=options)
    data = orc_safe_types()
    table.write_arrow(data)
    files = data_files(table.path)
    assert files and all(p.endswith(".orc") for p in files)
    assert po.ORCFile(files[0]).compression == "ZSTD"
    assert rows(java.read(warehouse, "db.t"), ALL_TYPES.names) == rows(data, ALL_TYPES.names)
    java.write(warehouse, "db.t", data.slice(0, 1))
    expected = data if primary_keys else pa.concat_tables([data, data.slice(0, 1)])
    assert rows(catalog.get_table("db.t").to_arrow(), ALL_TYPES.names) == rows(expected, ALL_TYPES.names)
    java.compact(warehouse, "db.t")  # Java rewrites lakestore's files
    assert rows(catalog.get_table("db.t").to_arrow(), ALL_TYPES.names) == rows(expected, ALL_TYPES.names)


@pytest.mark.parametrize("mode", ["full", "truncate(16)", "counts"])
def test_orc_value_stats_equal_javas(java, catalog, warehouse, mode):
    """The same rows written as an ORC append table by Java and by lakestore: byte-equal value
    statistics (Java takes them from the ORC file: no binary bounds, nested null counts, every
    timestamp precision; a long string cut to 16 code points under truncate(16))."""
    data = orc_safe_types()
    long = pa.array(["z" * 40, None, "a" * 2000], pa.string())  # past ORC's 1024 recorded bytes: no min
    data = data.set_column(data.schema.get_field_index("s"), "s", long)
    nan_first = pa.array([float("nan"), None, -0.5], pa.float64())
    data = data.set_column(data.schema.get_field_index("f64"), "f64", nan_first)
    options = {**ORC, "metadata.stats-mode": mode}
    java.create_table(warehouse, "db.j", ALL_TYPES, options=options)
    java.write(warehouse, "db.j", data)
    mine = catalog.create_table("db.l", schema=ALL_TYPES, options=options)
    mine.write_arrow(data)
    theirs = live_stats(str(Path(warehouse) / "db.db" / "j"))
    assert live_stats(mine.path) == theirs


def test_mixed_format_table_java_reads(java, catalog, warehouse):
    """file.format changed by ALTER: parquet files and ORC files in one table, each read by its
    name; lakestore's compaction writes the current format, and Java reads every stage."""
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    java.create_table(warehouse, "db.t", schema, primary_keys=["id"], options={"bucket": "1", "file.format": "parquet"})
    java.write(warehouse, "db.t", pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"]}, schema=schema))
    java.alter(warehouse, "db.t", [{"op": "set_option", "key": "file.format", "value": "orc"}])
    java.write(warehouse, "db.t", pa.table({"id": [2], "v": ["B"]}, schema=schema))
    table = catalog.get_table("db.t")
    table.write_arrow(pa.table({"id": [3, 4], "v": ["C", "d"]}, schema=schema))
    suffixes = sorted(Path(p).suffix for p in data_files(table.path))
    assert suffixes == [".orc", ".orc", ".parquet"]
    expected = pa.table({"id": [1, 2, 3, 4], "v": ["a", "B", "C", "d"]}, schema=schema)
    same_rows(table.to_arrow(), expected, ["id"])
    same_rows(java.read(warehouse, "db.t"), expected, ["id"])
    table.compact(full=True)
    table = catalog.get_table("db.t")
    assert all(f.file_name.endswith(".orc") for f in live_files(table))
    same_rows(table.to_arrow(), expected, ["id"])
    same_rows(java.read(warehouse, "db.t"), expected, ["id"])


def test_lakestore_continues_an_orc_table_paimon09_wrote(java09, java, catalog, warehouse):
    """A Paimon 0.8-era default table: ORC data files, written by Paimon 0.9 Java."""
    keys = scenario.KEYS
    options = {**scenario.options("deduplicate"), "file.format": "orc"}
    java09.create_table(warehouse, "db.t", scenario.SCHEMA, primary_keys=keys, partition_keys=["dt"], options=options)
    for index in range(2):
        java09.write(warehouse, "db.t", scenario.as_table(scenario.commit_rows("deduplicate", index)))
    table = catalog.get_table("db.t")
    assert all(p.endswith(".orc") for p in data_files(table.path))
    same_rows(table.to_arrow(), scenario.model("deduplicate", 2), keys)
    for index in range(2, len(scenario.COMMITS)):
        catalog.get_table("db.t").write_arrow(scenario.as_table(scenario.commit_rows("deduplicate", index)))
    expected = scenario.model("deduplicate", len(scenario.COMMITS))
    catalog.get_table("db.t").compact(full=True)
    same_rows(catalog.get_table("db.t").to_arrow(), expected, keys)
    same_rows(java.read(warehouse, "db.t"), expected, keys)
    same_rows(java09.read(warehouse, "db.t"), expected, keys)


def test_deletion_vectors_over_java_orc_files(java, catalog, warehouse):
    """Java writes and compacts a deletion-vector ORC table; lakestore reads it, writes, and its
    compaction gives Java's ORC file a deletion vector; Java reads the result."""
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    options = {**ORC, "bucket": "1", "deletion-vectors.enabled": "true"}
    java.create_table(warehouse, "db.t", schema, primary_keys=["id"], options=options)
    java.write(warehouse, "db.t", pa.table({"id": [1, 2, 3, 4], "v": ["a", "b", "c", "d"]}, schema=schema))
    java.compact(warehouse, "db.t")
    java.write(warehouse, "db.t", pa.table({"id": [2, 3], "v": ["B", "C"]}, schema=schema))
    java.compact(warehouse, "db.t")
    table = catalog.get_table("db.t")
    expected = pa.table({"id": [1, 2, 3, 4], "v": ["a", "B", "C", "d"]}, schema=schema)
    same_rows(table.to_arrow(), expected, ["id"])
    table.write_arrow(pa.table({"id": [4, 5], "v": ["D", "e"]}, schema=schema))
    table.compact()
    assert list((Path(table.path) / "index").glob("index-*"))  # the vector over Java's ORC file
    expected = pa.table({"id": [1, 2, 3, 4, 5], "v": ["a", "B", "C", "D", "e"]}, schema=schema)
    same_rows(catalog.get_table("db.t").to_arrow(), expected, ["id"])
    same_rows(java.read(warehouse, "db.t"), expected, ["id"])
    assert all(f.file_name.endswith(".orc") for f in live_files(catalog.get_table("db.t")))


def key_stats(table_path: str) -> list[tuple]:
    out = []
    for manifest in sorted(glob.glob(f"{table_path}/manifest/manifest-*")):
        if "manifest-list" in manifest:
            continue
        with open(manifest, "rb") as fh:
            for record in fastavro.reader(fh):
                f = record["_FILE"]
                stats = f["_KEY_STATS"]
                out.append((f["_MIN_KEY"], f["_MAX_KEY"], stats["_MIN_VALUES"], stats["_MAX_VALUES"], stats["_NULL_COUNTS"]))
    return out


def test_orc_key_stats_equal_javas(java, catalog, warehouse):
    """Key statistics of ORC primary-key files: a BYTES key has no bounds in ORC, a long string key
    is cut to 128 code points (as Java records them)."""
    schema = pa.schema([pa.field("k", pa.string(), nullable=False), pa.field("b", pa.binary(), nullable=False), ("v", pa.int32())])
    data = pa.table({"k": ["a" * 200, "b", "c"], "b": [b"\x00", b"\xff" * 3, b""], "v": [1, None, 3]}, schema=schema)
    options = {**ORC, "bucket": "1"}
    java.create_table(warehouse, "db.j", schema, primary_keys=["k", "b"], options=options)
    java.write(warehouse, "db.j", data)
    mine = catalog.create_table("db.l", schema=schema, primary_keys=["k", "b"], options=options)
    mine.write_arrow(data)
    assert key_stats(mine.path) == key_stats(str(Path(warehouse) / "db.db" / "j"))


def test_paimon_14_reads_lakestores_orc_files(catalog, warehouse):
    """Paimon 1.4.2 (the last 1.x) reads lakestore's ORC files of every type and continues them."""
    java14 = java_oracle("1.4.2")
    table = catalog.create_table("db.t", schema=ALL_TYPES, primary_keys=["id"], options={**ORC, "bucket": "1"})
    data = orc_safe_types()
    table.write_arrow(data)
    assert rows(java14.read(warehouse, "db.t"), ALL_TYPES.names) == rows(data, ALL_TYPES.names)
    java14.write(warehouse, "db.t", data.slice(0, 1))
    java14.compact(warehouse, "db.t")
    assert rows(catalog.get_table("db.t").to_arrow(), ALL_TYPES.names) == rows(data, ALL_TYPES.names)


def test_java_reads_every_codec_lakestore_writes(java, catalog, warehouse):
    """ORC (zstd at level 9, lz4, snappy, zlib, none) and Avro (zstd, snappy, deflate) files, named
    with their codec (``file.suffix.include.compression``), read by Java."""
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    data = pa.table({"id": list(range(100)), "v": [f"x{i % 7}" for i in range(100)]}, schema=schema)
    for fmt, codecs in (("orc", ["zstd", "lz4", "snappy", "zlib", "none"]), ("avro", ["zstd", "snappy", "deflate"])):
        for codec in codecs:
            name = f"db.{fmt}_{codec}"
            options = {"file.format": fmt, "file.compression": codec, "file.suffix.include.compression": "true"}
            catalog.create_table(name, schema=schema, options={**options, "file.compression.zstd-level": "9"}).write_arrow(data)
            same_rows(java.read(warehouse, name), data, ["id"])
