"""``lakestore serve`` and ``lakestore serve-admin``: run the REST catalog server, and manage
its principals, tokens and grants.

    lakestore serve --warehouse /wh [--host 127.0.0.1] [--port 8181] [--auth-db /wh/.lakestore-auth.sqlite]
    lakestore serve --warehouse s3://bucket/wh --auth-db /srv/auth.sqlite --admin-token-file /srv/admin-token \
        -o s3.conditional-create=true [-o s3.endpoint=...] [--vend-role-arn arn:aws:iam::1:role/r] [--vend-duration 7200]
    lakestore serve-admin --warehouse /wh add-principal alice
    lakestore serve-admin --warehouse /wh issue-token alice          prints '<id> <token>' once
    lakestore serve-admin --warehouse /wh grant alice write db.orders  (scope: '*', 'db' or 'db.table')
    lakestore serve-admin --warehouse /wh revoke alice db.orders
    lakestore serve-admin --warehouse /wh revoke-token <id>
    lakestore serve-admin --warehouse /wh list
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Sequence

from lakestore.catalog import Catalog
from lakestore.errors import OptionError
from lakestore.io.s3 import S3FileIO, is_s3_uri
from lakestore.rest.app import create_app
from lakestore.rest.auth import LEVELS, AuthError, AuthStore
from lakestore.rest.service import CatalogService
from lakestore.rest.vending import S3CredentialVendor

AUTH_DB_NAME = ".lakestore-auth.sqlite"
ADMIN_TOKEN_NAME = ".lakestore-admin-token"


def _auth_location(args: argparse.Namespace) -> str:
    if args.auth_db:
        return str(args.auth_db)
    if not args.warehouse:
        raise AuthError("give --warehouse (the auth database defaults to <warehouse>/" + AUTH_DB_NAME + ") or --auth-db")
    if "://" in args.warehouse:
        raise AuthError(f"the auth database of a warehouse at {args.warehouse!r} must be given: --auth-db (a SQLite file or postgresql://)")
    return os.path.join(args.warehouse, AUTH_DB_NAME)


def _catalog_options(pairs: Sequence[str]) -> dict[str, str]:
    options = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise OptionError(f"a catalog option is KEY=VALUE, got {pair!r}")
        options[key.strip()] = value
    return options


def _vendor(args: argparse.Namespace, catalog: Catalog) -> S3CredentialVendor | None:
    """The credential vendor of an S3 warehouse (``--vend-role-arn``), None without one."""
    if not args.vend_role_arn:
        return None
    assert isinstance(catalog.file_io, S3FileIO)  # checked before the catalog was opened
    return S3CredentialVendor(args.vend_role_arn, args.vend_duration, catalog.file_io.config, sts_endpoint=args.sts_endpoint)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-w", "--warehouse", default=os.environ.get("LAKESTORE_WAREHOUSE"), help="the warehouse directory")
    parser.add_argument(
        "--auth-db",
        default=os.environ.get("LAKESTORE_AUTH_DB"),
        help=f"SQLite file or postgresql:// URI (default <warehouse>/{AUTH_DB_NAME})",
    )


def bootstrap(store: AuthStore, warehouse: str, token_file: str | None = None) -> str | None:
    """On an empty auth store: create principal ``admin`` (admin on ``*``) and write its token
    to a file only the owner can read; returns that file's path (None when not empty)."""
    token = store.bootstrap_admin()
    if token is None:
        return None
    if token_file is None and "://" in warehouse:
        raise AuthError(f"where to write the first admin token must be given for a warehouse at {warehouse!r}: --admin-token-file")
    path = token_file or os.path.join(warehouse, ADMIN_TOKEN_NAME)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(token + "\n")
    return path


