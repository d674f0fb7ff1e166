#!/usr/bin/env bash
# Installs everything and runs the main job: the Dagster pipeline end to end on local Spark,
# with a warehouse under ./warehouse and sample TPC-H data it generates.
set -euo pipefail
cd "$(dirname "$0")/.."
LAKESTORE_SKIP_ORACLE=1 bash scripts/install.sh
exec .venv/bin/python scripts/run_pipeline.py "$@"
