"""The lakestore catalog resource: a filesystem warehouse (embedded default under the project)."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg
from pydantic import Field

import lakestore

PROJECT_ROOT = Path(__file__).resolve().parents[1]


def default_warehouse() -> str:
    """``$LAKESTORE_WAREHOUSE`` or ``<project>/warehouse``."""
    return os.environ.get("LAKESTORE_WAREHOUSE") or str(PROJECT_ROOT / "warehouse")


class LakestoreResource(dg.ConfigurableResource):
    """Opens the warehouse catalog. Bucket count and snapshot retention apply to the main tables
    when they are first created (they become table options)."""

    warehouse: str = Field(default_factory=default_warehouse, description="Warehouse root directory")
    buckets: int = Field(default=2, description="Fixed bucket count of orders and lineitem")
    snapshots_retained_min: int = Field(default=10, description="snapshot.num-retained.min of the main tables")
    snapshots_retained_max: int = Field(default=40, description="snapshot.num-retained.max of the main tables")
    snapshot_time_retained: str = Field(default="1 h", description="snapshot.time-retained of the main tables")

    def open(self) -> lakestore.Catalog:
        return lakestore.Catalog(str(Path(self.warehouse).resolve()))

    def lifecycle_options(self) -> dict[str, str]:
        return {
            "bucket": str(self.buckets),
            "snapshot.num-retained.min": str(self.snapshots_retained_min),
            "snapshot.num-retained.max": str(self.snapshots_retained_max),
            "snapshot.time-retained": self.snapshot_time_retained,
        }
