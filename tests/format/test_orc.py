"""ORC data files through the file-format abstraction (lakestore/format/file_format.py, orc.py):
every type round trips, codecs, statistics as Paimon's ORC extractor records them, mixed-format
tables (each file's format from its name), per-level and changelog formats, deletion vectors
over ORC files, compaction into the current format, Avro files, and what is refused by name.
Interop with Paimon Java: tests/interop/test_java_orc.py, test_java_avro.py."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.orc as po
import pytest

import lakestore
from lakestore.errors import OptionError, UnsupportedTypeError
from lakestore.format.avro import AVRO
from lakestore.format.binary_row import decode_row
from lakestore.format.file_format import format_identifier
from lakestore.format.formats import format_named, format_of_file
from lakestore.format.orc import ORC
from lakestore.format.parquet import PARQUET
from lakestore.format.types import parse_type
from lakestore.meta.stats import column_stats, value_stats_plan
from tests._support import sort_rows
from tests.compact._tables import live_files

ROW = pa.struct([("a", pa.int32()), ("b", pa.string())])
SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("b", pa.bool_()),
        ("i8", pa.int8()),
        ("i16", pa.int16()),
        ("f", pa.float32()),
        ("s", pa.string()),
        ("bin", pa.binary()),
        ("dec", pa.decimal128(10, 2)),
        ("wide", pa.decimal128(38, 10)),
        ("d", pa.date32()),
        ("tm", pa.time32("ms")),
        ("ts3", pa.timestamp("ms")),
        ("ts6", pa.timestamp("us")),
        ("ts9", pa.timestamp("ns")),
        ("ltz", pa.timestamp("us", tz="UTC")),
        ("arr", pa.list_(pa.int32())),
        ("m", pa.map_(pa.string(), pa.int64())),
        ("r", ROW),
        ("rows", pa.list_(ROW)),
    ]
)


def data() -> pa.Table:
    return pa.Table.from_pylist(
        [
            {
                "id": 1,
                "b": True,
                "i8": -128,
                "i16": 7,
                "f": 1.5,
                "s": "héllo",
                "bin": b"\x00\xff",
                "dec": Decimal("-1.25"),
                "wide": Decimal("1234567890123456789012345678.0123456789"),
                "d": dt.date(1969, 12, 31),
                "tm": dt.time(23, 59, 59, 999000),
                "ts3": dt.datetime(2024, 1, 1, 0, 0, 0, 123000),
                "ts6": dt.datetime(1969, 12, 31, 23, 59, 59),
                "ts9": pa.scalar(1_704_067_200_123_456_789, pa.timestamp("ns")).as_py(),
                "ltz": dt.datetime(2024, 2, 29, 12, 0, 0, 1, tzinfo=dt.UTC),
                "arr": [1, None, 3],
                "m": [("x", 1), ("y", None)],
                "r": {"a": None, "b": "rb"},
                "rows": [{"a": 1, "b": None}, None],
            },
            {name: None for name in SCHEMA.names} | {"id": 2},
            {
                "id": 3,
                "b": False,
                "i8": 0,
                "i16": -1,
                "f": -2.5,
                "s": "",
                "bin": b"",
                "dec": Decimal("0.00"),
                "wide": Decimal("-0.0000000001"),
                "d": dt.date(2262, 4, 11),
                "tm": dt.time(0, 0),
                "ts3": dt.datetime(1970, 1, 1),
                "ts6": dt.datetime(2024, 1, 1, 0, 0, 0, 123456),
                "ts9": pa.scalar(1, pa.timestamp("ns")).as_py(),
                "ltz": dt.datetime(1970, 1, 1, tzinfo=dt.UTC),
                "arr": [],
                "m": [],
                "r": None,
                "rows": [],
            },
        ],
        schema=SCHEMA,
    )


@pytest.fixture
def catalog(tmp_path) -> lakestore.Catalog:
    c = lakestore.Catalog(str(tmp_path / "wh"))
    c.create_database("db")
    return c


def files(table: lakestore.Table) -> list[Path]:
    return sorted(p for p in Path(table.path).rglob("*") if p.name.startswith(("data-", "changelog-")) and p.is_file())


def same(got: pa.Table, expected: pa.Table) -> None:
    assert sort_rows(got.select(expected.column_names), ["id"]) == sort_rows(expected, ["id"])


@pytest.mark.parametrize("primary_keys", [["id"], []], ids=["pk", "append"])
def test_every_type_round_trips_and_compacts(catalog, primary_keys):
    options = {"file.format": "orc", "bucket": "1"} if primary_keys else {"file.format": "orc"}
    table = catalog.create_table("db.t", schema=SCHEMA, primary_keys=primary_keys, options=options)
    table.write_arrow(data())
    table.write_arrow(data().slice(1, 2))  # sliced nested columns (pyarrow's ORC writer needs them copied)
    expected = data() if primary_keys else pa.concat_tables([data(), data().slice(1, 2)])
    assert all(p.suffix == ".orc" for p in files(table)) and files(table)
    same(table.to_arrow(), expected)
    same(table.to_arrow(columns=["id", "r", "ts9"]), expected.select(["id", "r", "ts9"]))  # projection
    table.compact(full=True)
    table = catalog.get_table("db.t")
    same(table.to_arrow(), expected)
    orc = po.ORCFile(str(files(table)[-1]))
    assert orc.schema.field("id").metadata == {b"paimon.id": b"0"}  # Paimon's field-id attribute
    assert orc.schema.field("tm").type == pa.int32()  # TIME: milliseconds of the day


@pytest.mark.parametrize(
    ("codec", "orc_name"), [("zstd", "ZSTD"), ("lz4", "LZ4"), ("snappy", "SNAPPY"), ("zlib", "ZLIB"), ("none", "UNCOMPRESSED")]
)
def test_codecs(catalog, codec, orc_name):
    table = catalog.create_table(
        "db.t", schema=SCHEMA, options={"file.format": "orc", "file.compression": codec, "file.compression.zstd-level": "9"}
    )
    table.write_arrow(data())
    assert po.ORCFile(str(files(table)[0])).compression == orc_name
    same(table.to_arrow(), data())


@pytest.mark.parametrize(
    "options",
    [
        {"file.format": "orc", "file.compression": "gzip"},  # ORC has no gzip
        {"file.format": "parquet", "file.compression": "zlib"},  # parquet has no zlib
        {"file.format": "orc", "file.compression": "uncompressed"},
        {"file.format": "lance"},
        {"changelog-file.format": "csv"},
        {"file.format.per.level": "0:json"},
        {"file.format": "avro", "file.compression": "lz4"},  # Avro's codecs: zstd, snappy, deflate
    ],
    ids=lambda o: "-".join(o.values()),
)
def test_refused_by_name(catalog, options):
    with pytest.raises(OptionError, match="|".join(k.replace(".", r"\.") for k in options)):
        catalog.create_table("db.t", schema=SCHEMA, options=options)


def test_format_from_file_name():
    assert format_identifier("data-1-0.orc") == "orc"
    assert format_identifier("bucket-0/data-1-0.zst.parquet") == "parquet"
    assert format_identifier("data-1-0.zstd.orc") == "orc"
    assert format_of_file("data-1-0.ORC") is ORC
    assert format_named("parquet") is PARQUET
    assert format_of_file("data-1-0.avro") is AVRO
    with pytest.raises(lakestore.UnsupportedTableError, match="lance"):
        format_of_file("data-1-0.lance")


def test_orc_statistics_follow_paimons_extractor():
    """Paimon's OrcSimpleStatsExtractor: binaries and nested columns only null counts, every
    timestamp precision min/max, no string bound past 1024 bytes, NaN as the first float value
    stays min and max."""
    names = ["bin", "r", "ts9", "s", "f"]
    row = {"type": "ROW", "fields": [{"id": 10, "name": "a", "type": "INT"}]}
    types = [parse_type(t) for t in ["BYTES", row, "TIMESTAMP(9)", "STRING", "FLOAT"]]
    table = pa.table(
        {
            "bin": pa.array([b"a", None], pa.binary()),
            "r": pa.array([{"a": 1}, None], pa.struct([("a", pa.int32())])),
            "ts9": pa.array([5, 7], pa.timestamp("ns")),
            "s": pa.array(["b", "a" * 1100], pa.string()),
            "f": pa.array([float("nan"), 1.0], pa.float32()),
        }
    )
    orc = column_stats(table, names, types, ["full"] * 5, ORC)
    parquet = column_stats(table, names, types, ["full"] * 5, PARQUET)
    assert orc.null_counts == (1, 1, 0, 0, 0)
    assert parquet.null_counts == (1, None, 0, 0, 0)
    low, high = decode_row(orc.min_values, types), decode_row(orc.max_values, types)
    assert low[0] is None and high[0] is None and low[1] is None
    assert low[3] is None and high[3] == "b"  # the 1100-byte minimum is not recorded
    assert str(low[4]) == "nan" and str(high[4]) == "nan"
    plan = value_stats_plan(names, types, mode="truncate(16)", field_modes={}, keep_first_n=-1, dense=True, fmt=ORC)
    assert plan.stats_cols is None  # ORC lists nested columns (null counts); parquet leaves them out
    assert value_stats_plan(names, types, mode="truncate(16)", field_modes={}, keep_first_n=-1, dense=True).stats_cols == (
        "bin",
        "ts9",
        "s",
        "f",
    )


def test_mixed_formats_and_compaction_writes_the_current_one(catalog):
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    table = catalog.create_table("db.t", schema=schema, primary_keys=["id"], options={"bucket": "1"})
    table.write_arrow(pa.table({"id": [1, 2], "v": ["a", "b"]}, schema=schema))
    catalog.alter_table("db.t", [lakestore.SetOption("file.format", "orc")])
    table = catalog.get_table("db.t")
    table.write_arrow(pa.table({"id": [2, 3], "v": ["B", "c"]}, schema=schema))
    assert sorted(p.suffix for p in files(table)) == [".orc", ".parquet"]
    expected = pa.table({"id": [1, 2, 3], "v": ["a", "B", "c"]}, schema=schema)
    same(table.to_arrow(), expected)
    table.compact(full=True)
    table = catalog.get_table("db.t")
    assert [Path(f.file_name).suffix for f in live_files(table)] == [".orc"]
    same(table.to_arrow(), expected)


def test_per_level_and_changelog_formats(catalog):
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    options = {"bucket": "1", "file.format.per.level": "0:orc", "changelog-producer": "input", "changelog-file.format": "orc"}
    table = catalog.create_table("db.t", schema=schema, primary_keys=["id"], options=options)
    table.write_arrow(pa.table({"id": [1, 2], "v": ["a", "b"]}, schema=schema))
    table.write_arrow(pa.table({"id": [2], "v": ["b"]}, schema=schema))
    names = [p.name for p in files(table)]
    assert all(n.endswith(".orc") for n in names) and any(n.startswith("changelog-") for n in names)
    table.compact(full=True)  # two level-0 files: rewritten at level 5, in level 5's format
    table = catalog.get_table("db.t")
    assert [(f.level, Path(f.file_name).suffix) for f in live_files(table)] == [(5, ".parquet")]
    same(table.to_arrow(), pa.table({"id": [1, 2], "v": ["a", "b"]}, schema=schema))


def test_deletion_vectors_over_orc(catalog):
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    options = {"bucket": "1", "file.format": "orc", "deletion-vectors.enabled": "true"}
    table = catalog.create_table("db.t", schema=schema, primary_keys=["id"], options=options)
    table.write_arrow(pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"]}, schema=schema))
    table.compact(full=True)
    table = catalog.get_table("db.t")
    table.write_arrow(pa.table({"id": [2], "v": ["B"]}, schema=schema))
    table.compact()  # the level-0 file is merged; row 2 of the ORC file gets a deletion vector
    table = catalog.get_table("db.t")
    same(table.to_arrow(), pa.table({"id": [1, 2, 3], "v": ["a", "B", "c"]}, schema=schema))


@pytest.mark.parametrize(
    "value",
    [pa.array([-1], pa.timestamp("ms")), pa.array([dt.datetime(3000, 1, 1)], pa.timestamp("us"))],
    ids=["before-1970-with-fraction", "after-2262"],
)
def test_timestamps_java_or_pyarrow_cannot_read_are_refused(catalog, value):
    schema = pa.schema([("t", value.type)])
    table = catalog.create_table("db.t", schema=schema, options={"file.format": "orc"})
    with pytest.raises(UnsupportedTypeError, match="parquet"):
        table.write_arrow(pa.table({"t": value}))
    assert not files(table)


@pytest.mark.parametrize("primary_keys", [["id"], []], ids=["pk", "append"])
def test_avro_round_trips_and_compacts(catalog, primary_keys):
    schema = pa.schema([f for f in SCHEMA if f.name != "ts9"])  # TIMESTAMP(9) has no Avro type
    rows = data().select(schema.names)
    options = {"file.format": "avro", "bucket": "1"} if primary_keys else {"file.format": "avro", "file.compression": "snappy"}
    table = catalog.create_table("db.t", schema=schema, primary_keys=primary_keys, options=options)
    table.write_arrow(rows)
    table.write_arrow(rows.slice(1, 2))
    expected = rows if primary_keys else pa.concat_tables([rows, rows.slice(1, 2)])
    assert all(p.suffix == ".avro" for p in files(table)) and files(table)
    same(table.to_arrow(), expected)
    table.compact(full=True)
    same(catalog.get_table("db.t").to_arrow(), expected)


def test_avro_refuses_timestamp9(catalog):
    table = catalog.create_table("db.t", schema=pa.schema([("t", pa.timestamp("ns"))]), options={"file.format": "avro"})
    with pytest.raises(UnsupportedTypeError, match="Avro"):
        table.write_arrow(pa.table({"t": pa.array([1], pa.timestamp("ns"))}))


@pytest.mark.parametrize("file_format", ["orc", "avro"])
def test_file_statistics_prune_and_keep_every_match(catalog, file_format):
    """Filtered reads skip ORC/Avro files by their manifest statistics, and never drop a match
    where the format keeps no bounds (ORC binaries) or a string bound is cut."""
    schema = pa.schema([("id", pa.int64()), ("s", pa.string()), ("b", pa.binary())])
    table = catalog.create_table("db.t", schema=schema, options={"file.format": file_format})
    for i, s in enumerate(["a" * 30, "m" * 30, "z" * 30]):  # one file each
        table.write_arrow(pa.table({"id": [i], "s": [s], "b": [s.encode()]}, schema=schema))
    col = lakestore.col
    assert sum(len(s.files) for s in table.scan(filter=col("s") == "m" * 30).plan()) == 1
    assert sum(len(s.files) for s in table.scan(filter=col("id") >= 2).plan()) == 1
    everything = table.to_arrow()
    for predicate in (col("s") == "m" * 30, col("b") == b"z" * 30, col("s") > "m", col("id").isin([0, 2]), col("b").is_null()):
        expected = everything.filter(predicate.to_arrow())
        assert sort_rows(table.to_arrow(filter=predicate), ["id"]) == sort_rows(expected, ["id"]), predicate


@pytest.mark.parametrize("file_format", ["orc", "avro"])
def test_reading_no_file_columns_keeps_the_row_count(catalog, file_format):
    """A read of only partition columns reads no column of the files, and still their rows."""
    schema = pa.schema([("dt", pa.string()), ("v", pa.int64())])
    table = catalog.create_table("db.t", schema=schema, partition_keys=["dt"], options={"file.format": file_format})
    table.write_arrow(pa.table({"dt": ["a", "a", "b"], "v": [1, 2, 3]}, schema=schema))
    assert sorted(table.to_arrow(columns=["dt"])["dt"].to_pylist()) == ["a", "a", "b"]
