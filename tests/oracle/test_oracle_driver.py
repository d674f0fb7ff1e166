"""Smoke test of the oracle driver: pypaimon writes, pypaimon reads back."""

import pyarrow as pa
import pytest

from tests.oracle.driver import oracle_available, oracle_read, oracle_snapshot, oracle_write

pytestmark = pytest.mark.skipif(not oracle_available(), reason="oracle venv not available")


def _data():
    return pa.table(
        {
            "dt": pa.array(["2024-01-01", "2024-01-01", "2024-01-02"]),
            "id": pa.array([1, 2, 3], pa.int64()),
            "v": pa.array([1.5, None, 3.5]),
        }
    )


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


def test_append_roundtrip_and_time_travel(tmp_path):
    oracle_write(tmp_path, "db.a", _data())
    oracle_write(tmp_path, "db.a", _data())
    assert oracle_read(tmp_path / "db.db" / "a").num_rows == 6
    assert oracle_read(tmp_path / "db.db" / "a", snapshot_id=1).num_rows == 3


def test_pk_upsert_dedup(tmp_path):
    oracle_write(tmp_path, "db.t", _data(), primary_keys=("dt", "id"), partition_keys=("dt",), options={"bucket": 2})
    upd = pa.table({"dt": ["2024-01-01"], "id": pa.array([2], pa.int64()), "v": [9.0]})
    oracle_write(tmp_path, "db.t", upd, primary_keys=("dt", "id"), partition_keys=("dt",), options={"bucket": 2})
    got = {r["id"]: r["v"] for r in oracle_read(tmp_path / "db.db" / "t").to_pylist()}
    assert got == {1: 1.5, 2: 9.0, 3: 3.5}
