"""Lifecycle stages of a main table, as partitioned asset factories:
ingestion (Spark) -> changelog -> compaction -> tag -> expiration (changelog: primary-key tables).

``build_lifecycle_assets`` is what the YAML table component (``assets.lifecycle.component``) calls."""

import dagster as dg

from assets.common.tables import TableSpec
from assets.lifecycle.changelog import build_changelog_asset
from assets.lifecycle.compact import build_compaction_asset
from assets.lifecycle.expire import build_expiration_asset
from assets.lifecycle.ingest import build_ingestion_asset
from assets.lifecycle.plan import DEFAULT_PLAN, STAGES, LifecyclePlan
from assets.lifecycle.tag import build_tag_asset

__all__ = [
    "DEFAULT_PLAN",
    "STAGES",
    "LifecyclePlan",
    "build_changelog_asset",
    "build_compaction_asset",
    "build_expiration_asset",
    "build_ingestion_asset",
    "build_lifecycle_assets",
    "build_tag_asset",
]

_FACTORIES = {
    "ingest": build_ingestion_asset,
    "changelog": build_changelog_asset,
    "compact": build_compaction_asset,
    "tag": build_tag_asset,
    "expire": build_expiration_asset,
}


def build_lifecycle_assets(spec: TableSpec, plan: LifecyclePlan = DEFAULT_PLAN) -> list[dg.AssetsDefinition]:
    """The assets of the plan's stages, in lifecycle order (changelog only for primary-key tables)."""
    stages = [s for s in STAGES if s in plan.stages and (s != "changelog" or spec.primary_keys)]
    return [_FACTORIES[stage](spec, plan) for stage in stages]
