#!/usr/bin/env bash
# Installs everything, checks lint/format/types and runs the whole test suite (what CI runs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
# the project's declared tooling is part of passing: lint, formatting, types, then the suite
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy
# the documentation site (mkdocs.yml, docs/): API reference from the docstrings, into site/
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict
mkdir -p .tmp
export TMPDIR="$PWD/.tmp"
exec .venv/bin/python -m pytest -q -p no:cacheprovider --basetemp="$PWD/.tmp/pytest" "$@"
