"""Interop both ways with the oracles: pypaimon 2.1.0 (pure Python), pypaimon with its native
(Rust) read/write paths, and pypaimon-rust driven directly (``--rust``: Rust writes AND commits).

Each scenario builds one table and compares whole tables (sorted rows), to keep oracle calls few.
"""

from __future__ import annotations

import datetime as dt
import decimal
import tempfile
from pathlib import Path

import pyarrow as pa
import pytest

import lakestore
from tests._support import sort_rows
from tests.oracle.driver import _read_ipc, _write_ipc, oracle_available, oracle_read, oracle_write, run_cli

pytestmark = [pytest.mark.oracle, pytest.mark.skipif(not oracle_available(), reason="oracle venv not available")]

UTC = dt.UTC
ODD_STRINGS = ["plain", "with space", "a/b", "c:d", "k=v", "50%", "héllo 日本", "2024-01-01 10:00:00", ""]

ALL_TYPES = pa.schema(
    [
        ("id", pa.int64()),
        ("b", pa.bool_()),
        ("i8", pa.int8()),
        ("i16", pa.int16()),
        ("i32", pa.int32()),
        ("f32", pa.float32()),
        ("f64", pa.float64()),
        ("d10", pa.decimal128(10, 2)),
        ("d38", pa.decimal128(38, 10)),
        ("s", pa.string()),
        ("bin", pa.binary()),
        ("day", pa.date32()),
        ("ts3", pa.timestamp("ms")),
        ("ts6", pa.timestamp("us")),
        ("ltz", pa.timestamp("us", tz="UTC")),
    ]
)


def all_types(ids, version=0):
    rows = []
    for i in ids:
        null = (i + version) % 5 == 0  # every value column is null in some rows
        rows.append(
            {
                "id": i,
                "b": None if null else (i + version) % 2 == 0,
                "i8": None if null else (i * 7 + version) % 256 - 128,
                "i16": None if null else i * 300 - 20000 + version,
                "i32": None if null else i * 100_000 - 2**31 + 1 + version,
                "f32": None if null else i * 0.5 + version,
                "f64": None if null else i / 3 + version,
                "d10": None if null else decimal.Decimal(f"{i * 1234 - 50000 + version}.{i % 100:02d}"),
                "d38": None if null else decimal.Decimal(f"{(-1) ** i * (10**27 + i * 99991 + version)}.{i:010d}"),
                "s": None if null else ("x" * (i % 20)) + f"-{i}-{version}",
                "bin": None if null else bytes(range(i % 17)) + bytes([version]),
                "day": None if null else dt.date(1969, 12, 25) + dt.timedelta(days=i * 37 + version),
                "ts3": None if null else dt.datetime(1969, 12, 31, 23, 59, 59) + dt.timedelta(milliseconds=i * 86_400_123 + version),
                "ts6": None if null else dt.datetime(2024, 2, 29, 12, 0, 0) + dt.timedelta(microseconds=i * 3_600_000_007 + version),
                "ltz": None if null else dt.datetime(2000, 1, 1, tzinfo=UTC) + dt.timedelta(microseconds=i * 86_400_000_001 + version),
            }
        )
    return pa.Table.from_pylist(rows, schema=ALL_TYPES)


# -- oracle helpers ------------------------------------------------------------------------------


def oracle_read_rust(table_path) -> pa.Table:
    with tempfile.TemporaryDirectory(prefix="oracle-rread-") as tmp:
        out = Path(tmp) / "out.arrow"
        run_cli("read", "--table-path", Path(table_path).resolve(), "--out", out, "--rust")
        return _read_ipc(out)


def oracle_write_rust(warehouse, identifier, data, *, primary_keys=(), partition_keys=(), options=None):
    import json

    with tempfile.TemporaryDirectory(prefix="oracle-rwrite-") as tmp:
        src = Path(tmp) / "data.arrow"
        _write_ipc(data, src)
        args = ["write", "--warehouse", Path(warehouse).resolve(), "--identifier", identifier, "--data", src, "--rust"]
        if primary_keys:
            args += ["--primary-keys", ",".join(primary_keys)]
        if partition_keys:
            args += ["--partition-keys", ",".join(partition_keys)]
        if options:
            args += ["--options", json.dumps({k: str(v) for k, v in options.items()})]
        return run_cli(*args)


