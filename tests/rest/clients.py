"""Drive pypaimon 2.1's REST catalog (in the oracle venv) against a test server."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.oracle.driver import oracle_available, oracle_python

SCRIPT = Path(__file__).resolve().parent / "pypaimon_client.py"


def require_pypaimon() -> None:
    if not oracle_available():
        if os.environ.get("LAKESTORE_REQUIRE_ALL") == "1":
            pytest.fail("LAKESTORE_REQUIRE_ALL=1 but the pypaimon oracle venv (.venv-oracle) is missing")
        pytest.skip("the pypaimon oracle venv (.venv-oracle) is missing")


def pypaimon_cmd(options: dict[str, str], ops: list[dict[str, Any]]) -> list[str]:
    return [str(oracle_python()), str(SCRIPT), json.dumps({"options": options, "ops": ops})]


def pypaimon(options: dict[str, str], *ops: dict[str, Any], timeout: float = 300) -> list[dict[str, Any]]:
    """Run ops with pypaimon's REST catalog; one result per op (``{"ok": ...}`` or ``{"error": ...}``)."""
    require_pypaimon()
    res = subprocess.run(pypaimon_cmd(options, list(ops)), capture_output=True, text=True, timeout=timeout)
    if res.returncode != 0:
        raise AssertionError(f"pypaimon client failed:\n{res.stderr[-4000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])
