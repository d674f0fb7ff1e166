"""Real servers for the object-storage tests: moto's S3 server and PostgreSQL, both started here
as separate processes on free loopback ports and stopped when the session ends."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from glob import glob
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ACCESS_KEY, SECRET_KEY = "lakestore-test", "lakestore-secret"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_port(port: int, proc: subprocess.Popen, what: str, timeout: float = 30.0, log_path: str | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            detail = Path(log_path).read_text()[-2000:] if log_path else ""
            raise RuntimeError(f"{what} exited early with code {proc.returncode}: {detail}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"{what} did not listen on 127.0.0.1:{port} within {timeout} s")


@dataclass(frozen=True)
class S3Server:
    endpoint: str

    def options(self, **extra: str) -> dict[str, str]:
        return {"s3.endpoint": self.endpoint, "s3.access-key": ACCESS_KEY, "s3.secret-key": SECRET_KEY, "s3.region": "us-east-1", **extra}

    def client(self):
        import boto3

        return boto3.client(
            "s3", endpoint_url=self.endpoint, aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY, region_name="us-east-1"
        )

    def new_bucket(self) -> str:
        name = f"wh-{uuid.uuid4().hex[:12]}"
        self.client().create_bucket(Bucket=name)
        return name


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory) -> Iterator[S3Server]:
    pytest.importorskip("moto", reason="moto[server] is not installed (pip install -e '.[dev]')")
    port = free_port()
    # the server logs every request: into a file, never a pipe nobody drains (a full pipe blocks
    # the server mid-request and the clients time out)
    log = open(tmp_path_factory.mktemp("s3") / "server.log", "w")
    proc = subprocess.Popen([sys.executable, str(HERE / "s3_server.py"), str(port)], stdout=log, stderr=subprocess.STDOUT)
    try:
        _wait_for_port(port, proc, "moto S3 server", log_path=log.name)
        yield S3Server(f"http://127.0.0.1:{port}")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.fixture
def bucket(s3_server: S3Server) -> str:
    return s3_server.new_bucket()


# -- PostgreSQL ----------------------------------------------------------------------------------
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
