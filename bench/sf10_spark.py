"""The Spark systems of ``bench.sf10``: lakestore's Spark path and paimon-spark (Apache Paimon's own
Spark connector), each stage (write / compact / read) one fresh process with one Spark session on
``--master`` (``local-cluster[2,1,4096]`` by default: a driver and two executor JVMs, each with its
Python workers, all in the stage's process tree).

Both systems read the same cached parquet with the same Spark SQL query (``input_query``: the
order-date partition column, the ``l_flags`` ROW built with ``named_struct``), one query per commit
(``chunks``: l_orderkey ranges cut at the parquet row groups, so every commit reads only its row
groups and holds ~``--commit-rows`` rows). The table is the pipeline's lineitem table (partitioned
by ``dt``, its bucket count and options): lakestore creates it with ``ensure_table`` as the
single-process stages do; paimon-spark gets ``CREATE TABLE ... TBLPROPERTIES`` with the same
columns, keys and options (``paimon_ddl``, built by the parent from the same spec).

- lakestore-spark (``.venv``, pyspark 4.3): ``lakestore.spark.write_dataframe`` per commit,
  ``lakestore.spark.compact(full=True)``, ``read_dataframe``.
- paimon-spark (``.venv-spark40``, pyspark 4.0.5): ``INSERT INTO`` per commit,
  ``CALL sys.compact(compact_strategy => 'full')``, ``spark.table``.

The read stage of both computes count, ``bit_xor(xxhash64(every column))`` and ``sum(l_quantity)``
(every column of every row is materialized), which the parent compares. Top-level imports are the
standard library only: the paimon-spark child never imports lakestore."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from bench.sf1 import RssSampler, _stage

SYSTEMS = ("lakestore-spark", "paimon-spark")
DATABASE, TABLE = "tpch", "lineitem"


# -- shared by both systems (parent side: plain data) ----------------------------------------------
def input_query(columns: list[str], path: str, chunk: list[Any]) -> str:
    """The rows of one commit: the cached parquet's l_orderkey range ``chunk`` = [lo, hi) (None: open),
    with ``l_flags`` built from the two flag columns, in the table's column order."""
    exprs = ["named_struct('returnflag', l_returnflag, 'linestatus', l_linestatus) AS l_flags" if c == "l_flags" else c for c in columns]
    lo, hi = chunk
    where = [f"l_orderkey >= {int(lo)}" if lo is not None else "", f"l_orderkey < {int(hi)}" if hi is not None else ""]
    cond = " AND ".join(w for w in where if w) or "true"
    return f"SELECT {', '.join(exprs)} FROM parquet.`{path}` WHERE {cond}"


