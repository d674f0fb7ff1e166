"""Bloom-filter file indexes both ways against Paimon 2.0.0 Java: Java's indexes (embedded in the
manifest and in ``.index`` files) read and used by lakestore's scans; lakestore's indexes byte for
byte Java's for the same rows, read by Java's scans and readers to skip lakestore's files; and
lakestore's bitmap and bsi indexes read by Java's scans and readers to skip lakestore's files."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import subprocess
from pathlib import Path

import pyarrow as pa
import pytest

import lakestore
from lakestore import col
from lakestore.format.fileindex.format import read_file_index
from lakestore.meta.manifest import DataFileMeta
from tests.interop.conftest import same_rows

pytestmark = pytest.mark.oracle

ROOT = Path(__file__).resolve().parents[2]
JARS = ROOT / ".jars"
SCAN_PROGRAM = Path(__file__).with_name("PaimonFileIndexScan.java")

SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("i", pa.int32()),
        ("sm", pa.int16()),
        ("f", pa.float32()),
        ("d", pa.float64()),
        ("s", pa.string()),
        ("b", pa.binary()),
        ("day", pa.date32()),
        ("ts3", pa.timestamp("ms")),
        ("ts6", pa.timestamp("us")),
    ]
)
INDEXED = "i,sm,f,d,s,b,day,ts3,ts6"
BATCHES = 3


def _batch(k: int) -> pa.Table:
    """Rows k, k+3, k+6...: every file spans (nearly) the whole range, so statistics keep them all."""
    ids = list(range(k, 90, BATCHES))
    base = dt.datetime(2024, 1, 1, 12, 0, 0)
    return pa.table(
        {
            "id": ids,
            "i": [i * 7 for i in ids],
            "sm": [i - 40 for i in ids],
            "f": [i / 4 for i in ids],
            "d": [i * 1.5 - 3 for i in ids],
            "s": [f"v{i:03d}" if i % 11 else None for i in ids],
            "b": [bytes([i, 255 - i]) * (i % 5) for i in ids],
            "day": [dt.date(2023, 12, 1) + dt.timedelta(days=i) for i in ids],
            "ts3": [base + dt.timedelta(milliseconds=1001 * i) for i in ids],
            "ts6": [base + dt.timedelta(microseconds=123_457 * i) for i in ids],
        },
        schema=SCHEMA,
    )


def _options(threshold: str) -> dict[str, str]:
    # Paimon has no type-wide index options ("file-index.bloom-filter.items" is ignored): per column
    sized = {f"file-index.bloom-filter.{c}.items": "40" for c in INDEXED.split(",")}
    sized |= {f"file-index.bloom-filter.{c}.fpp": "0.001" for c in INDEXED.split(",") if c != "sm"}  # sm: default 0.1
    return {
        "bucket": "-1",
        "file-index.bloom-filter.columns": INDEXED,
        **sized,
        "file-index.in-manifest-threshold": threshold,
    }


def _files(table: lakestore.Table) -> list[DataFileMeta]:
    files = [f for s in table.scan().plan() for f in s.files]
    return sorted(files, key=lambda f: f.min_sequence_number)


def _index_bytes(table: lakestore.Table, f: DataFileMeta) -> bytes:
    if f.embedded_file_index is not None:
        return f.embedded_file_index
    (name,) = f.extra_files
    return table.store.file_io.read_bytes(f"{table.path}/bucket-0/{name}")


def _java_scans(warehouse: Path, *queries: str) -> dict[str, dict[str, int]]:
    if shutil.which("java") is None or not list((JARS / "paimon-2.0.0").glob("*.jar")):
        pytest.skip("Paimon 2.0.0 jars missing (bash scripts/install_jars.sh)")
    classpath = f"{JARS / 'paimon-2.0.0'}/*:{JARS / 'lib'}/*"
    done = subprocess.run(
        ["java", "-cp", classpath, str(SCAN_PROGRAM), str(warehouse), *queries], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-4000:]
    answers = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return {a["query"]: a for a in answers}


@pytest.mark.parametrize("threshold", ["100 kb", "1 b"], ids=["embedded", "index-file"])
def test_java_indexes_read_and_matched_byte_for_byte(java, warehouse, catalog, threshold: str) -> None:
    java.create_table(warehouse, "db.j", SCHEMA, options=_options(threshold))
    for k in range(BATCHES):
        java.write(warehouse, "db.j", _batch(k))
    theirs = catalog.get_table("db.j")
    expected = pa.concat_tables([_batch(k) for k in range(BATCHES)])
    same_rows(theirs.to_arrow(), expected, ["id"])

    java_files = _files(theirs)
    assert len(java_files) == BATCHES
    if threshold == "1 b":
        assert all(f.embedded_file_index is None and f.extra_files == (f.file_name + ".index",) for f in java_files)
    else:
        assert all(f.embedded_file_index is not None and not f.extra_files for f in java_files)
    head = read_file_index(_index_bytes(theirs, java_files[0]))
    assert sorted(head) == sorted(INDEXED.split(",")) and all(set(t) == {"bloom-filter"} for t in head.values())

    # lakestore skips Java's files: one file holds the value, the statistics keep all three
    for predicate, rows in (
        (col("s") == "v041", [41]),
        (col("i") == 7 * 41, [41]),
        (col("b") == bytes([41, 214]), [41]),
        (col("day") == dt.date(2023, 12, 1) + dt.timedelta(days=41), [41]),
        (col("ts6") == dt.datetime(2024, 1, 1, 12) + dt.timedelta(microseconds=123_457 * 41), [41]),
        (col("d") == 41 * 1.5 - 3, [41]),
    ):
        plan = theirs.scan().filter(predicate).plan()
        assert plan.files_skipped_by_index == BATCHES - 1, predicate
        assert sorted(theirs.scan().filter(predicate).to_arrow().column("id").to_pylist()) == rows

    # the same rows written by lakestore: the same index bytes, file by file
    ours = catalog.create_table("db.l", schema=SCHEMA, options=_options(threshold))
    for k in range(BATCHES):
        ours.write_arrow(_batch(k))
    our_files = _files(ours)
    assert [f.extra_files != () for f in our_files] == [f.extra_files != () for f in java_files]
    for mine, java_file in zip(our_files, java_files, strict=True):
        assert _index_bytes(ours, mine) == _index_bytes(theirs, java_file)


def test_java_skips_lakestore_files(java, warehouse, catalog) -> None:
    schema = pa.schema([("id", pa.int64()), ("s", pa.string())])
    sized = {"file-index.bloom-filter.s.items": "200", "file-index.bloom-filter.id.items": "200"}
    tables = {
        "emb": {"file-index.bloom-filter.columns": "s,id", **sized},
        "sep": {"file-index.bloom-filter.columns": "s,id", **sized, "file-index.in-manifest-threshold": "1 b"},
        "none": {},
    }
    for name, options in tables.items():
        table = catalog.create_table(f"db.{name}", schema=schema, options=options)
        for k in range(4):
            table.write_arrow(pa.table({"id": list(range(k, 400, 4)), "s": [f"v{i:03d}" for i in range(k, 400, 4)]}))
        rows = java.read(warehouse, f"db.{name}")
        same_rows(rows, table.to_arrow(), ["id"])
        assert rows.num_rows == 400
    # primary-key tables: Paimon consults file indexes only with deletion vectors (files above level 0)
    pk_schema = pa.schema([pa.field("k", pa.int64(), nullable=False), ("s", pa.string())])
    skipped = {}
    for dv in ("true", "false"):
        options = {
            "bucket": "1",
            "deletion-vectors.enabled": dv,
            "file-index.bloom-filter.columns": "s",
            "file-index.bloom-filter.s.items": "100",
        }
        pk = catalog.create_table(f"db.pk_{dv}", schema=pk_schema, primary_keys=["k"], options=options)
        for k in range(3):
            pk.write_arrow(pa.table({"k": list(range(k, 60, 3)), "s": [f"v{i:02d}" for i in range(k, 60, 3)]}))
        skipped[dv] = (
            len([f for s in pk.scan().plan() for f in s.files]),
            pk.scan().filter(col("s") == "v31").plan().files_skipped_by_index,
        )
    queries = [f"db.{n}|{q}" for n in tables for q in ("s=v201", "s=v1505", "id=201")] + ["db.pk_true|s=v31", "db.pk_false|s=v31"]
    answers = _java_scans(warehouse, *queries)
    files, by_index = skipped["true"]
    assert by_index == files - 1 >= 1 and answers["db.pk_true|s=v31"]["files"] == files - by_index  # Java skips as lakestore
    files, by_index = skipped["false"]
    assert by_index == 0 and answers["db.pk_false|s=v31"]["files"] == files
    # embedded: Java's scan plans only the file that may hold the value
    assert answers["db.emb|s=v201"]["files"] == 1
    assert answers["db.emb|s=v1505"]["files"] == 0
    assert answers["db.emb|id=201"]["files"] == 1
    # index files: Java plans every file, its readers skip three of them by their index file
    assert answers["db.sep|s=v201"]["files"] == 4 and answers["db.sep|s=v201"]["skipped_by_index_file"] == 3
    assert answers["db.sep|s=v1505"]["skipped_by_index_file"] == 4
    assert answers["db.sep|id=201"]["skipped_by_index_file"] == 3
    # no index: nothing skipped
    assert answers["db.none|s=v201"]["files"] == 4 and answers["db.none|s=v201"]["skipped_by_index_file"] == 0
    for name in tables:
        assert catalog.get_table(f"db.{name}").scan().filter(col("s") == "v201").to_arrow().to_pylist() == [{"id": 201, "s": "v201"}]


def test_java_index_of_a_type_lakestore_does_not_write_is_passed_over(java, warehouse, catalog) -> None:
    schema = pa.schema([("id", pa.int64()), ("s", pa.string())])
    options = {
        "file-index.range-bitmap.columns": "id,s",
        "file-index.bloom-filter.columns": "s",
        "file-index.bloom-filter.s.items": "100",
        "file-index.in-manifest-threshold": "1 mb",
    }
    java.create_table(warehouse, "db.mixed", schema, options=options)
    for k in range(3):
        java.write(warehouse, "db.mixed", pa.table({"id": list(range(k, 60, 3)), "s": [f"v{i:02d}" for i in range(k, 60, 3)]}))
    table = catalog.get_table("db.mixed")
    head = read_file_index(_files(table)[0].embedded_file_index or b"")
    assert head["s"].keys() == {"range-bitmap", "bloom-filter"} and head["id"].keys() == {"range-bitmap"}
    assert table.to_arrow().num_rows == 60
    assert table.scan().filter(col("id") == 31).to_arrow().to_pylist() == [{"id": 31, "s": "v31"}]
    plan = table.scan().filter(col("s") == "v31").plan()
    assert plan.files_skipped_by_index == 2  # by the bloom filter
    assert table.scan().filter(col("s") == "v31").to_arrow().to_pylist() == [{"id": 31, "s": "v31"}]
    with pytest.raises(lakestore.UnsupportedTableError, match="range-bitmap"):
        table.write_arrow(pa.table({"id": [100], "s": ["x"]}))


def test_java_skips_lakestore_bitmap_and_bsi_files(java, warehouse, catalog) -> None:
    """Bitmap (strings, ints) and bsi (longs, shorts with negatives) indexes lakestore writes,
    ``id`` with both: Java reads the rows and its scan (embedded) or readers (index files) skip
    the files lakestore's plan skips. Every file's min/max covers every queried value."""
    schema = pa.schema([("id", pa.int64()), ("s", pa.string()), ("i", pa.int32()), ("sm", pa.int16())])
    indexes = {"file-index.bitmap.columns": "s,i,id", "file-index.bsi.columns": "id,sm"}
    tables = {"bemb": "100 kb", "bsep": "1 b"}
    for name, threshold in tables.items():
        table = catalog.create_table(f"db.{name}", schema=schema, options={**indexes, "file-index.in-manifest-threshold": threshold})
        for k in range(3):
            ids = list(range(k, 30, 3))
            table.write_arrow(
                pa.table(
                    {"id": ids, "s": [f"v{i:02d}" for i in ids], "i": [i * 7 for i in ids], "sm": [i - 15 for i in ids]}, schema=schema
                )
            )
        files = _files(table)
        assert len(files) == 3
        if threshold == "1 b":
            assert all(f.embedded_file_index is None and f.extra_files == (f.file_name + ".index",) for f in files)
        else:
            assert all(f.embedded_file_index is not None and not f.extra_files for f in files)
        head = read_file_index(_index_bytes(table, files[0]))
        assert {c: set(t) for c, t in head.items()} == {"s": {"bitmap"}, "i": {"bitmap"}, "id": {"bitmap", "bsi"}, "sm": {"bsi"}}
        rows = java.read(warehouse, f"db.{name}")
        same_rows(rows, table.to_arrow(), ["id"])
        assert rows.num_rows == 30
        # lakestore's own plan: the value in one file (row 13), or in none
        for predicate, skipped in (
            (col("s") == "v13", 2),
            (col("i") == 91, 2),
            (col("id") == 13, 2),
            (col("sm") == -2, 2),
            (col("s") == "v135", 3),
            (col("i") == 92, 3),
            (col("sm") == -1, 2),
        ):
            assert table.scan().filter(predicate).plan().files_skipped_by_index == skipped, (name, predicate)
    queries = ("s=v13", "i=91", "id=13", "sm=-2", "s=v135", "i=92")
    answers = _java_scans(warehouse, *[f"db.{n}|{q}" for n in tables for q in queries])
    for q in queries:
        found = 0 if q in ("s=v135", "i=92") else 1
        # embedded: Java's scan plans only the file holding the value; its reader returns that row
        assert answers[f"db.bemb|{q}"] == {"query": f"db.bemb|{q}", "files": found, "skipped_by_index_file": 0, "rows": found}
        # index files: Java plans all three files, its readers skip those lakestore's plan skips
        sep = answers[f"db.bsep|{q}"]
        assert (sep["files"], sep["skipped_by_index_file"], sep["rows"]) == (3, 3 - found, found), q
