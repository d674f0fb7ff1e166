"""Marts fed by the main tables' per-day changes: daily revenue per nation (aggregation merge
engine) and order status (partial-update merge engine, two sources)."""

from assets.marts.order_status import order_status_asset
from assets.marts.revenue import revenue_asset

mart_assets = [revenue_asset, order_status_asset]

__all__ = ["mart_assets", "order_status_asset", "revenue_asset"]
