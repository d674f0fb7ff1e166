#!/usr/bin/env python
"""The main job: materialize the whole pipeline for a few days, end to end, on the embedded
defaults (local Spark, a warehouse under the project, DAGSTER_HOME=./.dagster_home), then print
where the tables are and how to open the Dagster UI.

    .venv/bin/python scripts/run_pipeline.py                    # 5 days from 1992-01-01, sf 0.01
    .venv/bin/python scripts/run_pipeline.py --start 1995-03-01 --days 3 --scale-factor 0.1

Runs go into the project's Dagster instance, so ``dagster dev`` shows them (materializations,
metadata, asset checks) afterwards. Re-running is idempotent: days already ingested are skipped.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def prepare_environment(warehouse: Path, dagster_home: Path, scale_factor: float) -> None:
    """Project-local state only: Dagster home with telemetry off, temp files,
    the warehouse; the venv's Python for Spark workers."""
    dagster_home.mkdir(parents=True, exist_ok=True)
    config = dagster_home / "dagster.yaml"
    if not config.exists():
        config.write_text("telemetry:\n  enabled: false\n")
    tmp = ROOT / ".tmp"
    tmp.mkdir(exist_ok=True)
    os.environ["DAGSTER_HOME"] = str(dagster_home)
    os.environ["LAKESTORE_WAREHOUSE"] = str(warehouse)
    os.environ["TPCH_SCALE_FACTOR"] = repr(scale_factor)
    os.environ.setdefault("TMPDIR", str(tmp))
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--start", default="1992-01-01", help="first day (1992-01-01 .. 1998-08-02)")
    parser.add_argument("--days", type=int, default=5, help="number of days to materialize")
    parser.add_argument("--scale-factor", type=float, default=float(os.environ.get("TPCH_SCALE_FACTOR", "0.01")))
    parser.add_argument("--warehouse", default=os.environ.get("LAKESTORE_WAREHOUSE", str(ROOT / "warehouse")))
    parser.add_argument("--dagster-home", default=os.environ.get("DAGSTER_HOME", str(ROOT / ".dagster_home")))
    parser.add_argument("--spark-master", default="local[*]")
    args = parser.parse_args(argv)

    warehouse = Path(args.warehouse).resolve()
    prepare_environment(warehouse, Path(args.dagster_home).resolve(), args.scale_factor)

    import dagster as dg  # noqa: PLC0415 - after DAGSTER_HOME is set

    from assets.common.partitions import LAST_DAY  # noqa: PLC0415
    from pipelines.definitions import build_definitions  # noqa: PLC0415
    from resources import LakestoreResource, LandingResource, spark_resource  # noqa: PLC0415
    from resources.spark import stop_session  # noqa: PLC0415

    first = dt.date.fromisoformat(args.start)
    last = min(first + dt.timedelta(days=max(args.days, 1) - 1), dt.date.fromisoformat(LAST_DAY))
    catalog = LakestoreResource(warehouse=str(warehouse))
    landing = LandingResource(root=str(warehouse / "landing"), scale_factor=args.scale_factor)
    defs = build_definitions(catalog=catalog, landing=landing, spark=spark_resource(args.spark_master))
    instance = dg.DagsterInstance.get()
    quiet = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}  # the UI keeps the full event log
    day_range = {"dagster/asset_partition_range_start": first.isoformat(), "dagster/asset_partition_range_end": last.isoformat()}

    failed_checks: list[str] = []
    started = time.monotonic()
    try:
        for job_name, tags in (("dimensions_job", {}), ("daily_ingestion_job", day_range), ("maintenance_job", day_range)):
            t0 = time.monotonic()
            result = defs.resolve_job_def(job_name).execute_in_process(instance=instance, tags=tags, run_config=quiet, raise_on_error=False)
            status = "ok" if result.success else "FAILED"
            print(f"{job_name:<22} {status:<6} run {result.run_id}  {time.monotonic() - t0:5.1f} s", flush=True)
            if not result.success:
                for event in result.all_events:
                    if event.is_failure:
                        print(event.message, file=sys.stderr)
                return 1
            for evaluation in result.get_asset_check_evaluations():
                if not evaluation.passed:
                    failed_checks.append(f"{evaluation.asset_key.to_user_string()}:{evaluation.check_name}")
    finally:
        stop_session()

    lake = catalog.open()
    print(f"\nMaterialized {first} .. {last} (scale factor {args.scale_factor:g}) in {time.monotonic() - started:.1f} s")
    print(f"Warehouse: {warehouse}")
    for name in lake.list_tables("tpch"):
        table = lake.get_table(f"tpch.{name}")
        snapshot = table.latest_snapshot()
        tags = len(table.manage.tags())
        rows = table.to_arrow(columns=[table.schema.field_names[0]]).num_rows
        print(f"  tpch.{name:<28} {rows:>7} rows  snapshot {snapshot.id if snapshot else '-':>3}  {tags} tags  {table.path}")
    print(f"Landing files: {warehouse / 'landing'}")
    print(f"Asset checks: {'all passed' if not failed_checks else 'FAILED: ' + ', '.join(failed_checks)}")
    print("\nOpen the Dagster UI (runs, asset graph, metadata, checks) from the project root:")
    print(f"  DAGSTER_HOME={os.environ['DAGSTER_HOME']} LAKESTORE_WAREHOUSE={warehouse} TPCH_SCALE_FACTOR={args.scale_factor!r} \\")
    print("    .venv/bin/dagster dev -w workspace.yaml -h 127.0.0.1 -p 3000")
    print("  then browse http://127.0.0.1:3000")
    return 1 if failed_checks else 0


if __name__ == "__main__":
    sys.exit(main())
