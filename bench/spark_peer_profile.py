"""Where lakestore's Spark time goes (``python -m bench.spark_peer --profile``).

In a profiled lakestore child, ``install(spark, directory)`` registers, as the session's
``paimon`` source, subclasses of lakestore's own source whose methods time their parts and
append one JSON line per call to ``directory/py-<pid>.jsonl`` (driver and Python workers alike):

- ``import``: a Python worker's first import of ``lakestore.spark`` (per-process set-up);
- ``schema`` / ``plan`` / ``push``: the source's driver-side calls, each run by Spark in a Python
  planner process (table open and scan planning included);
- ``writer.init``: the write's driver-side set-up (opens the table, looks for a landed commit);
- ``write``: one write task: ``open`` (table open), ``wait`` (time blocked on the next Arrow
  batch: the JVM's shuffle read and the Arrow hand-off to Python), ``flush`` (TableWrite's
  ``prepare_commit``: sorting, merging and writing the files), ``other`` (the rest of lakestore's
  write: buffering the batches);
- ``read``: one read task: ``open``, ``produce`` (lakestore reading and merging the files into
  Arrow batches), ``handoff`` (suspended at ``yield``: Spark serializing the batch to the JVM);
- ``commit``: the driver-side commit of the write's messages.

The driver-side helpers are wrapped in the child process: ``write_dataframe``'s schema check,
``distribute`` (plan building) and ``find_landed``; ``compact``'s ``select_buckets``, its Spark
job and ``commit_messages``. Both systems' children also write Spark's event log there, which
``summarize`` reads for the jobs, stages and task times of each step.

    python -m bench.spark_peer_profile RUN_DIR...      # the breakdown of each profiled child
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ENV = "SPARK_PEER_PROFILE"
_import_start = time.perf_counter()
_fresh = "lakestore.spark.source" not in sys.modules
# the modules by name: lakestore.spark's ``compact`` attribute is the function of that name
_compact_module = importlib.import_module("lakestore.spark.compact")
_dataframe_module = importlib.import_module("lakestore.spark.dataframe")
_source = importlib.import_module("lakestore.spark.source")
from lakestore.spark.options import open_table  # noqa: E402
from lakestore.spark.tasks import read_task, write_task  # noqa: E402

_IMPORT_SECONDS = time.perf_counter() - _import_start


def record(kind: str, **fields: Any) -> None:
    directory = os.environ.get(ENV)
    if not directory:
        return
    line = json.dumps({"kind": kind, "pid": os.getpid(), "time": time.time(), **fields})
    with open(Path(directory) / f"py-{os.getpid()}.jsonl", "a") as f:
        f.write(line + "\n")


if _fresh:
    record("import", seconds=_IMPORT_SECONDS)


class _TimedIterator:
    def __init__(self, inner: Iterator[Any]) -> None:
        self.inner, self.wait, self.batches, self.rows = iter(inner), 0.0, 0, 0

    def __iter__(self) -> _TimedIterator:
        return self

    def __next__(self) -> Any:
        start = time.perf_counter()
        try:
            batch = next(self.inner)
        finally:
            self.wait += time.perf_counter() - start
        self.batches += 1
        self.rows += batch.num_rows
        return batch


class ProfiledWriter(_source.PaimonWriter):
    def __init__(self, options: Any, overwrite: bool) -> None:
        start = time.perf_counter()
        super().__init__(options, overwrite)
        record("writer.init", seconds=time.perf_counter() - start)

    def write(self, iterator: Iterator[Any]) -> Any:
        if self.landed:
            return super().write(iterator)
        start = time.perf_counter()
        table = open_table(self.options)
        opened = time.perf_counter() - start
        flush = [0.0]
        new_write = table.new_write

        def timed_new_write(**kwargs: Any) -> Any:
            writer = new_write(**kwargs)
            prepare = writer.prepare_commit

            def timed_prepare(*a: Any, **k: Any) -> Any:
                t = time.perf_counter()
                try:
                    return prepare(*a, **k)
                finally:
                    flush[0] += time.perf_counter() - t

            writer.prepare_commit = timed_prepare
            return writer

        table.new_write = timed_new_write
        batches = _TimedIterator(iterator)
        message = write_task(table, batches, self.commit_id.user, self.overwrite)
        total = time.perf_counter() - start
        record(
            "write",
            seconds=total,
            open=opened,
            wait=batches.wait,
            flush=flush[0],
            other=total - opened - batches.wait - flush[0],
            batches=batches.batches,
            rows=batches.rows,
        )
        return message

    def commit(self, messages: Any) -> None:
        start = time.perf_counter()
        super().commit(messages)
        record("commit", seconds=time.perf_counter() - start)


class _ProfiledRead:
    def partitions(self) -> Any:
        start = time.perf_counter()
        parts = super().partitions()  # type: ignore[misc]
        record("plan", seconds=time.perf_counter() - start, partitions=len(parts))
        return parts

    def read(self, partition: Any) -> Iterator[Any]:
        task = partition.value
        if not task.splits:
            return
        start = time.perf_counter()
        table = open_table(self.options)  # type: ignore[attr-defined]
        opened = time.perf_counter() - start
        produce = handoff = 0.0
        rows = 0
        batches = read_task(table, task)
        while True:
            t = time.perf_counter()
            try:
                batch = next(batches)
            except StopIteration:
                produce += time.perf_counter() - t
                break
            produce += time.perf_counter() - t
            rows += batch.num_rows
            t = time.perf_counter()
            yield batch
            handoff += time.perf_counter() - t
        record(
            "read", seconds=time.perf_counter() - start, open=opened, produce=produce, handoff=handoff, rows=rows, splits=len(task.splits)
        )


class ProfiledReader(_ProfiledRead, _source.PaimonReader):
    pass


class ProfiledFilteringReader(_ProfiledRead, _source.PaimonFilteringReader):
    def pushFilters(self, filters: Any) -> Iterator[Any]:  # noqa: N802 - Spark's name
        start = time.perf_counter()
        rest = list(super().pushFilters(filters))
        record("push", seconds=time.perf_counter() - start, filters=len(filters), kept=len(rest))
        yield from rest


class ProfiledSource(_source.PaimonDataSource):
    def schema(self) -> Any:
        start = time.perf_counter()
        out = super().schema()
        record("schema", seconds=time.perf_counter() - start)
        return out

    def reader(self, schema: Any) -> Any:
        return ProfiledReader(self.options, schema)

    def writer(self, schema: Any, overwrite: bool) -> Any:
        return ProfiledWriter(self.options, overwrite)


class ProfiledPushdownSource(ProfiledSource):
    def reader(self, schema: Any) -> Any:
        return ProfiledFilteringReader(self.options, schema)


def _wrap(module: Any, name: str, label: str) -> None:
    inner = getattr(module, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            record("driver", what=label, seconds=time.perf_counter() - start)

    setattr(module, name, wrapper)


def install(spark: Any, directory: str) -> None:
    """Make this session's ``paimon`` source the profiled one (``register(spark,
    filter_pushdown=True)`` then picks the profiled pushdown source), and wrap the driver-side
    helpers' parts."""
    os.environ[ENV] = directory

    def register(session: Any, *, filter_pushdown: bool = False) -> None:
        source = ProfiledPushdownSource if filter_pushdown else ProfiledSource
        session.conf.set(_source.FILTER_PUSHDOWN, "true" if filter_pushdown else "false")
        if session.conf.get(_source.REGISTERED, None) == source.__name__:
            return
        session.dataSource.register(source)
        session.conf.set(_source.REGISTERED, source.__name__)

    import lakestore.spark  # noqa: PLC0415

    lakestore.spark.register = register
    _source.register = register
    register(spark)
    _wrap(_dataframe_module, "_check_schema", "write_dataframe: schema check")
    _wrap(_dataframe_module, "distribute", "write_dataframe: distribute (plan)")
    _wrap(_dataframe_module, "find_landed", "write_dataframe: find_landed")
    _wrap(_compact_module, "select_buckets", "compact: select_buckets")
    _wrap(_compact_module, "collect_messages", "compact: Spark job")
    _wrap(_compact_module, "commit_messages", "compact: commit")


