"""The ASGI application (Starlette) of the REST catalog server: routes of Paimon's REST catalog
protocol to ``CatalogService``, bearer-token authentication on every route, the protocol's
error body on every failure. Starlette is an optional dependency (extra ``server``).

Request logs name the principal, method, path and status; never a header or a token.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lakestore.rest import protocol as p
from lakestore.rest.auth import AuthStore, Principal
from lakestore.rest.service import CatalogService

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response

log = logging.getLogger("lakestore.rest")

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


def bearer_token(header: str | None) -> str | None:
    if not header:
        return None
    scheme, _, value = header.partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


def create_app(service: CatalogService, auth: AuthStore) -> Starlette:
    """The ASGI app serving ``service`` to the principals of ``auth``."""
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    def answer(status: int, body: dict[str, Any]) -> Response:
        return JSONResponse(body, status_code=status)

    def endpoint(handlers: dict[str, Handler]) -> Callable[[Request], Any]:
        async def run(request: Request) -> Response:
            who, method = "-", request.method
            try:
                token = bearer_token(request.headers.get("authorization"))
                principal = await run_in_threadpool(auth.authenticate, token) if token else None
                if principal is None:
                    raise p.RestError(401, "a valid bearer token is required (Authorization: Bearer <token>)")
                who = principal.name
                handler = handlers.get(method)
                if handler is None:
                    raise p.RestError(405, f"{method} is not allowed here (allowed: {', '.join(sorted(handlers))})")
                prefix = request.path_params.get("prefix")
                if prefix is not None and prefix != service.prefix:
                    raise p.RestError(404, f"no catalog {prefix!r} here (the prefix is {service.prefix!r})")
                raw = await request.body()
                args = {k: str(v) for k, v in request.path_params.items()}
                query = dict(request.query_params)
                result = await run_in_threadpool(handler, service, principal, args, query, lambda: p.parse_body(raw))
                status, body = 200, result
            except p.RestError as exc:
                status, body = exc.code, exc.body()
            except Exception as exc:  # a bug: answered in the protocol's shape, logged with its trace
                log.exception("%s %s failed", method, request.url.path)
                status, body = 500, p.RestError(500, f"internal error: {type(exc).__name__}").body()
            log.info("%s %s %s -> %d", who, method, request.url.path, status)
            return answer(status, body)

        return run

    async def unknown(request: Request) -> Response:
        token = bearer_token(request.headers.get("authorization"))
        principal = await run_in_threadpool(auth.authenticate, token) if token else None
        if principal is None:
            return answer(401, p.RestError(401, "a valid bearer token is required (Authorization: Bearer <token>)").body())
        return answer(501, p.not_implemented(f"{request.method} {request.url.path}").body())

    by_path: dict[str, dict[str, Handler]] = {}
    for method, path, handler in ROUTES:
        by_path.setdefault(path, {})[method] = handler
    everything = ["GET", "POST", "DELETE", "PUT", "PATCH", "HEAD"]
    routes = [Route(path, endpoint(handlers), methods=everything) for path, handlers in by_path.items()]
    app = Starlette(routes=routes)
    app.add_route("/{rest:path}", unknown, methods=everything)
    return app
