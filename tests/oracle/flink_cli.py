"""Apache Flink 2.0 with Apache Paimon 2.0.0's Flink connector, served over stdin/stdout.

Runs in the ``.venv-flink`` virtual environment (PyFlink 2.0.2) and never imports lakestore.
One JVM (PyFlink's gateway) serves a whole test session, with one streaming and one batch
TableEnvironment; every job runs on a local mini-cluster inside that JVM. Each request is one
JSON line on stdin; each response is one line on stdout starting with ``RESPONSE_PREFIX``.
Everything the JVM prints goes to stderr. Started by ``tests/oracle/flink_driver.py``.

The first request is ``start`` with the jars for ``pipeline.jars`` (the paimon-flink jar and
Hadoop's client jars) and extra Flink configuration. Then:

- ``sql``: statements run in both environments (catalogs, temporary tables and views) or in one;
- ``submit``: an INSERT (or statement set) started in streaming mode without waiting; ``job``
  / ``wait`` / ``cancel`` follow it by id;
- ``query``: a bounded SELECT in batch mode, rows returned with their row kinds;
- ``collect``: a streaming SELECT collected in a background thread; ``poll`` returns the rows
  gathered so far (from an offset) and ``cancel`` stops it.

Values cross as JSON (numbers, strings, booleans, null); keep test tables to such columns.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
import traceback
from typing import Any

RESPONSE_PREFIX = "@@flink-oracle@@ "

# The protocol owns the original stdout; fd 1 (inherited by the gateway JVM started below)
# goes to stderr, so Flink's logging never interleaves with responses.
_out = os.fdopen(os.dup(1), "w", buffering=1)
os.dup2(2, 1)
sys.stdout = sys.stderr

_envs: dict[str, Any] = {}
_jobs: dict[str, Any] = {}
_collects: dict[str, Collect] = {}
_counter = 0
_cluster: Any = None


def _next_id(prefix: str) -> str:
    global _counter
    _counter += 1
    return f"{prefix}{_counter}"


def _value(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_value(v) for v in value]
    return str(value)


def _row(row: Any) -> list[Any]:
    """[row kind ("+I", "-U", "+U", "-D"), values...]."""
    return [str(row.get_row_kind()), *(_value(v) for v in row)]


def _pin_py4j_threads() -> None:
    """One py4j connection (so one Java thread) per Python thread. py4j pools connections
    across Python threads, so while the collecting thread blocks on one, the main thread's next
    call may land on another Java thread, where Flink's planner finds no Calcite metadata
    provider (its thread-local is set on the thread that created the TableEnvironment):
    ``NullPointerException: metadataHandlerProvider``."""
    from py4j.java_gateway import GatewayClient

    local = threading.local()

    def pool(client: Any) -> list[Any]:
        if not hasattr(local, "pools"):
            local.pools = {}
        return local.pools.setdefault(id(client), [])

    def get_connection(self: Any) -> Any:
        from py4j.protocol import Py4JNetworkError

        if not self.is_connected:
            raise Py4JNetworkError("Gateway is not connected.")
        connections = pool(self)
        return connections.pop() if connections else self._create_connection()

    def give_back_connection(self: Any, connection: Any) -> None:
        pool(self).append(connection)

    GatewayClient._get_connection = get_connection  # type: ignore[method-assign]
    GatewayClient._give_back_connection = give_back_connection  # type: ignore[method-assign]


def start(req: dict[str, Any]) -> dict[str, Any]:
    _pin_py4j_threads()
    from pyflink.common import Configuration
    from pyflink.java_gateway import get_gateway
    from pyflink.table import EnvironmentSettings, TableEnvironment

    t0 = time.monotonic()
    settings = {
        "execution.checkpointing.interval": "1 s",
        "parallelism.default": "1",
        "rest.address": "127.0.0.1",
        "rest.bind-address": "127.0.0.1",
        "rest.bind-port": "0",
        "jobmanager.rpc.address": "127.0.0.1",
        "taskmanager.host": "127.0.0.1",
        "taskmanager.numberOfTaskSlots": "16",
        **(req.get("config") or {}),
    }
    # One mini-cluster for the session: every job goes to it through its REST endpoint, as to a
    # standalone cluster (the local executor would start one per job, and forget the job once
    # it ended).
    jvm = get_gateway().jvm
    cluster_conf = jvm.org.apache.flink.configuration.Configuration()
    for key, value in settings.items():
        cluster_conf.setString(key, str(value))
    builder = jvm.org.apache.flink.runtime.minicluster.MiniClusterConfiguration.Builder()
    builder = builder.setConfiguration(cluster_conf).setNumTaskManagers(1)
    builder = builder.setNumSlotsPerTaskManager(int(settings["taskmanager.numberOfTaskSlots"]))
    global _cluster
    _cluster = jvm.org.apache.flink.runtime.minicluster.MiniCluster(builder.build())
    _cluster.start()
    port = _cluster.getRestAddress().get().getPort()
    conf = Configuration()
    conf.set_string("pipeline.jars", ";".join("file://" + j for j in req["jars"]))
    conf.set_string("execution.target", "remote")
    conf.set_string("rest.port", str(port))
    for key, value in settings.items():
        conf.set_string(key, str(value))
    for mode in ("stream", "batch"):
        builder = EnvironmentSettings.new_instance()
        builder = builder.in_streaming_mode() if mode == "stream" else builder.in_batch_mode()
        _envs[mode] = TableEnvironment.create(builder.with_configuration(conf).build())
    return {"seconds": time.monotonic() - t0}


def _modes(req: dict[str, Any]) -> list[str]:
    mode = req.get("mode", "both")
    return ["stream", "batch"] if mode == "both" else [mode]


def sql(req: dict[str, Any]) -> dict[str, Any]:
    for mode in _modes(req):
        for statement in req["statements"]:
            _envs[mode].execute_sql(statement).wait()
    return {}


def submit(req: dict[str, Any]) -> dict[str, Any]:
    env = _envs[req.get("mode", "stream")]
    statements = req["statements"]
    if len(statements) == 1:
        result = env.execute_sql(statements[0])
    else:
        statement_set = env.create_statement_set()
        for statement in statements:
            statement_set.add_insert_sql(statement)
        result = statement_set.execute()
    job_id = _next_id("job")
    _jobs[job_id] = result
    return {"job": job_id, "flink_job_id": str(result.get_job_client().get_job_id())}


def _status(job_id: str) -> str:
    return _client_status(_jobs[job_id].get_job_client())


def _client_status(client: Any) -> str:
    """RUNNING, FINISHED, FAILED, CANCELED, ... (JobStatus names)."""
    try:
        return str(client.get_job_status().result()).removeprefix("JobStatus.")
    except Exception:  # noqa: BLE001 - a per-job mini-cluster is gone once its job ended
        try:
            client.get_job_execution_result().result()
        except Exception:  # noqa: BLE001
            return "FAILED"
        return "FINISHED"


def job(req: dict[str, Any]) -> dict[str, Any]:
    return {"status": _status(req["job"])}


def wait(req: dict[str, Any]) -> dict[str, Any]:
    """Until the job ends; raises with Flink's error when it failed."""
    result = _jobs[req["job"]]
    timeout_ms = int(float(req.get("timeout", 300)) * 1000)
    result.wait(timeout_ms)
    return {"status": _status(req["job"])}


