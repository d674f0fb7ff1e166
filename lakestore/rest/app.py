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
from lakestore.rest.auth import AuthStore
from lakestore.rest.openapi import openapi_document
from lakestore.rest.routes import ROUTES, Handler
from lakestore.rest.service import CatalogService

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response

log = logging.getLogger("lakestore.rest")


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
    document = openapi_document()

    async def describe(request: Request) -> Response:  # public: it holds no data
        return answer(200, document)

    routes.insert(0, Route("/openapi.json", describe, methods=["GET"]))
    app = Starlette(routes=routes)
    app.add_route("/{rest:path}", unknown, methods=everything)
    return app
