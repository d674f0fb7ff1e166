"""Lifecycle stages of a main table, as partitioned asset factories:
ingestion (Spark) -> changelog -> compaction -> tag -> expiration (changelog: primary-key tables)."""

from assets.lifecycle.changelog import build_changelog_asset
from assets.lifecycle.compact import build_compaction_asset
from assets.lifecycle.expire import build_expiration_asset
from assets.lifecycle.ingest import build_ingestion_asset
from assets.lifecycle.tag import build_tag_asset

__all__ = [
    "build_changelog_asset",
    "build_compaction_asset",
    "build_expiration_asset",
    "build_ingestion_asset",
    "build_lifecycle_assets",
    "build_tag_asset",
]


def build_lifecycle_assets(spec):  # noqa: ANN001, ANN201 - TableSpec -> list[AssetsDefinition]
    changelog = [build_changelog_asset(spec)] if spec.primary_keys else []
    return [build_ingestion_asset(spec), *changelog, build_compaction_asset(spec), build_tag_asset(spec), build_expiration_asset(spec)]