# -- the summary --------------------------------------------------------------------------------------
def _event_log(directory: Path) -> list[dict[str, Any]]:
    events = []
    for path in sorted(directory.rglob("*")):  # Spark 4 writes a rolling log: eventlog_v2_<app>/events_<n>_<app>
        if path.name.startswith("py-") or not path.is_file():
            continue
        data = path.read_bytes()
        if path.suffix == ".zstd":  # Spark compresses event logs by default: zstd frames, one after another
            import io  # noqa: PLC0415

            import zstandard  # noqa: PLC0415 - a lakestore dependency

            data = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data), read_across_frames=True).read()
        for line in data.decode(errors="replace").splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict):
                events.append(event)
    return events


def summarize(run_dir: Path) -> str:
    """The breakdown of one profiled child: per step, Spark's jobs/stages/tasks and the Python records."""
    result = json.loads((run_dir / "result.json").read_text())
    profile = run_dir / "profile"
    events = _event_log(profile) if profile.exists() else []
    records = []
    for path in profile.glob("py-*.jsonl"):
        records += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    jobs: dict[int, dict[str, Any]] = {}
    stages: dict[int, dict[str, Any]] = {}
    tasks: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for e in events:
        kind = e.get("Event")
        if kind == "SparkListenerJobStart":
            jobs[e["Job ID"]] = {"start": e["Submission Time"] / 1000, "stages": e.get("Stage IDs", [])}
        elif kind == "SparkListenerJobEnd" and e["Job ID"] in jobs:
            jobs[e["Job ID"]]["end"] = e["Completion Time"] / 1000
        elif kind == "SparkListenerStageCompleted":
            info = e["Stage Info"]
            stages[info["Stage ID"]] = {
                "name": info.get("Stage Name", "")[:60],
                "tasks": info.get("Number of Tasks"),
                "start": (info.get("Submission Time") or 0) / 1000,
                "end": (info.get("Completion Time") or 0) / 1000,
            }
        elif kind == "SparkListenerTaskEnd":
            m = e.get("Task Metrics") or {}
            tasks[e["Stage ID"]].append(
                {
                    "run": m.get("Executor Run Time", 0) / 1000,
                    "deser": m.get("Executor Deserialize Time", 0) / 1000,
                    "gc": m.get("JVM GC Time", 0) / 1000,
                    "shuffle_write": (m.get("Shuffle Write Metrics") or {}).get("Shuffle Write Time", 0) / 1e9,
                }
            )
    lines = [f"## {run_dir.name}: {result['system']} {result['group']} (pyspark {result.get('pyspark')})"]
    for step, info in result["steps"].items():
        t0, t1 = info.get("t0"), info.get("t1")
        if t0 is None:
            continue
        lines.append(f"- {step}: {info['seconds']:.2f} s wall, {info['cpu']:.2f} s CPU (process tree), load {info['load']:.1f}")
        in_step = [j for j in jobs.values() if t0 <= j["start"] <= t1]
        busy = 0.0
        for j in sorted(in_step, key=lambda j: j["start"]):
            end = j.get("end", j["start"])
            busy += end - j["start"]
            parts = []
            for sid in j["stages"]:
                s = stages.get(sid)
                if not s:
                    continue
                ts = tasks.get(sid, [])
                parts.append(
                    f"stage {sid} '{s['name']}' {s['end'] - s['start']:.2f} s, {s['tasks']} tasks"
                    f" (task run {sum(t['run'] for t in ts):.2f} s, deserialize {sum(t['deser'] for t in ts):.2f} s,"
                    f" GC {sum(t['gc'] for t in ts):.2f} s, shuffle write {sum(t['shuffle_write'] for t in ts):.2f} s)"
                )
            lines.append(f"  - job at +{j['start'] - t0:.2f} s, {end - j['start']:.2f} s: " + "; ".join(parts))
        lines.append(f"  - outside Spark jobs (driver: planning, Python planner processes, commit): {info['seconds'] - busy:.2f} s")
        grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in records:
            if t0 <= r["time"] <= t1 + 0.01:  # a record is written when its call ends
                grouped[r["kind"] if r["kind"] != "driver" else "driver: " + r["what"]].append(r)
        for kind, rs in sorted(grouped.items()):
            keys = [k for k in rs[0] if k not in ("kind", "pid", "time", "what") and isinstance(rs[0][k], (int, float))]
            sums = ", ".join(f"{k} {sum(r.get(k, 0) for r in rs):.3g}" for k in keys)
            lines.append(f"  - python {kind}: {len(rs)} call(s) in {len({r['pid'] for r in rs})} process(es): {sums}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    for arg in argv[1:]:
        print(summarize(Path(arg)))
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
