"""Dagster resources: the Spark session, the lakestore catalog and the TPC-H landing zone."""

from resources.lakestore_catalog import LakestoreResource, default_warehouse
from resources.landing import LandingResource
from resources.spark import spark_resource

__all__ = ["LakestoreResource", "LandingResource", "default_warehouse", "spark_resource"]
