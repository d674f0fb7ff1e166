"""``lakestore serve`` over an S3 warehouse (moto's S3 and STS server on loopback, as tests/io
starts it) with table credentials vended from STS ``AssumeRole``: pypaimon 2.1's REST catalog,
holding no S3 credentials of its own, creates, writes, commits and reads through the server with
the vended ones; each token's session policy (what the server asked STS for, as moto recorded
it) is limited to the table's prefix, read-only for a ``read`` principal; expiry is STS's.

moto does not evaluate session policies (nor, in this setup, IAM at all), so the policies are
checked as the documents STS received, not by S3 refusing a request."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.io.conftest import HERE, S3Server, _wait_for_port, s3_server  # noqa: F401  (s3_server: moto's S3 on loopback)
from tests.postgres import free_port
from tests.rest.clients import pypaimon
from tests.rest.server import Server, require_server_packages

ROLE = "arn:aws:iam::123456789012:role/lakestore-vend"
DURATION_S = 900


@dataclass
class S3Serve(Server):
    """``lakestore serve`` on ``s3://bucket/wh`` (auth database and admin token file local)."""

    s3: S3Server | None = None
    bucket: str = ""
    sts: str = ""
    duration_s: int = DURATION_S

    def _auth_args(self) -> list[str]:
        assert self.s3 is not None
        options = self.s3.options(**{"s3.conditional-create": "true"})
        args = ["--warehouse", f"s3://{self.bucket}/wh", "--auth-db", str(self.warehouse / "auth.sqlite")]
        args += ["--admin-token-file", str(self.warehouse / ".lakestore-admin-token")]
        args += [f"-o{k}={v}" for k, v in options.items()]
        return args + ["--vend-role-arn", ROLE, "--vend-duration", str(self.duration_s), "--sts-endpoint", self.sts]

    def init(self) -> S3Serve:
        """``serve-admin init`` (the auth database and token file local, the warehouse on S3)."""
        token_file = str(self.warehouse / ".lakestore-admin-token")
        args = [
            "--warehouse",
            f"s3://{self.bucket}/wh",
            "--auth-db",
            str(self.warehouse / "auth.sqlite"),
            "init",
            "--admin-token-file",
            token_file,
        ]
        res = subprocess.run([sys.executable, "-m", "lakestore.cli", "serve-admin", *args], capture_output=True, text=True, timeout=60)
        assert res.returncode == 0, res.stderr
        return self


@pytest.fixture(scope="module")
def sts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A second moto server, for STS alone (as AWS has its own endpoint): its record of the
    AssumeRole calls is then readable (moto's state dump fails on some S3 objects)."""
    port = free_port()
    log = open(tmp_path_factory.mktemp("sts") / "server.log", "w")
    proc = subprocess.Popen([sys.executable, str(HERE / "s3_server.py"), str(port)], stdout=log, stderr=subprocess.STDOUT)
    try:
        _wait_for_port(port, proc, "moto STS server", log_path=log.name)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        log.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, s3_server: S3Server, sts: str) -> Iterator[S3Serve]:  # noqa: F811
    srv = start(tmp_path_factory.mktemp("rest-s3"), s3_server, sts, DURATION_S)
    yield srv
    srv.stop()


def start(tmp: Path, s3: S3Server, sts: str, duration_s: int) -> S3Serve:
    require_server_packages()
    auth_db = str(tmp / "auth.sqlite")
    srv = S3Serve(tmp, free_port(), tmp / "server.log", auth_db=auth_db, s3=s3, bucket=s3.new_bucket(), sts=sts, duration_s=duration_s)
    srv.init().start()
    return srv


def assumed_roles(sts: str) -> dict[str, dict[str, Any]]:
    """moto's record of every AssumeRole call, by the access key it returned."""
    with urllib.request.urlopen(f"{sts}/moto-api/data.json", timeout=30) as resp:
        data = json.load(resp)
    return {r["access_key_id"]: r for r in data.get("sts", {}).get("AssumedRole", [])}


