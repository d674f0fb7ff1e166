"""Real servers for the object-storage tests: moto's S3 server and PostgreSQL, both started here
as separate processes on free loopback ports and stopped when the session ends."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
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
