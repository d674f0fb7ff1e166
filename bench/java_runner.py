#!/usr/bin/env python
"""Apache Paimon 0.9's Java core as a benchmark peer: runs with the ``.venv-java`` python
(pypaimon 0.2.0, whose py4j bridge jar carries Paimon's Java core) and never imports lakestore.

    .venv-java/bin/python bench/java_runner.py SPEC.json

SPEC: {"task": "headline" | "versions", "commits": [IPC files], "warehouse": dir, "rounds": n,
"primary_keys", "partition_keys", "options"}. The result is one JSON line on stdout (the JVM's own
output goes to stderr). Each round writes the commits into a fresh table, one batch commit each,
then reads the table back (merge-on-read); round 0 is the first run in this fresh process and
JVM. Data crosses py4j as Arrow IPC bytes, in both directions: that conversion is part of what
is timed, as it is for every Python user of this bridge.
"""

import gc
import json
import os
import sys
import tempfile
import time


def _read_ipc(path):
    import pyarrow as pa

    with pa.memory_map(path, "r") as src:
        return pa.ipc.open_file(src).read_all()


def _cpu_seconds():
    """CPU seconds of this process and its live children (the JVM), all threads."""
    me = os.getpid()
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(entry) == me or int(fields[1]) == me:
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def _jvm():
    from pypaimon.py4j.java_gateway import get_gateway

    return get_gateway().jvm


def _create(catalog, identifier, arrow_schema, spec):
    from pypaimon import Schema

    catalog.create_database(identifier.split(".")[0], True)
    schema = Schema(
        arrow_schema,
        partition_keys=spec.get("partition_keys") or None,
        primary_keys=spec.get("primary_keys") or None,
        options=dict(spec.get("options") or {}),
    )
    catalog.create_table(identifier, schema, False)
    return catalog.get_table(identifier)


def _write_commits(table, commits):
    from pypaimon.py4j.java_implementation import BatchTableWrite

    jvm = _jvm()
    for data in commits:
        builder = jvm.InvocationUtil.getBatchWriteBuilder(table._j_table)
        io_dir = tempfile.mkdtemp(prefix="java-bench-io-")
        j_write = builder.newWrite().withIOManager(jvm.org.apache.paimon.disk.IOManager.create(io_dir))
        writer = BatchTableWrite(j_write, builder.rowType())
        writer.write_arrow(data)
        commit = builder.newCommit()
        commit.commit([m.to_j_commit_message() for m in writer.prepare_commit()])
        commit.close()
        writer.close()


def _read(table):
    rb = table.new_read_builder()
    result = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    return 0 if result is None else result.num_rows


def task_versions(spec):
    from importlib.metadata import version

    import pyarrow

    _jvm()
    return {
        "pypaimon (java bridge)": version("pypaimon"),
        "paimon java": "0.9.0 (pypaimon 0.2.0 bridge jar)",
        "pyarrow": pyarrow.__version__,
    }


def task_headline(spec):
    from pypaimon.py4j import Catalog
    from pypaimon.py4j.util import java_utils

    commits = [_read_ipc(p) for p in spec["commits"]]
    _jvm()  # start the JVM before anything is timed
    startup = time.time() - spec["spawned_at"] if spec.get("spawned_at") else None
    catalog = Catalog.create({"warehouse": os.path.abspath(spec["warehouse"])})
    writes, reads, rows, write_cpu, read_cpu = [], [], 0, [], []
    for rnd in range(spec.get("rounds", 1)):
        table = _create(catalog, f"bench.h_java_{rnd}", commits[0].schema, spec)
        # the bridge wants the table's own Arrow types (nullability included): cast untimed
        target = java_utils.to_arrow_schema(table._j_table.rowType())
        inputs = [c.select(target.names).cast(target) for c in commits]
        gc.collect()
        start, cpu = time.perf_counter(), _cpu_seconds()
        _write_commits(table, inputs)
        writes.append(time.perf_counter() - start)
        write_cpu.append(_cpu_seconds() - cpu)
        gc.collect()
        start, cpu = time.perf_counter(), _cpu_seconds()
        rows = _read(catalog.get_table(f"bench.h_java_{rnd}"))
        reads.append(time.perf_counter() - start)
        read_cpu.append(_cpu_seconds() - cpu)
    return {"write": writes, "read": reads, "write_cpu": write_cpu, "read_cpu": read_cpu, "rows": rows, "startup_s": startup}


TASKS = {"versions": task_versions, "headline": task_headline}


def main(argv):
    with open(argv[1]) as fh:
        spec = json.load(fh)
    real_stdout = sys.stdout
    sys.stdout = sys.stderr  # keep JVM / library chatter off the result line
    try:
        result = TASKS[spec["task"]](spec)
    finally:
        sys.stdout = real_stdout
    real_stdout.write(json.dumps(result) + "\n")
    real_stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
