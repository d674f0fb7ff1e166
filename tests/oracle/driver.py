"""Drive the pypaimon oracle (its own venv, pyarrow<20) from our test venv.

Every call runs ``tests/oracle/oracle_cli.py`` with the oracle venv's python and
exchanges data as Arrow IPC files.  Nothing here imports pypaimon or lakestore.

    from tests.oracle.driver import oracle_available, oracle_read, oracle_write
    oracle_write(wh, "db.t", tbl, primary_keys=("dt", "id"), partition_keys=("dt",),
                 options={"bucket": "2"})
    got = oracle_read(wh / "db.db" / "t")
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent.parent
CLI = HERE / "oracle_cli.py"
DEFAULT_TIMEOUT = float(os.environ.get("LAKESTORE_ORACLE_TIMEOUT", "600"))


class OracleError(RuntimeError):
    """The oracle CLI failed; message carries the command, exit code and stderr."""

    def __init__(self, cmd, returncode, stdout, stderr):
        self.cmd = cmd
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        super().__init__(
            f"oracle command failed (exit {returncode}): {' '.join(map(str, cmd))}\n"
            f"--- stderr ---\n{stderr.strip()[-8000:]}\n--- stdout ---\n{stdout.strip()[-2000:]}"
        )


def oracle_python() -> Path:
    env = os.environ.get("LAKESTORE_ORACLE_PYTHON")
    if env:
        return Path(env)
    return REPO_ROOT / ".venv-oracle" / "bin" / "python"


@functools.cache
def _probe(python: str) -> bool:
    if not Path(python).exists():
        return False
    try:
        res = subprocess.run([python, "-c", "import pypaimon, pyarrow, fastavro"], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return False
    return res.returncode == 0


def oracle_available() -> bool:
    return _probe(str(oracle_python()))


def run_cli(*args: Any, timeout: float = DEFAULT_TIMEOUT) -> dict:
    """Run one oracle_cli subcommand; return its JSON result."""
    cmd = [str(oracle_python()), str(CLI)] + [str(a) for a in args]
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # never let the oracle see our packages
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=str(HERE))
    except subprocess.TimeoutExpired as e:
        raise OracleError(cmd, "timeout", e.stdout or "", e.stderr or "") from e
    if res.returncode != 0:
        raise OracleError(cmd, res.returncode, res.stdout, res.stderr)
    lines = [ln for ln in res.stdout.splitlines() if ln.strip()]
    if not lines:
        raise OracleError(cmd, res.returncode, res.stdout, res.stderr + "\n(no JSON output)")
    try:
        return json.loads(lines[-1])
    except ValueError as e:
        raise OracleError(cmd, res.returncode, res.stdout, res.stderr) from e


def _write_ipc(table: pa.Table, path: Path) -> None:
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
        w.write_table(table)


def _read_ipc(path: Path) -> pa.Table:
    with pa.memory_map(str(path), "r") as src:
        return pa.ipc.open_file(src).read_all()


def oracle_read(
    table_path,
    *,
    snapshot_id: int | None = None,
    native: bool = False,
    return_info: bool = False,
    tag: str | None = None,
    timestamp_millis: int | None = None,
):
    """Read a whole table with pypaimon (native=True: the pypaimon-rust reader).

    Returns a pa.Table in table-schema column order; with return_info=True returns
    (table, info) where info says e.g. whether the native route was really used."""
    with tempfile.TemporaryDirectory(prefix="oracle-read-") as tmp:
        out = Path(tmp) / "out.arrow"
        args = ["read", "--table-path", Path(table_path).resolve(), "--out", out]
        if snapshot_id is not None:
            args += ["--snapshot-id", snapshot_id]
        if tag is not None:
            args += ["--tag", tag]
        if timestamp_millis is not None:
            args += ["--timestamp-millis", timestamp_millis]
        if native:
            args.append("--native")
        info = run_cli(*args)
        table = _read_ipc(out)
    return (table, info) if return_info else table


def oracle_write(
    warehouse,
    identifier: str,
    data: pa.Table,
    *,
    primary_keys: Iterable[str] = (),
    partition_keys: Iterable[str] = (),
    options: Mapping[str, Any] | None = None,
    native: bool = False,
    overwrite_partition: Mapping[str, Any] | None = None,
) -> dict:
    """Create db/table if missing and write ``data`` in one batch commit with pypaimon.

    overwrite_partition: None = append; {} = overwrite whole table; {"dt": "x"} = that
    partition.  Returns the CLI's JSON info (snapshot_id, native_write_used, ...)."""
    with tempfile.TemporaryDirectory(prefix="oracle-write-") as tmp:
        src = Path(tmp) / "data.arrow"
        _write_ipc(data, src)
        args = ["write", "--warehouse", Path(warehouse).resolve(), "--identifier", identifier, "--data", src]
        pks = list(primary_keys)
        parts = list(partition_keys)
        if pks:
            args += ["--primary-keys", ",".join(pks)]
        if parts:
            args += ["--partition-keys", ",".join(parts)]
        if options:
            args += ["--options", json.dumps({k: str(v) for k, v in options.items()})]
        if native:
            args.append("--native")
        if overwrite_partition is not None:
            args += ["--overwrite-partition", json.dumps(dict(overwrite_partition))]
        return run_cli(*args)


def oracle_snapshot(table_path, snapshot_id: int | None = None) -> dict | None:
    args = ["snapshot", "--table-path", Path(table_path).resolve()]
    if snapshot_id is not None:
        args += ["--snapshot-id", snapshot_id]
    return run_cli(*args)["snapshot"]


def oracle_manifests(table_path, snapshot_id: int | None = None) -> dict:
    """Decoded manifest lists + entries of a snapshot (bytes as {"hex": ...})."""
    args = ["manifests", "--table-path", Path(table_path).resolve()]
    if snapshot_id is not None:
        args += ["--snapshot-id", snapshot_id]
    return run_cli(*args)


def oracle_streaming_read(table_path, *, native: bool = False, max_polls: int = 20) -> pa.Table:
    with tempfile.TemporaryDirectory(prefix="oracle-sread-") as tmp:
        out = Path(tmp) / "out.arrow"
        args = ["streaming-read", "--table-path", Path(table_path).resolve(), "--out", out, "--max-polls", max_polls]
        if native:
            args.append("--native")
        run_cli(*args)
        return _read_ipc(out)


def oracle_binary_rows(data: pa.Table) -> list:
    """pypaimon's BinaryRow serialization (hex, with 4-byte arity prefix) of each row."""
    with tempfile.TemporaryDirectory(prefix="oracle-brow-") as tmp:
        src = Path(tmp) / "data.arrow"
        _write_ipc(data, src)
        return run_cli("binary-row", "--data", src)["rows"]


def oracle_buckets(data: pa.Table, bucket_keys: Iterable[str], num_buckets: int) -> list:
    """pypaimon's bucket function for each row of ``data`` (not a real write)."""
    with tempfile.TemporaryDirectory(prefix="oracle-bucket-") as tmp:
        src = Path(tmp) / "data.arrow"
        _write_ipc(data, src)
        return run_cli("compute-bucket", "--data", src, "--bucket-keys", ",".join(bucket_keys), "--num-buckets", num_buckets)["buckets"]


def oracle_alter(warehouse, identifier: str, changes: list) -> dict:
    """Alter a table with pypaimon: changes like ["add", "c", "BIGINT"], ["rename", "a", "b"],
    ["drop", "c"]. Returns the new fields as [id, name, type]."""
    return run_cli("alter", "--warehouse", Path(warehouse).resolve(), "--identifier", identifier, "--changes", json.dumps(changes))
