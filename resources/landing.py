"""Where the landing zone lives and which TPC-H scale factor it is generated at."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg
from pydantic import Field

from resources.lakestore_catalog import default_warehouse


def default_landing() -> str:
    """``$LAKESTORE_LANDING`` or ``<warehouse>/landing`` (not a ``.db`` folder, so not a database)."""
    return os.environ.get("LAKESTORE_LANDING") or str(Path(default_warehouse()) / "landing")


def default_scale_factor() -> float:
    return float(os.environ.get("TPCH_SCALE_FACTOR", "0.01"))


class LandingResource(dg.ConfigurableResource):
    root: str = Field(default_factory=default_landing, description="Landing zone root (<root>/<table>/dt=YYYY-MM-DD/)")
    scale_factor: float = Field(default_factory=default_scale_factor, description="TPC-H scale factor given to dbgen")

    def resolved_root(self) -> str:
        return str(Path(self.root).resolve())
