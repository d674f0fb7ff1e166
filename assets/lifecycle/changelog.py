"""Changelog production as its own stage: per day, the changes the day's ingestion commit
produced, as the table's changelog producer wrote them (``lookup``: changelog files with the
before/after images; ``none``: the commit's delta files, +I/-D as written), by row kind, with
their files and bytes. The marts consume these changes, so they depend on this stage."""

from dataclasses import dataclass, field

import dagster as dg
import pyarrow.compute as pc

import lakestore
from assets.common.metadata import CommitStats, Stopwatch, materialization_metadata
from assets.common.partitions import single_run
from assets.common.tables import TableSpec, ensure_table
from assets.lifecycle.ingest import find_ingestion
from assets.lifecycle.keys import changelog_key, ingest_user, ingested_key
from assets.lifecycle.plan import DEFAULT_PLAN, LifecyclePlan
from lakestore.meta.manifest import ADD
from lakestore.scan.changes import ROW_KIND_COLUMN
from resources import LakestoreResource

KINDS = ("+I", "-U", "+U", "-D")
MATCHES_FILES = "changelog_rows_match_files"


@dataclass
class DayChanges:
    day: str
    snapshot_id: int | None
    rows_by_kind: dict[str, int] = field(default_factory=dict)
    files: int = 0
    bytes: int = 0
    file_rows: int = 0  # record counts of the files, from the manifests

    @property
    def rows(self) -> int:
        return sum(self.rows_by_kind.values())


def day_changes(table: lakestore.Table, snapshot: lakestore.Snapshot | None, day: str) -> DayChanges:
    """What ``snapshot`` (the day's ingestion commit, None when nothing landed) produced."""
    if snapshot is None:
        return DayChanges(day, None)
    producer = table.options.changelog_producer
    manifest_list = snapshot.changelog_manifest_list if producer != "none" else snapshot.delta_manifest_list
    out = DayChanges(day, snapshot.id)
    manifests = table.store.manifests()
    for meta in manifests.read_list(manifest_list) if manifest_list else []:
        for entry in manifests.read_entries(meta.file_name):
            if entry.kind == ADD:
                out.files += 1
                out.bytes += entry.file.file_size
                out.file_rows += entry.file.row_count
    changes = table.read_changes(from_snapshot_id=snapshot.id - 1, to_snapshot_id=snapshot.id, columns=list(table.primary_keys))
    counts = pc.value_counts(changes.column(ROW_KIND_COLUMN)).to_pylist() if changes.num_rows else []
    out.rows_by_kind = {kind: 0 for kind in KINDS} | {c["values"]: c["counts"] for c in counts}
    return out


def build_changelog_asset(spec: TableSpec, plan: LifecyclePlan = DEFAULT_PLAN) -> dg.AssetsDefinition:
    key = changelog_key(spec.name)

    @dg.asset(
        key=key,
        deps=[ingested_key(spec.name)],
        partitions_def=plan.partitions_def,
        backfill_policy=single_run,
        group_name=spec.name,
        kinds={"lakestore"},
        description=(
            f"The changes each day's ingestion of {spec.identifier} produced (changelog-producer="
            f"{spec.options.get('changelog-producer', 'none')}), by row kind, with files and bytes."
        ),
        check_specs=[dg.AssetCheckSpec(MATCHES_FILES, asset=key, description="Change rows read equal the files' record counts.")],
    )
    def changelog(context: dg.AssetExecutionContext, catalog: LakestoreResource) -> dg.MaterializeResult:
        watch = Stopwatch()
        table = ensure_table(catalog.open(), spec, catalog.lifecycle_options())
        tags = {tag.name: tag.snapshot for tag in table.manage.tags()}
        user = ingest_user(spec.name)
        days = []
        for day in context.partition_keys:
            snapshot = find_ingestion(table, tags, user, day)
            if snapshot is not None and (snapshot.commit_user != user or not table.store.snapshot_manager.exists(snapshot.id)):
                snapshot = None  # the day's commit expired (a tag on a later snapshot is not that day's changes)
            days.append(day_changes(table, snapshot, day))
        totals = {kind: sum(d.rows_by_kind.get(kind, 0) for d in days) for kind in KINDS}
        mismatched = [d.day for d in days if d.rows != d.file_rows]
        rows = "\n".join(
            f"| {d.day} | {d.snapshot_id if d.snapshot_id is not None else '-'} | "
            + " | ".join(str(d.rows_by_kind.get(k, 0)) for k in KINDS)
            + f" | {d.files} | {d.bytes} |"
            for d in days
        )
        extra = {
            "status": "changelog",
            "changelog_producer": table.options.changelog_producer,
            **{f"rows_{kind}": dg.MetadataValue.int(count) for kind, count in totals.items()},
            "changelog_files": dg.MetadataValue.int(sum(d.files for d in days)),
            "changelog_bytes": dg.MetadataValue.int(sum(d.bytes for d in days)),
            "days": dg.MetadataValue.md(
                "| day | snapshot | +I | -U | +U | -D | files | bytes |\n|---|---|---|---|---|---|---|---|\n" + rows
            ),
        }
        return dg.MaterializeResult(
            metadata=materialization_metadata(table, CommitStats(), watch, extra=extra),
            check_results=[
                dg.AssetCheckResult(
                    check_name=MATCHES_FILES,
                    passed=not mismatched,
                    metadata={"days_checked": len(days), "mismatched_days": ", ".join(mismatched) or "none"},
                )
            ],
        )

    return changelog
