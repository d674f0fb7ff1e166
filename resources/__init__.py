"""Dagster resources: the Spark session, the lakestore catalog, the TPC-H landing zone and the
Paimon I/O manager for a project's own tables."""

from resources.lakestore_catalog import LakestoreCatalogSettings, LakestoreResource, default_warehouse
from resources.landing import LandingResource
from resources.paimon import PaimonIOManager
from resources.spark import spark_resource

__all__ = ["LakestoreCatalogSettings", "LakestoreResource", "LandingResource", "PaimonIOManager", "default_warehouse", "spark_resource"]
