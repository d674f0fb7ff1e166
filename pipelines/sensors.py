"""The sorted-runs sensor (``assets.lifecycle.automation``): after new snapshots of a table declared
with ``sorted_runs_sensor: true``, read its LSM shape and request a compaction run for every
partition with a bucket at num-sorted-run.compaction-trigger or above.

Cursor: JSON ``{table: last snapshot id seen}``; a table without new snapshots is not planned.
"""

from __future__ import annotations

from pipelines.tables import sensor_named

sorted_runs_sensor = sensor_named("sorted_runs_sensor")
