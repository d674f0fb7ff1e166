"""The JSON of Paimon's REST catalog protocol (``rest-catalog-open-api.yaml``, Paimon 2.0) that
both sides speak, written and read in one place: the REST catalog client
(``lakestore.catalog.rest``) encodes with it and the server (``lakestore.rest``) decodes with it
(and encodes its answers). The ``ErrorResponse`` body, identifiers, the ``Schema`` object, data
types and schema changes. No HTTP here.

Decoding refuses what Paimon Java could not open either (field ids outside Java's int range,
empty field names, integers beyond a Java long) with ``RestError`` 400, or 501 for Paimon
features lakestore does not implement: the server answers with that error as it stands.
"""

from __future__ import annotations

import json
import time
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
    RestCatalogAccessError,
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
from lakestore.format.types import DataField, parse_type
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
    to_data_type,
)

# the ErrorResponse's resourceType values
DATABASE, TABLE, SNAPSHOT, TAG, BRANCH, COLUMN = "DATABASE", "TABLE", "SNAPSHOT", "TAG", "BRANCH", "COLUMN"
JAVA_LONG = (-(2**63), 2**63 - 1)  # integers in a body (snapshot ids, counts) are Java longs to Paimon
JAVA_INT_MAX = 2**31 - 1  # field ids are Java ints


# -- errors ----------------------------------------------------------------------------------
@dataclass
class RestError(Exception):
    """An answer other than 2xx, with the protocol's ``ErrorResponse`` body."""

    code: int
    message: str
    resource_type: str | None = None
    resource_name: str | None = None

    def body(self) -> dict[str, Any]:
        return {"message": self.message, "code": self.code, "resourceType": self.resource_type, "resourceName": self.resource_name}

    @classmethod
    def from_response(cls, status: int, raw: bytes) -> RestError:
        """The error an answer with HTTP ``status`` and body ``raw`` carries (a body that is no
        ``ErrorResponse`` object: the status alone)."""
        try:
            doc = json.loads(raw)
        except ValueError:
            doc = {}
        doc = doc if isinstance(doc, dict) else {}
        message, kind = doc.get("message"), doc.get("resourceType")
        return cls(status, str(message) if message else "", kind if isinstance(kind, str) else None)

    def to_lakestore(self, what: str) -> CatalogError:
        """The lakestore error a client raises for this answer to request ``what``: 401/403
        ``RestCatalogAccessError``, 404 and 409 the catalog's not-found/already-exists errors
        (by ``resourceType``), else ``CatalogError``; with the server's message."""
        message = f"{what}: {self.message or self.code}"
        if self.code in (401, 403):
            return RestCatalogAccessError(message)
        if self.code == 404:
            return DatabaseNotFoundError(message) if self.resource_type == DATABASE else TableNotFoundError(message)
        if self.code == 409 and self.resource_type in (DATABASE, TABLE):
            return DatabaseAlreadyExistsError(message) if self.resource_type == DATABASE else TableAlreadyExistsError(message)
        return CatalogError(f"{message} (HTTP {self.code})")


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


# -- fields ----------------------------------------------------------------------------------
def field(doc: dict[str, Any], key: str, kind: type | tuple[type, ...], *, required: bool = True) -> Any:
    """``doc[key]`` of type ``kind`` (an integer within a Java long). Raises ``RestError`` 400
    for a missing (when ``required``) or mistyped value."""
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


def string_map(value: Any, what: str) -> dict[str, str]:
    """An object of strings (``None``: empty). Raises ``RestError`` 400 otherwise."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise bad_request(f"{what} must be an object of strings")
    return dict(value)


def identifier_json(database: str, name: str) -> dict[str, str]:
    """The protocol's ``Identifier`` object of table ``name`` in ``database``."""
    return {"database": database, "object": name}


# -- schemas and types -----------------------------------------------------------------------
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


def type_json(value: Any) -> Any:
    """The protocol's ``DataType`` of a Paimon type, an Arrow type or a type name
    (``lakestore.meta.schema_change.to_data_type``).

    Raises:
        UnsupportedTypeError: a type Paimon has no type for.
    """
    return DataField(0, "_", to_data_type(value)).to_json()["type"]


def type_from_json(value: Any) -> Any:
    """The Paimon type of a protocol ``DataType``. Raises ``RestError`` 400 for an invalid one."""
    try:
        return parse_type(value)
    except (LakestoreError, ValueError, KeyError, TypeError) as exc:
        raise bad_request(f"invalid data type {value!r}: {exc}") from exc


# -- schema changes --------------------------------------------------------------------------
def change_json(change: SchemaChange) -> dict[str, Any]:
    """The protocol's ``SchemaChange`` object of a lakestore schema change.

    Raises:
        OptionError: a change the protocol has no object for.
        UnsupportedTypeError: a column type Paimon has no type for.
    """
    if isinstance(change, SetOption):
        return {"action": "setOption", "key": change.key, "value": change.value}
    if isinstance(change, RemoveOption):
        return {"action": "removeOption", "key": change.key}
    if isinstance(change, UpdateComment):
        if change.column is None:
            return {"action": "updateComment", "comment": change.comment}
        return {"action": "updateColumnComment", "fieldNames": [change.column], "newComment": change.comment}
    if isinstance(change, AddColumn):
        move = {"fieldName": change.name, "type": "FIRST"} if change.first else None
        if change.after is not None:
            move = {"fieldName": change.name, "referenceFieldName": change.after, "type": "AFTER"}
        return {
            "action": "addColumn",
            "fieldNames": [change.name],
            "dataType": type_json(change.type),
            "comment": change.comment,
            "move": move,
        }
    if isinstance(change, DropColumn):
        return {"action": "dropColumn", "fieldNames": [change.name]}
    if isinstance(change, RenameColumn):
        return {"action": "renameColumn", "fieldNames": [change.name], "newName": change.new_name}
    if isinstance(change, UpdateColumnType):
        return {"action": "updateColumnType", "fieldNames": [change.name], "newDataType": type_json(change.type), "keepNullability": False}
    raise OptionError(f"schema change {change!r} cannot be sent to a REST catalog")


def _column(doc: dict[str, Any]) -> str:
    names = doc.get("fieldNames")
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise bad_request("schema change needs fieldNames (a list of strings)")
    if len(names) != 1:
        raise not_implemented("changes of nested fields")
    return str(names[0])


def changes_from_json(docs: Any) -> list[SchemaChange]:
    """lakestore schema changes from the protocol's ``SchemaChange`` objects. Raises
    ``RestError`` 400 for a malformed one, 501 for one lakestore does not implement."""
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
            out.append(_add_column(doc))
        elif action == "renameColumn":
            out.append(RenameColumn(_column(doc), field(doc, "newName", str)))
        elif action == "dropColumn":
            out.append(DropColumn(_column(doc)))
        elif action == "updateColumnType":
            out.append(UpdateColumnType(_column(doc), type_from_json(doc.get("newDataType"))))
        elif action == "updateColumnComment":
            out.append(UpdateComment(field(doc, "newComment", str, required=False), column=_column(doc)))
        elif isinstance(action, str):
            raise not_implemented(f"schema change {action!r}")
        else:
            raise bad_request("schema change without an action")
    return out


def _add_column(doc: dict[str, Any]) -> AddColumn:
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
    return AddColumn(_column(doc), type_from_json(doc.get("dataType")), comment, after=after, first=first)
