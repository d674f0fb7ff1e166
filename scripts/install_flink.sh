#!/usr/bin/env bash
# Creates .venv-flink (git-ignored; idempotent): PyFlink 2.0.2, the Flink version Apache Paimon
# 2.0.0's Flink connector (paimon-flink-2.0, fetched by scripts/install_jars.sh into .jars/) is
# built for. tests/oracle/flink_cli.py runs in it and tests/oracle/flink_driver.py drives it.
# Quick when already installed: pip is only called when the pinned version is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
FLINK_VERSION=2.0.2
VENV=.venv-flink
installed() {
    "$VENV/bin/python" - "$FLINK_VERSION" <<'EOF' 2>/dev/null
import sys
from importlib.metadata import version
sys.exit(0 if version("apache-flink") == sys.argv[1] and version("apache-flink-libraries") == sys.argv[1] else 1)
EOF
}
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
if ! installed; then
    "$VENV/bin/pip" install -q --disable-pip-version-check "apache-flink==$FLINK_VERSION"
fi