def _normalise(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """The oracle's result in our column order and Arrow types (string vs large_string etc.)."""
    table = table.select(schema.names)
    cols = []
    for f in schema:
        c = table.column(f.name)
        if c.type != f.type:
            if pa.types.is_timestamp(f.type) and pa.types.is_timestamp(c.type) and (c.type.tz is None) != (f.type.tz is None):
                c = (
                    c.cast(pa.timestamp(c.type.unit)).cast(pa.timestamp(f.type.unit, tz=f.type.tz))
                    if c.type.tz
                    else c.cast(pa.timestamp(f.type.unit, tz=f.type.tz))
                )
            else:
                c = c.cast(f.type)
        cols.append(c)
    return pa.Table.from_arrays(cols, names=schema.names)


def assert_tables_equal(got: pa.Table, expected: pa.Table, who: str) -> None:
    got = _normalise(got, expected.schema.remove_metadata())
    g, e = sort_rows(got), sort_rows(expected)
    assert len(g) == len(e), f"{who}: {len(g)} rows, expected {len(e)}"
    for i, (a, b) in enumerate(zip(g, e, strict=False)):
        assert a == b, f"{who}: row {i} differs\n got      {a}\n expected {b}"


def _native_read(path) -> pa.Table:
    table, info = oracle_read(path, native=True, return_info=True)
    assert info["native_used"], f"pypaimon fell back to Python: {info['native_fallback_reasons']}"
    return table


READERS = {
    "pypaimon": lambda p: oracle_read(p),
    "native": _native_read,
    "rust": oracle_read_rust,
}


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    return tmp_path_factory.mktemp("interop")


@pytest.fixture(scope="module")
def catalog(warehouse):
    cat = lakestore.Catalog(str(warehouse))
    cat.create_database("db", exist_ok=True)
    return cat


# -- lakestore writes, oracles read --------------------------------------------------------------


def _pk_all_types(catalog):
    """PK table, every primitive type, int partition, 3 buckets, updates across commits."""
    schema = ALL_TYPES.append(pa.field("p", pa.int32()))
    t = catalog.create_table("db.ls_all_types", schema=schema, partition_keys=["p"], primary_keys=["p", "id"], options={"bucket": "3"})
    first = all_types(range(40)).append_column("p", pa.array([i % 3 - 1 for i in range(40)], pa.int32()))
    second = all_types(range(20, 60), version=1).append_column("p", pa.array([i % 3 - 1 for i in range(20, 60)], pa.int32()))
    t.write_arrow(first)
    t.write_arrow(second)
    return t


def _pk_string_partition_deletes(catalog):
    """PK table partitioned by odd strings, rowkind.field deletes and updates across commits."""
    schema = pa.schema([("p", pa.string()), ("id", pa.int64()), ("v", pa.string()), ("op", pa.string())])
    t = catalog.create_table(
        "db.ls_pk_str", schema=schema, partition_keys=["p"], primary_keys=["p", "id"], options={"bucket": "2", "rowkind.field": "op"}
    )
    n = len(ODD_STRINGS)
    t.write_arrow(
        pa.table(
            {
                "p": [ODD_STRINGS[i % n] for i in range(60)],
                "id": pa.array(range(60), pa.int64()),
                "v": [None if i % 4 == 0 else f"v{i}" for i in range(60)],
                "op": ["+I"] * 60,
            },
            schema=schema,
        )
    )
    ids = list(range(0, 60, 3))
    ops = ["-D" if i % 2 else "+U" for i in ids]
    t.write_arrow(
        pa.table(
            {"p": [ODD_STRINGS[i % n] for i in ids], "id": pa.array(ids, pa.int64()), "v": [f"new{i}" for i in ids], "op": ops},
            schema=schema,
        )
    )
    return t


def _append_null_partitions(catalog):
    """Append table, bucket -1, string partition with null and '' values, two commits."""
    schema = pa.schema([("p", pa.string()), ("id", pa.int64()), ("v", pa.float64())])
    t = catalog.create_table("db.ls_append", schema=schema, partition_keys=["p"])
    vals = ODD_STRINGS + [None]
    for c in range(2):
        t.write_arrow(
            pa.table(
                {
                    "p": [vals[i % len(vals)] for i in range(30)],
                    "id": pa.array(range(c * 30, c * 30 + 30), pa.int64()),
                    "v": [None if i % 6 == 0 else i * 1.5 for i in range(30)],
                },
                schema=schema,
            )
        )
    return t


def _append_fixed_bucket_date(catalog):
    """Append table with fixed buckets (bucket-key), partitioned by date; plus an unpartitioned PK."""
    schema = pa.schema([("day", pa.date32()), ("id", pa.int64()), ("s", pa.string())])
    t = catalog.create_table("db.ls_append_fixed", schema=schema, partition_keys=["day"], options={"bucket": "4", "bucket-key": "id"})
    days = [dt.date(2024, 1, 1), dt.date(1969, 12, 31), None]
    t.write_arrow(
        pa.table(
            {"day": [days[i % 3] for i in range(50)], "id": pa.array(range(50), pa.int64()), "s": [f"s{i}" for i in range(50)]},
            schema=schema,
        )
    )
    return t


def _pk_unpartitioned(catalog):
    schema = pa.schema([("id", pa.int32()), ("name", pa.string()), ("amount", pa.decimal128(38, 10))])
    t = catalog.create_table("db.ls_pk_flat", schema=schema, primary_keys=["id"], options={"bucket": "4"})
    t.write_arrow(
        pa.table(
            {
                "id": pa.array(range(100), pa.int32()),
                "name": [f"n{i}" for i in range(100)],
                "amount": [(decimal.Decimal(i) / 7).quantize(decimal.Decimal("1.0000000000")) for i in range(100)],
            },
            schema=schema,
        ).cast(schema)
    )
    t.write_arrow(pa.table({"id": pa.array(range(0, 100, 2), pa.int32()), "name": [None] * 50, "amount": [None] * 50}, schema=schema))
    return t


LAKESTORE_TABLES = {
    "pk_all_types": _pk_all_types,
    "pk_string_partitions_deletes": _pk_string_partition_deletes,
    "append_null_partitions": _append_null_partitions,
    "append_fixed_bucket_date": _append_fixed_bucket_date,
    "pk_unpartitioned": _pk_unpartitioned,
}


@pytest.fixture(scope="module")
def lakestore_tables(catalog):
    return {name: build(catalog) for name, build in LAKESTORE_TABLES.items()}


@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize("name", list(LAKESTORE_TABLES))
def test_oracles_read_lakestore_tables(lakestore_tables, name, reader):
    t = lakestore_tables[name]
    expected = t.to_arrow()
    assert expected.num_rows > 0
    assert_tables_equal(READERS[reader](t.path), expected, f"{reader} reading {name}")


def test_lakestore_expected_contents(lakestore_tables):
    """Guard: the lakestore side of the comparison is itself right (not just equal)."""
    t = lakestore_tables["pk_string_partitions_deletes"]
    got = {(r["p"], r["id"]): r["v"] for r in t.to_arrow().to_pylist()}
    n = len(ODD_STRINGS)
    expected = {(ODD_STRINGS[i % n], i): (None if i % 4 == 0 else f"v{i}") for i in range(60)}
    for i in range(0, 60, 3):
        if i % 2:
            del expected[(ODD_STRINGS[i % n], i)]
        else:
            expected[(ODD_STRINGS[i % n], i)] = f"new{i}"
    assert got == expected
    ap = lakestore_tables["append_null_partitions"].to_arrow()
    assert ap.num_rows == 60 and ap.column("p").null_count == 6
    flat = {r["id"]: r["name"] for r in lakestore_tables["pk_unpartitioned"].to_arrow().to_pylist()}
    assert len(flat) == 100 and flat[2] is None and flat[3] == "n3"
    types = lakestore_tables["pk_all_types"].to_arrow()
    assert types.num_rows == 60


def test_time_travel_read_by_pypaimon(lakestore_tables):
    t = lakestore_tables["pk_all_types"]
    assert_tables_equal(oracle_read(t.path, snapshot_id=1), t.to_arrow(snapshot_id=1), "pypaimon snapshot 1")


# -- oracles write, lakestore reads --------------------------------------------------------------


def test_lakestore_reads_pypaimon_pk_table(warehouse):
    data = all_types(range(40)).append_column("p", pa.array([ODD_STRINGS[i % len(ODD_STRINGS)] for i in range(40)]))
    opts = {"bucket": "3"}
    oracle_write(warehouse, "db.py_all_types", data, primary_keys=("p", "id"), partition_keys=("p",), options=opts)
    upd = all_types(range(20, 50), version=2).append_column("p", pa.array([ODD_STRINGS[i % len(ODD_STRINGS)] for i in range(20, 50)]))
    oracle_write(warehouse, "db.py_all_types", upd, primary_keys=("p", "id"), partition_keys=("p",), options=opts)
    t = lakestore.Table.from_path(str(warehouse / "db.db" / "py_all_types"))
    got = t.to_arrow()
    expected = {(r["p"], r["id"]): r for r in data.to_pylist()}
    expected.update({(r["p"], r["id"]): r for r in upd.to_pylist()})
    assert_tables_equal(
        got, pa.Table.from_pylist(list(expected.values()), schema=data.schema).select(got.column_names), "lakestore reading pypaimon"
    )
    assert t.schema.primary_keys == ("p", "id") and t.options.bucket == 3


def test_lakestore_reads_pypaimon_rowkind_deletes(warehouse):
    schema = pa.schema([("day", pa.date32()), ("id", pa.int64()), ("v", pa.string()), ("op", pa.string())])
    opts = {"bucket": "2", "rowkind.field": "op"}
    days = [dt.date(2024, 1, 1), dt.date(1970, 1, 1)]
    first = pa.table(
        {
            "day": [days[i % 2] for i in range(20)],
            "id": pa.array(range(20), pa.int64()),
            "v": [f"v{i}" for i in range(20)],
            "op": ["+I"] * 20,
        },
        schema=schema,
    )
    ids = [1, 2, 3, 4, 5, 6]
    second = pa.table(
        {"day": [days[i % 2] for i in ids], "id": pa.array(ids, pa.int64()), "v": ["x"] * 6, "op": ["-D", "+U", "-D", "-U", "+I", "+U"]},
        schema=schema,
    )
    for d in (first, second):
        oracle_write(warehouse, "db.py_deletes", d, primary_keys=("day", "id"), partition_keys=("day",), options=opts)
    t = lakestore.Table.from_path(str(warehouse / "db.db" / "py_deletes"))
    got = {r["id"]: r["v"] for r in t.to_arrow().to_pylist()}
    expected = {i: f"v{i}" for i in range(20)}
    for i, op in zip(ids, ["-D", "+U", "-D", "-U", "+I", "+U"], strict=False):
        if op in ("-D", "-U"):
            expected.pop(i)
        else:
            expected[i] = "x"
    assert got == expected
    assert_tables_equal(oracle_read(t.path), t.to_arrow(), "pypaimon vs lakestore")


def test_lakestore_reads_pypaimon_append_and_native_write(warehouse):
    schema = pa.schema([("p", pa.int32()), ("id", pa.int64()), ("s", pa.string())])
    data = pa.table(
        {
            "p": pa.array([None if i % 5 == 0 else i % 3 for i in range(40)], pa.int32()),
            "id": pa.array(range(40), pa.int64()),
            "s": [None if i % 3 == 0 else f"s{i}" for i in range(40)],
        },
        schema=schema,
    )
    oracle_write(warehouse, "db.py_append", data, partition_keys=("p",))
    info = oracle_write(warehouse, "db.py_append", data, partition_keys=("p",), native=True)
    assert info["native_write_used"], info
    t = lakestore.Table.from_path(str(warehouse / "db.db" / "py_append"))
    assert_tables_equal(
        t.to_arrow(),
        pa.concat_tables([data, data]),
        f"lakestore reading pypaimon append (native write used: {info.get('native_write_used')})",
    )
    # native PK write (Rust data files without _KEY_ columns, Python commit)
    pk_data = all_types(range(30))
    info = oracle_write(warehouse, "db.py_native_pk", pk_data, primary_keys=("id",), options={"bucket": "2"}, native=True)
    assert info["native_write_used"], info
    oracle_write(
        warehouse, "db.py_native_pk", all_types(range(10, 20), version=3), primary_keys=("id",), options={"bucket": "2"}, native=True
    )
    t = lakestore.Table.from_path(str(warehouse / "db.db" / "py_native_pk"))
    expected = {r["id"]: r for r in pk_data.to_pylist()}
    expected.update({r["id"]: r for r in all_types(range(10, 20), version=3).to_pylist()})
    assert_tables_equal(t.to_arrow(), pa.Table.from_pylist(list(expected.values()), schema=ALL_TYPES), "lakestore reading native pk")


def test_lakestore_reads_rust_written_tables(warehouse):
    schema = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.float64())])
    data = pa.table(
        {
            "dt": [ODD_STRINGS[i % 4] for i in range(40)],
            "id": pa.array(range(40), pa.int64()),
            "v": [None if i % 7 == 0 else i * 0.25 for i in range(40)],
        },
        schema=schema,
    )
    oracle_write_rust(warehouse, "db.rs_pk", data, primary_keys=("dt", "id"), partition_keys=("dt",), options={"bucket": "3"})
    upd = data.slice(0, 10).set_column(2, "v", pa.array([99.0] * 10))
    oracle_write_rust(warehouse, "db.rs_pk", upd, primary_keys=("dt", "id"), partition_keys=("dt",), options={"bucket": "3"})
    t = lakestore.Table.from_path(str(warehouse / "db.db" / "rs_pk"))
    expected = {(r["dt"], r["id"]): r for r in data.to_pylist()}
    expected.update({(r["dt"], r["id"]): r for r in upd.to_pylist()})
    assert_tables_equal(t.to_arrow(), pa.Table.from_pylist(list(expected.values()), schema=schema), "lakestore reading rust pk")
    oracle_write_rust(warehouse, "db.rs_append", data, options={"bucket": "2", "bucket-key": "id"})
    t = lakestore.Table.from_path(str(warehouse / "db.db" / "rs_append"))
    assert_tables_equal(t.to_arrow(), data, "lakestore reading rust append")


