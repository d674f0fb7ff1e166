"""Small dimension tables (customer, nation), rewritten whole from dbgen output."""

import dagster as dg

import lakestore
from assets.common.metadata import Stopwatch, commit_stats, materialization_metadata
from assets.common.tables import CUSTOMER, NATION, TableSpec, ensure_table
from assets.landing.tpch import dimension_rows, load_tpch
from resources import LakestoreResource, LandingResource


def build_dimension_asset(spec: TableSpec) -> dg.AssetsDefinition:
    @dg.asset(
        key=dg.AssetKey(["dimensions", spec.name]),
        group_name="dimensions",
        kinds={"lakestore"},
        description=f"TPC-H {spec.name} as lakestore table {spec.identifier} (overwritten as a whole: idempotent).",
    )
    def dimension(context: dg.AssetExecutionContext, catalog: LakestoreResource, landing: LandingResource) -> dg.MaterializeResult:
        watch = Stopwatch()
        table = ensure_table(catalog.open(), spec)
        rows = dimension_rows(load_tpch(landing.resolved_root(), landing.scale_factor), spec.name)
        current = table.to_arrow() if table.latest_snapshot() is not None else None
        snapshot = None
        if (
            current is not None
            and current.num_rows == rows.num_rows
            and current.sort_by(spec.primary_keys[0]).equals(rows.sort_by(spec.primary_keys[0]))
        ):
            context.log.info(f"{spec.identifier} already holds these {rows.num_rows} rows; nothing to do")
        else:
            snapshot = table.write_arrow(rows, overwrite=True, commit_user=f"load-{spec.name}")
        extra = {"rows": dg.MetadataValue.int(rows.num_rows), **bucket_metadata(table)}
        return dg.MaterializeResult(metadata=materialization_metadata(table, commit_stats(table, [snapshot]), watch, extra=extra))

    return dimension


def bucket_metadata(table: lakestore.Table) -> dict[str, dg.MetadataValue]:
    """How the table's rows are bucketed: fixed, or dynamic with the keys each bucket indexes."""
    buckets = table.options.bucket
    if buckets > 0:
        return {"bucket_mode": dg.MetadataValue.text(f"fixed ({buckets} buckets)")}
    hashes = [f for f in table.store.index_files() if f.index_type == "HASH"]
    return {
        "bucket_mode": dg.MetadataValue.text(f"dynamic (up to {table.options.dynamic_bucket_target_row_num} keys per bucket)"),
        "buckets": dg.MetadataValue.int(len({(f.partition_path, f.bucket) for f in hashes})),
        "indexed_keys": dg.MetadataValue.int(sum(f.rows for f in hashes)),
    }


customer_asset = build_dimension_asset(CUSTOMER)
nation_asset = build_dimension_asset(NATION)
dimension_assets = [customer_asset, nation_asset]
