"""Run the benchmark suite: ``.venv/bin/python -m bench.run [--quick] [--only 1,2,5]``.

Prints each workload's ratios and the performance targets, and writes bench/REPORT.md."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

from bench.common import Context, WorkloadResult
from bench.java import Java
from bench.oracle import Oracle
from bench.report import console, console_targets, machine, write_markdown
from bench.workloads import all_workloads

HERE = Path(__file__).resolve().parent


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__)
    p.add_argument("--quick", action="store_true", help="1/10 of the sizes, fewer repetitions (a smoke test)")
    p.add_argument("--only", default="", help="comma-separated workload numbers, e.g. 1,2,5")
    p.add_argument("--scale", type=float, default=None, help="override the size factor (1.0 = the reference sizes)")
    p.add_argument("--reps", type=int, default=None, help="repetitions of lakestore, pyarrow and fast peers")
    p.add_argument("--slow-reps", type=int, default=None, help="repetitions of slow peers (pypaimon pure Python)")
    p.add_argument("--spark-rows", type=int, default=None, help="rows of workload 7 (default 10M; 100k with --quick)")
    p.add_argument("--no-peers", action="store_true", help="skip the pypaimon (oracle venv) and Paimon Java (java venv) peers")
    p.add_argument("--profile", action="store_true", help="also profile lakestore (pyinstrument) into bench/profiles/")
    p.add_argument("--report", type=Path, default=HERE / "REPORT.md")
    p.add_argument("--workdir", type=Path, default=None, help="scratch directory (default: a temp dir, removed)")
    p.add_argument("--keep", action="store_true", help="keep the scratch directory")
    return p.parse_args(argv)


def _peer_versions(oracle: Oracle | None, java: Java | None) -> dict[str, Any] | None:
    versions: dict[str, Any] = dict(oracle.versions()) if oracle else {"pypaimon": "not available"}
    # named without starting a JVM: the bridge jar is fixed by the java venv's pypaimon 0.2.0
    versions["paimon java (java venv)"] = "0.9.0, pypaimon 0.2.0's py4j bridge jar" if java else "not available"
    return versions


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    scale = args.scale if args.scale is not None else (0.1 if args.quick else 1.0)
    reps = args.reps or (3 if args.quick else 5)
    slow_reps = args.slow_reps or (1 if args.quick else 3)
    wanted = {int(x) for x in args.only.split(",") if x.strip()}
    workloads = [w for w in all_workloads() if not wanted or w.NUMBER in wanted]
    oracle = None if args.no_peers else Oracle.find()
    if oracle is None and not args.no_peers:
        print("note: oracle venv (.venv-oracle) not usable: pypaimon peers skipped", file=sys.stderr)
    java = None if args.no_peers else Java.find()
    if java is None and not args.no_peers:
        print(f"note: Paimon Java peer skipped: {Java.unavailable_reason()}", file=sys.stderr)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="lakestore-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    profiles = HERE / "profiles" if args.profile else None
    ctx = Context(
        scale=scale,
        reps=reps,
        slow_reps=slow_reps,
        workdir=workdir,
        oracle=oracle,
        profile_dir=profiles,
        quick=args.quick,
        spark_rows=args.spark_rows,
        java=java,
    )
    command = "python -m bench.run " + " ".join(argv if argv is not None else sys.argv[1:])
    print(f"lakestore bench: scale {scale:g}, {reps} reps ({slow_reps} for slow peers), workdir {workdir}")
    machine_info = machine()  # before the run: the load average at start
    start = time.perf_counter()
    results: list[WorkloadResult] = []
    try:
        for w in workloads:
            t0 = time.perf_counter()
            try:
                r = w.run(ctx)
            except Exception as exc:  # noqa: BLE001 - one broken workload must not hide the others
                traceback.print_exc()
                r = WorkloadResult(w.NUMBER, w.TITLE, skipped=f"failed: {type(exc).__name__}: {exc}")
            r.facts.append(("workload wall time", f"{time.perf_counter() - t0:.1f} s"))
            r.facts.append(("load average after the workload (1/5/15 min)", " / ".join(f"{x:.2f}" for x in os.getloadavg())))
            results.append(r)
            print(console(r), flush=True)
    finally:
        if not args.keep and args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    print(console_targets(results))
    write_markdown(
        args.report,
        results,
        command=command.strip(),
        scale=scale,
        reps=reps,
        slow_reps=slow_reps,
        oracle_versions=_peer_versions(oracle, java),
        profiles=profiles,
        seconds=time.perf_counter() - start,
        machine_info=machine_info,
    )
    print(f"report written to {args.report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
