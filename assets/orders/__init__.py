"""The ``orders`` table: ingestion, compaction, tags and expiration per day."""

from assets.common.tables import ORDERS
from assets.lifecycle import build_lifecycle_assets

orders_assets = build_lifecycle_assets(ORDERS)
