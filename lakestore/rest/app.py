"""The ASGI application (Starlette) of the REST catalog server: routes of Paimon's REST catalog
protocol to ``CatalogService``, bearer-token authentication on every route, the protocol's
error body on every failure. Starlette is an optional dependency (extra ``server``).

Every request passes the same gates, in order, before a handler runs: a valid token (401, with
``WWW-Authenticate: Bearer``), a route and prefix (405, 404), the names in its path (400), a
grant that could allow the route (403: no body is read for a principal that cannot be
allowed), a body of at most ``max_body_bytes`` (413: a larger ``Content-Length`` is refused
unread, a chunked body when it grows past the limit), then JSON nested at most 64 deep (400).

Request logs name the principal, method, path and status (control characters escaped); never a
header or a token. Error bodies name no server path: the warehouse's location reads
``<warehouse>``, and a 500 answers only the error's type.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lakestore.catalog import BRANCH_SEPARATOR
from lakestore.rest import protocol as p
from lakestore.rest.auth import LEVELS, AuthStore
from lakestore.rest.openapi import openapi_document
from lakestore.rest.routes import ROUTES, Handler
from lakestore.rest.service import CatalogService

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response

log = logging.getLogger("lakestore.rest")
DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024  # a commit is a few KiB (plus ~200 B per partition of statistics)
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_CHALLENGE = {"WWW-Authenticate": "Bearer"}


def bearer_token(header: str | None) -> str | None:
    if not header:
        return None
    scheme, _, value = header.partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


def printable(text: str, limit: int = 300) -> str:
    """``text`` for a log line: control characters as ``\\xNN``, at most ``limit`` characters."""
    shown = _UNPRINTABLE.sub(lambda m: f"\\x{ord(m.group()):02x}", text[:limit])
    return shown + ("..." if len(text) > limit else "")


def unauthenticated() -> p.RestError:
    return p.RestError(401, "a valid bearer token is required (Authorization: Bearer <token>)")


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, never more than ``limit`` bytes of it read. Raises ``RestError`` 413
    (``Content-Length`` above the limit: nothing read; a body growing past it: reading stops)
    or 400 (a malformed ``Content-Length``)."""
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.strip().isdigit():
            raise p.bad_request("Content-Length is not a number")
        if int(declared) > limit:
            raise p.RestError(413, f"the request body is larger than the server's limit ({limit} bytes: lakestore serve --max-body-bytes)")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise p.RestError(413, f"the request body is larger than the server's limit ({limit} bytes: lakestore serve --max-body-bytes)")
        chunks.append(chunk)
    return b"".join(chunks)


def scrub(body: dict[str, Any], roots: tuple[str, ...]) -> dict[str, Any]:
    """An error body without server paths: each of ``roots`` (the warehouse) as ``<warehouse>``."""
    message = body.get("message")
    if isinstance(message, str):
        for root in roots:
            message = message.replace(root, "<warehouse>")
        body = {**body, "message": message}
    return body


def create_app(service: CatalogService, auth: AuthStore, *, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES) -> Starlette:
    """The ASGI app serving ``service`` to the principals of ``auth``; request bodies above
    ``max_body_bytes`` answer 413."""
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    warehouse = service.catalog.warehouse.rstrip("/")
    roots = tuple(sorted({warehouse, os.path.realpath(warehouse)} if "://" not in warehouse else {warehouse}, key=len, reverse=True))

    def answer(status: int, body: dict[str, Any]) -> Response:
        if status >= 400:
            return JSONResponse(scrub(body, roots), status_code=status, headers=_CHALLENGE if status == 401 else None)
        return JSONResponse(body, status_code=status)

    def endpoint(handlers: dict[str, tuple[int | None, Handler]]) -> Callable[[Request], Any]:
        async def run(request: Request) -> Response:
            who, method = "-", request.method
            try:
                token = bearer_token(request.headers.get("authorization"))
                principal = await run_in_threadpool(auth.authenticate, token) if token else None
                if principal is None:
                    raise unauthenticated()
                who = principal.name
                route = handlers.get(method)
                if route is None:
                    raise p.RestError(405, f"{method} is not allowed here (allowed: {', '.join(sorted(handlers))})")
                body_level, handler = route
                prefix = request.path_params.get("prefix")
                if prefix is not None and prefix != service.prefix:
                    raise p.RestError(404, f"no catalog {printable(prefix, 80)!r} here (the prefix is {service.prefix!r})")
                args = {k: str(v) for k, v in request.path_params.items()}
                p.check_path(args)
                raw = b""
                if body_level is not None:
                    database, table = args.get("database"), args.get("table")
                    table = table.split(BRANCH_SEPARATOR, 1)[0] if table else None
                    if not principal.may_reach(body_level, database, table):
                        wanted = next(k for k, v in LEVELS.items() if v == body_level)
                        name = database if table is None else f"{database}.{table}"
                        what = "the catalog" if database is None else (f"database {name}" if table is None else f"table {name}")
                        kind = None if database is None else (p.DATABASE if table is None else p.TABLE)
                        raise p.RestError(403, f"principal {principal.name!r} has no {wanted} grant on {what}", kind, name)
                    raw = await read_body(request, max_body_bytes)
                query = dict(request.query_params)
                result = await run_in_threadpool(handler, service, principal, args, query, lambda: p.parse_body(raw))
                status, body = 200, result
            except p.RestError as exc:
                status, body = exc.code, exc.body()
                if status >= 500:  # the type only: a lakestore error's message may name server files
                    log.warning("%s %s %s -> %d: %s", who, method, printable(request.url.path), status, printable(exc.message, 2000))
                    body = p.RestError(status, exc.message.split(":", 1)[0] if status == 500 else exc.message).body()
            except Exception as exc:  # a bug: answered in the protocol's shape, logged with its trace
                log.exception("%s %s failed", method, printable(request.url.path))
                status, body = 500, p.RestError(500, f"internal error: {type(exc).__name__}").body()
            log.info("%s %s %s -> %d", who, method, printable(request.url.path), status)
            return answer(status, body)

        return run

    async def unknown(request: Request) -> Response:
        token = bearer_token(request.headers.get("authorization"))
        principal = await run_in_threadpool(auth.authenticate, token) if token else None
        if principal is None:
            return answer(401, unauthenticated().body())
        return answer(501, p.not_implemented(f"{request.method} {printable(request.url.path, 200)}").body())

    by_path: dict[str, dict[str, tuple[int | None, Handler]]] = {}
    for method, path, body_level, handler in ROUTES:
        by_path.setdefault(path, {})[method] = (body_level, handler)
    everything = ["GET", "POST", "DELETE", "PUT", "PATCH", "HEAD"]
    routes = [Route(path, endpoint(handlers), methods=everything) for path, handlers in by_path.items()]
    document = openapi_document()

    async def describe(request: Request) -> Response:  # public: it holds no data
        return answer(200, document)

    routes.insert(0, Route("/openapi.json", describe, methods=["GET"]))
    app = Starlette(routes=routes)
    app.add_route("/{rest:path}", unknown, methods=everything)
    return app
