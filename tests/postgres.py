"""A PostgreSQL server for the session, from the Debian packages (``.ci/run`` installs them):
the catalog-lock tests and the mixed-engine tests share it. Registered as a fixture by
``tests/conftest.py``."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from glob import glob

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass(frozen=True)
class Postgres:
    port: int

    @property
    def uri(self) -> str:
        return f"jdbc:postgresql://127.0.0.1:{self.port}/postgres"

    def lock_options(self) -> dict[str, str]:
        return {"lock.enabled": "true", "uri": self.uri, "jdbc.user": "lake"}


def _pg_bindir() -> str | None:
    found = sorted(glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return os.path.dirname(found[-1])
    initdb = shutil.which("initdb")
    return os.path.dirname(initdb) if initdb else None


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    bindir = _pg_bindir()
    if bindir is None:
        pytest.skip("PostgreSQL binaries not found (Debian package 'postgresql'; .ci/run installs it)")
    pytest.importorskip("psycopg", reason="psycopg is not installed (pip install -e '.[postgres]')")
    # initdb refuses to run as root: run the server as the package's 'postgres' user (or nobody)
    run_as: list[str] = []
    owner = None
    if os.geteuid() == 0:
        name = "postgres" if _user_exists("postgres") else "nobody"
        owner = pwd.getpwnam(name)
        run_as = ["runuser", "-u", name, "--"]
    # not under pytest's 0700 basetemp: the server's user must be able to reach its directory
    root = tempfile.mkdtemp(prefix="lakestore-pg-", dir="/tmp")
    os.chmod(root, 0o755)
    data = os.path.join(root, "data")
    if owner is not None:
        os.chown(root, owner.pw_uid, owner.pw_gid)
    port = free_port()
    try:
        subprocess.run(
            [*run_as, f"{bindir}/initdb", "-D", data, "-U", "lake", "-A", "trust", "--no-sync", "-E", "UTF8"],
            check=True,
            capture_output=True,
            timeout=120,
        )
        subprocess.run(
            [
                *run_as,
                f"{bindir}/pg_ctl",
                "-D",
                data,
                "-l",
                f"{root}/log",
                "-w",
                "-t",
                "60",
                "-o",
                f"-h 127.0.0.1 -p {port} -k {root} -F",
                "start",
            ],
            check=True,
            capture_output=True,
            timeout=90,
        )
        yield Postgres(port)
    finally:
        subprocess.run([*run_as, f"{bindir}/pg_ctl", "-D", data, "-m", "immediate", "-w", "stop"], capture_output=True, timeout=60)
        shutil.rmtree(root, ignore_errors=True)


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True
