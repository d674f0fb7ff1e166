"""Smoke tests of the oracle drivers: pypaimon writes and reads back (tests/oracle/driver.py);
Paimon Java 2.0.0 and 1.4.2 (tests/oracle/java_driver.py) write and read back every column type
the JSON encoding carries, and answer the other operations."""

import datetime
import json
import math
from decimal import Decimal

import pyarrow as pa
import pytest

from tests.oracle.driver import oracle_available, oracle_read, oracle_snapshot, oracle_write
from tests.oracle.java_driver import arrow_type, java_oracle

pypaimon_only = pytest.mark.skipif(not oracle_available(), reason="oracle venv not available")


def _data():
    return pa.table(
        {
            "dt": pa.array(["2024-01-01", "2024-01-01", "2024-01-02"]),
            "id": pa.array([1, 2, 3], pa.int64()),
            "v": pa.array([1.5, None, 3.5]),
        }
    )


@pypaimon_only
@pytest.mark.parametrize("native", [False, True])
def test_pk_roundtrip(tmp_path, native):
    info = oracle_write(tmp_path, "db.t", _data(), primary_keys=("dt", "id"), partition_keys=("dt",), options={"bucket": 2}, native=native)
    assert info["snapshot_id"] == 1
    got = oracle_read(tmp_path / "db.db" / "t", native=native)
    assert got.column_names == ["dt", "id", "v"]
    assert sorted(got.to_pylist(), key=lambda r: r["id"]) == _data().to_pylist()
    snap = oracle_snapshot(tmp_path / "db.db" / "t")
    assert snap["commitKind"] == "APPEND"
    assert snap["commitIdentifier"] == 9223372036854775807


@pypaimon_only
def test_append_roundtrip_and_time_travel(tmp_path):
    oracle_write(tmp_path, "db.a", _data())
    oracle_write(tmp_path, "db.a", _data())
    assert oracle_read(tmp_path / "db.db" / "a").num_rows == 6
    assert oracle_read(tmp_path / "db.db" / "a", snapshot_id=1).num_rows == 3


@pypaimon_only
def test_pk_upsert_dedup(tmp_path):
    oracle_write(tmp_path, "db.t", _data(), primary_keys=("dt", "id"), partition_keys=("dt",), options={"bucket": 2})
    upd = pa.table({"dt": ["2024-01-01"], "id": pa.array([2], pa.int64()), "v": [9.0]})
    oracle_write(tmp_path, "db.t", upd, primary_keys=("dt", "id"), partition_keys=("dt",), options={"bucket": 2})
    got = {r["id"]: r["v"] for r in oracle_read(tmp_path / "db.db" / "t").to_pylist()}
    assert got == {1: 1.5, 2: 9.0, 3: 3.5}


# -- Paimon Java 2.0.0 / 1.4.2 -------------------------------------------------------------------

ROW = pa.struct([pa.field("a", pa.int32()), pa.field("b", pa.string())])
ALL_TYPES = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("bool", pa.bool_()),
        ("i8", pa.int8()),
        ("i16", pa.int16()),
        ("i32", pa.int32()),
        ("f32", pa.float32()),
        ("f64", pa.float64()),
        ("s", pa.string()),
        ("bin", pa.binary()),
        ("dec", pa.decimal128(10, 2)),
        ("wide", pa.decimal128(38, 10)),
        ("date", pa.date32()),
        ("time", pa.time32("ms")),
        ("ts3", pa.timestamp("ms")),
        ("ts6", pa.timestamp("us")),
        ("ts9", pa.timestamp("ns")),
        ("ltz", pa.timestamp("us", tz="UTC")),
        ("arr", pa.list_(pa.int32())),
        ("strs", pa.list_(pa.field("item", pa.string(), nullable=False))),
        ("m", pa.map_(pa.string(), pa.int64())),
        ("r", ROW),
        ("rows", pa.list_(ROW)),
        ("nested", pa.map_(pa.int32(), pa.list_(ROW))),
    ]
)
VALUES = [
    {
        "id": 1,
        "bool": True,
        "i8": -128,
        "i16": 32767,
        "i32": -(2**31),
        "f32": 0.1,
        "f64": math.inf,
        "s": 'h\u00e9llo "q" \n',
        "bin": b"\x00\xffbytes",
        "dec": Decimal("-12345678.91"),
        "wide": Decimal("1234567890123456789012345678.0123456789"),
        "date": datetime.date(1969, 12, 31),
        "time": datetime.time(23, 59, 59, 999000),
        "ts3": datetime.datetime(1960, 1, 1, 0, 0, 0, 1000),
        "ts6": datetime.datetime(1969, 12, 31, 23, 59, 59, 999999),
        "ts9": pa.scalar(-1, pa.timestamp("ns")).as_py(),
        "ltz": datetime.datetime(2024, 2, 29, 12, 0, 0, 1, tzinfo=datetime.UTC),
        "arr": [1, None, 3],
        "strs": [],
        "m": [("x", 1), ("y", None)],
        "r": {"a": None, "b": "rb"},
        "rows": [{"a": 1, "b": None}, None],
        "nested": [(7, [{"a": 2, "b": "n"}])],
    },
    {name: None for name in ALL_TYPES.names} | {"id": 2},
    {
        "id": 3,
        "bool": False,
        "i8": 0,
        "i16": -1,
        "i32": 2**31 - 1,
        "f32": -math.inf,
        "f64": -0.5,
        "s": "",
        "bin": b"",
        "dec": Decimal("0.00"),
        "wide": Decimal("-0.0000000001"),
        "date": datetime.date(2262, 4, 11),
        "time": datetime.time(0, 0),
        "ts3": datetime.datetime(2024, 1, 1, 0, 0, 0, 123000),
        "ts6": datetime.datetime(2024, 1, 1, 0, 0, 0, 123456),
        "ts9": pa.scalar(1_704_067_200_123_456_789, pa.timestamp("ns")).as_py(),
        "ltz": datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC),
        "arr": [],
        "strs": ["a", "b"],
        "m": [],
        "r": None,
        "rows": [],
        "nested": None,
    },
]


