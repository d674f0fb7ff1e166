"""Shared pieces of the benchmark suite: results, timing, the run context."""

from __future__ import annotations

import gc
import os
import shutil
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

LAKESTORE = "lakestore"
PYPAIMON = "pypaimon (python)"
PYPAIMON_RUST = "pypaimon + rust core"
PYARROW = "pyarrow (floor)"
PAIMON_JAVA = "paimon java 0.9 (py4j)"


@dataclass
class Measurement:
    """Wall-clock seconds of each repetition of one system on one workload step."""

    label: str
    times: list[float]
    note: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.times)


@dataclass
class Target:
    """One performance target: ``value`` compared with ``threshold`` (``op`` is '>=' or '<=')."""

    description: str
    value: float | None
    op: str
    threshold: float
    unit: str = "x"
    note: str = ""

    @property
    def met(self) -> bool | None:
        if self.value is None:
            return None
        return self.value >= self.threshold if self.op == ">=" else self.value <= self.threshold


@dataclass
class Ratio:
    """A derived comparison, e.g. 'lakestore vs pypaimon (python)': peer median / lakestore median."""

    description: str
    value: float | None
    unit: str = "x"


@dataclass
class WorkloadResult:
    number: int
    title: str
    steps: dict[str, list[Measurement]] = field(default_factory=dict)  # step name -> systems
    ratios: list[Ratio] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)
    facts: list[tuple[str, str]] = field(default_factory=list)  # extra measured values
    notes: list[str] = field(default_factory=list)
    skipped: str | None = None

    def add(self, step: str, m: Measurement | None) -> Measurement | None:
        if m is not None:
            self.steps.setdefault(step, []).append(m)
        return m

    def median(self, step: str, label: str) -> float | None:
        for m in self.steps.get(step, []):
            if m.label == label and m.times:
                return m.median
        return None

    def speed_ratio(self, step: str, peer: str, *, description: str | None = None) -> Ratio:
        """How many times faster lakestore is than ``peer`` on ``step`` (peer / lakestore)."""
        mine, theirs = self.median(step, LAKESTORE), self.median(step, peer)
        value = theirs / mine if mine and theirs else None
        r = Ratio(description or f"{step}: lakestore speed vs {peer}", value)
        self.ratios.append(r)
        return r


@dataclass
class Context:
    """What every workload gets: sizes, repetitions, scratch space, the oracle, shared state."""

    scale: float  # 1.0 = the reference sizes
    reps: int  # repetitions of fast systems; slow peers use ``slow_reps``
    slow_reps: int
    workdir: Path
    oracle: Any  # bench.oracle.Oracle or None when the oracle venv is missing / --no-peers
    profile_dir: Path | None
    quick: bool = False
    spark_rows: int | None = None
    shared: dict[str, Any] = field(default_factory=dict)
    java: Any = None  # bench.java.Java or None when .venv-java / java is missing or --no-peers

    def rows(self, full: int) -> int:
        return max(1, int(round(full * self.scale)))

    def scratch(self, name: str) -> Path:
        path = self.workdir / name
        if path.exists():
            shutil.rmtree(path)
        path.mkdir(parents=True)
        return path


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    gc.collect()
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def repeat(label: str, reps: int, setup: Callable[[int], Any], run: Callable[[Any], Any], *, note: str = "") -> tuple[Measurement, Any]:
    """Run ``setup(i)`` (untimed) then ``run(state)`` (timed) ``reps`` times; returns the
    measurement and the last run's output."""
    times = []
    out = None
    for i in range(reps):
        state = setup(i)
        seconds, out = timed(lambda state=state: run(state))
        times.append(seconds)
    return Measurement(label, times, note), out


def profile_to(path: Path | None, fn: Callable[[], Any]) -> Any:
    """Run ``fn`` under pyinstrument and write the text report to ``path`` (when asked)."""
    if path is None:
        return fn()
    try:
        from pyinstrument import Profiler  # noqa: PLC0415 - dev-only dependency
    except ImportError:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("pyinstrument is not installed (pip install pyinstrument)\n")
        return fn()
    profiler = Profiler(interval=0.001)
    profiler.start()
    try:
        return fn()
    finally:
        profiler.stop()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(profiler.output_text(unicode=False, color=False, show_all=False))


def dir_size(path: Path) -> int:
    return sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file())


def fmt_ratio(value: float | None, unit: str = "x") -> str:
    if value is None:
        return "n/a"
    if unit == "x":
        return f"{value:.2f}x"
    return f"{value:.3g} {unit}".strip()


def cpu_count() -> int:
    return os.cpu_count() or 1
