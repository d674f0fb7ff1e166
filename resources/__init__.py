"""Dagster resources: the Spark session, the lakestore catalog and the TPC-H landing zone."""

from resources.lakestore_catalog import LakestoreResource, default_warehouse
from resources.landing import LandingResource
from resources.spark import SparkResource

__all__ = ["LakestoreResource", "LandingResource", "SparkResource", "default_warehouse"]