def all_types() -> pa.Table:
    return pa.Table.from_pylist(VALUES, schema=ALL_TYPES)


@pytest.mark.oracle
@pytest.mark.parametrize("version", ["2.0.0", "1.4.2"])
@pytest.mark.parametrize("primary_keys", [["id"], []], ids=["pk", "append"])
def test_java_round_trips_every_type(tmp_path, version, primary_keys):
    java = java_oracle(version)
    java.create_table(tmp_path, "db.t", ALL_TYPES, primary_keys=primary_keys, options={"bucket": "1"} if primary_keys else {})
    assert java.write(tmp_path, "db.t", all_types()) == 1
    got = java.read(tmp_path, "db.t")
    assert got.schema == ALL_TYPES  # NOT NULL kept, nested nullability kept
    assert sorted(got.to_pylist(), key=lambda r: r["id"]) == all_types().to_pylist()
    projected = java.read(tmp_path, "db.t", projection=["ts9", "id"])
    assert projected.column_names == ["ts9", "id"]
    assert sorted(projected.to_pylist(), key=lambda r: r["id"]) == all_types().select(["ts9", "id"]).to_pylist()


@pytest.mark.oracle
@pytest.mark.parametrize("version", ["2.0.0", "1.4.2"])
def test_java_operations(tmp_path, version):
    java = java_oracle(version)
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    java.create_table(tmp_path, "db.t", schema, primary_keys=["id"], options={"bucket": "2", "changelog-producer": "input"})
    java.write(tmp_path, "db.t", pa.table({"id": [1, 2], "v": ["a", "b"]}, schema=schema))
    java.write(tmp_path, "db.t", pa.table({"id": [2], "v": ["c"]}, schema=schema))
    changes = java.changes(tmp_path, "db.t", 1, 2)
    assert changes.column_names == ["rowkind", "id", "v"] and changes.to_pylist() == [{"rowkind": "+I", "id": 2, "v": "c"}]
    assert java.read(tmp_path, "db.t", options={"scan.snapshot-id": 1}).num_rows == 2
    # streaming commits: a user's identifier lands once
    for _ in range(2):
        java.write(tmp_path, "db.t", pa.table({"id": [3], "v": ["s"]}, schema=schema), commit_user="u1", commit_identifier=5)
    snapshots = java.snapshots(tmp_path, "db.t")
    assert [s["commit_kind"] for s in snapshots] == ["APPEND"] * 3
    assert snapshots[-1]["commit_user"] == "u1" and snapshots[-1]["commit_identifier"] == 5
    doc = json.loads(java.snapshot_json(tmp_path, "db.t", 3))
    assert doc["id"] == 3 and doc["commitUser"] == "u1"
    java.create_tag(tmp_path, "db.t", "t1", 1)
    java.alter(tmp_path, "db.t", [{"op": "add_column", "name": "n", "type": pa.list_(pa.int32())}])
    java.write(tmp_path, "db.t", pa.table({"id": [4], "v": ["n"], "n": [[1]]}))
    assert java.read(tmp_path, "db.t").column_names == ["id", "v", "n"]
    assert java.compact(tmp_path, "db.t") == 5
    assert java.expire(tmp_path, "db.t", retain_min=1, retain_max=1) == 4
    java.rollback(tmp_path, "db.t", tag="t1")
    assert sorted(java.read(tmp_path, "db.t", options={"scan.tag-name": "t1"})["id"].to_pylist()) == [1, 2]
    keys = java.option_keys()
    assert keys["bucket"]["default"] is not None and "merge-engine" in keys
    assert len(java.dv_bitmaps([[1, 2, 3]])[0]) > 4


def test_paimon_type_strings_parse():
    assert arrow_type("BIGINT NOT NULL") == (pa.int64(), False)
    assert arrow_type("TIMESTAMP(9) WITH LOCAL TIME ZONE") == (pa.timestamp("ns", tz="UTC"), True)
    t, nullable = arrow_type("ROW<`a b` INT NOT NULL 'doc', `c` MAP<STRING NOT NULL, ARRAY<DECIMAL(38, 2)>>> NOT NULL")
    assert not nullable
    assert t == pa.struct([pa.field("a b", pa.int32(), nullable=False), ("c", pa.map_(pa.string(), pa.list_(pa.decimal128(38, 2))))])
