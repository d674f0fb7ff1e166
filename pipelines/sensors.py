"""The sorted-runs sensor: after new snapshots of a main table, read its LSM shape and request a
compaction run for every partition with a bucket at num-sorted-run.compaction-trigger or above.

Cursor: JSON ``{table: last snapshot id seen}``; a table without new snapshots is not planned.
"""

from __future__ import annotations

import json

import dagster as dg

from assets.common.lsm import partitions_needing_compaction
from assets.common.partitions import FIRST_DAY, LAST_DAY
from assets.common.tables import MAIN_TABLES
from assets.lifecycle.keys import compacted_key
from pipelines.jobs import compaction_job
from resources import LakestoreResource


@dg.sensor(job=compaction_job, minimum_interval_seconds=60, name="sorted_runs_sensor", default_status=dg.DefaultSensorStatus.STOPPED)
def sorted_runs_sensor(context: dg.SensorEvaluationContext, catalog: LakestoreResource) -> dg.SensorResult:
    seen: dict[str, int] = json.loads(context.cursor) if context.cursor else {}
    lake = catalog.open()
    requests, notes = [], []
    for spec in MAIN_TABLES:
        if not lake.table_exists(spec.identifier):
            continue
        table = lake.get_table(spec.identifier)
        latest = table.latest_snapshot()
        if latest is None or latest.id <= seen.get(spec.name, 0):
            continue
        seen[spec.name] = latest.id
        for day, runs in sorted(partitions_needing_compaction(table, snapshot_id=latest.id).items()):
            if not FIRST_DAY <= day <= LAST_DAY:
                notes.append(f"{spec.name} dt={day}: {runs} sorted runs, outside the partition range")
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
