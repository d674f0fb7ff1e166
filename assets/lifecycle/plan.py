"""How a table's lifecycle is laid out beyond the table itself: its daily partitions, where
ingestion finds a day's files, which stages it has. The TPC-H main tables use the defaults."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import dagster as dg

from assets.common.partitions import daily_partitions
from assets.common.tables import TableSpec
from assets.lifecycle.keys import landing_key

STAGES = ("ingest", "changelog", "compact", "tag", "expire")


@dataclass(frozen=True)
class LifecyclePlan:
    """``partitions_def``: the daily partitions of every stage; ``landing_folder``: the folder under
    the landing root (default: the table name), one ``<day column>=YYYY-MM-DD`` folder of parquet
    files per day; ``upstream``: the asset the ingestion depends on (default ``landing/<table>``);
    ``expected_rows``: ``tpch`` also checks each day's live rows against dbgen's bounds."""

    partitions_def: dg.TimeWindowPartitionsDefinition = daily_partitions
    landing_folder: str | None = None
    upstream: dg.AssetKey | None = None
    expected_rows: str = "tpch"
    stages: tuple[str, ...] = STAGES

    def folder(self, spec: TableSpec) -> str:
        return self.landing_folder or spec.name

    def upstream_key(self, spec: TableSpec) -> dg.AssetKey:
        return self.upstream or landing_key(spec.name)

    def day_dir(self, landing_root: str, spec: TableSpec, day: str) -> Path:
        """The folder holding ``day``'s landing files of the table."""
        return Path(landing_root) / self.folder(spec) / f"{spec.day_column}={day}"


DEFAULT_PLAN = LifecyclePlan()
