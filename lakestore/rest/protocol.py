"""The wire format of Paimon's REST catalog protocol (``rest-catalog-open-api.yaml``, Paimon
2.0): error bodies, the ``Schema`` object, schema changes, paging. No HTTP here."""

from __future__ import annotations

import fnmatch
import itertools
import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from lakestore.catalog import split_branch
from lakestore.catalog.filesystem import _check_name
from lakestore.errors import (
    BranchError,
    CatalogError,
    CommitError,
    CorruptMetadataError,
    DatabaseAlreadyExistsError,
    DatabaseNotFoundError,
    InvalidIdentifierError,
    InvalidTagNameError,
    LakestoreError,
    OptionError,
    PartitionValueError,
    SchemaChangeError,
    SchemaMismatchError,
    SnapshotNotFoundError,
    TableAlreadyExistsError,
    TableNotFoundError,
    TagAlreadyExistsError,
    TagNotFoundError,
    UnsupportedTableError,
    UnsupportedTypeError,
)
from lakestore.format.partition_path import escape_path_name
from lakestore.format.types import parse_type
from lakestore.meta import options as opts
from lakestore.meta.branch import validate_branch_name
from lakestore.meta.names import MAX_FILE_NAME_BYTES, check_name
from lakestore.meta.schema import TableSchema, validate_table_schema
from lakestore.meta.schema_change import (
    AddColumn,
    DropColumn,
    RemoveOption,
    RenameColumn,
    SchemaChange,
    SetOption,
    UpdateColumnType,
    UpdateComment,
)

DATABASE, TABLE, SNAPSHOT, TAG, BRANCH, COLUMN = "DATABASE", "TABLE", "SNAPSHOT", "TAG", "BRANCH", "COLUMN"
MAX_JSON_DEPTH = 64  # objects and arrays in a request body; Paimon's deepest (nested types) is far below
JAVA_LONG = (-(2**63), 2**63 - 1)  # integers in a body (snapshot ids, counts) are Java longs to Paimon
JAVA_INT_MAX = 2**31 - 1  # field ids are Java ints
_ESCAPE = re.compile(rb"\\.", re.DOTALL)
_STRING = re.compile(rb'"[^"]*"')
_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[]{}")
_SIGNS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")  # as signed bytes: +1, +1, -1, -1


@dataclass
class RestError(Exception):
    """An answer other than 2xx, with the protocol's ``ErrorResponse`` body."""

    code: int
    message: str
    resource_type: str | None = None
    resource_name: str | None = None

    def body(self) -> dict[str, Any]:
        return {"message": self.message, "code": self.code, "resourceType": self.resource_type, "resourceName": self.resource_name}


def bad_request(message: str) -> RestError:
    return RestError(400, message)


def not_implemented(what: str) -> RestError:
    return RestError(501, f"{what} is not implemented by the lakestore REST catalog server")


def from_lakestore(exc: LakestoreError, *, resource_type: str | None = None, resource_name: str | None = None) -> RestError:
    """The protocol error for a lakestore error (4xx for anything the request caused)."""
    message = str(exc)
    table = (TABLE, resource_name)
    pairs: list[tuple[type[Exception], int, tuple[str | None, str | None]]] = [
        (DatabaseNotFoundError, 404, (DATABASE, resource_name)),
        (TableNotFoundError, 404, table),
        (DatabaseAlreadyExistsError, 409, (DATABASE, resource_name)),
        (TableAlreadyExistsError, 409, table),
        (TagNotFoundError, 404, (TAG, resource_name)),
        (TagAlreadyExistsError, 409, (TAG, resource_name)),
        (SnapshotNotFoundError, 404, (SNAPSHOT, resource_name)),
        (UnsupportedTableError, 501, table),
        (InvalidIdentifierError, 400, (resource_type, resource_name)),
        (InvalidTagNameError, 400, (TAG, resource_name)),
    ]
    for cls, code, (rtype, rname) in pairs:
        if isinstance(exc, cls):
            return RestError(code, message, rtype, rname)
    if isinstance(exc, BranchError):
        if "does not exist" in message or "not exist" in message:
            return RestError(404, message, BRANCH, resource_name)
        if "exist" in message:
            return RestError(409, message, BRANCH, resource_name)
        return RestError(400, message, BRANCH, resource_name)
    if isinstance(
        exc, OptionError | SchemaMismatchError | SchemaChangeError | UnsupportedTypeError | PartitionValueError | CatalogError | ValueError
    ):
        return RestError(400, message, resource_type, resource_name)
    if isinstance(exc, CommitError):
        return RestError(409, message, resource_type, resource_name)
    return RestError(500, f"{type(exc).__name__}: {message}", resource_type, resource_name)


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


def field(doc: dict[str, Any], key: str, kind: type | tuple[type, ...], *, required: bool = True) -> Any:
    value = doc.get(key)
    if value is None:
        if required:
            raise bad_request(f"missing field {key!r}")
        return None
    if isinstance(value, bool) and kind is int or not isinstance(value, kind):
        raise bad_request(f"field {key!r} has the wrong type")
    if isinstance(value, int) and not isinstance(value, bool) and not JAVA_LONG[0] <= value <= JAVA_LONG[1]:
        raise bad_request(f"field {key!r} is out of range (a 64-bit integer)")
    return value


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


