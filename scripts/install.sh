#!/usr/bin/env bash
# Creates the project's virtual environments (idempotent):
#   .venv         lakestore + the Dagster/Spark pipeline + test tools (current pyarrow)
#   .venv-oracle  pypaimon 2.1.0 + pypaimon-rust 0.4.0, the format oracles (they pin pyarrow<20)
#   .venv-java    pypaimon 0.2.0, whose bridge jar carries Apache Paimon 0.9's Java core (legacy tables)
#   .jars/        Apache Paimon 2.0.0 and 1.4.2 Java jars by Maven coordinates (scripts/install_jars.sh)
#   .venv-flink   apache-flink 2.0.2, Flink for Paimon 2.0.0's paimon-flink-2.0 (scripts/install_flink.sh)
#   .venv-spark40 pyspark 4.0.5, Spark for Paimon 2.0.0's paimon-spark-4.0 (scripts/install_pyspark.sh)
#   .venv-spark41 pyspark 4.1.4, the middle of the pyspark versions lakestore supports
#   .jars/hms/    a standalone Hive Metastore 4.0.1 for the Hive catalog tests (scripts/install_hms.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if ! command -v java >/dev/null 2>&1; then
    echo "install: Java 17 is required by Spark; installing openjdk-17-jre-headless" >&2
    if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq --no-install-recommends openjdk-17-jre-headless;
    else sudo apt-get update -qq && sudo apt-get install -y -qq --no-install-recommends openjdk-17-jre-headless; fi
fi
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/pip install -q --upgrade pip
.venv/bin/pip install -q -e ".[pipeline,dev]"
# the Hive Metastore the Hive catalog and HiveCatalogLock tests start (tests/hms.py)
bash scripts/install_hms.sh
if [ "${LAKESTORE_SKIP_ORACLE:-0}" != 1 ]; then
    [ -x .venv-oracle/bin/python ] || "$PYTHON" -m venv .venv-oracle
    .venv-oracle/bin/pip install -q "pypaimon==2.1.0" "pypaimon-rust==0.4.0" fastavro
    # Apache Paimon 0.9's Java core: pypaimon 0.2.0 ships it as a py4j bridge jar
    [ -x .venv-java/bin/python ] || "$PYTHON" -m venv .venv-java
    .venv-java/bin/pip install -q "pypaimon==0.2.0" "pyarrow<20" pandas
    # Apache Paimon 2.0.0 and 1.4.2 Java (the reference oracles), fetched with Maven
    bash scripts/install_jars.sh
    # PyFlink 2.0.2 with Paimon 2.0.0's Flink connector (.venv-flink), for tests/interop/test_flink.py
    bash scripts/install_flink.sh
    # pyspark 4.0.5 for Paimon 2.0.0's Spark connector (.venv-spark40), for tests/interop/test_spark_sql.py;
    # it and pyspark 4.1.4 (.venv-spark41) run lakestore's Spark path in tests/spark/test_pyspark_versions.py
    bash scripts/install_pyspark.sh 4.0.5 .venv-spark40
    bash scripts/install_pyspark.sh 4.1.4 .venv-spark41
fi
