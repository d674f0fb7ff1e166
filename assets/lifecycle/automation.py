"""Jobs, schedules and the sorted-runs sensor of the declared tables.

A table's schedules name a job and the stages it runs; tables naming the same job share it (its
selection is the union of their stages, plus the upstream landing asset when the project writes
it, plus an ``include`` selection) and must agree on its schedule. ``sorted_runs_sensor`` watches
every table declared with ``sorted_runs_sensor: true``: after new snapshots of a table it reads the
LSM shape and requests a ``compaction_job`` run for every partition with a bucket at
``num-sorted-run.compaction-trigger`` or above. Cursor: JSON ``{table: last snapshot id seen}``.

Every table component builds the automation from all the declared tables and keeps the parts it
owns (the first table by name among those a job, schedule or the sensor covers), so that each is
defined exactly once however the tables are spread over ``defs.yaml`` files.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import dagster as dg

from assets.common.declared import DeclarationError, Schedule
from assets.common.lsm import partitions_needing_compaction
from assets.common.tables import TableSpec
from assets.lifecycle.keys import changelog_key, compacted_key, expired_key, ingested_key, tagged_key
from assets.lifecycle.plan import LifecyclePlan
from resources import LakestoreResource

COMPACTION_JOB = "compaction_job"
SENSOR = "sorted_runs_sensor"
STAGE_KEYS: dict[str, Callable[[str], dg.AssetKey]] = {
    "ingest": ingested_key,
    "changelog": changelog_key,
    "compact": compacted_key,
    "tag": tagged_key,
    "expire": expired_key,
}


@dataclass(frozen=True)
class DeclaredTable:
    """What the automation needs of one declared table."""

    spec: TableSpec
    plan: LifecyclePlan
    schedules: tuple[Schedule, ...] = ()
    sorted_runs_sensor: bool = False
    upstream_in_jobs: bool = False  # the project materializes the landing asset: ingestion jobs run it
    calendar: str = "partition range"

    @property
    def name(self) -> str:
        return self.spec.name

    def day_range(self) -> tuple[str, str | None]:
        """First and last day of the table's partitions (last: None when open-ended)."""
        window = self.plan.partitions_def
        first = window.start.date().isoformat()
        end = window.end
        return first, (end.date() - dt.timedelta(days=1)).isoformat() if end is not None else None

    def stage_keys(self, stages: Sequence[str]) -> list[dg.AssetKey]:
        built = [s for s in stages if s in self.plan.stages and (s != "changelog" or self.spec.primary_keys)]
        keys = [STAGE_KEYS[s](self.name) for s in built]
        if "ingest" in stages and self.upstream_in_jobs:
            keys.insert(0, self.plan.upstream_key(self.spec))
        return keys


@dataclass
class _Job:
    schedule: Schedule
    tables: list[DeclaredTable] = field(default_factory=list)
    keys: list[dg.AssetKey] = field(default_factory=list)


def _jobs(tables: Sequence[DeclaredTable]) -> dict[str, _Job]:
    jobs: dict[str, _Job] = {}
    for table in sorted(tables, key=lambda t: t.name):
        for schedule in table.schedules:
            job = jobs.setdefault(schedule.job, _Job(schedule))
            if job.tables:
                _same_schedule(job, schedule, table)
            job.tables.append(table)
            job.keys += table.stage_keys(schedule.stages)
    names = [job.schedule.schedule_name for job in jobs.values()]
    if len(set(names)) != len(names):
        raise DeclarationError(f"two jobs share a schedule name: {sorted(names)}")
    return jobs


def _same_schedule(job: _Job, schedule: Schedule, table: DeclaredTable) -> None:
    first = job.tables[0]
    mine = {k: v for k, v in schedule.model_dump().items() if k != "stages"}
    theirs = {k: v for k, v in job.schedule.model_dump().items() if k != "stages"}
    if mine != theirs:
        diff = sorted(k for k in mine if mine[k] != theirs[k])
        raise DeclarationError(f"tables {first.name} and {table.name} declare job {schedule.job!r} with different {', '.join(diff)}")
    if table.plan.partitions_def != first.plan.partitions_def:
        raise DeclarationError(f"tables {first.name} and {table.name} share job {schedule.job!r} but not their partitions")