# -- sequence numbers continue across engines ----------------------------------------------------


def _kv_schema():
    return pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.string())])


def _kv(ids, v, dt_value="d 1/x"):
    return pa.table({"dt": [dt_value] * len(ids), "id": pa.array(ids, pa.int64()), "v": [f"{v}{i}" for i in ids]}, schema=_kv_schema())


def _values(table_or_path) -> dict:
    t = table_or_path if isinstance(table_or_path, pa.Table) else lakestore.Table.from_path(str(table_or_path)).to_arrow()
    return {r["id"]: r["v"] for r in t.to_pylist()}


def test_engines_alternate_writes_newest_row_wins(catalog, warehouse):
    opts = {"bucket": "2"}
    t = catalog.create_table("db.seq", schema=_kv_schema(), partition_keys=["dt"], primary_keys=["dt", "id"], options=opts)
    t.write_arrow(_kv(range(10), "ls1-"))
    oracle_write(warehouse, "db.seq", _kv(range(0, 10, 2), "py-"), primary_keys=("dt", "id"), partition_keys=("dt",), options=opts)
    t.write_arrow(_kv([0, 1], "ls2-"))
    oracle_write_rust(warehouse, "db.seq", _kv([1, 3], "rs-"), primary_keys=("dt", "id"), partition_keys=("dt",), options=opts)
    t.write_arrow(_kv([3, 9], "ls3-"))
    expected = {i: f"ls1-{i}" for i in range(10)}
    expected.update({i: f"py-{i}" for i in range(0, 10, 2)})
    expected.update({0: "ls2-0", 1: "rs-1", 3: "ls3-3", 9: "ls3-9"})
    assert _values(lakestore.Table.from_path(t.path).to_arrow()) == expected
    assert _values(oracle_read(t.path)) == expected
    # sequence numbers are strictly increasing per bucket across all writers
    for s in t.scan().plan():
        ranges = sorted((f.min_sequence_number, f.max_sequence_number) for f in s.files)
        assert all(a[1] < b[0] for a, b in zip(ranges, ranges[1:], strict=False)), ranges
