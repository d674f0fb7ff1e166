"""A ``lakestore serve`` process on a free loopback port for the REST tests, and a small HTTP
client speaking the protocol (urllib: nothing the server uses)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from lakestore.rest.auth import AuthStore
from tests.postgres import free_port

REPO = Path(__file__).resolve().parent.parent.parent
PREFIX = "lakestore"


def require_server_packages() -> None:
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:  # pragma: no cover - CI has the dev extra
        pytest.skip(f"the server extra is not installed: {exc}")


@dataclass
class Server:
    warehouse: Path
    port: int
    log: Path
    auth_db: str | None = None
    log_level: str = "warning"
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _auth_args(self) -> list[str]:
        return ["--warehouse", str(self.warehouse)] + (["--auth-db", self.auth_db] if self.auth_db else [])

    def init(self) -> Server:
        """``lakestore serve-admin init``: the auth database and the admin token file."""
        self.admin("init")
        return self

    def start(self) -> Server:
        log = self.log.open("ab")
        cmd = [sys.executable, "-m", "lakestore.cli", "serve", *self._auth_args(), "--port", str(self.port), "--log-level", self.log_level]
        self.proc = subprocess.Popen(cmd, cwd=REPO, stdout=log, stderr=log)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"lakestore serve exited: {self.log.read_text()[-3000:]}")
            try:
                urllib.request.urlopen(f"{self.uri}/v1/config", timeout=1)
            except urllib.error.HTTPError:
                return self  # 401: it answers
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("lakestore serve did not start within 30 s")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()

    @property
    def admin_token(self) -> str:
        return (self.warehouse / ".lakestore-admin-token").read_text().strip()

    def admin(self, *args: str) -> str:
        """``lakestore serve-admin`` on this server's auth database; returns stdout."""
        cmd = [sys.executable, "-m", "lakestore.cli", "serve-admin", *self._auth_args(), *args]
        res = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=60)
        if res.returncode != 0:
            raise RuntimeError(f"serve-admin {args} failed: {res.stderr}")
        return res.stdout

    def principal(self, name: str, *grants: tuple[str, str]) -> str:
        """Add ``name`` with (level, scope) grants in the server's auth database (shared with
        the running server, as ``serve-admin`` shares it); returns a fresh token."""
        store = AuthStore(self.auth_db or str(self.warehouse / ".lakestore-auth.sqlite"))
        try:
            store.add_principal(name)
            for level, scope in grants:
                store.grant(name, level, scope)
            return store.issue_token(name)[1]
        finally:
            store.close()

    def call(self, method: str, path: str, token: str | None, body: Any = None) -> tuple[int, Any]:
        """(status, JSON body); ``path`` after ``/v1/<prefix>`` unless it starts with ``/v1``."""
        url = self.uri + (path if path.startswith("/v1") else f"/v1/{PREFIX}{path}")
        data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        req = urllib.request.Request(url, data=data, method=method)
        req.add_header("Content-Type", "application/json")
        if token is not None:
            req.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(req, timeout=60) as resp:
                raw = resp.read()
                return resp.status, json.loads(raw) if raw else None
        except urllib.error.HTTPError as err:
            raw = err.read()
            return err.code, json.loads(raw) if raw else None

    def catalog_options(self, token: str) -> dict[str, str]:
        """Options of Paimon's REST catalog (Java and pypaimon) for this server."""
        return {"metastore": "rest", "uri": self.uri, "warehouse": PREFIX, "token.provider": "bear", "token": token}


def start_server(tmp: Path, *, auth_db: str | None = None, log_level: str = "warning") -> Server:
    """A server on a fresh warehouse, its auth database made by ``serve-admin init`` first."""
    require_server_packages()
    warehouse = tmp / "warehouse"
    warehouse.mkdir(parents=True, exist_ok=True)
    return Server(warehouse, free_port(), tmp / "server.log", auth_db=auth_db, log_level=log_level).init().start()


def warehouse_state(warehouse: Path) -> dict[str, int]:
    """Every file under the warehouse (but the auth database) with its size: equal before and
    after a request iff the request wrote nothing."""
    out = {}
    for path in sorted(warehouse.rglob("*")):
        if path.is_file() and not path.name.startswith(".lakestore-"):
            out[str(path.relative_to(warehouse))] = path.stat().st_size
    return out