def test_pypaimon_writes_and_reads_an_s3_table_with_vended_credentials(server: S3Serve, s3_server: S3Server):  # noqa: F811
    admin = server.admin_token
    etl = server.principal("etl", ("write", "sales"))
    reader = server.principal("analyst", ("read", "sales.orders"))
    status, config = server.call("GET", "/v1/config", etl)
    assert status == 200 and config["defaults"]["data-token.enabled"] == "true"
    fields = [["id", "int64"], ["v", "string"]]
    pypaimon(
        server.catalog_options(admin),
        {"op": "create_database", "name": "sales"},
        {"op": "create_table", "identifier": "sales.orders", "fields": fields, "primary_keys": ["id"], "options": {"bucket": "1"}},
    )
    before = set(assumed_roles(server.sts))
    # the client has no S3 credentials: endpoint and keys come from the token endpoint
    pypaimon(
        server.catalog_options(etl),
        {"op": "write", "identifier": "sales.orders", "rows": {"id": [1, 2], "v": ["a", "b"]}},
        {"op": "write", "identifier": "sales.orders", "rows": {"id": [2, 3], "v": ["B", "c"]}},
    )
    read = pypaimon(server.catalog_options(reader), {"op": "read", "identifier": "sales.orders"})[0]["ok"]
    assert sorted(zip(read["id"], read["v"], strict=True)) == [(1, "a"), (2, "B"), (3, "c")]
    # the files are on S3 under the table's prefix; the server published both snapshots
    keys = [o["Key"] for o in s3_server.client().list_objects_v2(Bucket=server.bucket, Prefix="wh/sales.db/orders/")["Contents"]]
    assert "wh/sales.db/orders/snapshot/snapshot-2" in keys and any(k.endswith(".parquet") for k in keys)
    # the clients asked for tokens (STS saw sessions named after each principal), each scoped
    sessions = [r for k, r in assumed_roles(server.sts).items() if k not in before]
    by_name = {r["session_name"] for r in sessions}
    # credentials with under an hour left are "expiring" to Paimon's clients (Java's and
    # pypaimon's RESTTokenFileIO): with 900 s ones they ask again before file accesses
    assert sum(r["session_name"] == "lakestore-etl" for r in sessions) > 1
    assert {"lakestore-etl", "lakestore-analyst"} <= by_name
    table = f"arn:aws:s3:::{server.bucket}/wh/sales.db/orders/"
    for r in sessions:
        assert r["role_arn"] == ROLE
        policy = json.loads(r["policy"])
        objects, listing, *writes = policy["Statement"]
        assert objects["Resource"] == [table[:-1], table + "*"] and objects["Action"] == ["s3:GetObject"]
        assert listing["Action"] == ["s3:ListBucket"] and listing["Resource"] == [f"arn:aws:s3:::{server.bucket}"]
        # with the trailing slash: a reader of sales.orders cannot list sales.orders2
        assert listing["Condition"] == {"StringLike": {"s3:prefix": ["wh/sales.db/orders/", "wh/sales.db/orders/*"]}}
        if r["session_name"] == "lakestore-analyst":
            assert writes == []
            continue
        # a writer puts data files, manifests and index files; snapshots, tags, schemas and
        # branches only the server writes
        allow, deny = writes
        assert allow["Effect"] == "Allow" and {"s3:PutObject", "s3:DeleteObject"} <= set(allow["Action"])
        assert allow["Resource"] == [table + "manifest/*", table + "index/*", table + "bucket-*", table + "*=*"]
        assert deny["Effect"] == "Deny" and deny["Action"] == allow["Action"]
        assert deny["Resource"] == [table + "snapshot/*", table + "tag/*", table + "schema/*", table + "branch/*"]


def _token(server: Server, token: str, table: str = "orders") -> tuple[int, dict[str, Any]]:
    return server.call("GET", f"/databases/sales/tables/{table}/token", token)


