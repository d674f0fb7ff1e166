"""Dedicated full compaction: the table's writers are ``write-only``, so this stage merges the
day's partition into one sorted run per bucket, plus any partition whose buckets reached
``num-sorted-run.compaction-trigger`` (older partitions receive the later days' updates/deletes)."""

import dagster as dg
from dagster_pyspark import LazyPySparkResource

import lakestore as ls
from assets.common.lsm import partitions_needing_compaction, table_shape
from assets.common.metadata import Stopwatch, commit_stats, materialization_metadata
from assets.common.partitions import single_run
from assets.common.tables import TableSpec, ensure_table
from assets.lifecycle.keys import compacted_key, ingested_key
from assets.lifecycle.plan import DEFAULT_PLAN, LifecyclePlan
from resources import LakestoreResource

PRESERVES_ROWS = "compaction_preserves_rows"
READABLE = "newest_snapshot_readable"


class CompactionConfig(dg.Config):
    engine: str = "local"  # "local": table.compact in this process; "spark": lakestore.spark.compact tasks
    include_triggered: bool = True  # also compact other partitions at/above the compaction trigger


def build_compaction_asset(spec: TableSpec, plan: LifecyclePlan = DEFAULT_PLAN) -> dg.AssetsDefinition:
    key = compacted_key(spec.name)

    @dg.asset(
        key=key,
        deps=[ingested_key(spec.name)],
        partitions_def=plan.partitions_def,
        backfill_policy=single_run,
        group_name=spec.name,
        kinds={"lakestore"},
        description=f"Full compaction of {spec.identifier}'s day partitions (and of partitions at the compaction trigger).",
        check_specs=[
            dg.AssetCheckSpec(
                PRESERVES_ROWS, asset=key, description="Compaction does not change the live rows of the compacted partitions."
            ),
            dg.AssetCheckSpec(
                READABLE, asset=key, description="The newest snapshot reads back completely (every column of the compacted partitions)."
            ),
        ],
    )
    def compacted(
        context: dg.AssetExecutionContext, config: CompactionConfig, catalog: LakestoreResource, spark: LazyPySparkResource
    ) -> dg.MaterializeResult:
        watch = Stopwatch()
        table = ensure_table(catalog.open(), spec, catalog.lifecycle_options())
        days = list(context.partition_keys)
        triggered = sorted(set(partitions_needing_compaction(table)) - set(days)) if config.include_triggered else []
        targets = sorted(set(days) | set(triggered))
        day = spec.day_column
        where = ls.col(day).isin(targets)
        before = table.to_arrow(columns=list(table.primary_keys), filter=where).num_rows
        snapshots: list = []
        status = "compacted"
        if config.engine == "spark":
            from lakestore.spark import compact as spark_compact  # noqa: PLC0415 - imports pyspark

            snapshots = list(spark_compact(spark.spark_session, table, full=True, partitions=[{day: d} for d in targets]))
        else:
            snapshots = list(table.compact(full=True, partitions=[{day: d} for d in targets], commit_user=f"compact-{spec.name}"))
        context.log.info(f"{spec.identifier}: {status} {len(targets)} partition(s) -> snapshots {[s.id for s in snapshots]}")

        latest = table.latest_snapshot()
        readable, error, after = True, "", -1
        try:
            after = table.to_arrow(filter=where, snapshot_id=latest.id if latest else None).num_rows
        except Exception as exc:  # noqa: BLE001 - the check reports any read failure
            readable, error = False, f"{type(exc).__name__}: {exc}"
        shapes = table_shape(table, partitions=targets, partition_key=day)
        meta = materialization_metadata(
            table,
            commit_stats(table, snapshots),
            watch,
            shape_partitions=targets,
            extra={
                "status": status,
                "engine": config.engine,
                "partitions_compacted": dg.MetadataValue.int(len(targets)),
                "triggered_partitions": ", ".join(triggered) or "none",
                "max_sorted_runs_after": dg.MetadataValue.int(max((s.sorted_runs for s in shapes), default=0)),
            },
        )
        return dg.MaterializeResult(
            metadata=meta,
            check_results=[
                dg.AssetCheckResult(
                    check_name=PRESERVES_ROWS,
                    asset_key=key,
                    passed=readable and before == after,
                    metadata={"rows_before": before, "rows_after": after},
                ),
                dg.AssetCheckResult(
                    check_name=READABLE,
                    asset_key=key,
                    passed=readable,
                    description=error or None,
                    metadata={"snapshot_id": latest.id if latest else -1, "rows_read": after},
                ),
            ],
        )

    return compacted
