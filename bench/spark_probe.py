"""Which of lakestore's Spark features run on this interpreter's pyspark (issue 32, part 3's
measurement), each tried on a small table in one local[2] session:

    .venv/bin/python -m bench.spark_probe                      # pyspark 4.3
    .venv-spark40/bin/python -m bench.spark_probe              # pyspark 4.0.5 (lakestore's dependencies installed there)
    .venv-spark40/bin/python -m bench.spark_probe --shim       # with the missing Data Source API names stubbed

Run from the repository root (lakestore and bench are imported from the checkout; the Python
workers get it on PYTHONPATH). Prints one line per feature: ok, or the error with the innermost
frame of lakestore (or pyspark) that raised it, and a JSON summary last.

``--shim`` stubs ``pyspark.sql.datasource.Filter`` and ``DataSourceStreamArrowWriter`` when the
installed pyspark lacks them (in the driver and, through a sitecustomize on PYTHONPATH, in every
Python worker), to see what fails beyond the import. It is a diagnostic, not lakestore as shipped."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SHIM = """
try:
    import pyspark.sql.datasource as _ds
    for _name in ("Filter", "ColumnPath", "EqualTo", "EqualNullSafe", "GreaterThan", "GreaterThanOrEqual", "LessThan",
                  "LessThanOrEqual", "In", "IsNull", "IsNotNull", "Not", "StringStartsWith", "StringEndsWith", "StringContains"):
        if not hasattr(_ds, _name):  # stubs: the pyspark here has no filter pushdown API
            setattr(_ds, _name, type(_name, (), {}))
    if not hasattr(_ds, "DataSourceStreamArrowWriter"):
        _ds.DataSourceStreamArrowWriter = _ds.DataSourceStreamWriter
except Exception:
    pass