def test_token_answer_read_only_scope_and_expiry(server: S3Serve, s3_server: S3Server):  # noqa: F811
    admin = server.admin_token
    pypaimon(
        server.catalog_options(admin),
        {"op": "create_database", "name": "sales", "ignore_if_exists": True},
        {"op": "create_table", "identifier": "sales.other", "fields": [["id", "int64"]], "ignore_if_exists": True},
    )
    reader = server.principal("viewer", ("read", "sales.other"))
    writer = server.principal("loader", ("write", "sales.other"))
    started = int(time.time() * 1000)
    status, answer = _token(server, reader, "other")
    done = int(time.time() * 1000)
    assert status == 200
    token = answer["token"]
    assert set(token) >= {"fs.s3a.access.key", "fs.s3a.secret.key", "fs.s3a.session.token", "fs.s3a.endpoint"}
    assert token["fs.s3a.endpoint"] == s3_server.endpoint and token["fs.s3a.path.style.access"] == "true"
    assert token["fs.s3a.access.key"] != "lakestore-test"  # not the server's own credentials
    # the expiry is STS's, as the response states it
    record = assumed_roles(server.sts)[token["fs.s3a.access.key"]]
    assert started + DURATION_S * 1000 - 1000 <= answer["expiresAtMillis"] <= done + DURATION_S * 1000 + 1000
    assert record["session_token"] == token["fs.s3a.session.token"]
    assert len(json.loads(record["policy"])["Statement"]) == 2  # read and list: nothing written
    # a writer's token may put and delete; each request gets fresh credentials
    status, again = _token(server, writer, "other")
    assert status == 200 and again["token"]["fs.s3a.access.key"] != token["fs.s3a.access.key"]
    assert "s3:PutObject" in json.loads(assumed_roles(server.sts)[again["token"]["fs.s3a.access.key"]]["policy"])["Statement"][2]["Action"]
    # no grant on the table: no credentials (and no STS call)
    count = len(assumed_roles(server.sts))
    assert _token(server, reader, "orders")[0] in (403, 404)
    assert len(assumed_roles(server.sts)) == count
    # the server's log holds no credential
    log = Path(server.log).read_text()
    assert token["fs.s3a.secret.key"] not in log and token["fs.s3a.session.token"] not in log


def test_credentials_outliving_the_clients_refresh_margin_are_asked_for_once(
    tmp_path: Path,
    s3_server: S3Server,  # noqa: F811
    sts: str,
):
    """Two hours: the default (clients refresh tokens with under an hour left, so shorter ones are
    asked for again before file accesses): one token per client and table."""
    srv = start(tmp_path, s3_server, sts, 7200)
    try:
        before = set(assumed_roles(sts))
        started = int(time.time() * 1000)
        rows = pypaimon(
            srv.catalog_options(srv.admin_token),
            {"op": "create_database", "name": "d"},
            {"op": "create_table", "identifier": "d.t", "fields": [["id", "int64"]]},
            {"op": "write", "identifier": "d.t", "rows": {"id": [1, 2]}},
            {"op": "write", "identifier": "d.t", "rows": {"id": [3]}},
            {"op": "read", "identifier": "d.t"},
        )[4]["ok"]
        assert sorted(rows["id"]) == [1, 2, 3]
        new = [r for k, r in assumed_roles(sts).items() if k not in before]
        assert len(new) == 1 and new[0]["session_name"] == "lakestore-admin"
        status, answer = srv.call("GET", "/databases/d/tables/t/token", srv.admin_token)
        assert status == 200 and 0 <= answer["expiresAtMillis"] - started - 7_200_000 <= 120_000
    finally:
        srv.stop()


@pytest.mark.parametrize(
    ("drop", "message"),
    [
        ("s3.conditional-create", "publishes commits safely only with"),
        ("--admin-token-file", "must be given for a warehouse at"),
    ],
)
def test_an_s3_warehouse_is_refused_without_safe_publish_or_local_auth(
    tmp_path: Path,
    s3_server: S3Server,  # noqa: F811
    drop: str,
    message: str,
):
    bucket = s3_server.new_bucket()
    srv = S3Serve(tmp_path, free_port(), tmp_path / "server.log", s3=s3_server, bucket=bucket, sts=s3_server.endpoint)
    args = srv._auth_args()
    if drop.startswith("--"):
        at = args.index(drop)
        del args[at : at + 2]
    else:
        args = [a for a in args if not a.startswith(f"-o{drop}=")]
    res = subprocess.run([sys.executable, "-m", "lakestore.cli", "serve", "--init", *args], capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and message in res.stderr, res.stderr
    assert not (tmp_path / "auth.sqlite").exists()
    listed = s3_server.client().list_objects_v2(Bucket=bucket).get("Contents", [])
    assert [o["Key"] for o in listed if o["Size"]] == []  # nothing written (but the warehouse's directory marker)
    assert not (tmp_path / ".lakestore-admin-token").exists()
