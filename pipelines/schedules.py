"""A daily ingestion schedule and a nightly maintenance schedule, both for the previous day's
partition. TPC-H's calendar ends on 1998-08-02: ticks outside it are skipped with a reason."""

from __future__ import annotations

import datetime as dt

import dagster as dg

from assets.common.partitions import FIRST_DAY, LAST_DAY
from pipelines.jobs import daily_ingestion_job, maintenance_job


def previous_day(context: dg.ScheduleEvaluationContext) -> str:
    return (context.scheduled_execution_time.date() - dt.timedelta(days=1)).isoformat()


def _request(context: dg.ScheduleEvaluationContext, prefix: str) -> dg.RunRequest | dg.SkipReason:
    day = previous_day(context)
    if not FIRST_DAY <= day <= LAST_DAY:
        return dg.SkipReason(f"{day} is outside the TPC-H calendar {FIRST_DAY}..{LAST_DAY}")
    return dg.RunRequest(run_key=f"{prefix}-{day}", partition_key=day)


@dg.schedule(job=daily_ingestion_job, cron_schedule="15 0 * * *", execution_timezone="UTC", name="daily_ingestion_schedule")
def daily_ingestion_schedule(context: dg.ScheduleEvaluationContext) -> dg.RunRequest | dg.SkipReason:
    return _request(context, "ingest")


@dg.schedule(job=maintenance_job, cron_schedule="0 3 * * *", execution_timezone="UTC", name="nightly_maintenance_schedule")
def nightly_maintenance_schedule(context: dg.ScheduleEvaluationContext) -> dg.RunRequest | dg.SkipReason:
    return _request(context, "maintain")


all_schedules = [daily_ingestion_schedule, nightly_maintenance_schedule]
