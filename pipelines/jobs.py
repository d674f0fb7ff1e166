"""Jobs: daily ingestion (landing -> tables -> changelog -> compaction -> marts), nightly maintenance
(tags, expiration) and compaction on demand (the sensor's runs) come from the declared tables
(``pipelines/defs/tpch/*/defs.yaml``); the dimension load is defined here."""

from __future__ import annotations

import dagster as dg

from pipelines.tables import table_defs

table_jobs = list(table_defs.jobs or ())
jobs_by_name = {job.name: job for job in table_jobs}
daily_ingestion_job = jobs_by_name["daily_ingestion_job"]
maintenance_job = jobs_by_name["maintenance_job"]
compaction_job = jobs_by_name["compaction_job"]

dimensions_job = dg.define_asset_job(
    "dimensions_job",
    selection=dg.AssetSelection.groups("dimensions"),
    description="Load the customer and nation dimension tables.",
)

all_jobs = [*table_jobs, dimensions_job]
