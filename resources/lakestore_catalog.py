"""The lakestore catalog resource: a warehouse on local disk (default under the project) or on S3,
with the commit lock when several writers may commit at once. Every field takes ``dg.EnvVar``
(``LakestoreResource(warehouse=dg.EnvVar("LAKESTORE_WAREHOUSE"), s3_secret_key=dg.EnvVar("S3_SECRET"))``),
so credentials stay in the environment, out of run configuration."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg
from pydantic import Field

import lakestore

PROJECT_ROOT = Path(__file__).resolve().parents[1]


def default_warehouse() -> str:
    """``$LAKESTORE_WAREHOUSE`` or ``<project>/warehouse``."""
    return os.environ.get("LAKESTORE_WAREHOUSE") or str(PROJECT_ROOT / "warehouse")


class LakestoreCatalogSettings(dg.ConfigurableResource):
    """The catalog settings every lakestore resource shares: where the warehouse is, which
    metastore holds its tables, the S3 credentials and the commit lock. ``LakestoreResource`` and
    ``PaimonIOManager`` both inherit them, so one set of values configures both."""

    warehouse: str = Field(default_factory=default_warehouse, description="Warehouse root directory")
    s3_endpoint: str = Field(default="", description="S3 endpoint URL (s3:// warehouses; empty: AWS_* environment)")
    s3_access_key: str = Field(default="", description="S3 access key")
    s3_secret_key: str = Field(default="", description="S3 secret key")
    s3_region: str = Field(default="", description="S3 region")
    lock_uri: str = Field(default="", description="JDBC URI of the commit lock (e.g. jdbc:postgresql://host/db); empty: no lock")
    lock_user: str = Field(default="", description="User of the commit lock's database")
    lock_password: str = Field(default="", description="Password of the commit lock's database")
    metastore: str = Field(
        default="filesystem",
        description="Catalog kind: 'filesystem', 'jdbc' (Paimon's JDBC catalog), 'rest' (a REST catalog server), 'hive' (a Hive Metastore)",
    )
    catalog_uri: str = Field(
        default="",
        description="JDBC URI of the jdbc catalog (empty: the lock's URI, else SQLite in the warehouse); http(s) URI of a rest catalog;"
        " thrift://host:port of a hive catalog's metastore",
    )
    catalog_key: str = Field(default="", description="Paimon's catalog-key of the jdbc catalog (empty: 'jdbc')")
    catalog_token: str = Field(default="", description="Bearer token of a rest catalog (use dg.EnvVar)")
    catalog_extra_options: dict[str, str] = Field(
        default_factory=dict,
        description="Further catalog options, passed as they are (e.g. hive-conf-dir, location-in-properties, lock.enabled); "
        "they override the fields above",
    )

    def catalog_options(self) -> dict[str, str]:
        """The catalog options (S3, lock) these fields set; also usable as ``format("paimon")`` options."""
        given = {
            "s3.endpoint": self.s3_endpoint,
            "s3.access-key": self.s3_access_key,
            "s3.secret-key": self.s3_secret_key,
            "s3.region": self.s3_region,
        }
        if self.lock_uri:
            given.update({"lock.enabled": "true", "uri": self.lock_uri, "jdbc.user": self.lock_user, "jdbc.password": self.lock_password})
        if self.metastore and self.metastore != "filesystem":
            if self.catalog_uri and self.lock_uri and self.catalog_uri != self.lock_uri:
                # Paimon's JDBC catalog keeps its lock in its own database: one 'uri' for both
                raise ValueError("catalog_uri and lock_uri differ: a jdbc catalog's lock lives in the catalog's database")
            given.update({"metastore": self.metastore, "catalog-key": self.catalog_key, "token": self.catalog_token})
            if self.catalog_uri:
                given["uri"] = self.catalog_uri
        given.update(self.catalog_extra_options)
        return {k: v for k, v in given.items() if v}

    def warehouse_uri(self) -> str:
        """The warehouse as the catalog sees it: URIs as given, local paths made absolute."""
        if "://" in self.warehouse or self.metastore == "rest":  # a rest catalog's warehouse is its name
            return self.warehouse
        return str(Path(self.warehouse).resolve())

    def open(self) -> lakestore.Catalog:
        """The catalog these settings name (a new ``lakestore.Catalog`` each call).

        Raises:
            ValueError: ``catalog_uri`` and ``lock_uri`` differ for a jdbc catalog.
            OptionError: a metastore lakestore does not implement.
        """
        return lakestore.Catalog(self.warehouse_uri(), options=self.catalog_options())


class LakestoreResource(LakestoreCatalogSettings):
    """Opens the warehouse catalog. Bucket count and snapshot retention apply to the main tables
    when they are first created (they become table options)."""

    buckets: int = Field(default=2, description="Fixed bucket count of orders and lineitem")
    snapshots_retained_min: int = Field(default=10, description="snapshot.num-retained.min of the main tables")
    snapshots_retained_max: int = Field(default=40, description="snapshot.num-retained.max of the main tables")
    snapshot_time_retained: str = Field(default="1 h", description="snapshot.time-retained of the main tables")

    def lifecycle_options(self) -> dict[str, str]:
        return {
            "bucket": str(self.buckets),
            "snapshot.num-retained.min": str(self.snapshots_retained_min),
            "snapshot.num-retained.max": str(self.snapshots_retained_max),
            "snapshot.time-retained": self.snapshot_time_retained,
        }
