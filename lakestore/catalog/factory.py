"""Which catalog ``lakestore.Catalog(warehouse, options=...)`` opens.

As Paimon's ``CatalogFactory``, the ``metastore`` option names the implementation:
``filesystem`` (the default: ``<warehouse>/<db>.db/<table>/``), ``jdbc`` (Paimon's JDBC
catalog, ``lakestore.catalog.jdbc``), ``rest`` or ``hive`` (``lakestore.catalog.hive``). The implementations are listed once, in
``lakestore/catalog/__init__.py``, which fills ``METASTORES``; a new metastore (``rest``) is one
more line there. ``Catalog.__new__`` asks ``catalog_class`` which class to build, so
``lakestore.Catalog(...)`` returns a ``JdbcCatalog`` (a ``Catalog`` subclass) for
``metastore=jdbc``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lakestore.errors import OptionError

METASTORE = "metastore"
DEFAULT_METASTORE = "filesystem"

# metastore name -> catalog class (filled by lakestore/catalog/__init__.py)
METASTORES: dict[str, type[Any]] = {}

# Paimon metastores lakestore does not implement, with what to use instead
_NOT_IMPLEMENTED: dict[str, str] = {}


def metastore_of(options: Mapping[str, Any] | None) -> str:
    """The ``metastore`` option (lower-cased), ``filesystem`` when unset."""
    value = str((options or {}).get(METASTORE) or DEFAULT_METASTORE).strip().lower()
    return value or DEFAULT_METASTORE


def catalog_class(options: Mapping[str, Any] | None) -> type[Any]:
    """The catalog class ``options`` ask for. Raises ``OptionError`` for an unknown metastore or
    one lakestore does not implement."""
    name = metastore_of(options)
    impl = METASTORES.get(name)
    if impl is not None:
        return impl
    known = ", ".join(sorted(METASTORES))
    if name in _NOT_IMPLEMENTED:
        raise OptionError(
            f"option {METASTORE!r}={name!r}: lakestore does not implement Paimon's {_NOT_IMPLEMENTED[name]} catalog; use one of: {known}"
        )
    raise OptionError(f"option {METASTORE!r}={name!r} is not a metastore lakestore knows; use one of: {known}")
