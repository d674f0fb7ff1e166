"""Hostile input to ``lakestore serve``, replayed against a real server on loopback: oversized
and endless bodies (with no token, with no grant, with every grant), deep JSON, names the file
system cannot hold or that end in a newline, wrong JSON types, out-of-range field ids, control
characters in URLs, and a missing, corrupt or hijacked auth store. Each answers its 4xx in the
protocol's error body (401s with ``WWW-Authenticate: Bearer``, no server path in any message),
changes no file anywhere, and leaves the server answering; a 200 MB body leaves its memory as
it was (``VmHWM``, the peak resident size, from ``/proc``)."""

from __future__ import annotations

import json
import os
import select
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import lakestore
from tests.postgres import free_port
from tests.rest.server import REPO, Server, start_server

BIG = 200 * 1024 * 1024
COLUMN = {"fields": [{"id": 0, "name": "a", "type": "INT"}]}
T = "/databases/h/tables/t"
ERROR_KEYS = {"message", "code", "resourceType", "resourceName"}


@dataclass
class Setup:
    server: Server
    root: Path  # everything the test's server may touch: warehouse, auth database, token file
    admin: str
    nobody: str  # a principal without any grant
    reader: str  # read on h.t

    def files(self) -> dict[str, tuple[int, int]]:
        """Every file under the root (the log and the auth database aside) with size and mtime."""
        out = {}
        for path in sorted(self.root.rglob("*")):
            if path.is_file() and path.name != "server.log" and not path.name.startswith(".lakestore-auth.sqlite"):
                st = path.stat()
                out[str(path.relative_to(self.root))] = (st.st_size, st.st_mtime_ns)
        return out

    def alive(self) -> None:
        status, body = self.server.call("GET", T, self.admin)
        assert status == 200 and body["name"] == "t", body


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    root = tmp_path_factory.mktemp("rest-hostile")
    server = start_server(root, log_level="info")
    catalog = lakestore.Catalog(str(server.warehouse))
    catalog.create_database("h")
    table = catalog.create_table("h.t", schema=pa.schema([("dt", pa.string()), ("id", pa.int64())]), partition_keys=["dt"])
    table.write_arrow(pa.table({"dt": ["a"], "id": pa.array([1], pa.int64())}))
    table.manage.create_tag("v1", 1)
    table.manage.create_branch("b1", tag="v1")
    nobody = server.principal("nobody")
    reader = server.principal("reader", ("read", "h.t"))
    yield Setup(server, root, server.admin_token, nobody, reader)
    server.stop()


def refused(setup: Setup, status: int, body: Any, code: int) -> None:
    """``code`` in the protocol's error body, naming no server path."""
    assert status == code, body
    assert isinstance(body, dict) and set(body) == ERROR_KEYS and body["code"] == code and body["message"], body
    warehouse = str(setup.server.warehouse)
    assert warehouse not in body["message"] and os.path.realpath(warehouse) not in body["message"], body


