"""The routing table of ``lakestore serve``: each route of Paimon's REST catalog protocol it
answers, as (method, path, body level, handler(service, principal, path parameters, query,
body)). The body level is the grant a principal needs on (or inside) the path's resource before
its request body is read at all (None: the route reads no body); the handler then checks the
exact grant."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lakestore.rest.auth import LEVELS, Principal
from lakestore.rest.service import CatalogService

Handler = Callable[[CatalogService, Principal, dict[str, str], dict[str, str], Callable[[], dict[str, Any]]], dict[str, Any]]
_T = "/v1/{prefix}/databases/{database}/tables/{table}"
WRITE, ADMIN = LEVELS["write"], LEVELS["admin"]

# (method, path, body level, handler(service, principal, path params, query, body)) in the spec's order
ROUTES: list[tuple[str, str, int | None, Handler]] = [
    ("GET", "/v1/config", None, lambda s, who, a, q, b: s.config(who)),
    ("GET", "/v1/{prefix}/databases", None, lambda s, who, a, q, b: s.list_databases(who, q)),
    ("POST", "/v1/{prefix}/databases", ADMIN, lambda s, who, a, q, b: s.create_database(who, b())),
    ("GET", "/v1/{prefix}/databases/{database}", None, lambda s, who, a, q, b: s.get_database(who, a["database"])),
    ("POST", "/v1/{prefix}/databases/{database}", None, lambda s, who, a, q, b: s.alter_database(who, a["database"])),
    ("DELETE", "/v1/{prefix}/databases/{database}", None, lambda s, who, a, q, b: s.drop_database(who, a["database"])),
    ("GET", "/v1/{prefix}/databases/{database}/tables", None, lambda s, who, a, q, b: s.list_tables(who, a["database"], q)),
    ("POST", "/v1/{prefix}/databases/{database}/tables", ADMIN, lambda s, who, a, q, b: s.create_table(who, a["database"], b())),
    ("GET", "/v1/{prefix}/databases/{database}/table-details", None, lambda s, who, a, q, b: s.list_table_details(who, a["database"], q)),
    ("POST", "/v1/{prefix}/tables/rename", ADMIN, lambda s, who, a, q, b: s.rename_table(who, b())),
    ("GET", "/v1/{prefix}/databases/{database}/views", None, lambda s, who, a, q, b: s.list_none(who, a["database"], "views")),
    ("GET", "/v1/{prefix}/databases/{database}/view-details", None, lambda s, who, a, q, b: s.list_none(who, a["database"], "viewDetails")),
    (
        "GET",
        "/v1/{prefix}/databases/{database}/views/{view}",
        None,
        lambda s, who, a, q, b: s.get_none(who, a["database"], "VIEW", a["view"]),
    ),
    ("GET", "/v1/{prefix}/databases/{database}/functions", None, lambda s, who, a, q, b: s.list_none(who, a["database"], "functions")),
    (
        "GET",
        "/v1/{prefix}/databases/{database}/function-details",
        None,
        lambda s, who, a, q, b: s.list_none(who, a["database"], "functionDetails"),
    ),
    (
        "GET",
        "/v1/{prefix}/databases/{database}/functions/{function}",
        None,
        lambda s, who, a, q, b: s.get_none(who, a["database"], "FUNCTION", a["function"]),
    ),
    ("GET", _T, None, lambda s, who, a, q, b: s.get_table(who, a["database"], a["table"])),
    ("POST", _T, ADMIN, lambda s, who, a, q, b: s.alter_table(who, a["database"], a["table"], b())),
    ("DELETE", _T, None, lambda s, who, a, q, b: s.drop_table(who, a["database"], a["table"])),
    ("POST", _T + "/commit", WRITE, lambda s, who, a, q, b: s.commit(who, a["database"], a["table"], b())),
    ("POST", _T + "/rollback", WRITE, lambda s, who, a, q, b: s.rollback(who, a["database"], a["table"], b())),
    ("GET", _T + "/token", None, lambda s, who, a, q, b: s.table_token(who, a["database"], a["table"])),
    ("POST", _T + "/auth", None, lambda s, who, a, q, b: s.auth_query(who, a["database"], a["table"])),
    ("GET", _T + "/snapshot", None, lambda s, who, a, q, b: s.load_snapshot(who, a["database"], a["table"])),
    ("GET", _T + "/snapshots/{version}", None, lambda s, who, a, q, b: s.get_snapshot(who, a["database"], a["table"], a["version"])),
    ("GET", _T + "/snapshots", None, lambda s, who, a, q, b: s.list_snapshots(who, a["database"], a["table"], q)),
    ("GET", _T + "/partitions", None, lambda s, who, a, q, b: s.list_partitions(who, a["database"], a["table"], q)),
    ("POST", _T + "/partitions", WRITE, lambda s, who, a, q, b: s.create_partitions(who, a["database"], a["table"], b())),
    ("POST", _T + "/partitions/drop", WRITE, lambda s, who, a, q, b: s.drop_partitions(who, a["database"], a["table"], b())),
    ("GET", _T + "/branches", None, lambda s, who, a, q, b: s.list_branches(who, a["database"], a["table"])),
    ("POST", _T + "/branches", WRITE, lambda s, who, a, q, b: s.create_branch(who, a["database"], a["table"], b())),
    ("DELETE", _T + "/branches/{branch}", None, lambda s, who, a, q, b: s.drop_branch(who, a["database"], a["table"], a["branch"])),
    ("POST", _T + "/branches/{branch}/forward", None, lambda s, who, a, q, b: s.fast_forward(who, a["database"], a["table"], a["branch"])),
    ("GET", _T + "/tags", None, lambda s, who, a, q, b: s.list_tags(who, a["database"], a["table"], q)),
    ("POST", _T + "/tags", WRITE, lambda s, who, a, q, b: s.create_tag(who, a["database"], a["table"], b())),
    ("GET", _T + "/tags/{tag}", None, lambda s, who, a, q, b: s.get_tag(who, a["database"], a["table"], a["tag"])),
    ("DELETE", _T + "/tags/{tag}", None, lambda s, who, a, q, b: s.delete_tag(who, a["database"], a["table"], a["tag"])),
]
