"""One tag per day: ``<day>`` marks the table as of that day's ingestion commit (the latest
snapshot if that commit was already expired or nothing landed that day)."""

import dagster as dg

from assets.common.days import day_number
from assets.common.metadata import CommitStats, Stopwatch, materialization_metadata
from assets.common.partitions import single_run
from assets.common.tables import TableSpec, ensure_table
from assets.lifecycle.keys import compacted_key, ingest_user, tagged_key
from assets.lifecycle.plan import DEFAULT_PLAN, LifecyclePlan
from resources import LakestoreResource


def build_tag_asset(spec: TableSpec, plan: LifecyclePlan = DEFAULT_PLAN) -> dg.AssetsDefinition:
    @dg.asset(
        key=tagged_key(spec.name),
        deps=[compacted_key(spec.name)],
        partitions_def=plan.partitions_def,
        backfill_policy=single_run,
        group_name=spec.name,
        kinds={"lakestore"},
        description=f"Daily tags of {spec.identifier} (time travel: table.to_arrow(tag='YYYY-MM-DD')).",
    )
    def tagged(context: dg.AssetExecutionContext, catalog: LakestoreResource) -> dg.MaterializeResult:
        watch = Stopwatch()
        table = ensure_table(catalog.open(), spec, catalog.lifecycle_options())
        existing = {tag.name: tag.snapshot_id for tag in table.manage.tags()}
        created, kept, rows = [], [], []
        for day in context.partition_keys:
            if day in existing:
                kept.append(day)
                rows.append(f"| {day} | {existing[day]} | existing |")
                continue
            snapshot = table.store.find_commit(ingest_user(spec.name), day_number(day)) or table.latest_snapshot()
            if snapshot is None:
                context.log.info(f"{spec.identifier}: no snapshot yet, no tag for {day}")
                continue
            table.manage.create_tag(day, snapshot.id)
            created.append(day)
            rows.append(f"| {day} | {snapshot.id} | created |")
        tags_now = table.manage.tags()
        return dg.MaterializeResult(
            metadata=materialization_metadata(
                table,
                CommitStats(),
                watch,
                extra={
                    "status": "tagged",
                    "tags_created": dg.MetadataValue.int(len(created)),
                    "tags_existing": dg.MetadataValue.int(len(kept)),
                    "tags_total": dg.MetadataValue.int(len(tags_now)),
                    "tags": dg.MetadataValue.md("| tag | snapshot | |\n|---|---|---|\n" + "\n".join(rows)),
                },
            )
        )

    return tagged