"""


def _where(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in frames if "/lakestore/" in f.filename] or [f for f in frames if "pyspark" in f.filename] or frames
    f = mine[-1] if mine else None
    if f is None:
        return ""
    root = str(Path(__file__).resolve().parents[1]) + "/"
    path = f.filename.split(root)[-1] if "/lakestore/" in f.filename else f.filename.split("site-packages/")[-1]
    return f"{path}:{f.lineno}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.spark_probe", description=__doc__.split("\n\n")[0])
    p.add_argument("--shim", action="store_true")
    args = p.parse_args(argv)
    scratch = Path(tempfile.mkdtemp(prefix="spark-probe-"))
    paths = [str(ROOT)]
    if args.shim:
        (scratch / "shim").mkdir()
        (scratch / "shim" / "sitecustomize.py").write_text(SHIM)
        paths.insert(0, str(scratch / "shim"))
        exec(SHIM, {})  # noqa: S102 - the same stubs in this process
    os.environ["PYTHONPATH"] = os.pathsep.join(paths)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    import pyarrow as pa  # noqa: PLC0415
    import pyarrow.parquet as pq  # noqa: PLC0415
    import pyspark  # noqa: PLC0415

    results: dict[str, str] = {}
    state: dict[str, Any] = {}

    def attempt(name: str, fn: Callable[[], Any]) -> None:
        start = time.perf_counter()
        try:
            detail = fn()
            results[name] = "ok" + (f" ({detail})" if detail else "")
        except BaseException as exc:  # noqa: BLE001 - recorded
            first = (str(exc).strip().splitlines() or [""])[0][:300]
            results[name] = f"FAILED {type(exc).__name__}: {first} [{_where(exc)}]"
        print(f"{name}: {results[name]} ({time.perf_counter() - start:.1f} s)", flush=True)

    def imports() -> None:
        import lakestore.spark  # noqa: F401, PLC0415

        state["ok"] = True

    attempt("import lakestore.spark", imports)
    if "ok" not in state:
        print(json.dumps({"pyspark": pyspark.__version__, "shim": args.shim, "results": results}))
        return 0

    import lakestore  # noqa: PLC0415
    import lakestore.spark as ls  # noqa: PLC0415

    wh = scratch / "wh"
    catalog = lakestore.Catalog(str(wh))
    catalog.create_database("db")
    schema = pa.schema(
        [pa.field("k", pa.int64(), nullable=False), pa.field("part", pa.string(), nullable=False), pa.field("v", pa.float64())]
    )
    rows = pa.table({"k": list(range(100)), "part": [f"p{i % 2}" for i in range(100)], "v": [float(i) for i in range(100)]}, schema=schema)
    pq.write_table(rows, scratch / "in.parquet")
    (scratch / "stream").mkdir()
    for i in range(3):
        pq.write_table(rows.slice(i * 34, 34), scratch / "stream" / f"{i}.parquet")
    pk = catalog.create_table("db.pk", schema=schema, partition_keys=["part"], primary_keys=["part", "k"], options={"bucket": "4"})
    dyn = catalog.create_table("db.dyn", schema=schema, partition_keys=["part"], primary_keys=["part", "k"], options={"bucket": "-1"})
    app = catalog.create_table("db.app", schema=schema, partition_keys=["part"])
    sink = catalog.create_table("db.sink", schema=schema, partition_keys=["part"], primary_keys=["part", "k"], options={"bucket": "2"})

    def session() -> str:
        state["spark"] = ls.create_spark_session("local[2]", conf={"spark.sql.shuffle.partitions": "4"})
        state["spark"].sparkContext.setLogLevel("ERROR")
        return state["spark"].version

    attempt("create_spark_session", session)
    spark = state.get("spark")
    if spark is None:
        print(json.dumps({"pyspark": pyspark.__version__, "shim": args.shim, "results": results}))
        return 0
    df = spark.read.parquet(str(scratch / "in.parquet"))

    def count(table: Any) -> int:
        return table.to_arrow().num_rows

    attempt("write_dataframe (PK, bucket 4)", lambda: f"{count(pk) if ls.write_dataframe(df, pk) else 0} rows")
    attempt("write_dataframe (PK, dynamic bucket)", lambda: f"{count(dyn) if ls.write_dataframe(df, dyn) else 0} rows")
    attempt(
        "df.write.format('paimon') (append table)",
        lambda: (df.write.format("paimon").mode("append").option("warehouse", str(wh)).save("db.app"), f"{count(app)} rows")[1],
    )
    attempt(
        "distribute + df.write.format('paimon') (PK table)",
        lambda: (
            ls.distribute(df, pk).write.format("paimon").mode("append").option("warehouse", str(wh)).save("db.pk"),
            f"{count(pk)} rows",
        )[1],
    )
    attempt("read_dataframe (full read)", lambda: f"{ls.read_dataframe(spark, pk).count()} rows")
    attempt("spark.read.format('paimon')", lambda: f"{spark.read.format('paimon').option('warehouse', str(wh)).load('db.pk').count()} rows")
    attempt(
        "read_dataframe(filter=)",
        lambda: f"{ls.read_dataframe(spark, pk, filter=(lakestore.col('part') == 'p1') & (lakestore.col('k') == 7)).count()} rows",
    )

    def pushdown() -> str:
        ls.register(spark, filter_pushdown=True)
        n = spark.read.format("paimon").option("warehouse", str(wh)).load("db.pk").where("part = 'p1' AND k = 7").count()
        ls.register(spark, filter_pushdown=False)
        return f"{n} rows"

    attempt("register(filter_pushdown=True) + WHERE", pushdown)
    attempt("bucket_column (arrow_udf)", lambda: f"{df.select(ls.bucket_column(pk).alias('b')).distinct().count()} buckets")
    attempt("compact(full=True)", lambda: f"{[s.commit_kind for s in ls.compact(spark, pk, full=True)]}")
    changes = spark.createDataFrame([(1, "p1", -1.0), (1000, "p0", 5.0)], "k long, part string, v double")
    attempt("merge_into (update + insert)", lambda: (ls.merge_into(changes, pk, matched="update"), f"{count(pk)} rows")[1])

    def write_stream() -> str:
        stream = spark.readStream.schema(df.schema).option("maxFilesPerTrigger", 1).parquet(str(scratch / "stream"))
        query = (
            ls.distribute(stream, sink)
            .writeStream.format("paimon")
            .option("warehouse", str(wh))
            .option("commit-user", "probe")
            .option("checkpointLocation", str(scratch / "ck-w"))
            .trigger(availableNow=True)
            .start("db.sink")
        )
        query.awaitTermination()
        if query.exception():
            raise RuntimeError(str(query.exception()))
        return f"{count(sink)} rows, {len(sink.snapshots())} snapshots" if hasattr(sink, "snapshots") else f"{count(sink)} rows"

    attempt("writeStream.format('paimon') (PK table)", write_stream)

    def read_stream() -> str:
        stream = spark.readStream.format("paimon").option("warehouse", str(wh)).option("read.changelog", "true").load("db.pk")
        query = (
            stream.writeStream.format("memory")
            .queryName("probe")
            .option("checkpointLocation", str(scratch / "ck-r"))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
        if query.exception():
            raise RuntimeError(str(query.exception()))
        return f"{spark.table('probe').count()} rows"

    attempt("readStream.format('paimon') (read.changelog)", read_stream)
    attempt(
        "system table db.pk$snapshots",
        lambda: f"{spark.read.format('paimon').option('warehouse', str(wh)).load('db.pk$snapshots').count()} snapshots",
    )
    spark.stop()
    shutil.rmtree(scratch, ignore_errors=True)
    print(json.dumps({"pyspark": pyspark.__version__, "shim": args.shim, "results": results}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
