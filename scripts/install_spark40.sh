#!/usr/bin/env bash
# Creates .venv-spark40 (git-ignored; idempotent): pyspark 4.0.5, the Spark that Apache Paimon
# 2.0.0's Spark connector (paimon-spark-4.0, ../shared/jars beside the repository) runs on; it
# fails on later Spark. tests/oracle/spark_sql_cli.py runs in it (tests/oracle/spark_sql_driver.py
# drives it), and the benchmarks run paimon-spark there (bench/spark_peer.py).
# Quick when already installed: pip is only called when the pinned version is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
SPARK_VERSION=4.0.5
VENV=.venv-spark40
installed() {
    "$VENV/bin/python" - "$SPARK_VERSION" <<'PY' 2>/dev/null
import sys
from importlib.metadata import version
import pyarrow, pandas  # noqa: F401 - the oracle converts rows with them
sys.exit(0 if version("pyspark") == sys.argv[1] else 1)
PY
}
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
if ! installed; then
    "$VENV/bin/pip" install -q --disable-pip-version-check "pyspark==$SPARK_VERSION" "pyarrow>=16" "pandas>=2.2,<3"
fi