def build_automation(tables: Sequence[DeclaredTable], owner: str | None = None) -> dg.Definitions:
    """The jobs, schedules and sensor of ``tables``; only those ``owner`` owns when given."""
    names = [t.name for t in tables]
    if len(set(names)) != len(names):
        raise DeclarationError(f"two declared tables have the same name: {sorted(names)}")
    jobs, schedules, sensors = [], [], []
    for name, job in _jobs(tables).items():
        if owner is not None and job.tables[0].name != owner:
            continue
        selection: dg.AssetSelection = dg.AssetSelection.assets(*job.keys)
        if job.schedule.include:
            selection = selection | dg.AssetSelection.from_string(job.schedule.include)
        job_def = dg.define_asset_job(name, selection=selection, description=job.schedule.description)
        jobs.append(job_def)
        schedules.append(_schedule(job_def, job.schedule, job.tables[0]))
    watched = sorted((t for t in tables if t.sorted_runs_sensor), key=lambda t: t.name)
    if watched and (owner is None or watched[0].name == owner):
        compaction = dg.define_asset_job(
            COMPACTION_JOB,
            selection=dg.AssetSelection.assets(*[compacted_key(t.name) for t in watched]),
            description="Full compaction of the requested partitions (requested by the sorted-runs sensor).",
        )
        jobs.append(compaction)
        sensors.append(build_sorted_runs_sensor(compaction, watched))
    return dg.Definitions(jobs=jobs, schedules=schedules, sensors=sensors)


def previous_day(context: dg.ScheduleEvaluationContext) -> str:
    return (context.scheduled_execution_time.date() - dt.timedelta(days=1)).isoformat()


def _schedule(job: dg.UnresolvedAssetJobDefinition, schedule: Schedule, table: DeclaredTable) -> dg.ScheduleDefinition:
    """Requests the previous day's partition; ticks outside the partitions are skipped with a reason."""
    first, last = table.day_range()
    timezone = table.plan.partitions_def.timezone

    @dg.schedule(job=job, cron_schedule=schedule.cron, execution_timezone=timezone, name=schedule.schedule_name)
    def lifecycle_schedule(context: dg.ScheduleEvaluationContext) -> dg.RunRequest | dg.SkipReason:
        day = previous_day(context)
        if day < first or (last is not None and day > last):
            return dg.SkipReason(f"{day} is outside the {table.calendar} {first}..{last or ''}")
        return dg.RunRequest(run_key=f"{schedule.prefix}-{day}", partition_key=day)

    return lifecycle_schedule


def build_sorted_runs_sensor(job: dg.UnresolvedAssetJobDefinition, tables: Sequence[DeclaredTable]) -> dg.SensorDefinition:
    """The sensor requesting compaction runs of ``tables``' partitions at the compaction trigger."""
    watched = list(tables)

    @dg.sensor(job=job, minimum_interval_seconds=60, name=SENSOR, default_status=dg.DefaultSensorStatus.STOPPED)
    def sorted_runs_sensor(context: dg.SensorEvaluationContext, catalog: LakestoreResource) -> dg.SensorResult:
        seen: dict[str, int] = json.loads(context.cursor) if context.cursor else {}
        lake = catalog.open()
        requests, notes = [], []
        for table_decl in watched:
            spec = table_decl.spec
            if not lake.table_exists(spec.identifier):
                continue
            table = lake.get_table(spec.identifier)
            latest = table.latest_snapshot()
            if latest is None or latest.id <= seen.get(spec.name, 0):
                continue
            seen[spec.name] = latest.id
            first, last = table_decl.day_range()
            for day, runs in sorted(partitions_needing_compaction(table, snapshot_id=latest.id).items()):
                if day < first or (last is not None and day > last):
                    notes.append(f"{spec.name} {spec.day_column}={day}: {runs} sorted runs, outside the partition range")
                    continue
                requests.append(
                    dg.RunRequest(
                        run_key=f"compact-{spec.name}-{day}-s{latest.id}",
                        partition_key=day,
                        asset_selection=[compacted_key(spec.name)],
                        tags={"lakestore/table": spec.name, "lakestore/sorted_runs": str(runs)},
                    )
                )
        for note in notes:
            context.log.warning(note)
        return dg.SensorResult(run_requests=requests, cursor=json.dumps(seen, sort_keys=True))

    return sorted_runs_sensor
