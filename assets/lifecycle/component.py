"""``PaimonTableComponent``: a lakestore table and its lifecycle declared in a ``defs.yaml``.

    type: assets.lifecycle.component.PaimonTableComponent
    attributes:
      name: events
      database: shop
      columns:
        - {name: event_id, type: BIGINT NOT NULL}
        - {name: amount, type: "DECIMAL(15, 2)"}
        - {name: dt, type: STRING NOT NULL}
      primary_keys: [dt, event_id]
      partition_keys: [dt]
      options: {bucket: 2}
      partitions: {start: "2024-01-01"}
      stages: [ingest, compact, tag, expire]
      schedules:
        - {job: events_daily_job, stages: [ingest, compact], cron: "15 0 * * *"}
      sorted_runs_sensor: true

gives the lifecycle assets ``events/ingested``, ``events/compacted``, ``events/tagged`` and
``events/expired`` with their checks (built by ``build_lifecycle_assets``, the factories the
TPC-H tables use), the external asset ``landing/events`` (the day folders
``<landing root>/events/dt=YYYY-MM-DD/*.parquet``), the job and schedule, and the table's place
in ``sorted_runs_sensor``. The attributes are checked when the component loads (see
``assets.common.declared.TableDeclaration``).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from types import ModuleType

import dagster as dg

from assets.common.declared import TableDeclaration
from assets.common.partitions import daily_partitions
from assets.lifecycle import LifecyclePlan, build_lifecycle_assets
from assets.lifecycle.automation import DeclaredTable, build_automation


class TableScaffolder(dg.Scaffolder):
    """``dg scaffold defs assets.lifecycle.component.PaimonTableComponent <path>``: a ``defs.yaml``
    declaring a table named after the folder, to edit."""

    def scaffold(self, request: dg.ScaffoldRequest) -> None:
        name = Path(request.target_path).name.replace("-", "_")
        dg.scaffold_component(
            request,
            {
                "name": name,
                "database": "default",
                "columns": [{"name": "id", "type": "BIGINT NOT NULL"}, {"name": "dt", "type": "STRING NOT NULL"}],
                "primary_keys": ["dt", "id"],
                "partition_keys": ["dt"],
                "options": {"bucket": 2, "write-only": True},
                "partitions": {"start": dt.date.today().isoformat()},
                "stages": ["ingest", "changelog", "compact", "tag", "expire"],
                "schedules": [
                    {"job": f"{name}_daily_job", "stages": ["ingest", "changelog", "compact"], "cron": "15 0 * * *"},
                    {"job": f"{name}_nightly_job", "stages": ["tag", "expire"], "cron": "0 3 * * *"},
                ],
                "sorted_runs_sensor": True,
            },
        )


@dg.scaffold_with(TableScaffolder)
class PaimonTableComponent(dg.Component, dg.Resolvable, TableDeclaration):
    """A lakestore (Apache Paimon) table with its lifecycle: ingestion of daily landing files on
    Spark, changelog, compaction, tags and expiration, with schedules and the sorted-runs sensor."""

    def partitions_def(self) -> dg.TimeWindowPartitionsDefinition:
        """The daily partitions the declaration names (the TPC-H calendar's object when equal)."""
        given = dg.DailyPartitionsDefinition(
            start_date=self.partitions.start, end_date=self.partitions.end, timezone=self.partitions.timezone
        )
        return daily_partitions if given == daily_partitions else given

    def plan(self) -> LifecyclePlan:
        return LifecyclePlan(
            partitions_def=self.partitions_def(),
            landing_folder=self.landing.folder,
            upstream=dg.AssetKey.from_user_string(self.landing.asset) if self.landing.asset else None,
            expected_rows=self.landing.expected_rows,
            stages=tuple(self.stages),
        )

    def declared_table(self) -> DeclaredTable:
        return DeclaredTable(
            spec=self.spec(),
            plan=self.plan(),
            schedules=tuple(self.schedules),
            sorted_runs_sensor=self.sorted_runs_sensor,
            upstream_in_jobs=not self.landing.external,
            calendar=self.partitions.calendar,
        )

    def build_defs(self, context: dg.ComponentLoadContext) -> dg.Definitions:
        table = self.declared_table()
        assets: list[dg.AssetsDefinition | dg.AssetSpec] = list(build_lifecycle_assets(table.spec, table.plan))
        if self.landing.external:
            folder = table.plan.folder(table.spec)
            assets.append(
                dg.AssetSpec(
                    table.plan.upstream_key(table.spec),
                    group_name="landing",
                    kinds={"parquet"},
                    description=f"Landing files of {table.spec.identifier}, written outside Dagster: "
                    f"<landing root>/{folder}/{table.spec.day_column}=YYYY-MM-DD/*.parquet.",
                )
            )
        automation = build_automation(_declared_tables(context, self), owner=self.name)
        return dg.Definitions(assets=assets, jobs=automation.jobs, schedules=automation.schedules, sensors=automation.sensors)


def _declared_tables(context: dg.ComponentLoadContext, me: PaimonTableComponent) -> list[DeclaredTable]:
    """Every table component of the project (this one alone when it is loaded on its own)."""
    tree = context.component_tree
    if not isinstance(getattr(tree, "defs_module", None), ModuleType):  # a test tree of one component
        return [me.declared_table()]
    components = tree.get_all_components(of_type=PaimonTableComponent)
    if me not in components:
        components = [me, *components]
    return [c.declared_table() for c in components]
