"""A server for Paimon's REST catalog protocol over a lakestore warehouse, with bearer-token
authentication and per-catalog/database/table grants (``lakestore serve``). The HTTP layer
(Starlette, uvicorn) is the optional extra ``server``."""

from lakestore.rest.app import create_app
from lakestore.rest.auth import AuthError, AuthStore, Principal
from lakestore.rest.service import CatalogService

__all__ = ["AuthError", "AuthStore", "CatalogService", "Principal", "create_app"]