class Collect:
    """A streaming SELECT whose rows a background thread gathers."""

    def __init__(self, env: Any, query: str) -> None:
        self.result = env.execute_sql(query)
        self.rows: list[list[Any]] = []
        self.error: str | None = None
        self.done = False
        self.lock = threading.Lock()
        self.iterator = self.result.collect()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            for row in self.iterator:
                converted = _row(row)
                with self.lock:
                    self.rows.append(converted)
        except Exception:  # noqa: BLE001 - reported to the driver by poll
            self.error = traceback.format_exc()
        finally:
            self.done = True

    def close(self) -> None:
        with contextlib.suppress(Exception):  # the job may already be gone
            self.iterator.close()
        self.thread.join(timeout=60)


def collect(req: dict[str, Any]) -> dict[str, Any]:
    collect_id = _next_id("collect")
    _collects[collect_id] = Collect(_envs["stream"], req["query"])
    return {"collect": collect_id}


def poll(req: dict[str, Any]) -> dict[str, Any]:
    c = _collects[req["collect"]]
    with c.lock:
        rows = c.rows[int(req.get("offset", 0)) :]
        total = len(c.rows)
    if c.error is not None and not req.get("tolerate_error"):
        raise RuntimeError(c.error)
    return {"rows": rows, "total": total, "done": c.done, "status": _client_status(c.result.get_job_client())}


def cancel(req: dict[str, Any]) -> dict[str, Any]:
    if "collect" in req:
        _collects.pop(req["collect"]).close()
    else:
        _cancel_job(_jobs.pop(req["job"]).get_job_client())
    return {}


def _cancel_job(client: Any) -> None:
    if _client_status(client) not in ("FINISHED", "FAILED", "CANCELED"):
        client.cancel().result()


def query(req: dict[str, Any]) -> dict[str, Any]:
    with _envs[req.get("mode", "batch")].execute_sql(req["query"]).collect() as results:
        rows = [_row(row) for row in results]
    return {"rows": rows}


OPS = {f.__name__: f for f in (start, sql, submit, job, wait, collect, poll, cancel, query)}


def _respond(payload: dict[str, Any]) -> None:
    _out.write(RESPONSE_PREFIX + json.dumps(payload) + "\n")
    _out.flush()


def main() -> None:
    _respond({"ok": True, "ready": True})
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
            _respond({"ok": True, **OPS[req["op"]](req)})
        except Exception as exc:  # noqa: BLE001 - every failure goes back to the driver
            _respond({"ok": False, "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()})
    for c in list(_collects.values()):
        c.close()
    for result in _jobs.values():
        with contextlib.suppress(Exception):  # shutting down
            _cancel_job(result.get_job_client())
    if _cluster is not None:
        with contextlib.suppress(Exception):
            _cluster.close()


if __name__ == "__main__":
    main()
