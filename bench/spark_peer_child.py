"""One fresh Spark session (one process) of ``bench.spark_peer``: one system, one group of steps.

    <venv>/bin/python -m bench.spark_peer_child SPEC.json

Runs in whichever virtual environment the parent picks: ``.venv-spark40`` (pyspark 4.0.5) for
paimon-spark, ``.venv`` (pyspark 4.3) or another pyspark for lakestore. Top-level imports are
pyspark, pyarrow and the standard library only: the paimon-spark child never imports lakestore.

SPEC (JSON): ``system`` ("paimon-spark" or "lakestore"), ``group`` (see ``GROUPS``), ``rows``,
``inputs`` ({"a": parquet, "b": parquet, "stream": directory of 20 parquet files}), ``workdir``
(this child's scratch directory), ``jar`` (paimon-spark), ``filter`` ({"part": X, "k": Y}),
``conf`` (Spark settings shared by both systems), ``profile`` (a directory: Spark's event log,
and for lakestore its instrumented source's records, go there; see ``bench.spark_peer_profile``).

Every step is timed around one Spark action (or one helper call) on the driver; before it runs
a 1,000-row warm-up write and read of the same system (timed apart as ``warmup``: the cold first
jobs of the session, JVM JIT and Python-worker starts). After each step, untimed, the child
records what the step produced: the latest snapshot's id, kind and record count read from the
table directory (both systems write Paimon's layout) and, for reads, count / bit_xor(xxhash64 of
every column) / sum(i64) / sum(d1), which the parent compares across systems.

Prints one line ``@@spark-peer@@ {json}`` on stdout (everything else goes to stderr)."""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

RESULT_PREFIX = "@@spark-peer@@ "
COLUMNS = ("k", "part", "i32", "i64", "d1", "d2", "s1", "s2")
DDL_TYPES = {
    "k": "BIGINT NOT NULL",
    "part": "STRING NOT NULL",
    "i32": "INT",
    "i64": "BIGINT",
    "d1": "DOUBLE",
    "d2": "DOUBLE",
    "s1": "STRING",
    "s2": "STRING",
}
# Table options both systems get (Paimon's defaults spelled out, so neither differs by default).
FILE_OPTIONS = {"file.format": "parquet", "file.compression": "zstd", "file.compression.zstd-level": "1"}
KINDS = {
    "pk-fixed": ({"bucket": "4"}, True),
    "pk-dynamic": ({"bucket": "-1"}, True),
    "append": ({}, False),  # no primary key, bucket-unaware (Paimon's default bucket -1)
}
PK_STEPS = ("write_a", "write_b", "read_merge", "read_filter", "read_filter_sql", "read_filter_again", "compact", "read_compacted")
GROUPS: dict[str, tuple[str, tuple[str, ...]]] = {
    "pk-fixed": ("pk-fixed", PK_STEPS),
    "pk-dynamic": ("pk-dynamic", PK_STEPS),
    "append": ("append", ("write_a",)),
    "stream": ("pk-fixed", ("stream",)),
    "pk-fixed-write": ("pk-fixed", ("write_a",)),
    "pk-dynamic-write": ("pk-dynamic", ("write_a",)),
}


def summary_exprs():  # type: ignore[no-untyped-def]
    """count, bit_xor(xxhash64(all columns)), sum(i64), sum(d1): every column of every row is
    materialized, and equal tables give equal values in any Spark version."""
    from pyspark.sql import functions as F  # noqa: PLC0415

    return [
        F.count(F.lit(1)).alias("rows"),
        F.expr(f"bit_xor(xxhash64({', '.join(COLUMNS)}))").alias("xor"),
        F.sum("i64").alias("sum_i64"),
        F.sum("d1").alias("sum_d1"),
    ]


def summarize(df) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    row = df.agg(*summary_exprs()).collect()[0]
    return {
        "rows": int(row["rows"]),
        "xor": int(row["xor"] or 0),
        "sum_i64": int(row["sum_i64"] or 0),
        "sum_d1": float(row["sum_d1"] or 0.0),
    }


