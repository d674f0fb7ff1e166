"""Which catalog options are credentials, decided in one place.

A credential is never copied where it could be shown (Spark's DataFrame options appear in its
UI, query plans and event logs). A process that is not handed one reads it from its
environment, as AWS's SDKs, Hadoop's S3A and libpq do:

- S3 access key, secret key and session token, under every alias ``lakestore.io.s3`` reads
  (Paimon's ``s3.*``, pypaimon's ``fs.s3.*``, Hadoop's ``s3a.*``): ``AWS_ACCESS_KEY_ID``,
  ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``;
- ``jdbc.password`` (the JDBC catalog and its lock): ``PGPASSWORD``, which PostgreSQL's client
  library reads when no password is given (SQLite databases have none);
- the REST catalog's ``token``: ``LAKESTORE_REST_TOKEN`` (``lakestore.catalog.rest``);
- any other option whose name says password, secret, token or access key: no variable (it must
  not travel, and nothing stands in for it).

A URI that holds a password (``postgresql://user:pw@host/db``, ``...?password=pw``) is a
credential too, whatever its option is called.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Iterable, Mapping
from urllib.parse import parse_qsl, urlsplit

from lakestore.io.lock import JDBC_PASSWORD
from lakestore.io.s3 import CREDENTIALS

# The REST catalog's bearer token, and the variable a process without the option reads it from.
REST_TOKEN = "token"
REST_TOKEN_ENV = "LAKESTORE_REST_TOKEN"
PASSWORD_ENV = "PGPASSWORD"

_SECRET_NAME = re.compile(r"password|secret|token|access[._-]?key", re.IGNORECASE)

# option name (every alias) -> the environment variables standing in for it
CREDENTIAL_ENV: dict[str, tuple[str, ...]] = {
    **{name: env for names, env in CREDENTIALS for name in names},
    JDBC_PASSWORD: (PASSWORD_ENV,),
    REST_TOKEN: (REST_TOKEN_ENV,),
}


def _uri_password(value: str) -> bool:
    """Whether ``value`` is a URI holding a password (in its user info or its query)."""
    text = str(value)
    bare = text[len("jdbc:") :] if text.startswith("jdbc:") else text
    if "://" not in bare:
        return False
    try:
        parts = urlsplit(bare)
        password = parts.password
    except ValueError:
        return True  # unparseable: not shown either
    return bool(password) or any(k.lower() == "password" for k, _ in parse_qsl(parts.query))


def is_secret(key: str, value: object = None) -> bool:
    """Whether option ``key`` (with ``value``, when given) is a credential."""
    if key in CREDENTIAL_ENV or _SECRET_NAME.search(key):
        return True
    return value is not None and _uri_password(str(value))


def secret_keys(options: Mapping[str, object]) -> list[str]:
    """The options that are credentials, sorted."""
    return sorted(k for k, v in options.items() if is_secret(k, v))


def without_secrets(options: Mapping[str, str]) -> dict[str, str]:
    """``options`` without its credentials."""
    return {k: v for k, v in options.items() if not is_secret(k, v)}


def environment_holds(key: str, value: str, environments: Iterable[Mapping[str, str]]) -> bool:
    """Whether one of ``environments`` holds credential option ``key``'s ``value`` in the
    variable standing in for it (a process given only that environment reads the same value)."""
    envs = list(environments)
    wanted = str(value).encode()
    return any(hmac.compare_digest(str(env.get(var) or "").encode(), wanted) for var in CREDENTIAL_ENV.get(key, ()) for env in envs)
