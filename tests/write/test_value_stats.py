"""Value statistics of data files as Paimon 2.0 writes them (lakestore/meta/stats.py):
``metadata.stats-mode`` (default truncate(16)), ``fields.<f>.stats-mode``,
``metadata.stats-keep-first-n-columns``, ``metadata.stats-mode.per.level``, dense store
(``_VALUE_STATS_COLS``); compared byte for byte with what Paimon 2.0.0's Java core writes for the
same rows, read back by Paimon Java and pypaimon 2.1, and used by lakestore's pruning without ever
dropping a file that holds a match."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import lakestore
from lakestore.format.binary_row import decode_row
from lakestore.meta.file_scan import live_entries
from lakestore.meta.manifest import DataFileMeta
from lakestore.meta.stats import truncate_max, truncate_min
from tests._support import sort_rows
from tests.oracle.driver import oracle_available, oracle_read

needs_oracle = pytest.mark.skipif(not oracle_available(), reason="oracle venv not available")

SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("s", pa.string()),
        ("b", pa.binary()),
        ("d", pa.float64()),
        ("l", pa.list_(pa.int32())),
        ("ts", pa.timestamp("us")),
    ]
)


def rows() -> pa.Table:
    return pa.table(
        {
            "id": [3, 1, None],
            "s": ["a" * 20 + "z", "ab\U0010ffff" * 9, None],
            "b": [b"\xff" * 20, b"\x01" * 3, None],  # no 16-byte upper bound: min and max dropped
            "d": [1.5, -2.0, None],
            "l": [[1], None, [2, 3]],  # nested: no statistics at all
            "ts": [dt.datetime(2024, 1, 1), None, dt.datetime(2023, 1, 1)],
        },
        schema=SCHEMA,
    )


def files(table) -> list[DataFileMeta]:
    return sorted((e.file for e in live_entries(table.store.manifests(), table.latest_snapshot())), key=lambda f: (f.level, f.file_name))


def decoded(table, f: DataFileMeta, *, key: bool = False) -> dict:
    stats = f.key_stats if key else f.value_stats
    if key:
        names = list(table.schema.trimmed_primary_keys)
    else:
        names = list(f.value_stats_cols) if f.value_stats_cols is not None else table.schema.field_names
    types = table.schema.types_of(names)
    return {
        "cols": f.value_stats_cols if not key else None,
        "min": dict(zip(names, decode_row(stats.min_values, types, source="t"), strict=True)),
        "max": dict(zip(names, decode_row(stats.max_values, types, source="t"), strict=True)),
        "nulls": dict(zip(names, stats.null_counts or (), strict=True)),
    }


def raw(f: DataFileMeta, *, key: bool = False) -> tuple:
    stats = f.key_stats if key else f.value_stats
    return (None if key else f.value_stats_cols, stats.min_values, stats.max_values, stats.null_counts)


@pytest.fixture
def catalog(tmp_path) -> lakestore.Catalog:
    c = lakestore.Catalog(str(tmp_path / "wh"))
    c.create_database("db", exist_ok=True)
    return c


# -- truncation ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "length", "low", "high"),
    [
        ("abc", 16, "abc", "abc"),
        ("a" * 17, 16, "a" * 16, "a" * 15 + "b"),
        ("ab\U0010ffff" + "x", 3, "ab\U0010ffff", "ac"),  # the last code point cannot grow: the one before does
        ("\U0010ffff" * 3, 2, "\U0010ffff" * 2, None),  # no upper bound
        ("\ud7ff" + "x", 1, "\ud7ff", "\ue000"),  # never into the surrogates
        ("ü" * 5, 2, "üü", "üý"),
        (b"\x01\x02\x03", 2, b"\x01\x02", b"\x01\x03"),
        (b"\x01\xff\x03", 2, b"\x01\xff", b"\x02"),
        (b"\xff\xff\x00", 2, b"\xff\xff", None),
        (b"\x01", 2, b"\x01", b"\x01"),
        (42, 2, 42, 42),
    ],
)
def test_truncated_bounds(value, length, low, high):
    assert truncate_min(value, length) == low
    assert truncate_max(value, length) == high
    if high is not None:
        assert truncate_min(value, length) <= value <= high


# -- what lakestore writes --------------------------------------------------------------------------
def test_default_is_truncate_16_dense_without_nested_columns(catalog):
    t = catalog.create_table("db.t", schema=SCHEMA)
    t.write_arrow(rows())
    (f,) = files(t)
    got = decoded(t, f)
    assert got["cols"] == ("id", "s", "b", "d", "ts")  # the nested column has no statistics
    assert got["min"] == {"id": 1, "s": "a" * 16, "b": None, "d": -2.0, "ts": dt.datetime(2023, 1, 1)}
    assert got["max"]["s"] == "ab\U0010ffff" * 5 + "b"  # 16 code points, the 16th incremented
    assert got["max"]["b"] is None
    assert got["nulls"] == {"id": 1, "s": 1, "b": 1, "d": 1, "ts": 1}


@pytest.mark.parametrize(
    ("options", "cols", "nulls"),
    [
        ({"metadata.stats-mode": "none"}, (), {}),
        ({"metadata.stats-mode": "counts"}, ("id", "s", "b", "d", "ts"), {"id": 1, "s": 1, "b": 1, "d": 1, "ts": 1}),
        ({"metadata.stats-dense-store": "false"}, None, {"id": 1, "s": 1, "b": 1, "d": 1, "l": None, "ts": 1}),
        ({"metadata.stats-keep-first-n-columns": "2"}, ("id", "s"), {"id": 1, "s": 1}),
        ({"metadata.stats-keep-first-n-columns": "0", "fields.d.stats-mode": "counts"}, ("d",), {"d": 1}),
        ({"metadata.stats-mode": "none", "fields.s.stats-mode": "full"}, ("s",), {"s": 1}),
    ],
    ids=lambda v: str(v),
)
def test_modes_and_dense_store(catalog, options, cols, nulls):
    t = catalog.create_table("db.t", schema=SCHEMA, options=options)
    t.write_arrow(rows())
    (f,) = files(t)
    got = decoded(t, f)
    assert got["cols"] == cols
    assert got["nulls"] == nulls
    if options.get("fields.s.stats-mode") == "full":
        assert got["min"]["s"] == "a" * 20 + "z"


def test_timestamps_finer_than_micros_keep_only_null_counts(catalog):
    schema = pa.schema([("id", pa.int64()), ("ts", pa.timestamp("ns"))])
    t = catalog.create_table("db.t", schema=schema, options={"metadata.stats-mode": "full"})
    t.write_arrow(pa.table({"id": [1, 2], "ts": pa.array([1, None], pa.timestamp("ns"))}))
    got = decoded(t, files(t)[0])
    assert got["min"]["ts"] is None and got["max"]["ts"] is None and got["nulls"]["ts"] == 1


def test_primary_key_files_level_zero_without_value_stats_compacted_with_them(catalog):
    t = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["s"], options={"bucket": "1"})
    data = rows().filter(pa.compute.is_valid(rows()["s"]))
    t.write_arrow(data)
    (level0,) = files(t)
    assert level0.level == 0 and level0.value_stats_cols == ()
    key = decoded(t, level0, key=True)
    assert key["min"]["s"] == "a" * 20 + "z"  # key statistics: truncate(128), these are shorter
    t.write_arrow(data.slice(0, 1))  # two runs: compaction merges (one run would move up as it is)
    t.compact(full=True)
    (top,) = files(t)
    assert top.level > 0
    got = decoded(t, top)
    assert got["cols"] == ("id", "s", "b", "d", "ts")
    assert got["min"]["s"] == "a" * 16


def test_stats_mode_per_level_and_changelog_stats_mode(catalog):
    options = {
        "bucket": "1",
        "metadata.stats-mode.per.level": "0:full,5:counts",
        "changelog-producer": "input",
        "changelog-file.stats-mode": "none",
        "changelog-file.compression": "snappy",
    }
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    t = catalog.create_table("db.t", schema=schema, primary_keys=["id"], options=options)
    t.write_arrow(pa.table({"id": [1, 2], "v": ["x" * 30, None]}, schema=schema))
    (level0,) = files(t)
    assert decoded(t, level0)["max"] == {"id": 2, "v": "x" * 30}  # full at level 0
    t.write_arrow(pa.table({"id": [1], "v": ["y"]}, schema=schema))
    changelog_files = list(Path(t.path).rglob("changelog-*.parquet"))
    assert changelog_files
    assert pq.ParquetFile(changelog_files[0]).metadata.row_group(0).column(0).compression == "SNAPPY"
    data_file = next(Path(t.path).rglob("data-*.parquet"))
    assert pq.ParquetFile(data_file).metadata.row_group(0).column(0).compression == "ZSTD"
    t.compact(full=True)
    (top,) = files(t)
    assert top.level == 5
    got = decoded(t, top)
    assert got["min"] == {"id": None, "v": None} and got["nulls"] == {"id": 0, "v": 1}


@pytest.mark.parametrize("compression", ["zstd", "snappy", "lz4", "lz4_raw", "gzip", "none", "uncompressed"])
def test_file_compression(catalog, compression):
    options = {"file.compression": compression, "file.compression.zstd-level": "9"}
    t = catalog.create_table("db.t", schema=SCHEMA, options=options)
    t.write_arrow(rows())
    path = next(Path(t.path).rglob("*.parquet"))
    codec = pq.ParquetFile(path).metadata.row_group(0).column(0).compression
    assert codec == {"none": "UNCOMPRESSED", "lz4_raw": "LZ4"}.get(compression, compression.upper())
    assert sort_rows(t.to_arrow(), ["id"]) == sort_rows(rows(), ["id"])


@pytest.mark.parametrize(
    "options",
    [
        {"file.format": "lance"},
        {"changelog-file.format": "csv"},
        {"file.compression": "lzo"},
        {"file.compression": "brotli"},  # Paimon Java cannot read it
        {"file.compression.per.level": "5:brotli"},
        {"metadata.stats-mode": "truncate(0)"},
    ],
    ids=lambda o: next(iter(o)),
)
def test_unimplemented_formats_are_refused_by_name(catalog, options):
    with pytest.raises(lakestore.OptionError, match=next(iter(options)).replace(".", r"\.")):
        catalog.create_table("db.t", schema=SCHEMA, options=options)


# -- reads use the statistics, and never drop a matching file -------------------------------------------
LONG = ["k" * 40 + str(i) for i in range(6)]


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"metadata.stats-mode": "truncate(3)"},
        {"metadata.stats-mode": "counts"},
        {"metadata.stats-mode": "none"},
        {"metadata.stats-dense-store": "false", "fields.v.stats-mode": "none"},
        {"metadata.stats-keep-first-n-columns": "1"},
    ],
    ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default",
)
def test_pruning_with_truncated_or_missing_stats_keeps_every_match(catalog, options):
    schema = pa.schema([("id", pa.int64()), ("s", pa.string()), ("v", pa.string())])
    t = catalog.create_table("db.t", schema=schema, options=options)
    for i, s in enumerate(LONG):  # one file per value
        t.write_arrow(pa.table({"id": [i], "s": [s], "v": ["\U0010ffff" * 20 + s]}, schema=schema))
    everything = t.to_arrow()
    col = lakestore.col
    for predicate in (
        col("s") == LONG[2],
        col("s") == "k" * 40,
        col("s") > LONG[3],
        col("s") <= LONG[1],
        col("s").isin([LONG[0], LONG[5]]),
        col("v") == "\U0010ffff" * 20 + LONG[4],
        col("v") >= "\U0010ffff" * 19,
        col("s").is_null(),
        col("s").is_not_null() & (col("id") > 2),
    ):
        expected = everything.filter(predicate.to_arrow())
        assert sort_rows(t.to_arrow(filter=predicate), ["id"]) == sort_rows(expected, ["id"]), predicate


def test_pruning_skips_files_by_truncated_stats(catalog):
    schema = pa.schema([("id", pa.int64()), ("s", pa.string())])
    t = catalog.create_table("db.t", schema=schema)
    for i, s in enumerate(["a" * 30, "m" * 30, "z" * 30]):
        t.write_arrow(pa.table({"id": [i], "s": [s]}, schema=schema))
    splits = t.scan(filter=lakestore.col("s") == "m" * 30).plan()
    assert sum(len(s.files) for s in splits) == 1
    assert t.to_arrow(filter=lakestore.col("s") == "m" * 30)["id"].to_pylist() == [1]


# -- Paimon 2.0.0 (Java) and pypaimon 2.1 -----------------------------------------------------------------
JAVA_CASES = [
    {},
    {"metadata.stats-mode": "full"},
    {"metadata.stats-mode": "counts"},
    {"metadata.stats-mode": "none"},
    {"metadata.stats-mode": "truncate(2)"},
    {"metadata.stats-dense-store": "false"},
    {"fields.s.stats-mode": "full", "metadata.stats-keep-first-n-columns": "2"},
    {"metadata.stats-keep-first-n-columns": "0", "fields.ts.stats-mode": "counts"},
]


@pytest.mark.oracle
@pytest.mark.parametrize("version", ["2.0.0", "1.4.2"])
@pytest.mark.parametrize("options", JAVA_CASES, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default")
def test_append_file_stats_are_byte_identical_to_paimon_java(catalog, options, version):
    """Paimon 2.0.0 and 1.4.2 write the same statistics, except that 1.4.2 keeps no min/max of
    BINARY columns (its parquet statistics extractor has no case for them); lakestore follows 2.0."""
    from tests.oracle.java_driver import java_oracle

    java = java_oracle(version)
    warehouse = catalog.warehouse
    java.create_table(warehouse, "db.java", SCHEMA, options=options)
    java.write(warehouse, "db.java", rows())
    ours = catalog.create_table("db.ours", schema=SCHEMA, options=options)
    ours.write_arrow(rows())
    (theirs,) = files(catalog.get_table("db.java"))
    (mine,) = files(ours)
    if version == "1.4.2" and options.get("metadata.stats-mode") == "full":
        java_stats, our_stats = decoded(catalog.get_table("db.java"), theirs), decoded(ours, mine)
        assert java_stats["min"]["b"] is None and java_stats["max"]["b"] is None
        assert our_stats["min"]["b"] == b"\x01" * 3
        for side in ("min", "max"):
            java_stats[side].pop("b"), our_stats[side].pop("b")
        assert our_stats == java_stats
    else:
        assert raw(mine) == raw(theirs)
    # and Java reads what lakestore wrote
    got = java.read(warehouse, "db.ours")
    assert sort_rows(got.select(["id", "s", "d"]), ["id"]) == sort_rows(rows().select(["id", "s", "d"]), ["id"])


@pytest.mark.oracle
@pytest.mark.parametrize("options", [{}, {"metadata.stats-mode": "full"}, {"metadata.stats-mode.per.level": "5:counts"}], ids=str)
def test_compacted_primary_key_file_stats_are_byte_identical_to_paimon_java(catalog, options):
    from tests.oracle.java_driver import java_oracle

    java = java_oracle()
    warehouse = catalog.warehouse
    schema = pa.schema([pa.field("k", pa.string(), nullable=False), ("id", pa.int64()), ("s", pa.string()), ("d", pa.float64())])
    data = pa.table(
        {"k": ["k" * 130 + "1", "k" * 5], "id": [1, None], "s": ["s" * 40, "t"], "d": [None, 2.5]},
        schema=schema,
    )
    table_options = {"bucket": "1", **options}
    java.create_table(warehouse, "db.java", schema, primary_keys=["k"], options=table_options)
    java.write(warehouse, "db.java", data)
    java.write(warehouse, "db.java", data.slice(1))  # two runs, so that compaction merges them
    java.compact(warehouse, "db.java")
    ours = catalog.create_table("db.ours", schema=schema, primary_keys=["k"], options=table_options)
    ours.write_arrow(data)
    ours.write_arrow(data.slice(1))
    ours.compact(full=True)
    theirs = [f for f in files(catalog.get_table("db.java")) if f.level > 0]
    mine = [f for f in files(ours) if f.level > 0]
    assert len(theirs) == len(mine) == 1
    assert raw(mine[0]) == raw(theirs[0])
    assert raw(mine[0], key=True) == raw(theirs[0], key=True)  # key statistics: truncate(128)
    assert decoded(ours, mine[0], key=True)["max"]["k"] == "k" * 127 + "l"


@pytest.mark.oracle
@needs_oracle
@pytest.mark.parametrize(
    "options",
    [{}, {"metadata.stats-mode": "counts"}, {"metadata.stats-dense-store": "false"}, {"metadata.stats-mode": "none"}],
    ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default",
)
def test_pypaimon_reads_tables_with_each_stats_layout(catalog, options):
    t = catalog.create_table("db.t", schema=SCHEMA, options=options)
    t.write_arrow(rows())
    got = oracle_read(t.path)
    assert sort_rows(got.select(["id", "s", "b", "d"]), ["id"]) == sort_rows(rows().select(["id", "s", "b", "d"]), ["id"])


@pytest.mark.oracle
@needs_oracle
def test_full_mode_stats_are_byte_identical_to_pypaimon_and_its_tables_prune_correctly(catalog):
    """pypaimon 2.1 writes value statistics only in ``full`` mode (its default is ``none``: an
    empty ``_VALUE_STATS_COLS``, where Paimon Java's is truncate(16)); in ``full`` mode lakestore
    writes the same bytes. lakestore's filtered reads of pypaimon's tables return every match."""
    from tests.oracle.driver import oracle_write

    schema = SCHEMA.remove(SCHEMA.get_field_index("l"))  # flat columns only
    data = rows().drop_columns(["l"])
    warehouse = catalog.warehouse
    for name, options in (("full", {"metadata.stats-mode": "full"}), ("default", {})):
        oracle_write(warehouse, f"db.py_{name}", data, options=options)
        ours = catalog.create_table(f"db.ours_{name}", schema=schema, options=options)
        ours.write_arrow(data)
        (theirs,) = files(catalog.get_table(f"db.py_{name}"))
        (mine,) = files(ours)
        if name == "full":
            assert raw(mine) == raw(theirs)
        else:
            assert theirs.value_stats_cols == () and mine.value_stats_cols is None
        table = catalog.get_table(f"db.py_{name}")
        for predicate in (lakestore.col("s") == "a" * 20 + "z", lakestore.col("id") > 1, lakestore.col("d").is_null()):
            expected = data.filter(predicate.to_arrow())
            assert sort_rows(table.to_arrow(filter=predicate), ["id"]) == sort_rows(expected, ["id"])


@pytest.mark.oracle
@pytest.mark.parametrize(
    "options",
    [{}, {"metadata.stats-mode": "truncate(3)"}, {"metadata.stats-mode": "counts"}, {"metadata.stats-dense-store": "false"}],
    ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default",
)
def test_lakestore_prunes_paimon_java_files_by_their_statistics_without_losing_rows(catalog, options):
    from tests.oracle.java_driver import java_oracle

    java = java_oracle()
    schema = pa.schema([("id", pa.int64()), ("s", pa.string()), ("l", pa.list_(pa.int32()))])
    for i, s in enumerate(LONG):  # one file per value
        if i == 0:
            java.create_table(catalog.warehouse, "db.j", schema, options=options)
        java.write(catalog.warehouse, "db.j", pa.table({"id": [i], "s": [s], "l": [[i]]}, schema=schema))
    table = catalog.get_table("db.j")
    everything = table.to_arrow()
    assert everything.num_rows == len(LONG)
    col = lakestore.col
    for predicate in (col("s") == LONG[2], col("s") > LONG[3], col("s") == "k" * 40, col("id") >= 4, col("s").is_null()):
        expected = everything.filter(predicate.to_arrow())
        assert sort_rows(table.to_arrow(filter=predicate), ["id"]) == sort_rows(expected, ["id"]), predicate
    planned = sum(len(split.files) for split in table.scan(filter=col("id") == 4).plan())
    assert planned == (len(LONG) if options.get("metadata.stats-mode") == "counts" else 1)


def test_file_compression_per_level(catalog):
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    options = {"bucket": "1", "file.compression.per.level": "0:snappy,5:gzip", "file.compression": "lz4"}
    t = catalog.create_table("db.t", schema=schema, primary_keys=["id"], options=options)
    for v in ("a", "b"):
        t.write_arrow(pa.table({"id": [1, 2], "v": [v, v]}, schema=schema))

    def codecs() -> dict[int, set[str]]:
        out: dict[int, set[str]] = {}
        for f in files(t):
            path = next(Path(t.path).rglob(f.file_name))
            out.setdefault(f.level, set()).add(pq.ParquetFile(path).metadata.row_group(0).column(0).compression)
        return out

    assert codecs() == {0: {"SNAPPY"}}
    t.compact(full=True)
    assert codecs() == {5: {"GZIP"}}
    assert sorted(t.to_arrow()["v"].to_pylist()) == ["b", "b"]
    appends = catalog.create_table("db.a", schema=schema, options={"file.compression.per.level": "0:snappy"})
    appends.write_arrow(pa.table({"id": [1], "v": ["x"]}, schema=schema))
    path = next(Path(appends.path).rglob("*.parquet"))
    assert pq.ParquetFile(path).metadata.row_group(0).column(0).compression == "ZSTD"  # per level: primary-key files only


@pytest.mark.oracle
@pytest.mark.parametrize("compression", ["zstd", "lz4", "lz4_raw", "gzip", "none"])
def test_paimon_java_reads_each_codec_lakestore_writes(catalog, compression):
    """(snappy is left out: the oracle's classpath has no snappy-java, which Flink/Spark deployments provide.)"""
    from tests.oracle.java_driver import java_oracle

    java = java_oracle()
    t = catalog.create_table("db.t", schema=SCHEMA, options={"file.compression": compression, "file.compression.zstd-level": "3"})
    t.write_arrow(rows())
    got = java.read(catalog.warehouse, "db.t")
    assert sort_rows(got.select(["id", "s", "d"]), ["id"]) == sort_rows(rows().select(["id", "s", "d"]), ["id"])