def table_state(table_dir: Path) -> dict[str, Any]:
    """The latest snapshot (id, kind, physical record count) and the data files on disk."""
    snap_dir = table_dir / "snapshot"
    ids = [int(p.name.split("-", 1)[1]) for p in snap_dir.glob("snapshot-*")] if snap_dir.exists() else []
    state: dict[str, Any] = {
        "snapshots": len(ids),
        "data_files": len(list(table_dir.glob("*/bucket-*/data-*"))) + len(list(table_dir.glob("bucket-*/data-*"))),
    }
    if ids:
        snap = json.loads((snap_dir / f"snapshot-{max(ids)}").read_text())
        state.update(latest_id=snap["id"], latest_kind=snap["commitKind"], total_records=snap.get("totalRecordCount"))
        kinds: dict[str, int] = {}
        for i in ids:
            kind = json.loads((snap_dir / f"snapshot-{i}").read_text())["commitKind"]
            kinds[kind] = kinds.get(kind, 0) + 1
        state["kinds"] = kinds
    return state


def event_log(directory: str) -> dict[str, str]:
    """Spark's event log (uncompressed) into ``directory``: jobs, stages and task metrics."""
    return {"spark.eventLog.enabled": "true", "spark.eventLog.compress": "false", "spark.eventLog.dir": f"file:{directory}"}


# -- the two systems --------------------------------------------------------------------------------
class PaimonSpark:
    """Apache Paimon 2.0.0's Spark connector: the ``paimon`` SparkCatalog over the warehouse."""

    name = "paimon-spark"

    def __init__(self, spec: dict[str, Any]) -> None:
        self.warehouse = Path(spec["workdir"]) / "warehouse"
        from pyspark.sql import SparkSession  # noqa: PLC0415

        builder = SparkSession.builder.master(spec["conf"].get("master", "local[2]")).appName("spark-peer-paimon")
        conf = {k: v for k, v in spec["conf"].items() if k != "master"}
        if spec.get("profile"):  # Spark's event log only (nothing else is instrumented)
            conf.update(event_log(spec["profile"]))
        conf.update(
            {
                "spark.jars": spec["jar"],
                "spark.sql.extensions": "org.apache.paimon.spark.extensions.PaimonSparkSessionExtensions",
                "spark.sql.catalog.paimon": "org.apache.paimon.spark.SparkCatalog",
                "spark.sql.catalog.paimon.warehouse": f"file:{self.warehouse}",
            }
        )
        for key, value in conf.items():
            builder = builder.config(key, value)
        self.spark = builder.getOrCreate()
        self.spark.sparkContext.setLogLevel("ERROR")
        self.spark.sql("CREATE DATABASE IF NOT EXISTS paimon.db")

    def create(self, name: str, kind: str) -> None:
        options, pk = KINDS[kind]
        props = {**FILE_OPTIONS, **options, **({"primary-key": "part,k"} if pk else {})}
        cols = ", ".join(f"{c} {DDL_TYPES[c]}" for c in COLUMNS)
        tbl = ", ".join(f"'{k}' = '{v}'" for k, v in props.items())
        self.spark.sql(f"CREATE TABLE paimon.db.{name} ({cols}) PARTITIONED BY (part) TBLPROPERTIES ({tbl})")

    def table_dir(self, name: str) -> Path:
        return self.warehouse / "db.db" / name

    def write(self, name: str, path: str) -> None:
        self.spark.sql(f"INSERT INTO paimon.db.{name} SELECT {', '.join(COLUMNS)} FROM parquet.`{path}`")

    def read(self, name: str):  # type: ignore[no-untyped-def]
        return self.spark.table(f"paimon.db.{name}")

    def read_filter(self, name: str, part: str, k: int):  # type: ignore[no-untyped-def]
        return self.spark.sql(f"SELECT * FROM paimon.db.{name} WHERE part = '{part}' AND k = {k}")

    read_filter_sql = read_filter  # the connector always pushes filters down

    def compact(self, name: str) -> None:
        self.spark.sql(f"CALL paimon.sys.compact(table => 'db.{name}', compact_strategy => 'full')").collect()

    def stream(self, name: str, directory: str, checkpoint: str, schema) -> Any:  # type: ignore[no-untyped-def]
        df = self.spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).parquet(directory)
        return (
            df.writeStream.format("paimon")
            .option("checkpointLocation", checkpoint)
            .trigger(availableNow=True)
            .start(str(self.table_dir(name)))
        )


