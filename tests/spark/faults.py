"""Fault injection for Spark tests, through lakestore's Spark task hook
(``lakestore.spark.tasks.TASK_HOOK_ENV``): ``fault(spark, spec)`` makes the Python workers call
``crash`` at each point a write passes, and ``crash`` makes the first task reaching the point
``spec`` names exit (or, with ``:executor``, kills its executor JVM first, on a cluster);
``recording(spark, path)`` makes them log each point they pass (``record``).

``spec`` is ``"<point>:<marker file>[:executor]"`` (comma-separated for several); the marker file
makes it happen once per marker and lists the files the crashed attempt had written. Spark hands a
registered data source the environment of the moment it was registered, so the source is
registered again with the fault set, and again after."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from lakestore.spark.source import PaimonDataSource
from lakestore.spark.tasks import TASK_HOOK_ENV

FAULT_ENV = "LAKESTORE_SPARK_FAULT"
# the workers import this module by name: the project root goes on their PYTHONPATH (executors
# of a local cluster run in a work directory of their own)
_PROJECT = str(Path(__file__).resolve().parents[2])


def _executor_jvm() -> int | None:
    """The pid of the executor JVM this Python worker runs under (None: not on an executor)."""
    pid = os.getppid()
    while pid > 1:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read()
            with open(f"/proc/{pid}/stat") as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return None
        if b"CoarseGrainedExecutorBackend" in cmdline:
            return pid
        pid = parent
    return None


def crash(point: str, files: Sequence[str] = ()) -> None:
    """The task hook: crash here if ``FAULT_ENV`` names ``point``; ``files`` go to the marker."""
    for spec in filter(None, os.environ.get(FAULT_ENV, "").split(",")):
        wanted, _, rest = spec.partition(":")
        marker, _, action = rest.partition(":")
        if wanted != point:
            continue
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            continue
        os.write(fd, "".join(f"{f}\n" for f in files).encode())
        os.close(fd)
        executor = _executor_jvm() if action == "executor" else None
        if executor is not None:
            os.kill(executor, signal.SIGKILL)
        os._exit(17)  # a crash, not an exception: no cleanup code runs, like a killed executor


@contextmanager
def hooked(spark, hook: str, environment: dict[str, str]) -> Iterator[None]:
    """Jobs started inside call ``hook`` (``"<module>:<function>"`` of this project) at each
    point, with ``environment`` added to the Python workers' environment."""
    env = spark.sparkContext.environment
    saved = {key: env.get(key) for key in (*environment, TASK_HOOK_ENV, "PYTHONPATH")}
    env.update(environment)
    env[TASK_HOOK_ENV] = hook
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [_PROJECT, saved["PYTHONPATH"]]))
    spark.dataSource.register(PaimonDataSource)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = value
        spark.dataSource.register(PaimonDataSource)


@contextmanager
def fault(spark, spec: str) -> Iterator[None]:
    """Jobs started inside crash as ``spec`` says (``"<point>:<marker>[:executor]"``)."""
    with hooked(spark, f"{__name__}:crash", {FAULT_ENV: spec}):
        yield


RECORD_ENV = "LAKESTORE_SPARK_RECORD"


def record(point: str, items: Sequence[str] = ()) -> None:
    """A task hook that appends ``<pid> <point> <items...>`` (tab-separated) to the file
    ``RECORD_ENV`` names: which process passed which point of a job."""
    with open(os.environ[RECORD_ENV], "a") as f:
        f.write("\t".join([str(os.getpid()), point, *items]) + "\n")


@contextmanager
def recording(spark, path: Path) -> Iterator[None]:
    """Jobs started inside record every point they pass into ``path`` (``record``)."""
    with hooked(spark, f"{__name__}:record", {RECORD_ENV: str(path)}):
        yield


def crashed_files(marker: Path) -> set[str]:
    """Names of the files the crashed attempt had written (listed in its marker)."""
    assert marker.exists(), "no task attempt crashed: the test proved nothing"
    return {line for line in marker.read_text().splitlines() if line}


def files_of_every_snapshot(table) -> set[str]:
    """Names of the data files any retained snapshot references."""
    out: set[str] = set()
    for snapshot in table.snapshots():
        for split in table.scan(snapshot_id=snapshot.id).plan():
            out.update(f.file_name for f in split.files)
    return out


def data_file_names(table_path: str) -> set[str]:
    return {f for _d, _dirs, files in os.walk(table_path) for f in files if f.startswith("data-")}
