"""Landing assets: each day's TPC-H rows (inserts plus that day's updates/deletes) as parquet."""

import dagster as dg
import pyarrow.compute as pc

from assets.common.metadata import Stopwatch
from assets.common.partitions import daily_partitions, single_run
from assets.landing.tpch import LANDED_TABLES, land_day, landing_dir, load_tpch
from assets.lifecycle.keys import landing_key
from resources import LandingResource


def build_landing_asset(table: str) -> dg.AssetsDefinition:
    @dg.asset(
        key=landing_key(table),
        partitions_def=daily_partitions,
        backfill_policy=single_run,
        group_name="landing",
        kinds={"duckdb", "parquet"},
        description=(
            f"TPC-H {table} rows of each day from DuckDB's dbgen, with refresh-style updates (+U) and deletes (-D),"
            f" as landing/{table}/dt=YYYY-MM-DD/*.parquet."
        ),
    )
    def landing_files(context: dg.AssetExecutionContext, landing: LandingResource) -> dg.MaterializeResult:
        watch = Stopwatch()
        root = landing.resolved_root()
        data = load_tpch(root, landing.scale_factor)
        counts = {"+I": 0, "+U": 0, "-D": 0}
        total_bytes, days = 0, list(context.partition_keys)
        for day in days:
            path, rows = land_day(data, root, table, day)
            total_bytes += path.stat().st_size
            for r in pc.value_counts(rows.column("_op")).to_pylist() if rows.num_rows else []:
                counts[r["values"]] += r["counts"]
        context.log.info(f"landed {table} for {len(days)} day(s): {counts}")
        return dg.MaterializeResult(
            metadata={
                "path": dg.MetadataValue.path(str(landing_dir(root, table, days[0]).parent)),
                "scale_factor": dg.MetadataValue.float(landing.scale_factor),
                "days": dg.MetadataValue.int(len(days)),
                "rows": dg.MetadataValue.int(sum(counts.values())),
                "inserts": dg.MetadataValue.int(counts["+I"]),
                "updates": dg.MetadataValue.int(counts["+U"]),
                "deletes": dg.MetadataValue.int(counts["-D"]),
                "files": dg.MetadataValue.int(len(days)),
                "bytes": dg.MetadataValue.int(total_bytes),
                "duration_s": dg.MetadataValue.float(watch.seconds),
            }
        )

    return landing_files


landing_assets = [build_landing_asset(t) for t in LANDED_TABLES]
