#!/usr/bin/env python
"""The peers' side of the benchmarks: runs with the ORACLE venv's python (pypaimon 2.1.0,
pypaimon-rust 0.4.0, pyarrow 19) and never imports lakestore.

    .venv-oracle/bin/python bench/oracle_runner.py SPEC.json

SPEC is {"task": ..., ...}; the result is one JSON line on stdout. All repetitions run in this
one process, so import and start-up costs are outside the timed sections (as for lakestore).

Modes: "python" = pypaimon pure Python; "native" = pypaimon with write.native.enabled (Rust
writes the data files, Python commits: commit.native.enabled is REST-only) or
read.native.enabled (Rust plans and reads; pypaimon may fall back to Python per read, which is
recorded and reported).
"""

import gc
import json
import os
import sys
import time

NATIVE_WRITE = {"write.native.enabled": "true"}
NATIVE_READ = {"read.native.enabled": "true"}


def _read_ipc(path):
    import pyarrow as pa

    with pa.memory_map(path, "r") as src:
        return pa.ipc.open_file(src).read_all()


def _catalog(warehouse):
    from pypaimon import CatalogFactory

    return CatalogFactory.create({"warehouse": os.path.abspath(warehouse)})


def _create(catalog, identifier, arrow_schema, spec):
    from pypaimon import Schema

    catalog.create_database(identifier.split(".")[0], True)
    schema = Schema.from_pyarrow_schema(
        arrow_schema,
        partition_keys=spec.get("partition_keys") or None,
        primary_keys=spec.get("primary_keys") or None,
        options=dict(spec.get("options") or {}),
    )
    catalog.create_table(identifier, schema, False)
    return catalog.get_table(identifier)


class _Fallbacks:
    """Records pypaimon's native-read fallbacks (TableRead._native_fallback) and writer routes."""

    def __init__(self):
        self.read_reasons = []
        from pypaimon.read import table_read as tr

        original = tr.TableRead._native_fallback
        outer = self

        def wrapped(self_, reason, *args, **kwargs):
            outer.read_reasons.append(str(reason))
            return original(self_, reason, *args, **kwargs)

        tr.TableRead._native_fallback = wrapped


def _native_writer_used(writer):
    return type(writer).__name__ == "NativeTableWrite" and getattr(writer, "_python_writer", None) is None


def _one_commit(table, data):
    wb = table.new_batch_write_builder()
    writer = wb.new_write()
    commit = wb.new_commit()
    try:
        writer.write_arrow(data)
        native = _native_writer_used(writer)
        commit.commit(writer.prepare_commit())
    finally:
        writer.close()
        commit.close()
    return native


def task_versions(spec):
    import pyarrow
    import pypaimon

    out = {"pyarrow": pyarrow.__version__, "pypaimon": getattr(pypaimon, "__version__", "?"), "python": sys.version.split()[0]}
    try:
        from importlib.metadata import version

        out["pypaimon-rust"] = version("pypaimon-rust")
        out["pypaimon"] = version("pypaimon")
    except Exception as e:  # noqa: BLE001
        out["pypaimon-rust"] = f"unavailable: {e}"
    return out


def task_pk_write(spec):
    """Write the commits into a fresh table per repetition; time all commits together."""
    commits = [_read_ipc(p) for p in spec["commits"]]
    catalog = _catalog(spec["warehouse"])
    times, per_commit, native_flags = [], [], []
    for rep in range(spec["reps"]):
        table = _create(catalog, f"bench.w_{spec['mode']}_{rep}", commits[0].schema, spec)
        if spec["mode"] == "native":
            table = table.copy(dict(NATIVE_WRITE))
        gc.collect()
        steps = []
        start = time.perf_counter()
        for data in commits:
            t0 = time.perf_counter()
            native_flags.append(_one_commit(table, data))
            steps.append(time.perf_counter() - t0)
        times.append(time.perf_counter() - start)
        per_commit.append(steps)
    return {
        "times": times,
        "per_commit": per_commit,
        "native_write_used": all(native_flags) if spec["mode"] == "native" else False,
        "table_path": os.path.join(os.path.abspath(spec["warehouse"]), "bench.db", f"w_{spec['mode']}_{spec['reps'] - 1}"),
    }


def _predicate(rb, filters):
    if not filters:
        return None
    pb = rb.new_predicate_builder()
    preds = [getattr(pb, op)(name, value) for op, name, value in filters]
    return preds[0] if len(preds) == 1 else pb.and_predicates(preds)