class Lakestore:
    """lakestore's ``paimon`` Python data source and helpers, on this interpreter's pyspark."""

    name = "lakestore"

    def __init__(self, spec: dict[str, Any]) -> None:
        self.warehouse = Path(spec["workdir"]) / "warehouse"
        import lakestore  # noqa: PLC0415
        import lakestore.spark as ls  # noqa: PLC0415 - fails on a pyspark whose Data Source API lacks a name it uses

        self.lakestore, self.ls = lakestore, ls
        conf = {k: v for k, v in spec["conf"].items() if k != "master"}
        if spec.get("profile"):
            os.environ["SPARK_PEER_PROFILE"] = spec["profile"]  # before the JVM starts: its Python workers inherit it
            conf.update(event_log(spec["profile"]))
        self.spark = ls.create_spark_session(spec["conf"].get("master", "local[2]"), app_name="spark-peer-lakestore", conf=conf)
        self.spark.sparkContext.setLogLevel("ERROR")
        if spec.get("profile"):
            from bench.spark_peer_profile import install  # noqa: PLC0415

            install(self.spark, spec["profile"])
        self.catalog = lakestore.Catalog(str(self.warehouse))
        self.catalog.create_database("db", exist_ok=True)
        self.tables: dict[str, Any] = {}
        # steps run another way on a pyspark that lacks what they use (lakestore.spark.compat): step -> how
        self.variants: dict[str, str] = {}

    def create(self, name: str, kind: str) -> None:
        import pyarrow as pa  # noqa: PLC0415

        options, pk = KINDS[kind]
        types = {
            "k": pa.int64(),
            "part": pa.string(),
            "i32": pa.int32(),
            "i64": pa.int64(),
            "d1": pa.float64(),
            "d2": pa.float64(),
            "s1": pa.string(),
            "s2": pa.string(),
        }
        schema = pa.schema([pa.field(c, types[c], nullable=c not in ("k", "part")) for c in COLUMNS])
        self.tables[name] = self.catalog.create_table(
            f"db.{name}",
            schema=schema,
            partition_keys=["part"],
            primary_keys=["part", "k"] if pk else [],
            options={**FILE_OPTIONS, **options},
        )

    def table_dir(self, name: str) -> Path:
        return self.warehouse / "db.db" / name

    def write(self, name: str, path: str) -> None:
        self.ls.write_dataframe(self.spark.read.parquet(path).select(*COLUMNS), self.tables[name])

    def read(self, name: str):  # type: ignore[no-untyped-def]
        return self.ls.read_dataframe(self.spark, self.tables[name])

    def read_filter(self, name: str, part: str, k: int):  # type: ignore[no-untyped-def]
        col = self.lakestore.col
        return self.ls.read_dataframe(self.spark, self.tables[name], filter=(col("part") == part) & (col("k") == k))

    def read_filter_sql(self, name: str, part: str, k: int):  # type: ignore[no-untyped-def]
        """Spark's own WHERE, pushed into the source (``register(spark, filter_pushdown=True)``);
        on pyspark 4.0, which pushes no filters into Python data sources, Spark filters the whole read."""
        if self.ls.compat.FILTER_PUSHDOWN:
            self.ls.register(self.spark, filter_pushdown=True)
        else:
            self.variants["read_filter_sql"] = "Spark's WHERE without pushdown (pyspark 4.0 pushes no filters into Python data sources)"
        df = self.spark.read.format("paimon").option("warehouse", str(self.warehouse)).load(f"db.{name}")
        return df.where(f"part = '{part}' AND k = {k}")

    def compact(self, name: str) -> None:
        self.ls.compact(self.spark, self.tables[name], full=True)

    def stream(self, name: str, directory: str, checkpoint: str, schema) -> Any:  # type: ignore[no-untyped-def]
        df = self.spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).parquet(directory)
        if not self.ls.compat.STREAM_ARROW_WRITER:  # pyspark 4.0: each micro-batch through write_dataframe
            self.variants["stream"] = "foreachBatch + write_dataframe(commit_identifier=batch_id) (pyspark 4.0 has no Arrow stream writer)"
            table = self.tables[name]

            def write(batch: Any, batch_id: int) -> None:
                self.ls.write_dataframe(batch, table, commit_user="spark-peer-stream", commit_identifier=batch_id)

            return df.writeStream.foreachBatch(write).option("checkpointLocation", checkpoint).trigger(availableNow=True).start()
        # distribute: one writer per bucket (a primary-key commit of two tasks writing one bucket is refused)
        return (
            self.ls.distribute(df, self.tables[name])
            .writeStream.format("paimon")
            .option("warehouse", str(self.warehouse))
            .option("commit-user", "spark-peer-stream")
            .option("checkpointLocation", checkpoint)
            .trigger(availableNow=True)
            .start(f"db.{name}")
        )


# -- the steps --------------------------------------------------------------------------------------
def _cpu() -> float:
    from bench.sf1 import tree_usage  # noqa: PLC0415 - standard library only

    return tree_usage(os.getpid())[1]


