"""The ``lineitem`` table: ingestion, compaction, tags and expiration per day."""

from assets.common.tables import LINEITEM
from assets.lifecycle import build_lifecycle_assets

lineitem_assets = build_lifecycle_assets(LINEITEM)
