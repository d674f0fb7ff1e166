"""Catalogs: where databases and tables are found.

``Catalog`` (``lakestore.catalog.base``) is the abstract catalog API every implementation has;
``Catalog(warehouse, options=...)`` builds the implementation the ``metastore`` option names,
as Paimon does (``lakestore.catalog.factory``):

- ``filesystem`` (default): ``<warehouse>/<db>.db/<table>/`` (``FileSystemCatalog``, ``lakestore.catalog.filesystem``);
- ``jdbc``: Paimon's JDBC catalog over SQLite or PostgreSQL (``lakestore.catalog.jdbc``);
- ``rest``: Paimon's REST catalog protocol, e.g. ``lakestore serve`` (``lakestore.catalog.rest``);
- ``hive``: Paimon's Hive catalog on a Hive Metastore (``lakestore.catalog.hive``).
"""

from lakestore.catalog.base import BRANCH_SEPARATOR, Catalog, parse_identifier, split_branch
from lakestore.catalog.factory import METASTORE, METASTORES, catalog_class
from lakestore.catalog.filesystem import FileSystemCatalog
from lakestore.catalog.hive import HiveCatalog
from lakestore.catalog.jdbc import JdbcCatalog
from lakestore.catalog.rest import RestCatalog

# the metastores lakestore implements: the one place a new catalog joins
METASTORES.update({"filesystem": FileSystemCatalog, "jdbc": JdbcCatalog, "rest": RestCatalog, "hive": HiveCatalog})

__all__ = [
    "BRANCH_SEPARATOR",
    "METASTORE",
    "Catalog",
    "FileSystemCatalog",
    "HiveCatalog",
    "JdbcCatalog",
    "RestCatalog",
    "catalog_class",
    "parse_identifier",
    "split_branch",
]
