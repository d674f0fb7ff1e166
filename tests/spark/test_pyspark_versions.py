"""lakestore's Spark path on the other pyspark versions it supports (lakestore.spark.compat):
pyspark 4.0.5 in ``.venv-spark40`` and pyspark 4.1.4 in ``.venv-spark41`` (scripts/install_pyspark.sh;
``LAKESTORE_SPARK40_PYTHON`` / ``LAKESTORE_SPARK41_PYTHON`` override them). The main suite runs
the same path on pyspark 4.3.

One child driver per version (tests/spark/pyspark_child.py, one local[2] session, the repository on
PYTHONPATH) writes, upserts, reads with a filter, merges, compacts and streams small tables this
process made; each result is then checked here against lakestore's own ``Table.to_arrow()`` and
the rows written. What the version lacks must be refused with an error naming the version.
Without a version's venv (or Java) its test skips, and fails under ``LAKESTORE_REQUIRE_ALL=1``.
"""

from __future__ import annotations

import datetime
import decimal
import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import lakestore
from lakestore import col
from tests._support import sort_rows
from tests.oracle.spark_sql_driver import spark40_python

pytestmark = pytest.mark.pyspark_versions

REPO = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).with_name("pyspark_child.py")
SPARK41_ENV = "LAKESTORE_SPARK41_PYTHON"
TIMEOUT_S = 600  # the child takes ~1 minute on an idle 2-core machine; a loaded one is slower

FIXED = pa.schema(
    [
        pa.field("dt", pa.string(), nullable=False),
        pa.field("k", pa.string(), nullable=False),
        pa.field("v", pa.int64()),
        pa.field("ts", pa.timestamp("us", tz="UTC")),
        pa.field("local", pa.timestamp("us")),
        pa.field("amount", pa.decimal128(10, 2)),
        pa.field("note", pa.string()),
    ]
)
DYNAMIC = pa.schema([pa.field("p", pa.string(), nullable=False), pa.field("id", pa.int32(), nullable=False), pa.field("v", pa.int64())])
SINK = pa.schema([pa.field("id", pa.int64()), pa.field("s", pa.string())])
BASE = datetime.datetime(2024, 3, 1, 12, 0, 0)


def versions() -> list[Any]:
    out = [pytest.param("4.0", spark40_python(), id="pyspark-4.0")]
    spark41 = Path(os.environ.get(SPARK41_ENV, REPO / ".venv-spark41" / "bin" / "python"))
    out.append(pytest.param("4.1", spark41, id="pyspark-4.1"))
    return out


def fixed_rows(ids: range, *, offset: int = 0, tag: str = "n") -> list[dict[str, Any]]:
    return [
        {
            "dt": f"2024-01-0{1 + i % 2}",
            "k": f"k{i:04d}",
            "v": i + offset,
            "ts": (BASE + datetime.timedelta(seconds=i, microseconds=i)).replace(tzinfo=datetime.UTC),
            "local": BASE + datetime.timedelta(minutes=i),
            "amount": decimal.Decimal(i) / 100,
            "note": None if i % 5 == 0 else f"{tag}{i}",
        }
        for i in ids
    ]


def _key(row: dict[str, Any]) -> tuple[str, str]:
    return (row["dt"], row["k"])


def _parquet(path: Path, rows: list[dict[str, Any]], schema: pa.Schema) -> None:
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)


def _same(got: list[dict[str, Any]], expected: list[dict[str, Any]], keys: list[str], what: str) -> None:
    g, e = sort_rows(pa.Table.from_pylist(got), keys), sort_rows(pa.Table.from_pylist(expected), keys)
    assert len(g) == len(e), f"{what}: {len(g)} rows != {len(e)} expected"
    for a, b in zip(g, e, strict=True):
        assert a == b, f"{what}: row differs:\n got      {a}\n expected {b}"


def _read(out: Path, step: str) -> list[dict[str, Any]]:
    return pq.read_table(out / f"{step}.parquet").to_pylist()


def _unavailable(python: Path) -> str | None:
    if not python.exists():
        return f"the pyspark venv is missing ({python}); run scripts/install_pyspark.sh"
    if shutil.which("java") is None:
        return "java is not on PATH"
    return None


