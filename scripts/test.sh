#!/usr/bin/env bash
# Installs everything and runs the whole test suite (what CI runs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
mkdir -p .tmp
export TMPDIR="$PWD/.tmp"
exec .venv/bin/python -m pytest -q -p no:cacheprovider --basetemp="$PWD/.tmp/pytest" "$@"
