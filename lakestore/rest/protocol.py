"""The server's side of Paimon's REST catalog protocol (``rest-catalog-open-api.yaml``, Paimon
2.0): request bodies and path names checked against hostile input, partition specs, paging. The
JSON both client and server speak (error bodies, the ``Schema`` object, data types, schema
changes) is ``lakestore.catalog.rest_codec``, re-exported here. No HTTP here."""

from __future__ import annotations

import fnmatch
import itertools
import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from lakestore.catalog import split_branch
from lakestore.catalog.base import _check_name
from lakestore.catalog.rest_codec import (
    BRANCH,
    COLUMN,
    DATABASE,
    JAVA_INT_MAX,
    JAVA_LONG,
    SNAPSHOT,
    TABLE,
    TAG,
    RestError,
    bad_request,
    changes_from_json,
    field,
    from_lakestore,
    not_implemented,
    schema_from_json,
    schema_json,
    string_map,
)
from lakestore.errors import InvalidIdentifierError, InvalidTagNameError, LakestoreError
from lakestore.format.partition_path import escape_path_name
from lakestore.meta.branch import validate_branch_name
from lakestore.meta.names import MAX_FILE_NAME_BYTES, check_name

# the codec's names the server's modules reach through this one
__all__ = [
    "BRANCH",
    "COLUMN",
    "DATABASE",
    "JAVA_INT_MAX",
    "JAVA_LONG",
    "MAX_JSON_DEPTH",
    "SNAPSHOT",
    "TABLE",
    "TAG",
    "RestError",
    "bad_request",
    "changes_from_json",
    "check_path",
    "field",
    "from_lakestore",
    "like",
    "nests_deeper",
    "not_implemented",
    "page",
    "parse_body",
    "partition_spec",
    "schema_from_json",
    "schema_json",
    "string_map",
]

MAX_JSON_DEPTH = 64  # objects and arrays in a request body; Paimon's deepest (nested types) is far below
_ESCAPE = re.compile(rb"\\.", re.DOTALL)
_STRING = re.compile(rb'"[^"]*"')
_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[]{}")
_SIGNS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")  # as signed bytes: +1, +1, -1, -1


# -- JSON bodies -----------------------------------------------------------------------------
def nests_deeper(raw: bytes, depth: int) -> bool:
    """Whether the JSON text ``raw`` nests objects and arrays deeper than ``depth``, found
    without parsing (C-speed passes): strings dropped, brackets kept as +1/-1, the running sum's
    maximum. Unbalanced text is left to the parser to refuse."""
    brackets = _STRING.sub(b"", _ESCAPE.sub(b"", raw)).translate(_SIGNS, _NOT_BRACKETS)
    return max(itertools.accumulate(memoryview(brackets).cast("b")), default=0) > depth


def parse_body(raw: bytes) -> dict[str, Any]:
    """A request body: a JSON object nested at most ``MAX_JSON_DEPTH`` deep. Raises
    ``RestError`` 400 otherwise (the nesting is checked before anything is parsed)."""
    if nests_deeper(raw, MAX_JSON_DEPTH):
        raise bad_request(f"request body nests deeper than {MAX_JSON_DEPTH} levels")
    try:
        doc = json.loads(raw or b"{}")
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise bad_request(f"request body is not JSON: {exc}") from exc
    if not isinstance(doc, dict):
        raise bad_request("request body must be a JSON object")
    return doc


def check_path(params: dict[str, str]) -> None:
    """Every name in a request's path by the engine's rules, before any route uses one: a
    database, a table (``t`` or ``t$branch_b``), a branch, a tag, a snapshot version (an id, a
    tag, ``LATEST`` or ``EARLIEST``), a view or function. Raises ``RestError`` 400."""
    kinds = {
        "database": DATABASE,
        "table": TABLE,
        "branch": BRANCH,
        "tag": TAG,
        "version": SNAPSHOT,
        "view": "VIEW",
        "function": "FUNCTION",
    }
    for key, value in params.items():
        try:
            if key == "database":
                _check_name(value, "database")
            elif key == "table":
                base, _ = split_branch(f"x.{value}")
                _check_name(base[2:], "table")
            elif key == "branch":
                if value != "main":  # answered by the branch operations themselves
                    validate_branch_name(value)
            elif key == "version" and value.isdigit():
                if len(value) > 19:
                    raise InvalidIdentifierError(f"snapshot id {value[:40]!r}... is out of range")
            elif key in ("tag", "version"):
                check_name(value, "tag", prefix="tag-", error=InvalidTagNameError)
            elif key in ("view", "function"):
                check_name(value, key)
        except LakestoreError as exc:
            raise RestError(400, str(exc), kinds.get(key), None) from exc


def partition_spec(value: Any) -> dict[str, str]:
    """A partition spec of a request (column -> value as a string). Raises ``RestError`` 400
    unless each column is a valid name and each ``column=value`` directory name (escaped as
    Paimon escapes it) fits in a file name and holds no NUL."""
    spec = string_map(value, "a partition spec")
    for key, text in spec.items():
        try:
            check_name(key, "partition column")
            size = len(f"{escape_path_name(key)}={escape_path_name(text)}".encode())
        except (LakestoreError, UnicodeEncodeError) as exc:
            raise bad_request(f"invalid partition spec: {exc}") from exc
        if "\x00" in text or size > MAX_FILE_NAME_BYTES:
            raise bad_request(f"partition value of {key!r} holds a NUL or makes a directory name longer than {MAX_FILE_NAME_BYTES} bytes")
    return spec


# -- paging ----------------------------------------------------------------------------------
def like(pattern: str | None) -> Callable[[str], bool]:
    """Paimon's name patterns: SQL ``LIKE`` with ``%`` (and ``_``) wildcards."""
    if not pattern:
        return lambda _: True
    glob = pattern.replace("*", "[*]").replace("?", "[?]").replace("%", "*").replace("_", "?")
    return lambda name: fnmatch.fnmatchcase(name, glob)


def page(names: Sequence[str], max_results: str | None, page_token: str | None) -> tuple[list[str], str | None]:
    """One page of sorted names after ``page_token``; the next token (None on the last page)."""
    ordered = sorted(names)
    if page_token:
        ordered = [n for n in ordered if n > page_token]
    limit = None
    if max_results:
        try:
            limit = int(max_results)
        except ValueError as exc:
            raise bad_request("maxResults must be an integer") from exc
        if limit <= 0:
            raise bad_request("maxResults must be positive")
    if limit is None or len(ordered) <= limit:
        return ordered, None
    return ordered[:limit], ordered[limit - 1]
