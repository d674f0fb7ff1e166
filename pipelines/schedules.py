"""A daily ingestion schedule and a nightly maintenance schedule, both for the previous day's
partition, declared with the tables (``pipelines/defs/tpch/*/defs.yaml``). TPC-H's calendar ends
on 1998-08-02: ticks outside it are skipped with a reason."""

from __future__ import annotations

from pipelines.tables import schedule_named, table_defs

daily_ingestion_schedule = schedule_named("daily_ingestion_schedule")
nightly_maintenance_schedule = schedule_named("nightly_maintenance_schedule")

all_schedules = list(table_defs.schedules or ())
