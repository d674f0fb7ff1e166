"""Spark SQL with Apache Paimon 2.0.0's Spark connector (paimon-spark-4.0), served over stdin/stdout.

Runs in the ``.venv-spark40`` virtual environment (pyspark 4.0.x: the connector does not run on
later Spark) and never imports lakestore. One SparkSession (one JVM, ``local[2]``) serves a
whole test session. Each request is one JSON line on stdin; each response is one line on stdout
starting with ``RESPONSE_PREFIX``. Everything the JVM prints goes to stderr. Started by
``tests/oracle/spark_sql_driver.py``.

Requests:

- ``start``: the session, with ``jars`` (the paimon-spark jar) and extra Spark ``conf``;
- ``catalog``: a Paimon ``SparkCatalog`` named ``name`` with ``options`` (``warehouse``,
  ``metastore``, ``uri``, ``token``...), defined at runtime (Spark loads a catalog on first use);
- ``sql``: statements run in order; the response carries the column names and rows of the last
  one (values as JSON: dates, timestamps and decimals as their ISO / plain strings, bytes as hex);
- ``conf``: runtime SQL settings (``spark.sql.sources.partitionOverwriteMode``...).
"""

from __future__ import annotations

import datetime
import decimal
import json
import os
import sys
import time
import traceback
from typing import Any

RESPONSE_PREFIX = "@@spark-sql-oracle@@ "

# The protocol owns the original stdout; fd 1 (inherited by the JVM started below) goes to
# stderr, so Spark's logging never interleaves with responses.
_out = os.fdopen(os.dup(1), "w", buffering=1)
os.dup2(2, 1)
sys.stdout = sys.stderr

_spark: Any = None


def _value(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (datetime.datetime, datetime.date)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    if isinstance(value, dict):
        return {str(k): _value(v) for k, v in value.items()}
    if hasattr(value, "asDict"):  # a nested Row
        return {k: _value(v) for k, v in value.asDict().items()}
    if isinstance(value, (list, tuple)):
        return [_value(v) for v in value]
    return str(value)


def _start(jars: list[str], conf: dict[str, str]) -> dict[str, Any]:
    global _spark
    started = time.monotonic()
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master(conf.pop("master", "local[2]"))
        .appName("lakestore-spark-sql-oracle")
        .config("spark.jars", ",".join(jars))
        .config("spark.sql.extensions", "org.apache.paimon.spark.extensions.PaimonSparkSessionExtensions")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.session.timeZone", "UTC")
    )
    for key, value in conf.items():
        builder = builder.config(key, value)
    _spark = builder.getOrCreate()
    _spark.sparkContext.setLogLevel("ERROR")
    return {"seconds": time.monotonic() - started, "version": _spark.version}


def _catalog(name: str, options: dict[str, str]) -> dict[str, Any]:
    _spark.conf.set(f"spark.sql.catalog.{name}", "org.apache.paimon.spark.SparkCatalog")
    for key, value in options.items():
        _spark.conf.set(f"spark.sql.catalog.{name}.{key}", value)
    return {}


def _sql(statements: list[str]) -> dict[str, Any]:
    df = None
    for statement in statements:
        df = _spark.sql(statement)
    if df is None:
        return {"columns": [], "rows": []}
    rows = df.collect()
    return {"columns": list(df.columns), "rows": [[_value(v) for v in row] for row in rows]}


def _conf(settings: dict[str, str]) -> dict[str, Any]:
    for key, value in settings.items():
        if value is None:
            _spark.conf.unset(key)
        else:
            _spark.conf.set(key, value)
    return {}


def _handle(request: dict[str, Any]) -> dict[str, Any]:
    op = request.pop("op")
    if op == "start":
        return _start(request["jars"], dict(request.get("conf") or {}))
    if op == "catalog":
        return _catalog(request["name"], request["options"])
    if op == "sql":
        return _sql(request["statements"])
    if op == "conf":
        return _conf(request["settings"])
    raise ValueError(f"unknown op {op!r}")


def main() -> None:
    _out.write(RESPONSE_PREFIX + json.dumps({"ok": True, "ready": True}) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            response = {"ok": True, **_handle(json.loads(line))}
        except Exception as exc:  # every failure goes back to the test
            response = {"ok": False, "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}
        _out.write(RESPONSE_PREFIX + json.dumps(response) + "\n")
    if _spark is not None:
        _spark.stop()


if __name__ == "__main__":
    main()
