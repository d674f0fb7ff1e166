#!/usr/bin/env bash
# Creates a virtual environment with one pyspark version (git-ignored; idempotent):
#   bash scripts/install_pyspark.sh VERSION VENV
# scripts/install.sh makes two:
# - .venv-spark40, pyspark 4.0.5: the Spark that Apache Paimon 2.0.0's Spark connector
#   (paimon-spark-4.0, ../shared/jars beside the repository) runs on; it fails on later Spark.
#   tests/oracle/spark_sql_cli.py runs in it (tests/oracle/spark_sql_driver.py drives it), the
#   benchmarks run paimon-spark there (bench/spark_peer.py);
# - .venv-spark41, pyspark 4.1.4.
# tests/spark/test_pyspark_versions.py runs lakestore's own Spark path in both (4.0.5 is the
# oldest pyspark lakestore supports; the main .venv has the newest): each venv also gets
# lakestore's runtime dependencies (pyproject.toml's [project] dependencies; lakestore itself
# comes from the checkout on PYTHONPATH).
# Quick when already installed: pip is only called when something is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
SPARK_VERSION="${1:?usage: install_pyspark.sh VERSION VENV}"
VENV="${2:?usage: install_pyspark.sh VERSION VENV}"
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
# lakestore's runtime dependencies, as pyproject.toml declares them (markers and all)
mapfile -t DEPENDENCIES < <("$VENV/bin/python" - <<'PY'
import tomllib
with open("pyproject.toml", "rb") as f:
    print("\n".join(tomllib.load(f)["project"]["dependencies"]))
PY
)
installed() {
    "$VENV/bin/python" - "$SPARK_VERSION" "${DEPENDENCIES[@]}" <<'PY' 2>/dev/null
import sys
from importlib.metadata import PackageNotFoundError, version
import pyarrow, pandas  # noqa: F401 - the oracle converts rows with them
try:
    from packaging.requirements import Requirement
except ImportError:  # a bare venv: pip's own copy
    from pip._vendor.packaging.requirements import Requirement
if version("pyspark") != sys.argv[1]:
    sys.exit(1)
for text in sys.argv[2:]:
    requirement = Requirement(text)
    if requirement.marker is not None and not requirement.marker.evaluate():
        continue
    try:
        if not requirement.specifier.contains(version(requirement.name), prereleases=True):
            sys.exit(1)
    except PackageNotFoundError:
        sys.exit(1)
PY
}
if ! installed; then
    "$VENV/bin/pip" install -q --disable-pip-version-check "pyspark==$SPARK_VERSION" "pyarrow>=16" "pandas>=2.2,<3" "${DEPENDENCIES[@]}"
fi