def spark_conf(spec: dict[str, Any]) -> dict[str, str]:
    """Spark settings of every session, both systems."""
    work = Path(spec["system_dir"])
    return {
        "spark.driver.memory": spec["driver_memory"],
        "spark.executor.memory": spec["executor_memory"],
        "spark.sql.shuffle.partitions": str(spec["shuffle_partitions"]),
        "spark.default.parallelism": str(spec["parallelism"]),
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.execution.arrow.maxRecordsPerBatch": "65536",
        "spark.sql.session.timeZone": "UTC",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.executorEnv.SPARK_LOCAL_IP": "127.0.0.1",
        "spark.local.dir": str(work / "spark-local"),
        **({"spark.executorEnv.PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}),
    }


def progress(spec: dict[str, Any], record: dict[str, Any]) -> None:
    """One line of progress (a commit that landed): what the parent reports when the stage times out."""
    with open(spec["progress"], "a") as fh:
        fh.write(json.dumps(record) + "\n")


# -- the two systems (child side) ------------------------------------------------------------------
class PaimonSpark:
    def __init__(self, spec: dict[str, Any]) -> None:
        from pyspark.sql import SparkSession  # noqa: PLC0415

        self.warehouse = Path(spec["warehouse"])
        self.name = f"paimon.{DATABASE}.{TABLE}"
        conf = {
            **spark_conf(spec),
            "spark.jars": spec["jar"],
            "spark.sql.extensions": "org.apache.paimon.spark.extensions.PaimonSparkSessionExtensions",
            "spark.sql.catalog.paimon": "org.apache.paimon.spark.SparkCatalog",
            "spark.sql.catalog.paimon.warehouse": f"file:{self.warehouse}",
        }
        builder = SparkSession.builder.master(spec["master"]).appName("sf10-paimon-spark")
        for key, value in conf.items():
            builder = builder.config(key, value)
        self.spark = builder.getOrCreate()
        self.spark.sparkContext.setLogLevel("ERROR")

    def create(self, spec: dict[str, Any]) -> None:
        self.spark.sql(f"CREATE DATABASE IF NOT EXISTS paimon.{DATABASE}")
        self.spark.sql(spec["paimon_ddl"].format(name=self.name))

    def write(self, query: str) -> None:
        self.spark.sql(f"INSERT INTO {self.name} {query}")

    def compact(self) -> None:
        self.spark.sql(f"CALL paimon.sys.compact(table => '{DATABASE}.{TABLE}', compact_strategy => 'full')").collect()

    def live_files(self) -> int:
        # the partitions table (one scan of the manifests; the files table runs a task per partition)
        return int(self.spark.sql(f"SELECT sum(file_count) FROM paimon.{DATABASE}.`{TABLE}$partitions`").collect()[0][0] or 0)

    def snapshots(self) -> int:
        return int(self.spark.sql(f"SELECT count(*) FROM paimon.{DATABASE}.`{TABLE}$snapshots`").collect()[0][0])

    def read(self):  # type: ignore[no-untyped-def]
        return self.spark.table(self.name)


class LakestoreSpark:
    def __init__(self, spec: dict[str, Any]) -> None:
        import lakestore.spark as ls  # noqa: PLC0415

        self.ls = ls
        self.spark = ls.create_spark_session(spec["master"], app_name="sf10-lakestore-spark", conf=spark_conf(spec))
        self.spark.sparkContext.setLogLevel("ERROR")
        self.spec = spec
        self.table: Any = None

    def create(self, spec: dict[str, Any]) -> None:
        from bench.sf10 import _open_table  # noqa: PLC0415 - the single-process stages' table

        self.table, _ = _open_table(spec)

    def write(self, query: str) -> None:
        self.ls.write_dataframe(self.spark.sql(query), self.table)

    def compact(self) -> None:
        self.ls.compact(self.spark, self.table, full=True)

    def live_files(self) -> int:
        return sum(len(s.files) for s in self.table.scan().plan())

    def snapshots(self) -> int:
        return len(self.table.snapshots())

    def read(self):  # type: ignore[no-untyped-def]
        return self.ls.read_dataframe(self.spark, self.table)


def _session(spec: dict[str, Any], sampler: RssSampler) -> tuple[Any, dict[str, Any]]:
    t0 = time.time()
    system = PaimonSpark(spec) if spec["system"] == "paimon-spark" else LakestoreSpark(spec)
    system.create(spec)
    # the executors registered: a tiny job on every one of them (their JVMs and Python start here)
    system.spark.range(0, spec["parallelism"], 1, spec["parallelism"]).count()
    t1 = time.time()
    return system, _stage(f"{spec['system']}: session start (driver + executors), open/create table", t0, t1, None, sampler)


# -- stages (each in a fresh process) ----------------------------------------------------------------
def stage_write(spec: dict[str, Any], sampler: RssSampler) -> dict[str, Any]:
    system, session = _session(spec, sampler)
    commits, rows, start = [], 0, time.time()
    for i, (chunk, count) in enumerate(zip(spec["chunks"], spec["chunk_rows"], strict=True)):
        t0 = time.time()
        system.write(input_query(spec["columns"], spec["input"], chunk))
        t1 = time.time()
        rows += count
        commits.append(_stage(f"commit {i + 1}: l_orderkey in [{chunk[0]}, {chunk[1]})", t0, t1, count, sampler))
        progress(spec, {"rows": rows, "seconds": t1 - start, "peak_rss_kib": sampler.peak(), "commits": i + 1})
    end = time.time()
    how = "write_dataframe" if spec["system"] == "lakestore-spark" else "INSERT INTO ... SELECT"
    whole = _stage(f"{spec['system']}: {how}, {len(commits)} commits (input read by Spark inside)", start, end, rows, sampler)
    facts = {"rows written": rows, "snapshots": system.snapshots(), "data files": system.live_files()}
    system.spark.stop()
    return {"stages": [session, whole, *commits], "facts": facts}


def stage_compact(spec: dict[str, Any], sampler: RssSampler) -> dict[str, Any]:
    system, session = _session(spec, sampler)
    before = system.live_files()
    how = "lakestore.spark.compact(full=True)" if spec["system"] == "lakestore-spark" else "CALL sys.compact(compact_strategy => 'full')"
    t0 = time.time()
    system.compact()
    t1 = time.time()
    facts = {"data files before": before, "data files after": system.live_files(), "snapshots": system.snapshots()}
    system.spark.stop()
    return {"stages": [session, _stage(f"{spec['system']}: {how}", t0, t1, spec["rows"], sampler)], "facts": facts}


def stage_read(spec: dict[str, Any], sampler: RssSampler) -> dict[str, Any]:
    from pyspark.sql import functions as F  # noqa: PLC0415

    system, session = _session(spec, sampler)
    df = system.read()
    columns = ", ".join(f"`{c}`" for c in spec["columns"])
    t0 = time.time()
    row = df.agg(
        F.count(F.lit(1)).alias("rows"), F.expr(f"bit_xor(xxhash64({columns}))").alias("xor"), F.sum("l_quantity").alias("qty")
    ).collect()[0]
    t1 = time.time()
    rows = int(row["rows"])
    checks = {"rows": rows, "xor": int(row["xor"] or 0), "sum_l_quantity": str(row["qty"])}
    system.spark.stop()
    name = f"{spec['system']}: full read, count + bit_xor(xxhash64(all columns)) + sum(l_quantity)"
    return {"stages": [session, _stage(name, t0, t1, rows, sampler)], "facts": {"rows read": rows}, "checks": checks}


CHILD_STAGES = {
    f"{stage}/{system}": fn
    for system in SYSTEMS
    for stage, fn in (("write", stage_write), ("compact", stage_compact), ("read", stage_read))
}