def task_read(spec):
    """Plan and read a table (optionally projected and filtered), ``reps`` times."""
    from pypaimon import CatalogFactory

    fallbacks = _Fallbacks()
    table_path = os.path.abspath(spec["table_path"])
    warehouse = os.path.dirname(os.path.dirname(table_path))
    db = os.path.basename(os.path.dirname(table_path))[:-3]
    table = CatalogFactory.create({"warehouse": warehouse}).get_table(f"{db}.{os.path.basename(table_path)}")
    if spec["mode"] == "native":
        table = table.copy(dict(NATIVE_READ))
    times, rows = [], None

    def read():
        rb = table.new_read_builder()
        # the predicate is built over all fields: a projection may drop the filtered columns
        pred = _predicate(rb, spec.get("filter"))
        if pred is not None:
            rb = rb.with_filter(pred)
        if spec.get("projection"):
            rb = rb.with_projection(spec["projection"])
        splits = rb.new_scan().plan().splits()
        return rb.new_read().to_arrow(splits)

    for _ in range(spec["reps"]):
        gc.collect()
        start = time.perf_counter()
        result = read()
        times.append(time.perf_counter() - start)
        rows = result.num_rows if result is not None else 0
    native_used = spec["mode"] == "native" and not fallbacks.read_reasons
    return {"times": times, "rows": rows, "native_read_used": native_used, "fallback_reasons": sorted(set(fallbacks.read_reasons))[:5]}


def task_commit_latency(spec):
    """One small commit per input file into one fresh table; returns each commit's seconds."""
    commits = [_read_ipc(p) for p in spec["commits"]]
    catalog = _catalog(spec["warehouse"])
    table = _create(catalog, "bench.c_{}".format(spec["mode"]), commits[0].schema, spec)
    if spec["mode"] == "native":
        table = table.copy(dict(NATIVE_WRITE))
    times = []
    for data in commits:
        start = time.perf_counter()
        _one_commit(table, data)
        times.append(time.perf_counter() - start)
    return {"times": times}


def task_headline(spec):
    """The headline workload in this (fresh) process: each round writes the commits into a fresh
    table, then reads it (merge-on-read); round 0 is the first run in the process."""
    commits = [_read_ipc(p) for p in spec["commits"]]
    startup = time.time() - spec["spawned_at"] if spec.get("spawned_at") else None
    catalog = _catalog(spec["warehouse"])
    fallbacks = _Fallbacks()
    writes, reads, rows, native_flags, write_cpu, read_cpu = [], [], 0, [], [], []
    for rnd in range(spec.get("rounds", 1)):
        table = _create(catalog, f"bench.h_{spec['mode']}_{rnd}", commits[0].schema, spec)
        writer_table = table.copy(dict(NATIVE_WRITE)) if spec["mode"] == "native" else table
        gc.collect()
        start, cpu = time.perf_counter(), time.process_time()
        for data in commits:
            native_flags.append(_one_commit(writer_table, data))
        writes.append(time.perf_counter() - start)
        write_cpu.append(time.process_time() - cpu)
        reader_table = table.copy(dict(NATIVE_READ)) if spec["mode"] == "native" else table
        gc.collect()
        start, cpu = time.perf_counter(), time.process_time()
        rb = reader_table.new_read_builder()
        result = rb.new_read().to_arrow(rb.new_scan().plan().splits())
        reads.append(time.perf_counter() - start)
        read_cpu.append(time.process_time() - cpu)
        rows = result.num_rows if result is not None else 0
    native = spec["mode"] == "native"
    return {
        "write": writes,
        "read": reads,
        "write_cpu": write_cpu,
        "read_cpu": read_cpu,
        "rows": rows,
        "startup_s": startup,
        "native_write_used": native and all(native_flags),
        "native_read_used": native and not fallbacks.read_reasons,
        "fallback_reasons": sorted(set(fallbacks.read_reasons))[:5],
    }


TASKS = {
    "versions": task_versions,
    "pk_write": task_pk_write,
    "read": task_read,
    "commit_latency": task_commit_latency,
    "headline": task_headline,
}


def main(argv):
    with open(argv[1]) as fh:
        spec = json.load(fh)
    import logging

    logging.basicConfig(level=logging.ERROR, stream=sys.stderr)
    result = TASKS[spec["task"]](spec)
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
