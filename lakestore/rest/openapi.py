"""The OpenAPI description of what ``lakestore serve`` answers (the subset of Paimon's REST
catalog protocol it implements, with the request bodies it reads), built from the routing
table; served at ``/openapi.json`` and fuzzed by the tests (schemathesis)."""

from __future__ import annotations

from typing import Any

from lakestore.rest.routes import ROUTES

_STR = {"type": "string"}
_INT = {"type": "integer"}
_MAP = {"type": "object", "additionalProperties": _STR}
_IDENT = {"type": "object", "properties": {"database": _STR, "object": _STR}, "required": ["database", "object"]}
_FIELD = {
    "type": "object",
    "properties": {"id": _INT, "name": _STR, "type": {"oneOf": [_STR, {"type": "object"}]}, "description": _STR},
    "required": ["id", "name", "type"],
}
_SCHEMA = {
    "type": "object",
    "properties": {
        "fields": {"type": "array", "items": _FIELD},
        "partitionKeys": {"type": "array", "items": _STR},
        "primaryKeys": {"type": "array", "items": _STR},
        "options": _MAP,
        "comment": _STR,
    },
}
_CHANGE = {
    "type": "object",
    "properties": {
        "action": {
            "enum": [
                "setOption",
                "removeOption",
                "updateComment",
                "addColumn",
                "renameColumn",
                "dropColumn",
                "updateColumnType",
                "updateColumnComment",
            ]
        },
        "key": _STR,
        "value": _STR,
        "comment": _STR,
        "fieldNames": {"type": "array", "items": _STR},
        "dataType": _STR,
        "newDataType": _STR,
        "newName": _STR,
        "newComment": _STR,
    },
}
_SNAPSHOT = {
    "type": "object",
    "properties": {
        "version": _INT,
        "id": _INT,
        "uuid": _STR,
        "schemaId": _INT,
        "baseManifestList": _STR,
        "deltaManifestList": _STR,
        "commitUser": _STR,
        "commitIdentifier": _INT,
        "commitKind": {"enum": ["APPEND", "COMPACT", "OVERWRITE", "ANALYZE"]},
        "timeMillis": _INT,
        "totalRecordCount": _INT,
        "deltaRecordCount": _INT,
    },
}
_SPECS = {"type": "object", "properties": {"partitionSpecs": {"type": "array", "items": _MAP}}, "required": ["partitionSpecs"]}

_T = "/v1/{prefix}/databases/{database}/tables/{table}"
BODIES: dict[tuple[str, str], dict[str, Any]] = {
    ("POST", "/v1/{prefix}/databases"): {"type": "object", "properties": {"name": _STR, "options": _MAP}, "required": ["name"]},
    ("POST", "/v1/{prefix}/databases/{database}"): {
        "type": "object",
        "properties": {"removals": {"type": "array", "items": _STR}, "updates": _MAP},
    },
    ("POST", "/v1/{prefix}/databases/{database}/tables"): {
        "type": "object",
        "properties": {"identifier": _IDENT, "schema": _SCHEMA},
        "required": ["identifier", "schema"],
    },
    ("POST", "/v1/{prefix}/tables/rename"): {
        "type": "object",
        "properties": {"source": _IDENT, "destination": _IDENT},
        "required": ["source", "destination"],
    },
    ("POST", _T): {"type": "object", "properties": {"changes": {"type": "array", "items": _CHANGE}}, "required": ["changes"]},
    ("POST", _T + "/commit"): {
        "type": "object",
        "properties": {
            "tableId": _STR,
            "snapshot": _SNAPSHOT,
            "baseSnapshotUuid": _STR,
            "statistics": {"type": "array", "items": {"type": "object"}},
        },
        "required": ["snapshot"],
    },
    ("POST", _T + "/rollback"): {
        "type": "object",
        "properties": {
            "instant": {"type": "object", "properties": {"type": {"enum": ["snapshot", "tag"]}, "snapshotId": _INT, "tagName": _STR}},
            "fromSnapshot": _INT,
        },
        "required": ["instant"],
    },
    ("POST", _T + "/auth"): {"type": "object", "properties": {"select": {"type": "array", "items": _STR}}},
    ("POST", _T + "/partitions"): _SPECS,
    ("POST", _T + "/partitions/drop"): _SPECS,
    ("POST", _T + "/branches"): {"type": "object", "properties": {"branch": _STR, "fromTag": _STR}, "required": ["branch"]},
    ("POST", _T + "/branches/{branch}/forward"): {"type": "object"},
    ("POST", _T + "/tags"): {
        "type": "object",
        "properties": {"tagName": _STR, "snapshotId": _INT, "timeRetained": _STR},
        "required": ["tagName"],
    },
}
_PAGED = {"maxResults": _INT, "pageToken": _STR}
QUERIES: dict[tuple[str, str], dict[str, Any]] = {
    ("GET", "/v1/config"): {"warehouse": _STR},
    ("GET", "/v1/{prefix}/databases"): {**_PAGED, "databaseNamePattern": _STR},
    ("GET", "/v1/{prefix}/databases/{database}/tables"): {**_PAGED, "tableNamePattern": _STR},
    ("GET", "/v1/{prefix}/databases/{database}/table-details"): {**_PAGED, "tableNamePattern": _STR},
    ("GET", _T + "/snapshots"): _PAGED,
    ("GET", _T + "/partitions"): {**_PAGED, "partitionNamePattern": _STR},
    ("GET", _T + "/tags"): {**_PAGED, "tagNamePrefix": _STR},
}


def openapi_document(path_values: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """The OpenAPI 3.0 document; ``path_values`` narrows path parameters to those values
    (the fuzz tests aim at existing resources)."""
    values = path_values or {}
    error = {"description": "the protocol's ErrorResponse", "content": {"application/json": {"schema": {"type": "object"}}}}
    paths: dict[str, dict[str, Any]] = {}
    for method, path, _, _ in ROUTES:
        names = [segment[1:-1] for segment in path.split("/") if segment.startswith("{")]
        params = [{"name": n, "in": "path", "required": True, "schema": {"enum": values[n]} if n in values else _STR} for n in names]
        params += [{"name": n, "in": "query", "required": False, "schema": s} for n, s in QUERIES.get((method, path), {}).items()]
        operation: dict[str, Any] = {
            "operationId": f"{method.lower()}{path.replace('/', '_').replace('{', '').replace('}', '')}",
            "parameters": params,
            "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": {"type": "object"}}}}, "default": error},
            "security": [{"bearer": []}],
        }
        body = BODIES.get((method, path))
        if body is not None:
            operation["requestBody"] = {"required": True, "content": {"application/json": {"schema": body}}}
        paths.setdefault(path, {})[method.lower()] = operation
    return {
        "openapi": "3.0.3",
        "info": {"title": "lakestore serve: Paimon REST catalog", "version": "1.0"},
        "paths": paths,
        "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
    }