def serve_main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="lakestore serve", description="Serve a warehouse over Paimon's REST catalog protocol.")
    _common(parser)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8181)
    parser.add_argument("--prefix", default="lakestore", help="the catalog prefix clients get from /v1/config")
    parser.add_argument("--admin-token-file", help=f"where the first start writes the admin token (default <warehouse>/{ADMIN_TOKEN_NAME})")
    parser.add_argument("--log-level", default="info")
    parser.add_argument(
        "-o",
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a catalog option, as lakestore.Catalog takes them (s3.endpoint, s3.conditional-create, lock.enabled, ...);"
        " S3 credentials rather from the AWS_* environment",
    )
    parser.add_argument("--vend-role-arn", help="S3 warehouse: the IAM role assumed (STS) for table-scoped credentials")
    parser.add_argument(
        "--vend-duration",
        type=int,
        default=7200,
        help="lifetime of vended credentials in seconds (900 to 43200, at most the role's maximum session duration);"
        " Paimon clients ask again for credentials with under an hour left",
    )
    parser.add_argument("--sts-endpoint", help="STS endpoint (default AWS's, or $AWS_ENDPOINT_URL_STS)")
    try:
        args = parser.parse_args(list(argv))
    except SystemExit as exc:
        return int(exc.code or 0)
    if not args.warehouse:
        print("lakestore serve: error: --warehouse (or $LAKESTORE_WAREHOUSE) is required", file=sys.stderr)
        return 2
    import uvicorn

    try:
        if args.vend_role_arn and not is_s3_uri(args.warehouse):
            raise OptionError("--vend-role-arn vends S3 credentials: the warehouse must be on S3 (s3://bucket/path)")
        catalog = Catalog(args.warehouse, options=_catalog_options(args.option))
        if isinstance(catalog.file_io, S3FileIO) and not catalog.file_io.conditional_create and catalog.file_io.lock is None:
            raise OptionError("an S3 warehouse publishes commits safely only with -o s3.conditional-create=true or the catalog lock")
        vendor = _vendor(args, catalog)
        store = AuthStore(_auth_location(args))
        written = bootstrap(store, catalog.warehouse, args.admin_token_file)
    except (OptionError, AuthError, OSError) as exc:  # OSError: the warehouse is unreachable
        print(f"lakestore serve: error: {exc}", file=sys.stderr)
        return 2
    if written:
        print(f"lakestore serve: created principal 'admin' (admin on '*'); its token is in {written}", file=sys.stderr)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(name)s %(levelname)s %(message)s")
    app = create_app(CatalogService(catalog, prefix=args.prefix, vendor=vendor), store)
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level, access_log=False)
    return 0


def admin_main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="lakestore serve-admin", description="Principals, tokens and grants of lakestore serve.")
    _common(parser)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sub.add_parser("add-principal", help="add a principal").add_argument("name")
    sub.add_parser("issue-token", help="issue a token (printed once as '<id> <token>')").add_argument("name")
    sub.add_parser("revoke-token", help="revoke a token by its id").add_argument("id")
    p = sub.add_parser("grant", help="grant a level on '*', 'db' or 'db.table' (replaces the grant on that scope)")
    p.add_argument("name")
    p.add_argument("level", choices=sorted(LEVELS))
    p.add_argument("scope")
    p = sub.add_parser("revoke", help="remove a principal's grant on a scope")
    p.add_argument("name")
    p.add_argument("scope")
    sub.add_parser("list", help="principals, token ids and grants as JSON (never tokens)")
    try:
        args = parser.parse_args(list(argv))
    except SystemExit as exc:
        return int(exc.code or 0)
    try:
        store = AuthStore(_auth_location(args))
        try:
            if args.command == "add-principal":
                store.add_principal(args.name)
            elif args.command == "issue-token":
                token_id, token = store.issue_token(args.name)
                print(token_id, token)
            elif args.command == "revoke-token":
                if not store.revoke_token(args.id):
                    print(f"lakestore serve-admin: no live token {args.id!r}", file=sys.stderr)
                    return 3
            elif args.command == "grant":
                store.grant(args.name, args.level, args.scope)
            elif args.command == "revoke":
                if not store.revoke(args.name, args.scope):
                    print(f"lakestore serve-admin: {args.name!r} has no grant on {args.scope!r}", file=sys.stderr)
                    return 3
            else:
                grants = [{"principal": g.principal, "scope": g.scope, "level": g.level} for g in store.grants()]
                print(json.dumps({"principals": store.principals(), "tokens": store.tokens(), "grants": grants}, indent=2))
        finally:
            store.close()
    except AuthError as exc:
        print(f"lakestore serve-admin: error: {exc}", file=sys.stderr)
        return 1
    return 0