def peak_rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def raw_request(port: int, path: str, token: str | None, size: int, *, chunked: bool = False) -> tuple[int, dict[str, str], bytes, int]:
    """POST ``size`` bytes to ``path`` (declared in Content-Length, or chunked), sending only
    until the server answers: (status, headers, body, bytes sent)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=60)
    head = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json"]
    head += [f"Authorization: Bearer {token}"] if token else []
    head += ["Transfer-Encoding: chunked"] if chunked else [f"Content-Length: {size}"]
    sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
    sock.setblocking(False)
    piece = b" " * (1 << 20)
    pending, sent, sending, response = b"", 0, True, b""
    try:
        while True:
            readable, writable, _ = select.select([sock], [sock] if sending else [], [], 60)
            if not readable and not writable:
                raise TimeoutError("the server neither read nor answered for 60 s")
            if readable:
                data = sock.recv(1 << 16)
                if not data:
                    break
                response += data
                header, sep, rest = response.partition(b"\r\n\r\n")
                length = next(
                    (int(line.split(b":")[1]) for line in header.split(b"\r\n") if line.lower().startswith(b"content-length:")), None
                )
                if sep and length is not None and len(rest) >= length:
                    break
                continue
            if not pending:
                if sent >= size:
                    pending, sending = (b"0\r\n\r\n" if chunked else b""), chunked
                    if not pending:
                        sending = False
                        continue
                else:
                    step = min(len(piece), size - sent)
                    pending = (f"{step:x}\r\n".encode() + piece[:step] + b"\r\n") if chunked else piece[:step]
                    sent += step
            try:
                pending = pending[sock.send(pending) :]
            except BlockingIOError:
                continue
            except (BrokenPipeError, ConnectionResetError):
                sending = False
            if not pending and sent >= size and not chunked:
                sending = False
    finally:
        sock.close()
    header, _, body = response.partition(b"\r\n\r\n")
    lines = header.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split()[1]), headers, body, sent


# -- bodies ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("who", "code"),
    [("no token", 401), ("a principal without grants", 403), ("an admin", 413)],
)
def test_a_200_mb_body_is_refused_before_it_is_read(setup: Setup, who: str, code: int):
    token = {"no token": None, "a principal without grants": setup.nobody, "an admin": setup.admin}[who]
    before, files = peak_rss_kb(setup.server.proc.pid), setup.files()  # type: ignore[union-attr]
    status, headers, body, sent = raw_request(setup.server.port, f"/v1/lakestore{T}/commit", token, BIG)
    after = peak_rss_kb(setup.server.proc.pid)  # type: ignore[union-attr]
    print(f"\n200 MB body from {who}: {status}, peak RSS {before} kB -> {after} kB, {sent >> 20} MB sent before the answer")
    refused(setup, status, json.loads(body), code)
    if code == 401:
        assert headers.get("www-authenticate") == "Bearer"
    assert after - before < 16 * 1024, f"the server grew from {before} kB to {after} kB"
    assert sent < BIG // 2, "the server read the body instead of refusing it"
    assert setup.files() == files
    setup.alive()


def test_a_chunked_body_is_counted_and_cut_at_the_limit(setup: Setup):
    before, files = peak_rss_kb(setup.server.proc.pid), setup.files()  # type: ignore[union-attr]
    status, _, body, sent = raw_request(setup.server.port, f"/v1/lakestore{T}/commit", setup.admin, BIG, chunked=True)
    after = peak_rss_kb(setup.server.proc.pid)  # type: ignore[union-attr]
    print(f"\nchunked 200 MB body: {status}, peak RSS {before} kB -> {after} kB, {sent >> 20} MB sent before the answer")
    refused(setup, status, json.loads(body), 413)
    assert after - before < 16 * 1024 and sent < BIG // 2
    assert setup.files() == files
    setup.alive()


def test_a_body_just_over_the_limit_is_refused_and_one_under_it_is_parsed(setup: Setup):
    files = setup.files()
    limit = 4 * 1024 * 1024
    status, _, body, _ = raw_request(setup.server.port, "/v1/lakestore/databases", setup.admin, limit + 1)
    refused(setup, status, json.loads(body), 413)
    status, body = setup.server.call("POST", T + "/tags", setup.admin, b'{"tagName": "5", "pad": "' + b"x" * (limit - 100) + b'"}')
    refused(setup, status, body, 400)  # read and parsed: the tag name is refused
    assert "number" in body["message"]
    assert setup.files() == files
    setup.alive()


@pytest.mark.parametrize("depth", [65, 1000, 100_000])
def test_deep_json_is_refused_before_it_is_parsed(setup: Setup, depth: int):
    files = setup.files()
    for path in ("/databases", T + "/commit", "/databases/h/tables"):
        status, body = setup.server.call("POST", path, setup.admin, b'{"a": ' + b"[" * (depth - 1) + b"]" * (depth - 1) + b"}")
        refused(setup, status, body, 400)
        assert "nests deeper than 64" in body["message"]
    assert setup.files() == files
    setup.alive()


WRONG_TYPES: list[tuple[str, str, Any]] = [
    ("POST", "/databases", []),
    ("POST", "/databases", "name"),
    ("POST", "/databases", {"name": 5}),
    ("POST", "/databases", {"name": "ok", "options": ["x"]}),
    ("POST", "/databases/h/tables", {"identifier": "h.x"}),
    ("POST", "/databases/h/tables", {"identifier": {"database": "h", "object": "x"}, "schema": {"fields": "id"}}),
    (
        "POST",
        "/databases/h/tables",
        {"identifier": {"database": "h", "object": "x"}, "schema": {"fields": [{"id": "0", "name": "a", "type": "INT"}]}},
    ),
    (
        "POST",
        "/databases/h/tables",
        {"identifier": {"database": "h", "object": "x"}, "schema": {"fields": [{"id": 0, "name": "a", "type": 5}]}},
    ),
    ("POST", "/tables/rename", {"source": "h.t", "destination": {"database": "h", "object": "u"}}),
    ("POST", T, {"changes": {"action": "setOption"}}),
    ("POST", T, {"changes": [{"action": "addColumn", "fieldNames": "z", "dataType": "INT"}]}),
    ("POST", T + "/commit", {"snapshot": []}),
    ("POST", T + "/commit", {"snapshot": {"id": "2"}}),
    ("POST", T + "/rollback", {"instant": {"type": "snapshot", "snapshotId": "1"}}),
    ("POST", T + "/rollback", {"instant": {"type": "snapshot", "snapshotId": 2**70}}),
    ("POST", T + "/partitions/drop", {"partitionSpecs": [{"dt": 1}]}),
    ("POST", T + "/partitions/drop", {"partitionSpecs": "dt=a"}),
    ("POST", T + "/branches", {"branch": ["b"]}),
    ("POST", T + "/tags", {"tagName": "v2", "snapshotId": True}),
    ("POST", T + "/tags", {"tagName": "v2", "snapshotId": 10**30}),
    ("GET", T + "/snapshots/" + "9" * 5000, None),
    ("GET", T + "/snapshots?maxResults=" + "9" * 5000, None),
]


@pytest.mark.parametrize(("method", "path", "body"), WRONG_TYPES, ids=[f"{m} {p[-30:]} {str(b)[:40]}" for m, p, b in WRONG_TYPES])
def test_wrong_json_types_answer_400(setup: Setup, method: str, path: str, body: Any):
    files = setup.files()
    status, answer = setup.server.call(method, path, setup.admin, body)
    refused(setup, status, answer, 400)
    assert setup.files() == files
    setup.alive()


# -- names -------------------------------------------------------------------------------------
LONG = "n" * 300
NAMES: list[tuple[str, str, Any]] = [
    ("POST", "/databases", {"name": "x\n"}),
    ("POST", "/databases", {"name": LONG}),
    ("POST", "/databases", {"name": "x\x00"}),
    ("GET", "/databases/x%0A", None),
    ("GET", f"/databases/{LONG}/tables", None),
    (
        "POST",
        "/databases/h/tables",
        {"identifier": {"database": "h", "object": "x\n"}, "schema": COLUMN},
    ),
    (
        "POST",
        "/databases/h/tables",
        {"identifier": {"database": "h", "object": LONG}, "schema": COLUMN},
    ),
    ("GET", "/databases/h/tables/t%0A", None),
    ("GET", "/databases/h/tables/t$branch_b1%0A", None),
    ("POST", "/tables/rename", {"source": {"database": "h", "object": "t"}, "destination": {"database": "h", "object": LONG}}),
    ("POST", T + "/branches", {"branch": "b\n"}),
    ("POST", T + "/branches", {"branch": "b" * 250}),
    ("DELETE", T + "/branches/b1%0A", None),
    ("POST", T + "/tags", {"tagName": "v\n"}),
    ("POST", T + "/tags", {"tagName": "v\x00x"}),
    ("POST", T + "/tags", {"tagName": "v" * 252}),
    ("DELETE", T + "/tags/v1%00", None),
    ("DELETE", T + f"/tags/{LONG}", None),
    ("GET", T + "/tags/v1%0A", None),
    ("POST", T + "/rollback", {"instant": {"type": "tag", "tagName": "v1\x00"}}),
    ("POST", T + "/partitions/drop", {"partitionSpecs": [{"dt": "a\x00"}]}),
    ("POST", T + "/partitions/drop", {"partitionSpecs": [{"dt": "a" * 300}]}),
    ("GET", "/databases/h/views/v%0A", None),
]


@pytest.mark.parametrize(("method", "path", "body"), NAMES, ids=[f"{m} {p[-24:]} {str(b)[:40]}" for m, p, b in NAMES])
def test_names_are_checked_in_full_and_by_length(setup: Setup, method: str, path: str, body: Any):
    files = setup.files()
    status, answer = setup.server.call(method, path, setup.admin, body)
    refused(setup, status, answer, 400)
    assert setup.files() == files
    assert lakestore.Catalog(str(setup.server.warehouse)).list_databases() == ["h"]
    setup.alive()


@pytest.mark.parametrize(
    "fields",
    [
        [{"id": 2**31, "name": "a", "type": "INT"}],
        [{"id": -1, "name": "a", "type": "INT"}],
        [{"id": 0, "name": "", "type": "INT"}],
        [{"id": 0, "name": "a", "type": {"type": "ROW", "fields": [{"id": 2**40, "name": "b", "type": "INT"}]}}],
        [{"id": 0, "name": "a", "type": {"type": "ROW", "fields": [{"id": 1, "name": " ", "type": "INT"}]}}],
    ],
)
def test_create_table_refuses_what_paimon_java_cannot_open(setup: Setup, fields: list[dict[str, Any]]):
    files = setup.files()
    body = {"identifier": {"database": "h", "object": "odd"}, "schema": {"fields": fields}}
    status, answer = setup.server.call("POST", "/databases/h/tables", setup.admin, body)
    refused(setup, status, answer, 400)
    assert setup.files() == files
    setup.alive()


# -- answers and logs --------------------------------------------------------------------------
def test_error_bodies_name_no_server_path(setup: Setup):
    files = setup.files()
    for method, path, body, code in [
        ("GET", "/databases/absent", None, 404),
        ("GET", "/databases/h/tables/absent", None, 404),
        ("GET", T + "/snapshots/99", None, 404),
        ("POST", T + "/rollback", {"instant": {"type": "snapshot", "snapshotId": 99}}, 404),
        ("DELETE", T + "/tags/absent", None, 404),
    ]:
        status, answer = setup.server.call(method, path, setup.admin, body)
        refused(setup, status, answer, code)
    assert setup.files() == files


def test_every_401_challenges_for_a_bearer_token(setup: Setup):
    for token, path in [(None, "/v1/config"), ("lks_0_bad", T), (None, "/v1/elsewhere"), ("lks_0_bad", "/databases")]:
        status, headers, body, _ = raw_request(setup.server.port, path if path.startswith("/v1") else f"/v1/lakestore{path}", token, 2)
        assert status == 401 and headers.get("www-authenticate") == "Bearer", (path, headers)
    setup.alive()


def test_control_characters_from_urls_are_escaped_in_the_log(setup: Setup):
    marker = "FORGED-LOG-LINE"
    for token in (None, setup.admin):
        sock = socket.create_connection(("127.0.0.1", setup.server.port), timeout=30)
        auth = f"Authorization: Bearer {token}\r\n" if token else ""
        sock.sendall(f"GET /v1/lakestore/databases/%1b%5b31m%0a{marker}%00 HTTP/1.1\r\nHost: x\r\n{auth}Connection: close\r\n\r\n".encode())
        assert sock.recv(1 << 16).split(b" ")[1] in (b"400", b"401")
        sock.close()
    log = setup.server.log.read_text(errors="replace")
    assert marker in log and "\x1b" not in log and "\x00" not in log
    assert not any(line.startswith(marker) for line in log.splitlines()), "a URL forged a log line"
    assert "\\x1b[31m" in log
    setup.alive()


# -- the auth store ----------------------------------------------------------------------------
def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lakestore.cli", *args], cwd=REPO, capture_output=True, text=True, timeout=60)


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_serve_never_creates_an_auth_database_itself(tmp_path: Path):
    warehouse = tmp_path / "wh"
    warehouse.mkdir()
    res = _cli("serve", "--warehouse", str(warehouse), "--port", str(free_port()))
    assert res.returncode == 2 and "no auth database" in res.stderr and "serve-admin init" in res.stderr, res.stderr
    assert _tree(tmp_path) == {}
    # a corrupt database stops it too, untouched
    (warehouse / ".lakestore-auth.sqlite").write_bytes(b"not a database" * 100)
    before = _tree(tmp_path)
    res = _cli("serve", "--warehouse", str(warehouse), "--port", str(free_port()))
    assert res.returncode == 2 and "cannot open the auth database" in res.stderr, res.stderr
    res = _cli("serve-admin", "--warehouse", str(warehouse), "add-principal", "eve")
    assert res.returncode == 1 and "cannot open the auth database" in res.stderr, res.stderr
    assert _tree(tmp_path) == before
    # as does a database that is not lakestore's
    (warehouse / ".lakestore-auth.sqlite").unlink()
    sqlite3.connect(warehouse / ".lakestore-auth.sqlite").execute("CREATE TABLE other (x)").connection.commit()
    res = _cli("serve", "--warehouse", str(warehouse), "--port", str(free_port()))
    assert res.returncode == 2 and "is not a lakestore auth database" in res.stderr, res.stderr


def test_an_unreadable_auth_database_stops_the_server(tmp_path: Path):
    assert _cli("serve-admin", "--warehouse", str(tmp_path), "init").returncode == 0
    db = tmp_path / ".lakestore-auth.sqlite"
    if os.geteuid() == 0:  # root reads any file: a directory in its place is unreadable to anyone
        db.unlink()
        db.mkdir()
    else:
        db.chmod(0)
    try:
        res = _cli("serve", "--warehouse", str(tmp_path), "--port", str(free_port()))
        assert res.returncode == 2 and "cannot open the auth database" in res.stderr, res.stderr
    finally:
        if db.is_file():
            db.chmod(0o600)


def test_init_creates_owner_only_files_once_and_never_through_a_link(tmp_path: Path):
    warehouse = tmp_path / "wh"
    res = _cli("serve-admin", "--warehouse", str(warehouse), "init")
    assert res.returncode == 0, res.stderr
    token_file, db = warehouse / ".lakestore-admin-token", warehouse / ".lakestore-auth.sqlite"
    assert token_file.stat().st_mode & 0o777 == 0o600 and db.stat().st_mode & 0o777 == 0o600
    before = _tree(tmp_path)
    res = _cli("serve-admin", "--warehouse", str(warehouse), "init")  # the token file exists: refused
    assert res.returncode == 1 and "exists already" in res.stderr, res.stderr
    assert _tree(tmp_path) == before
    token_file.unlink()
    res = _cli("serve-admin", "--warehouse", str(warehouse), "init")  # the database exists: refused
    assert res.returncode == 1 and "exists already" in res.stderr, res.stderr
    assert _tree(tmp_path) == {k: v for k, v in before.items() if k != "wh/.lakestore-admin-token"}
    # a link planted where the token goes is never followed (nor replaced)
    other = tmp_path / "other"
    other.mkdir()
    target = tmp_path / "victim"
    target.write_text("keep")
    (other / ".lakestore-admin-token").symlink_to(target)
    res = _cli("serve-admin", "--warehouse", str(other), "init")
    assert res.returncode == 1 and "exists already" in res.stderr, res.stderr
    assert target.read_text() == "keep" and not (other / ".lakestore-auth.sqlite").exists()
    (other / ".lakestore-admin-token").unlink()
    (other / ".lakestore-auth.sqlite").symlink_to(target)
    res = _cli("serve-admin", "--warehouse", str(other), "init")
    assert res.returncode == 1 and "exists already" in res.stderr, res.stderr
    assert target.read_text() == "keep" and not (other / ".lakestore-admin-token").exists()


def test_removed_principals_lose_every_token_at_once(setup: Setup):
    server = setup.server
    first = server.principal("temp", ("read", "h.t"))
    _, second = server.admin("issue-token", "temp").split()
    for token in (first, second):
        assert server.call("GET", T, token)[0] == 200
    server.admin("remove-principal", "temp")
    for token in (first, second):
        status, body = server.call("GET", T, token)
        refused(setup, status, body, 401)
    listed = server.admin("list")
    assert '"temp"' not in listed.split('"tokens"')[0] and "temp" not in listed.split('"grants"')[1]
    res = _cli("serve-admin", "--warehouse", str(server.warehouse), "remove-principal", "temp")
    assert res.returncode == 3 and "no principal" in res.stderr
    setup.alive()


def test_a_token_of_a_principal_deleted_by_hand_is_refused(setup: Setup):
    server = setup.server
    token = server.principal("gone", ("read", "h.t"))
    assert server.call("GET", T, token)[0] == 200
    conn = sqlite3.connect(server.warehouse / ".lakestore-auth.sqlite")
    conn.execute("DELETE FROM lakestore_principals WHERE name = 'gone'")
    conn.commit()
    conn.close()
    status, body = server.call("GET", T, token)
    refused(setup, status, body, 401)
    setup.alive()


def test_serve_init_is_a_first_start_only(tmp_path: Path):
    warehouse = tmp_path / "wh"
    server = Server(warehouse, free_port(), tmp_path / "server.log")
    cmd = [sys.executable, "-m", "lakestore.cli", "serve", "--warehouse", str(warehouse), "--port", str(server.port), "--init"]
    log = server.log.open("ab")
    server.proc = subprocess.Popen(cmd, cwd=REPO, stdout=log, stderr=log)
    try:
        for _ in range(300):
            if server.proc.poll() is not None:
                raise AssertionError(server.log.read_text())
            try:
                if server.call("GET", "/v1/config", None)[0] == 401:
                    break
            except OSError:
                pass
            time.sleep(0.1)
        assert (warehouse / ".lakestore-admin-token").stat().st_mode & 0o777 == 0o600
        assert server.call("GET", "/v1/config", server.admin_token)[0] == 200
        assert "created principal 'admin'" in server.log.read_text()
    finally:
        server.stop()
        log.close()
    before = _tree(tmp_path / "wh")
    res = _cli("serve", "--warehouse", str(warehouse), "--port", str(free_port()), "--init")
    assert res.returncode == 2 and "exists already" in res.stderr, res.stderr
    assert _tree(tmp_path / "wh") == before