def string_map(value: Any, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise bad_request(f"{what} must be an object of strings")
    return dict(value)


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


def schema_json(schema: TableSchema) -> dict[str, Any]:
    """The protocol's ``Schema`` object of a table schema."""
    return {
        "fields": [f.to_json() for f in schema.fields],
        "partitionKeys": list(schema.partition_keys),
        "primaryKeys": list(schema.primary_keys),
        "options": dict(schema.options),
        "comment": schema.comment,
    }


def schema_from_json(doc: Any) -> TableSchema:
    """Schema 0 of a new table from the protocol's ``Schema`` object. Raises ``RestError`` 400
    (or 501 for Paimon features lakestore refuses)."""
    if not isinstance(doc, dict):
        raise bad_request("missing field 'schema'")
    fields = doc.get("fields")
    if not isinstance(fields, list) or not fields:
        raise bad_request("schema.fields must be a non-empty list")
    if not all(isinstance(f, dict) for f in fields):
        raise bad_request("schema.fields must hold objects")
    options = string_map(doc.get("options"), "schema.options")
    if options.get("path") or options.get("type", "table") != "table":
        raise not_implemented("tables of another type or with an external path")
    ids = _field_ids(fields)
    comment = doc.get("comment")
    wire = {
        "version": 3,
        "id": 0,
        "fields": fields,
        "highestFieldId": max(ids, default=-1),
        "partitionKeys": doc.get("partitionKeys") or [],
        "primaryKeys": doc.get("primaryKeys") or [],
        "options": options,
        "comment": comment if isinstance(comment, str) else None,
        "timeMillis": int(time.time() * 1000),
    }
    try:
        schema = TableSchema.from_json(json.dumps(wire), source="the create-table request")
        opts.validate(schema.options, strict=False)
        validate_table_schema(schema)
    except CorruptMetadataError as exc:
        raise bad_request(str(exc).replace("invalid schema JSON", "invalid schema")) from exc
    except LakestoreError as exc:
        raise from_lakestore(exc) from exc
    return schema


def _field_ids(fields: list[Any]) -> list[int]:
    """The ids of ``fields`` and of the fields nested in their types (rows, arrays, maps).
    Raises ``RestError`` 400 for an id outside Java's int range (or negative), a missing or
    empty name: Paimon Java cannot open such a table."""
    out: list[int] = []
    for f in fields:
        if not isinstance(f, dict):
            raise bad_request("schema fields must be objects")
        field_id, name = f.get("id"), f.get("name")
        if not isinstance(field_id, int) or isinstance(field_id, bool) or not 0 <= field_id <= JAVA_INT_MAX:
            raise bad_request(f"field id {field_id!r} of {name!r} must be an integer from 0 to {JAVA_INT_MAX}")
        if not isinstance(name, str) or not name.strip():
            raise bad_request(f"field {field_id} needs a non-empty name")
        out.append(field_id)
        if isinstance(f.get("type"), dict):  # nested types number their fields too
            out.extend(_nested_ids(f["type"]))
    return out


def _nested_ids(doc: dict[str, Any]) -> list[int]:
    children = doc.get("fields")
    out = _field_ids(children) if isinstance(children, list) else []
    for key in ("element", "key", "value"):
        if isinstance(doc.get(key), dict):
            out.extend(_nested_ids(doc[key]))
    return out


def _column(doc: dict[str, Any]) -> str:
    names = doc.get("fieldNames")
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise bad_request("schema change needs fieldNames (a list of strings)")
    if len(names) != 1:
        raise not_implemented("changes of nested fields")
    return str(names[0])


def _type(value: Any) -> Any:
    try:
        return parse_type(value)
    except (LakestoreError, ValueError, KeyError, TypeError) as exc:
        raise bad_request(f"invalid data type {value!r}: {exc}") from exc


def changes_from_json(docs: Any) -> list[SchemaChange]:
    """lakestore schema changes from the protocol's ``SchemaChange`` objects."""
    if not isinstance(docs, list) or not docs:
        raise bad_request("changes must be a non-empty list")
    out: list[SchemaChange] = []
    for doc in docs:
        if not isinstance(doc, dict):
            raise bad_request("each change must be an object")
        action = doc.get("action")
        if action == "setOption":
            out.append(SetOption(field(doc, "key", str), field(doc, "value", str)))
        elif action == "removeOption":
            out.append(RemoveOption(field(doc, "key", str)))
        elif action == "updateComment":
            out.append(UpdateComment(field(doc, "comment", str, required=False)))
        elif action == "addColumn":
            move = doc.get("move")
            first, after = False, None
            if isinstance(move, dict):
                kind = move.get("type")
                if kind == "FIRST":
                    first = True
                elif kind == "AFTER" and isinstance(move.get("referenceFieldName"), str):
                    after = move["referenceFieldName"]
                elif kind != "LAST":
                    raise not_implemented(f"addColumn move {kind!r}")
            comment = field(doc, "comment", str, required=False)
            out.append(AddColumn(_column(doc), _type(doc.get("dataType")), comment, after=after, first=first))
        elif action == "renameColumn":
            out.append(RenameColumn(_column(doc), field(doc, "newName", str)))
        elif action == "dropColumn":
            out.append(DropColumn(_column(doc)))
        elif action == "updateColumnType":
            out.append(UpdateColumnType(_column(doc), _type(doc.get("newDataType"))))
        elif action == "updateColumnComment":
            out.append(UpdateComment(field(doc, "newComment", str, required=False), column=_column(doc)))
        elif isinstance(action, str):
            raise not_implemented(f"schema change {action!r}")
        else:
            raise bad_request("schema change without an action")
    return out


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
