"""The routing table of ``lakestore serve``: each route of Paimon's REST catalog protocol it
answers, as (method, path, handler(service, principal, path parameters, query, body))."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lakestore.rest.auth import Principal
from lakestore.rest.service import CatalogService

Handler = Callable[[CatalogService, Principal, dict[str, str], dict[str, str], Callable[[], dict[str, Any]]], dict[str, Any]]
_T = "/v1/{prefix}/databases/{database}/tables/{table}"

# (method, path, handler(service, principal, path params, query, body)) in the spec's order
ROUTES: list[tuple[str, str, Handler]] = [
    ("GET", "/v1/config", lambda s, who, a, q, b: s.config(who)),
    ("GET", "/v1/{prefix}/databases", lambda s, who, a, q, b: s.list_databases(who, q)),
    ("POST", "/v1/{prefix}/databases", lambda s, who, a, q, b: s.create_database(who, b())),
    ("GET", "/v1/{prefix}/databases/{database}", lambda s, who, a, q, b: s.get_database(who, a["database"])),
    ("POST", "/v1/{prefix}/databases/{database}", lambda s, who, a, q, b: s.alter_database(who, a["database"])),
    ("DELETE", "/v1/{prefix}/databases/{database}", lambda s, who, a, q, b: s.drop_database(who, a["database"])),
    ("GET", "/v1/{prefix}/databases/{database}/tables", lambda s, who, a, q, b: s.list_tables(who, a["database"], q)),
    ("POST", "/v1/{prefix}/databases/{database}/tables", lambda s, who, a, q, b: s.create_table(who, a["database"], b())),
    ("GET", "/v1/{prefix}/databases/{database}/table-details", lambda s, who, a, q, b: s.list_table_details(who, a["database"], q)),
    ("POST", "/v1/{prefix}/tables/rename", lambda s, who, a, q, b: s.rename_table(who, b())),
    ("GET", "/v1/{prefix}/databases/{database}/views", lambda s, who, a, q, b: s.list_none(who, a["database"], "views")),
    ("GET", "/v1/{prefix}/databases/{database}/view-details", lambda s, who, a, q, b: s.list_none(who, a["database"], "viewDetails")),
    ("GET", "/v1/{prefix}/databases/{database}/views/{view}", lambda s, who, a, q, b: s.get_none(who, a["database"], "VIEW", a["view"])),
    ("GET", "/v1/{prefix}/databases/{database}/functions", lambda s, who, a, q, b: s.list_none(who, a["database"], "functions")),
    (
        "GET",
        "/v1/{prefix}/databases/{database}/function-details",
        lambda s, who, a, q, b: s.list_none(who, a["database"], "functionDetails"),
    ),
    (
        "GET",
        "/v1/{prefix}/databases/{database}/functions/{function}",
        lambda s, who, a, q, b: s.get_none(who, a["database"], "FUNCTION", a["function"]),
    ),
    ("GET", _T, lambda s, who, a, q, b: s.get_table(who, a["database"], a["table"])),
    ("POST", _T, lambda s, who, a, q, b: s.alter_table(who, a["database"], a["table"], b())),
    ("DELETE", _T, lambda s, who, a, q, b: s.drop_table(who, a["database"], a["table"])),
    ("POST", _T + "/commit", lambda s, who, a, q, b: s.commit(who, a["database"], a["table"], b())),
    ("POST", _T + "/rollback", lambda s, who, a, q, b: s.rollback(who, a["database"], a["table"], b())),
    ("GET", _T + "/token", lambda s, who, a, q, b: s.table_token(who, a["database"], a["table"])),
    ("POST", _T + "/auth", lambda s, who, a, q, b: s.auth_query(who, a["database"], a["table"])),
    ("GET", _T + "/snapshot", lambda s, who, a, q, b: s.load_snapshot(who, a["database"], a["table"])),
    ("GET", _T + "/snapshots/{version}", lambda s, who, a, q, b: s.get_snapshot(who, a["database"], a["table"], a["version"])),
    ("GET", _T + "/snapshots", lambda s, who, a, q, b: s.list_snapshots(who, a["database"], a["table"], q)),
    ("GET", _T + "/partitions", lambda s, who, a, q, b: s.list_partitions(who, a["database"], a["table"], q)),
    ("POST", _T + "/partitions", lambda s, who, a, q, b: s.create_partitions(who, a["database"], a["table"], b())),
    ("POST", _T + "/partitions/drop", lambda s, who, a, q, b: s.drop_partitions(who, a["database"], a["table"], b())),
    ("GET", _T + "/branches", lambda s, who, a, q, b: s.list_branches(who, a["database"], a["table"])),
    ("POST", _T + "/branches", lambda s, who, a, q, b: s.create_branch(who, a["database"], a["table"], b())),
    ("DELETE", _T + "/branches/{branch}", lambda s, who, a, q, b: s.drop_branch(who, a["database"], a["table"], a["branch"])),
    ("POST", _T + "/branches/{branch}/forward", lambda s, who, a, q, b: s.fast_forward(who, a["database"], a["table"], a["branch"])),
    ("GET", _T + "/tags", lambda s, who, a, q, b: s.list_tags(who, a["database"], a["table"], q)),
    ("POST", _T + "/tags", lambda s, who, a, q, b: s.create_tag(who, a["database"], a["table"], b())),
    ("GET", _T + "/tags/{tag}", lambda s, who, a, q, b: s.get_tag(who, a["database"], a["table"], a["tag"])),
    ("DELETE", _T + "/tags/{tag}", lambda s, who, a, q, b: s.delete_tag(who, a["database"], a["table"], a["tag"])),
]
