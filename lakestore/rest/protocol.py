"""The wire format of Paimon's REST catalog protocol (``rest-catalog-open-api.yaml``, Paimon
2.0): error bodies, the ``Schema`` object, schema changes, paging. No HTTP here."""

from __future__ import annotations

import fnmatch
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

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
from lakestore.format.types import parse_type
from lakestore.meta import options as opts
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
def parse_body(raw: bytes) -> dict[str, Any]:
    try:
        doc = json.loads(raw or b"{}")
    except (ValueError, UnicodeDecodeError) as exc:
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
    return value


def string_map(value: Any, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise bad_request(f"{what} must be an object of strings")
    return dict(value)


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
    ids: list[int] = []
    for f in fields:
        if isinstance(f.get("id"), int) and not isinstance(f.get("id"), bool):
            ids.append(f["id"])
        if isinstance(f.get("type"), dict):  # nested types number their fields too
            ids.extend(_nested_ids(f["type"]))
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


def _nested_ids(doc: dict[str, Any]) -> list[int]:
    out: list[int] = []
    for child in doc.get("fields") or []:
        if isinstance(child, dict):
            if isinstance(child.get("id"), int):
                out.append(child["id"])
            if isinstance(child.get("type"), dict):
                out.extend(_nested_ids(child["type"]))
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
