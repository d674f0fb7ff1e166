"""Snapshot expiration by the table's retention options; the check verifies what stayed."""

import dagster as dg

import lakestore as ls
from assets.common.metadata import CommitStats, Stopwatch, materialization_metadata
from assets.common.partitions import single_run
from assets.common.tables import TableSpec, ensure_table
from assets.lifecycle.keys import expired_key, tagged_key
from assets.lifecycle.plan import DEFAULT_PLAN, LifecyclePlan
from resources import LakestoreResource

RETENTION = "retention_respected"


def retention_check(table: ls.Table, key: dg.AssetKey, *, expired_now: bool) -> dg.AssetCheckResult:
    """Retained snapshots are contiguous, at most num-retained.max (more only while a consumer,
    e.g. a mart's change feed, still needs them), and every tag still reads. When this run
    expired snapshots, at least num-retained.min (or all there ever were) stay; fewer are fine
    when an earlier, manual expiration with a lower minimum removed them."""
    ids = [s.id for s in table.snapshots()]
    retain_min = table.options.snapshot_num_retained_min
    retain_max = table.options.snapshot_num_retained_max
    consumers = table.manage.consumers()
    held = ids[-1] - min(consumers.values()) + 1 if ids and consumers else 0  # snapshots consumers protect
    problems = []
    if ids and ids != list(range(ids[0], ids[-1] + 1)):
        problems.append(f"retained snapshot ids are not contiguous: {ids}")
    if retain_max is not None and len(ids) > max(retain_max, held):
        problems.append(f"{len(ids)} snapshots retained, more than snapshot.num-retained.max={retain_max}")
    if expired_now and ids and len(ids) < min(retain_min, ids[-1]):
        problems.append(f"only {len(ids)} snapshots retained, fewer than snapshot.num-retained.min={retain_min}")
    tags = [tag.name for tag in table.manage.tags()]
    for name in sorted(tags):
        try:
            table.scan(tag=name).plan()
        except Exception as exc:  # noqa: BLE001 - the check reports any failure
            problems.append(f"tag {name} unreadable: {type(exc).__name__}: {exc}")
    return dg.AssetCheckResult(
        check_name=RETENTION,
        asset_key=key,
        passed=not problems,
        description="; ".join(problems) or None,
        metadata={
            "snapshots_retained": len(ids),
            "earliest_snapshot": ids[0] if ids else -1,
            "latest_snapshot": ids[-1] if ids else -1,
            "num_retained_min": retain_min,
            "num_retained_max": retain_max if retain_max is not None else -1,
            "tags_checked": len(tags),
            "consumers": len(consumers),
        },
    )


def build_expiration_asset(spec: TableSpec, plan: LifecyclePlan = DEFAULT_PLAN) -> dg.AssetsDefinition:
    key = expired_key(spec.name)

    @dg.asset(
        key=key,
        deps=[tagged_key(spec.name)],
        partitions_def=plan.partitions_def,
        backfill_policy=single_run,
        group_name=spec.name,
        kinds={"lakestore"},
        description=(
            f"Snapshot expiration of {spec.identifier} (snapshot.num-retained.min/max, snapshot.time-retained);"
            " tagged snapshots' files stay."
        ),
        check_specs=[dg.AssetCheckSpec(RETENTION, asset=key, description="Retention options are respected and every tag still reads.")],
    )
    def expired(context: dg.AssetExecutionContext, catalog: LakestoreResource) -> dg.MaterializeResult:
        watch = Stopwatch()
        table = ensure_table(catalog.open(), spec, catalog.lifecycle_options())
        result = table.maintenance.expire_snapshots()
        expired_ids = result.expired_snapshot_ids
        extra: dict = {
            "status": "expired",
            "snapshots_expired": dg.MetadataValue.int(len(expired_ids)),
            "expired_snapshot_ids": ", ".join(map(str, expired_ids)) or "none",
            "data_files_deleted": dg.MetadataValue.int(result.deleted_data_files),
            "manifest_files_deleted": dg.MetadataValue.int(result.deleted_manifest_files),
        }
        context.log.info(f"{spec.identifier}: expired snapshots {expired_ids or 'none'}")
        ids = [s.id for s in table.snapshots()]
        extra["snapshots_retained"] = dg.MetadataValue.int(len(ids))
        extra["earliest_snapshot_id"] = dg.MetadataValue.int(ids[0] if ids else -1)
        return dg.MaterializeResult(
            metadata=materialization_metadata(table, CommitStats(), watch, extra=extra),
            check_results=[retention_check(table, key, expired_now=bool(expired_ids))],
        )

    return expired