def run_step(out: dict[str, Any], step: str, fn) -> Any:  # type: ignore[no-untyped-def]
    load = os.getloadavg()[0]
    cpu = _cpu()
    t0 = time.time()
    start = time.perf_counter()
    result = fn()
    seconds = time.perf_counter() - start
    out["steps"][step] = {"seconds": seconds, "cpu": _cpu() - cpu, "load": load, "t0": t0, "t1": time.time()}
    print(f"[{out['system']}] {step}: {seconds:.3f} s (load {load:.2f})", file=sys.stderr, flush=True)
    return result


def run(spec: dict[str, Any], out: dict[str, Any]) -> None:
    t0 = time.perf_counter()
    system = PaimonSpark(spec) if spec["system"] == "paimon-spark" else Lakestore(spec)
    out["session_seconds"] = time.perf_counter() - t0
    spark = system.spark
    out["spark_version"] = spark.version
    kind, steps = GROUPS[spec["group"]]
    inputs, flt = spec["inputs"], spec["filter"]

    # warm-up: the session's first jobs (JIT, Python workers) on 1,000 rows of the same input
    warm = Path(spec["workdir"]) / "warm.parquet"
    spark.read.parquet(inputs["a"]).limit(1000).write.parquet(str(warm))
    system.create("warm", kind)
    run_step(out, "warmup", lambda: (system.write("warm", str(warm)), summarize(system.read("warm"))))

    system.create("t", kind)
    checks: dict[str, Any] = out["checks"]
    for step in steps:
        if step == "write_a":
            run_step(out, step, lambda: system.write("t", inputs["a"]))
        elif step == "write_b":
            run_step(out, step, lambda: system.write("t", inputs["b"]))
        elif step in ("read_merge", "read_compacted"):
            checks[step] = run_step(out, step, lambda: summarize(system.read("t")))
        elif step in ("read_filter", "read_filter_sql", "read_filter_again"):
            # read_filter_again: the pushdown query once more (its planner processes are warm now)
            method = getattr(system, "read_filter_sql" if step == "read_filter_again" else step)
            rows = run_step(out, step, lambda method=method: method("t", flt["part"], flt["k"]).select(*COLUMNS).collect())
            checks[step] = [[r[c] for c in COLUMNS] for r in rows]
        elif step == "compact":
            run_step(out, step, lambda: system.compact("t"))
        elif step == "stream":
            import pyarrow.parquet as pq  # noqa: PLC0415
            from pyspark.sql.pandas.types import from_arrow_schema  # noqa: PLC0415

            directory = inputs["stream"]
            schema = from_arrow_schema(pq.read_schema(sorted(Path(directory).glob("*.parquet"))[0]))
            checkpoint = str(Path(spec["workdir"]) / "checkpoint")

            def stream(directory: str = directory, checkpoint: str = checkpoint, schema: Any = schema) -> int:
                query = system.stream("t", directory, checkpoint, schema)
                query.awaitTermination()
                if query.exception() is not None:
                    raise RuntimeError(str(query.exception()))
                return len([p for p in query.recentProgress if p["numInputRows"]])

            out["facts"]["micro_batches"] = run_step(out, step, stream)
        else:
            raise ValueError(f"unknown step {step}")
        out["facts"][f"after_{step}"] = table_state(system.table_dir("t"))
    if steps[-1] in ("write_a", "stream"):  # the written rows, read back untimed
        checks["written"] = summarize(system.read("t"))
    out["facts"]["variants"] = getattr(system, "variants", {})
    spark.stop()


def main(argv: list[str]) -> int:
    spec = json.loads(Path(argv[1]).read_text())
    out: dict[str, Any] = {
        "system": spec["system"],
        "group": spec["group"],
        "steps": {},
        "checks": {},
        "facts": {},
        "python": sys.executable,
    }
    real_stdout = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # the JVM's and Spark's output go to stderr
    sys.stdout = sys.stderr
    try:
        import pyspark  # noqa: PLC0415

        out["pyspark"] = pyspark.__version__
        run(spec, out)
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which records it
        out["error"] = f"{type(exc).__name__}: {exc}".strip()[:2000]
        out["traceback"] = traceback.format_exc()[-6000:]
    (Path(spec["workdir"]) / "result.json").write_text(json.dumps(out, default=str))
    real_stdout.write(RESULT_PREFIX + json.dumps(out, default=str) + "\n")
    real_stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