@pytest.mark.parametrize(("version", "python"), versions())
def test_lakestore_spark_path_on_pyspark(version: str, python: Path, tmp_path: Path) -> None:
    reason = _unavailable(python)
    if reason:
        pytest.skip(reason)
    warehouse, inputs, out = tmp_path / "wh", tmp_path / "in", tmp_path / "out"
    inputs.mkdir()
    out.mkdir()
    catalog = lakestore.Catalog(str(warehouse))
    catalog.create_database("db")
    fixed = catalog.create_table("db.fixed", schema=FIXED, partition_keys=["dt"], primary_keys=["dt", "k"], options={"bucket": "3"})
    dynamic = catalog.create_table(
        "db.dynamic",
        schema=DYNAMIC,
        partition_keys=["p"],
        primary_keys=["p", "id"],
        options={"bucket": "-1", "dynamic-bucket.target-row-num": "60"},
    )
    sink = catalog.create_table("db.sink", schema=SINK)
    first, upsert = fixed_rows(range(240)), fixed_rows(range(120, 360), offset=1000, tag="u")
    changes = fixed_rows(range(300, 420), offset=5000)
    dynamic_rows = [{"p": "ab"[i % 2], "id": i, "v": 2 * i} for i in range(400)]
    _parquet(inputs / "fixed1.parquet", first, FIXED)
    _parquet(inputs / "fixed2.parquet", upsert, FIXED)
    _parquet(inputs / "changes.parquet", changes, FIXED)
    _parquet(inputs / "dynamic.parquet", dynamic_rows, DYNAMIC)
    (inputs / "stream").mkdir()
    stream_rows = [{"id": i, "s": f"s{i}"} for i in range(100)]
    _parquet(inputs / "stream" / "part-0.parquet", stream_rows[:50], SINK)
    _parquet(inputs / "stream" / "part-1.parquet", stream_rows[50:], SINK)

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    env.update({"PYTHONPATH": str(REPO), "TMPDIR": str(tmp_path), "SPARK_LOCAL_IP": "127.0.0.1", "TZ": "UTC"})
    begin = time.perf_counter()
    result = subprocess.run(
        [str(python), str(CHILD), str(warehouse), str(inputs), str(out)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    elapsed = time.perf_counter() - begin
    assert result.returncode == 0, f"the child failed ({result.returncode}):\n{result.stdout[-3000:]}\n{result.stderr[-6000:]}"
    report = json.loads((out / "report.json").read_text())
    print(f"pyspark {report['pyspark']}: child {elapsed:.1f} s (session {report['session_seconds']} s), steps {report['seconds']} s")
    assert report["pyspark"].startswith(version + "."), report["pyspark"]
    steps = report["steps"]
    failed = {name: s["error"] + "\n" + s.get("trace", "") for name, s in steps.items() if not s.get("ok")}
    assert not failed, "steps failed:\n" + "\n".join(f"{n}: {e}" for n, e in failed.items())
    features = report["features"]

    # the writes: one commit each; the fixed table's rows as the writes left them
    assert steps["write_fixed"]["value"] == [1, "APPEND"]
    assert steps["upsert_fixed"]["value"] == [2, "APPEND"]
    assert steps["write_dynamic"]["value"] == [1, "APPEND"]
    state = {_key(r): r for r in first}
    state.update({_key(r): r for r in upsert})
    after_upsert = list(state.values())
    _same(fixed.to_arrow(snapshot_id=2).to_pylist(), after_upsert, ["dt", "k"], "db.fixed after the upsert")
    _same(dynamic.to_arrow().to_pylist(), dynamic_rows, ["p", "id"], "db.dynamic")
    assert len({s.bucket for s in dynamic.scan().plan()}) > 2, "the dynamic-bucket table assigned several buckets"

    # the reads, against lakestore's own reads of the same snapshots
    wanted = lakestore.col("dt") == "2024-01-02"
    _same(_read(out, "read_filter"), fixed.to_arrow(snapshot_id=2, filter=wanted).to_pylist(), ["dt", "k"], "read_dataframe(filter=)")
    _same(_read(out, "read_filter"), [r for r in after_upsert if r["dt"] == "2024-01-02"], ["dt", "k"], "read_dataframe(filter=)")
    _same(_read(out, "read_where"), dynamic.to_arrow(filter=col("v") >= 500).to_pylist(), ["p", "id"], "WHERE v >= 500")
    assert len(_read(out, "read_where")) == 150

    # merge_into: the matched keys deleted, the others inserted, in one MERGE commit; then compaction
    assert steps["merge_delete_insert"]["value"] == [3, "APPEND"]
    assert fixed.snapshot(3).operation == "MERGE"
    for r in changes:
        if _key(r) in state:
            del state[_key(r)]
        else:
            state[_key(r)] = r
    assert steps["compact"]["value"] == [[4, "COMPACT"]]
    _same(fixed.to_arrow().to_pylist(), list(state.values()), ["dt", "k"], "db.fixed after merge_into and compact")
    assert fixed.to_arrow(snapshot_id=3).num_rows == len(state)

    # streaming: two micro-batches, each one commit under the query's user and its batch id
    _same(sink.to_arrow().to_pylist(), stream_rows, ["id"], "db.sink")
    assert sorted((s.commit_user, s.commit_identifier) for s in sink.snapshots()) == [("versions-stream", 0), ("versions-stream", 1)]
    stream_read = _read(out, "stream_read")
    assert {r.pop("_row_kind") for r in stream_read} == {"+I"}
    _same(stream_read, dynamic_rows, ["p", "id"], "readStream of db.dynamic")

    # what differs by version: used where pyspark has it, refused by name where it does not
    named = f"this is pyspark {report['pyspark']}"
    if features["stream_arrow_writer"]:
        assert "stream_write_refused" not in steps
    else:
        refused = steps["stream_write_refused"]["value"]
        assert "OptionError" in refused and named in refused and "foreachBatch" in refused, refused
    capped = steps["max_snapshots_per_trigger"]["value"]
    if features["read_limits"]:
        assert capped == len(dynamic_rows)
    else:
        assert "max-snapshots-per-trigger" in capped and "needs pyspark >= 4.3" in capped and named in capped, capped
    if features["filter_pushdown"]:
        _same(_read(out, "read_pushdown"), fixed.to_arrow(filter=col("v") < 50).to_pylist(), ["dt", "k"], "pushed WHERE v < 50")
    else:
        refused = steps["filter_pushdown"]["value"]
        assert refused.startswith("OptionError") and named in refused, refused
    if features["arrow_udf"]:
        assert steps["bucket_column"]["value"] == "a column"
    else:
        assert steps["bucket_column"]["value"].startswith("OptionError") and named in steps["bucket_column"]["value"]
    if features["time_type"]:
        assert steps["time_type"]["value"] == "TimeType"
    else:
        assert steps["time_type"]["value"].startswith("UnsupportedTypeError") and named in steps["time_type"]["value"]
    if version == "4.0":
        assert not any(features.values()), features
