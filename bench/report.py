"""Console tables and the markdown report (bench/REPORT.md)."""

from __future__ import annotations

import datetime as dt
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.common import LAKESTORE, WorkloadResult, fmt_ratio


def machine() -> list[tuple[str, str]]:
    import numpy  # noqa: PLC0415
    import pyarrow  # noqa: PLC0415

    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram = "unknown"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                ram = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    try:
        load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        load = "n/a"
    return [
        ("CPU", cpu),
        ("cores", f"{os.cpu_count()} logical ({usable} usable by this process)"),
        ("RAM", ram),
        ("OS", platform.platform()),
        ("load average at start (1/5/15 min)", load),
        ("python (lakestore)", sys.version.split()[0]),
        ("pyarrow (lakestore)", pyarrow.__version__),
        ("numpy", numpy.__version__),
        ("lakestore commit", _git_rev()),
    ]


def _git_rev() -> str:
    root = Path(__file__).resolve().parent.parent
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "lakestore"], cwd=root, capture_output=True, text=True, timeout=10
        ).stdout.strip()
        return rev + (" + uncommitted changes under lakestore/" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _met(flag: bool | None) -> str:
    return {True: "met", False: "MISSED", None: "not measured"}[flag]


def _target_rows(results: list[WorkloadResult]) -> list[tuple[str, str, str, str]]:
    rows = []
    for r in results:
        for t in r.targets:
            rows.append(
                (
                    t.description,
                    f"{t.op} {fmt_ratio(t.threshold, t.unit)}",
                    fmt_ratio(t.value, t.unit),
                    _met(t.met) + (f" ({t.note})" if t.note else ""),
                )
            )
        if r.skipped:
            rows.append((f"W{r.number}", "-", "-", f"skipped: {r.skipped}"))
    return rows


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return out


def _step_rows(r: WorkloadResult) -> list[tuple[str, ...]]:
    rows = []
    for step, ms in r.steps.items():
        base = next((m.median for m in ms if m.label == LAKESTORE), None)
        for m in ms:
            rel = fmt_ratio(m.median / base) if base else "n/a"
            reps = str(len(m.times)) + (" (fewer than 3)" if len(m.times) < 3 else "")
            rows.append((step, m.label, rel, f"{m.median:.3f}", reps, m.note))
    return rows


STEP_HEADER = ("step", "system", "time / lakestore time", "median s", "reps", "note")


def console(r: WorkloadResult) -> str:
    lines = [f"== W{r.number}: {r.title}"]
    if r.skipped:
        return "\n".join(lines + [f"   skipped: {r.skipped}"])
    for step, label, rel, med, reps, note in _step_rows(r):
        lines.append(f"   {step:28s} {label:22s} {rel:>9s} of lakestore  (median {med} s, {reps} reps){'  ' + note if note else ''}")
    for ratio in r.ratios:
        lines.append(f"   ratio  {ratio.description}: {fmt_ratio(ratio.value, ratio.unit)}")
    for t in r.targets:
        lines.append(f"   TARGET {t.description} {t.op} {fmt_ratio(t.threshold, t.unit)}: {fmt_ratio(t.value, t.unit)} -> {_met(t.met)}")
    for k, v in r.facts:
        lines.append(f"   {k}: {v}")
    for n in r.notes:
        lines.append(f"   note: {n}")
    return "\n".join(lines)


def console_targets(results: list[WorkloadResult]) -> str:
    lines = ["== Targets"]
    for desc, want, got, met in _target_rows(results):
        lines.append(f"   {desc:62s} {want:>10s}  measured {got:>10s}  {met}")
    return "\n".join(lines)


PROTOCOL = (
    "Processes and warm-up: W9 (the headline) starts a fresh process (for Paimon Java a fresh JVM) per system and repetition and "
    "reports the first run in that process and a second, warm run separately. Elsewhere lakestore and the pyarrow floor run in "
    "the benchmark's own process after imports, and each pypaimon peer runs all its repetitions in one fresh process per "
    "measurement; either way the first run in the process is one of the repetitions and is included in the median. "
    "W6 and W7 start a child process per run. The `reps` column counts repetitions; the load average is recorded at start, "
    "after each workload and at the end.",
)


def write_markdown(
    path: Path,
    results: list[WorkloadResult],
    *,
    command: str,
    scale: float,
    reps: int,
    slow_reps: int,
    oracle_versions: dict[str, Any] | None,
    profiles: Path | None,
    seconds: float,
    machine_info: list[tuple[str, str]] | None = None,
) -> None:
    lines = [
        "# lakestore benchmark report",
        "",
        f"Generated {dt.datetime.now().isoformat(timespec='seconds')} by `{command}` in {seconds:.0f} s "
        f"(scale {scale:g} of the reference sizes; {reps} repetitions of fast systems, {slow_reps} of slow peers; medians).",
        "All systems ran in the same invocation on the same data. Ratios matter, absolute times do not: "
        "the machine is shared and noisy. `time / lakestore time` > 1 means lakestore is faster.",
        "",
        *PROTOCOL,
        "",
        "## Machine",
        "",
        *_table(
            ("", ""),
            (machine_info or machine())
            + [("load average at end (1/5/15 min)", " / ".join(f"{x:.2f}" for x in os.getloadavg()))]
            + [(k if "venv)" in k else f"{k} (oracle venv)", v) for k, v in (oracle_versions or {"pypaimon": "not available"}).items()],
        ),
        "",
        "## Targets",
        "",
        *_table(("target", "wanted", "measured", "result"), _target_rows(results)),
        "",
    ]
    for r in results:
        lines += [f"## W{r.number}: {r.title}", ""]
        if r.skipped:
            lines += [f"Skipped: {r.skipped}", ""]
            continue
        lines += _table(STEP_HEADER, _step_rows(r)) + [""]
        if r.ratios:
            lines += _table(("ratio", "value"), [(x.description, fmt_ratio(x.value, x.unit)) for x in r.ratios]) + [""]
        lines += [f"- {k}: {v}" for k, v in r.facts]
        lines += [f"- note: {n}" for n in r.notes]
        lines.append("")
    if profiles is not None:
        lines += ["## Profiles", "", f"pyinstrument text profiles of lakestore's side are in `{profiles}`.", ""]
    path.write_text("\n".join(lines))
