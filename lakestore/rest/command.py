"""``lakestore serve`` and ``lakestore serve-admin``: run the REST catalog server, and manage
its principals, tokens and grants.

    lakestore serve-admin --warehouse /wh init        the auth database, principal 'admin' and its token file
    lakestore serve --warehouse /wh [--host 127.0.0.1] [--port 8181] [--auth-db /wh/.lakestore-auth.sqlite] [--init]
    lakestore serve --warehouse s3://bucket/wh --auth-db /srv/auth.sqlite [--init --admin-token-file /srv/admin-token] \
        -o s3.conditional-create=true [-o s3.endpoint=...] [--vend-role-arn arn:aws:iam::1:role/r] [--vend-duration 7200]
    lakestore serve-admin --warehouse /wh add-principal alice
    lakestore serve-admin --warehouse /wh issue-token alice          prints '<id> <token>' once
    lakestore serve-admin --warehouse /wh grant alice write db.orders  (scope: '*', 'db' or 'db.table')
    lakestore serve-admin --warehouse /wh revoke alice db.orders
    lakestore serve-admin --warehouse /wh revoke-token <id>
    lakestore serve-admin --warehouse /wh remove-principal alice     its grants go, its tokens are revoked
    lakestore serve-admin --warehouse /wh list

Neither command creates an auth database unless told to (``init``, ``serve --init``): a missing
or unreadable one stops them with an error, so a deleted database is never silently replaced.
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
from lakestore.rest.app import DEFAULT_MAX_BODY_BYTES, create_app
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


def initialise(location: str, warehouse: str, token_file: str | None = None) -> str:
    """Create the auth store at ``location`` with principal ``admin`` (admin on ``*``) and write
    its token to ``token_file`` (default ``<warehouse>/.lakestore-admin-token``), a file created
    exclusively, never through a symlink, readable by its owner only. Returns the file's path.

    Raises:
        AuthError: the store or the token file exists already, a remote warehouse without
            ``token_file``, or either cannot be created.
    """
    if token_file is None and "://" in warehouse:
        raise AuthError(f"where to write the first admin token must be given for a warehouse at {warehouse!r}: --admin-token-file")
    if token_file is None:
        os.makedirs(warehouse, exist_ok=True)
    path = token_file or os.path.join(warehouse, ADMIN_TOKEN_NAME)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError as exc:
        raise AuthError(f"the admin token file {path} exists already (store its token elsewhere and delete it)") from exc
    except OSError as exc:
        raise AuthError(f"cannot create the admin token file {path}: {exc.strerror}") from exc
    try:
        store = AuthStore(location, create=True)
        try:
            token = store.bootstrap_admin()
        finally:
            store.close()
        if token is None:
            raise AuthError("the auth database holds principals already")
        with os.fdopen(fd, "w") as fh:
            fd = -1
            fh.write(token + "\n")
    except BaseException:
        if fd >= 0:
            os.close(fd)
        os.unlink(path)
        raise
    return path


def serve_main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="lakestore serve", description="Serve a warehouse over Paimon's REST catalog protocol.")
    _common(parser)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8181)
    parser.add_argument("--prefix", default="lakestore", help="the catalog prefix clients get from /v1/config")
    parser.add_argument(
        "--init",
        action="store_true",
        help="first start: create the auth database and principal 'admin' (as 'serve-admin init'); refused when it exists",
    )
    parser.add_argument(
        "--admin-token-file", help=f"with --init: where the admin token is written (default <warehouse>/{ADMIN_TOKEN_NAME})"
    )
    parser.add_argument(
        "--max-body-bytes",
        type=int,
        default=DEFAULT_MAX_BODY_BYTES,
        help=f"largest request body accepted (default {DEFAULT_MAX_BODY_BYTES}; larger ones answer 413 unread)",
    )
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
        if isinstance(catalog.file_io, S3FileIO) and not catalog.file_io.conditional_create and catalog.publisher.lock is None:
            raise OptionError("an S3 warehouse publishes commits safely only with -o s3.conditional-create=true or the catalog lock")
        if args.max_body_bytes < 1024:
            raise OptionError(f"--max-body-bytes must be at least 1024, got {args.max_body_bytes}")
        vendor = _vendor(args, catalog)
        location = _auth_location(args)
        written = initialise(location, catalog.warehouse, args.admin_token_file) if args.init else None
        store = AuthStore(location)
    except (OptionError, AuthError, OSError) as exc:  # OSError: the warehouse is unreachable
        print(f"lakestore serve: error: {exc}", file=sys.stderr)
        return 2
    if written:
        print(f"lakestore serve: created principal 'admin' (admin on '*'); its token is in {written}", file=sys.stderr)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(name)s %(levelname)s %(message)s")
    app = create_app(CatalogService(catalog, prefix=args.prefix, vendor=vendor), store, max_body_bytes=args.max_body_bytes)
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level, access_log=False)
    return 0


def admin_main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="lakestore serve-admin", description="Principals, tokens and grants of lakestore serve.")
    _common(parser)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sub.add_parser(
        "init",
        help=f"create the auth database, principal 'admin' (admin on '*') and its token file (default <warehouse>/{ADMIN_TOKEN_NAME})",
    ).add_argument("--admin-token-file", help="where the admin token is written (owner-only; it must not exist)")
    sub.add_parser("add-principal", help="add a principal").add_argument("name")
    sub.add_parser("remove-principal", help="remove a principal: its grants, and revoke every token of it").add_argument("name")
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
        if args.command == "init":
            if not args.warehouse and not args.admin_token_file:
                raise AuthError("give --warehouse (the admin token goes to <warehouse>/" + ADMIN_TOKEN_NAME + ") or --admin-token-file")
            written = initialise(_auth_location(args), args.warehouse or "", args.admin_token_file)
            print(f"lakestore serve-admin: created principal 'admin' (admin on '*'); its token is in {written}", file=sys.stderr)
            return 0
        store = AuthStore(_auth_location(args))
        try:
            if args.command == "add-principal":
                store.add_principal(args.name)
            elif args.command == "issue-token":
                token_id, token = store.issue_token(args.name)
                print(token_id, token)
            elif args.command == "remove-principal":
                if not store.remove_principal(args.name):
                    print(f"lakestore serve-admin: no principal {args.name!r}", file=sys.stderr)
                    return 3
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
