"""Daily partitions following TPC-H's o_orderdate range (1992-01-01 .. 1998-08-02)."""

from __future__ import annotations

import warnings

import dagster as dg

# backfill_policy is beta in Dagster 1.13; it is what single-run backfills need.
warnings.filterwarnings("ignore", category=dg.BetaWarning, message=".*backfill_policy.*")

FIRST_DAY = "1992-01-01"
LAST_DAY = "1998-08-02"

# end_date is exclusive: the last partition is LAST_DAY.
daily_partitions = dg.DailyPartitionsDefinition(start_date=FIRST_DAY, end_date="1998-08-03", timezone="UTC")

# Every partitioned stage processes a range of days in one run (one Spark session, one commit
# per day so re-runs stay idempotent).
single_run = dg.BackfillPolicy.single_run()
