"""A real Hive Metastore for the session (standalone metastore 4.0.1, fetched by
``scripts/install_hms.sh`` into ``.jars/hms``): the Hive catalog and HiveCatalogLock tests share
it. One JVM per test process, on a free loopback port, backed by the session's PostgreSQL (HMS 4
on embedded Derby deadlocks with three or more concurrent lockers), stopped by its pid.

The stale-lock reaper runs every 2 s with a 10 s transaction timeout, so a holder killed with
SIGKILL is released within about 12 s. Registered as a fixture by ``tests/conftest.py``.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

import pytest

from tests.postgres import Postgres, free_port

HMS_HOME = Path(__file__).resolve().parent.parent / ".jars" / "hms"
HMS_VERSION = "4.0.1"
TXN_TIMEOUT_S = 10
HOUSEKEEPER_INTERVAL_S = 2


@dataclass(frozen=True)
class Metastore:
    port: int
    root: str  # the server's folder: conf, log, the default warehouse
    pid: int
    start_seconds: float  # from launching the JVM to the Thrift port answering
    schema_seconds: float = 0.0  # the schema tool's run

    @property
    def uri(self) -> str:
        return f"thrift://127.0.0.1:{self.port}"

    @property
    def log(self) -> str:
        return f"{self.root}/hms.log"

    def options(self, **extra: str) -> dict[str, str]:
        """Catalog options of a Hive catalog on this metastore."""
        return {"metastore": "hive", "uri": self.uri, **extra}

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(Path(self.log).read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


def _site_xml(properties: dict[str, str]) -> str:
    body = "".join(f"  <property><name>{escape(k)}</name><value>{escape(v)}</value></property>\n" for k, v in properties.items())
    return f'<?xml version="1.0"?>\n<configuration>\n{body}</configuration>\n'


_LOG4J2 = """status = error
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{{HH:mm:ss.SSS}} %-5p [%t] %c{{1}}: %m%n
rootLogger.level = WARN
rootLogger.appenderRef.file.ref = file
logger.txn.name = org.apache.hadoop.hive.metastore.txn
logger.txn.level = INFO
"""


def _create_database(postgres: Postgres, name: str) -> None:
    psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (pip install -e '.[postgres]')")
    with psycopg.connect(host="127.0.0.1", port=postgres.port, user="lake", dbname="postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')


def _wait_for_port(port: int, proc: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the metastore exited with {proc.returncode} before opening port {port}")
        with socket.socket() as s:
            s.settimeout(0.2)
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"the metastore did not open port {port} in {timeout:.0f} s")


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    os.kill(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=15)


def start_metastore(root: str, postgres: Postgres) -> tuple[Metastore, subprocess.Popen]:
    """Initialise a schema in a new PostgreSQL database and start the metastore on a free port."""
    java = shutil.which("java")
    if java is None:
        pytest.skip("java is not installed (Java 17; .ci/run installs openjdk-17)")
    database = f"hms_{uuid.uuid4().hex[:12]}"
    _create_database(postgres, database)
    conf = f"{root}/conf"
    os.makedirs(conf, exist_ok=True)
    os.makedirs(f"{root}/wh", exist_ok=True)
    site = {
        "javax.jdo.option.ConnectionURL": f"jdbc:postgresql://127.0.0.1:{postgres.port}/{database}",
        "javax.jdo.option.ConnectionDriverName": "org.postgresql.Driver",
        "javax.jdo.option.ConnectionUserName": "lake",
        "javax.jdo.option.ConnectionPassword": "",
        "metastore.warehouse.dir": f"file://{root}/wh",
        "metastore.warehouse.external.dir": f"file://{root}/wh",
        "metastore.schema.verification": "false",
        "metastore.thrift.bind.host": "127.0.0.1",
        # the default names HiveProtoEventsCleanerTask (hive-exec), which stops housekeeping
        "metastore.task.threads.always": "org.apache.hadoop.hive.metastore.events.EventCleanerTask",
        "metastore.expression.proxy": "org.apache.hadoop.hive.metastore.DefaultPartitionExpressionProxy",
        # the stale-lock reaper (AcidHouseKeeperService), fast for the tests
        "metastore.housekeeping.threads.on": "true",
        "metastore.txn.timeout": f"{TXN_TIMEOUT_S}s",
        "metastore.acid.housekeeper.interval": f"{HOUSEKEEPER_INTERVAL_S}s",
        "metastore.event.db.notification.api.auth": "false",
    }
    Path(f"{conf}/metastore-site.xml").write_text(_site_xml(site))
    Path(f"{conf}/metastore-log4j2.properties").write_text(_LOG4J2.format(log=f"{root}/hms.log"))
    classpath = f"{conf}:{HMS_HOME}/lib/*"
    jvm = [java, "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", f"-Dlog4j.configurationFile={conf}/metastore-log4j2.properties"]
    env = {**os.environ, "METASTORE_HOME": str(HMS_HOME)}
    schema_started = time.monotonic()
    schema = subprocess.run(
        [
            *jvm,
            "-cp",
            classpath,
            "org.apache.hadoop.hive.metastore.tools.schematool.MetastoreSchemaTool",
            "-dbType",
            "postgres",
            "-initSchema",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
        timeout=180,
    )
    if schema.returncode != 0:
        raise RuntimeError(f"the metastore schema tool failed:\n{schema.stdout[-3000:]}\n{schema.stderr[-3000:]}")
    schema_seconds = time.monotonic() - schema_started
    port = free_port()
    started = time.monotonic()
    with open(f"{root}/stdout.log", "wb") as out:
        proc = subprocess.Popen(
            [*jvm, "-cp", classpath, "org.apache.hadoop.hive.metastore.HiveMetaStore", "-p", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=root,
            start_new_session=True,
        )
    try:
        _wait_for_port(port, proc, timeout=120)
    except Exception:
        _stop(proc)
        raise
    return Metastore(port=port, root=root, pid=proc.pid, start_seconds=time.monotonic() - started, schema_seconds=schema_seconds), proc


@pytest.fixture(scope="session")
def metastore(postgres: Postgres) -> Iterator[Metastore]:
    """The session's Hive Metastore (skipped, or failed under ``LAKESTORE_REQUIRE_ALL=1``, when
    ``scripts/install_hms.sh`` has not run)."""
    if not (HMS_HOME / f".done-{HMS_VERSION}").exists():
        pytest.skip("the Hive Metastore is not installed: run scripts/install_hms.sh (scripts/install.sh runs it)")
    pytest.importorskip("thrift", reason="the Hive catalog's client is not installed: pip install -e '.[hive]'")
    pytest.importorskip("hive_metastore", reason="the Hive catalog's client is not installed: pip install -e '.[hive]'")
    root = tempfile.mkdtemp(prefix="lakestore-hms-", dir=os.environ.get("TMPDIR"))
    server, proc = start_metastore(root, postgres)
    try:
        yield server
    finally:
        _stop(proc)
        shutil.rmtree(root, ignore_errors=True)
