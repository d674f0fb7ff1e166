"""The tables declared as components (``pipelines/defs/**/defs.yaml``), loaded once: their
lifecycle assets, the jobs and schedules they name and the sorted-runs sensor."""

from __future__ import annotations

import warnings
from pathlib import Path

import dagster as dg

import pipelines.defs

PROJECT_ROOT = Path(__file__).resolve().parents[1]  # holds dg.toml, which names pipelines.defs for the dg CLI


def load_table_definitions() -> dg.Definitions:
    """The definitions of every component under ``pipelines/defs`` (as ``dg.load_from_defs_folder``
    loads them, without needing ``dg.toml`` next to an installed package)."""
    with warnings.catch_warnings():  # the components API's own beta/preview notices, as load_from_defs_folder hides them
        warnings.simplefilter("ignore", category=dg.BetaWarning)
        warnings.simplefilter("ignore", category=dg.PreviewWarning)
        return dg.ComponentTree.from_module(defs_module=pipelines.defs, project_root=PROJECT_ROOT).build_defs()


table_defs = load_table_definitions()


def schedule_named(name: str) -> dg.ScheduleDefinition:
    found = [s for s in table_defs.schedules or () if isinstance(s, dg.ScheduleDefinition) and s.name == name]
    if not found:
        raise LookupError(f"no declared table has a schedule named {name!r}")
    return found[0]


def sensor_named(name: str) -> dg.SensorDefinition:
    found = [s for s in table_defs.sensors or () if s.name == name]
    if not found:
        raise LookupError(f"no declared table is watched by a sensor named {name!r}")
    return found[0]
