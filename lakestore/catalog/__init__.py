"""Catalogs: where databases and tables are found. ``Catalog`` is the filesystem catalog
(``<warehouse>/<db>.db/<table>/``, as Paimon lays it out)."""

from lakestore.catalog.filesystem import BRANCH_SEPARATOR, Catalog, parse_identifier, split_branch

__all__ = ["BRANCH_SEPARATOR", "Catalog", "parse_identifier", "split_branch"]
