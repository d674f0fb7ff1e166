"""Commits through ``lakestore serve`` under load and across a crash: pypaimon 2.1 clients
(separate processes) commit one-row batches concurrently to several tables; every commit the
server acknowledged is in its table exactly once, and nothing is there twice. The server
killed with SIGKILL while clients commit, then restarted: no acknowledged commit is lost and
every snapshot on disk is whole (readable, its manifests present)."""

from __future__ import annotations

import subprocess
import time
from collections import Counter
from pathlib import Path

import pyarrow as pa

import lakestore
from tests.rest.clients import pypaimon, pypaimon_cmd, require_pypaimon
from tests.rest.server import start_server

SCHEMA = pa.schema([("client", pa.string()), ("seq", pa.int64())])


def _acked(ack_dir: Path, client: str, table: str) -> set[int]:
    path = ack_dir / f"{client}-{table}"
    return {int(line) for line in path.read_text().split()} if path.exists() else set()


def _start_clients(
    server_opts: dict[str, str], ack_dir: Path, plan: dict[str, list[str]], count: int, *, tolerate: bool
) -> list[subprocess.Popen[str]]:
    procs = []
    for client, tables in plan.items():
        ops = [
            {
                "op": "commit_loop",
                "identifier": f"load.{table}",
                "client": client,
                "count": count,
                "ack_file": str(ack_dir / f"{client}-{table}"),
                "tolerate_errors": tolerate,
            }
            for table in tables
        ]
        procs.append(subprocess.Popen(pypaimon_cmd(server_opts, ops), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    return procs


def _check_exactly_once(warehouse: Path, ack_dir: Path, plan: dict[str, list[str]], tables: list[str]) -> dict[str, int]:
    catalog = lakestore.Catalog(str(warehouse))
    landed = {}
    for table_name in tables:
        table = catalog.get_table(f"load.{table_name}")
        for snapshot in table.snapshots():  # every snapshot is whole: its manifests and files read
            table.to_arrow(snapshot_id=snapshot.id)
        data = table.to_arrow()
        counts = Counter(zip(data["client"].to_pylist(), data["seq"].to_pylist(), strict=True))
        assert max(counts.values(), default=1) == 1, f"a commit landed twice in {table_name}"
        for client, client_tables in plan.items():
            if table_name in client_tables:
                missing = {seq for seq in _acked(ack_dir, client, table_name) if (client, seq) not in counts}
                assert not missing, f"acknowledged commits of {client} lost in {table_name}: {sorted(missing)}"
        landed[table_name] = data.num_rows
    return landed


def test_concurrent_clients_commit_exactly_once(tmp_path: Path):
    require_pypaimon()
    server = start_server(tmp_path)
    try:
        catalog = lakestore.Catalog(str(server.warehouse))
        catalog.create_database("load")
        tables = ["t0", "t1"]
        for name in tables:
            catalog.create_table(f"load.{name}", schema=SCHEMA)
        # 3 clients x 2 tables, at least two clients contending on a table at any time
        plan = {f"c{i}": [tables[i % 2], tables[(i + 1) % 2]] for i in range(3)}
        count = 3
        started = time.monotonic()
        procs = _start_clients(server.catalog_options(server.admin_token), tmp_path, plan, count, tolerate=False)
        for proc in procs:
            _, err = proc.communicate(timeout=300)
            assert proc.returncode == 0, err[-3000:]
        elapsed = time.monotonic() - started
        landed = _check_exactly_once(server.warehouse, tmp_path, plan, tables)
        assert landed == {"t0": 3 * count, "t1": 3 * count}
        for name in tables:  # one snapshot per acknowledged commit, ids without gaps
            assert [s.id for s in catalog.get_table(f"load.{name}").snapshots()] == list(range(1, 3 * count + 1))
        print(f"{6 * count} commits by 3 pypaimon clients in {elapsed:.1f} s")
    finally:
        server.stop()


def test_sigkill_mid_commit_loses_no_acknowledged_commit(tmp_path: Path):
    require_pypaimon()
    server = start_server(tmp_path)
    try:
        catalog = lakestore.Catalog(str(server.warehouse))
        catalog.create_database("load")
        catalog.create_table("load.k", schema=SCHEMA)
        plan = {"a": ["k"], "b": ["k"]}
        procs = _start_clients(server.catalog_options(server.admin_token), tmp_path, plan, 12, tolerate=True)
        deadline = time.monotonic() + 120
        while min(len(_acked(tmp_path, c, "k")) for c in plan) < 2:  # both clients are committing
            assert time.monotonic() < deadline, "no commits acknowledged"
            time.sleep(0.02)
        server.kill()  # SIGKILL while both clients are committing
        acked_before = {c: _acked(tmp_path, c, "k") for c in plan}
        time.sleep(0.5)
        server.start()
        outcomes = []
        for proc in procs:
            out, err = proc.communicate(timeout=300)
            assert proc.returncode == 0, err[-3000:]
            outcomes.append(out.strip().splitlines()[-1])
        print("clients (acked/failed) across the SIGKILL:", outcomes)
        acked_after = {c: _acked(tmp_path, c, "k") for c in plan}
        assert all(acked_before[c] <= acked_after[c] for c in plan)
        assert sum(len(s) for s in acked_after.values()) > sum(len(s) for s in acked_before.values()), "no commit after the restart"
        _check_exactly_once(server.warehouse, tmp_path, plan, ["k"])
        # the restarted server serves the table to a client: what lakestore reads, pypaimon reads
        read = pypaimon(server.catalog_options(server.admin_token), {"op": "read", "identifier": "load.k"})[0]["ok"]
        direct = catalog.get_table("load.k").to_arrow()
        assert sorted(zip(read["client"], read["seq"], strict=True)) == sorted(
            zip(direct["client"].to_pylist(), direct["seq"].to_pylist(), strict=True)
        )
    finally:
        server.stop()
