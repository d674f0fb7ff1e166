"""Jobs: daily ingestion (landing -> tables -> changelog -> compaction -> marts), nightly maintenance (tags,
expiration), compaction on demand (the sensor's runs) and the dimension load."""

from __future__ import annotations

import dagster as dg

from assets.common.tables import MAIN_TABLES
from assets.lifecycle.keys import changelog_key, compacted_key, expired_key, ingested_key, landing_key, tagged_key

MAIN = [spec.name for spec in MAIN_TABLES]

ingestion_selection = (
    dg.AssetSelection.assets(*[landing_key(t) for t in MAIN])
    | dg.AssetSelection.assets(*[ingested_key(t) for t in MAIN])
    | dg.AssetSelection.assets(*[changelog_key(spec.name) for spec in MAIN_TABLES if spec.primary_keys])
    | dg.AssetSelection.assets(*[compacted_key(t) for t in MAIN])
    | dg.AssetSelection.groups("marts")
)
maintenance_selection = dg.AssetSelection.assets(*[tagged_key(t) for t in MAIN], *[expired_key(t) for t in MAIN])
compaction_selection = dg.AssetSelection.assets(*[compacted_key(t) for t in MAIN])

daily_ingestion_job = dg.define_asset_job(
    "daily_ingestion_job",
    selection=ingestion_selection,
    description="Land a day of TPC-H changes, ingest it with Spark, compact, update the marts.",
)
maintenance_job = dg.define_asset_job(
    "maintenance_job",
    selection=maintenance_selection,
    description="Tag the day and expire old snapshots.",
)
compaction_job = dg.define_asset_job(
    "compaction_job",
    selection=compaction_selection,
    description="Full compaction of the requested partitions (requested by the sorted-runs sensor).",
)
dimensions_job = dg.define_asset_job(
    "dimensions_job",
    selection=dg.AssetSelection.groups("dimensions"),
    description="Load the customer and nation dimension tables.",
)

all_jobs = [daily_ingestion_job, maintenance_job, compaction_job, dimensions_job]
