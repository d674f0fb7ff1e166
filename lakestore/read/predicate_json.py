"""Predicates and literal values as JSON, exactly: what a predicate (``lakestore.col(...)``)
and a partition's values are when they travel between processes as text (the Spark source's
options, ``lakestore.spark.job``).

Values: ``null``, booleans, integers, strings and finite floats are JSON's own; every other type
is an object of one tag, so it comes back as the same type and value::

    {"date": "2024-01-01"}              datetime.date
    {"timestamp": "2024-01-01T08:00:00.000001"}   datetime.datetime (an offset when aware)
    {"time": "08:00:00.5"}              datetime.time
    {"decimal": "12.340"}               decimal.Decimal (digits and exponent kept)
    {"bytes": "00ff"}                   bytes (hex)
    {"float": "nan"}                    float NaN, "inf", "-inf"

Predicates: one object per node, ``"kind"`` naming it: ``compare`` (``column``, ``op``,
``value``), ``in`` (``column``, ``values``), ``is_null`` (``column``, ``negated``), ``and`` /
``or`` (``left``, ``right``), ``not`` (``inner``).

Decoding is strict: an unknown kind, tag or key, a missing key or a value of the wrong type
raises ``ValueError`` naming it (callers add which option or document held it).
"""

from __future__ import annotations

import datetime
import decimal
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from lakestore.read.predicate import COMPARE_OPS, And, Compare, IsIn, IsNull, Not, Or, Predicate

_NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


# -- values ---------------------------------------------------------------------------------------
def value_to_json(value: Any) -> Any:
    """``value`` as JSON (see the module docstring).

    Raises:
        ValueError: a type with no exact JSON form (nanosecond timestamps, lists, ...).
    """
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if math.isfinite(value):
            return float(value)
        return {"float": "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}
    if isinstance(value, decimal.Decimal):
        return {"decimal": str(value)}
    if isinstance(value, datetime.datetime):
        if getattr(value, "nanosecond", 0):
            raise ValueError(f"timestamp {value!r} has nanoseconds, which have no exact JSON form here")
        base = datetime.datetime(
            value.year, value.month, value.day, value.hour, value.minute, value.second, value.microsecond, value.tzinfo, fold=value.fold
        )
        return {"timestamp": base.isoformat(timespec="microseconds")}
    if isinstance(value, datetime.date):
        return {"date": datetime.date(value.year, value.month, value.day).isoformat()}
    if isinstance(value, datetime.time):
        return {"time": value.isoformat(timespec="microseconds")}
    if isinstance(value, bytes | bytearray | memoryview):
        return {"bytes": bytes(value).hex()}
    raise ValueError(f"a value of type {type(value).__name__} has no JSON form here: {value!r}")


def value_from_json(doc: Any) -> Any:
    """The value ``value_to_json`` made ``doc`` from.

    Raises:
        ValueError: not such a document.
    """
    if doc is None or isinstance(doc, bool | str | int | float):
        return doc
    if not isinstance(doc, Mapping) or len(doc) != 1:
        raise ValueError(f"not a value: {doc!r} (a JSON scalar or one tag of date, timestamp, time, decimal, bytes, float)")
    ((tag, text),) = doc.items()
    if not isinstance(text, str):
        raise ValueError(f"value tag {tag!r} takes a string, got {text!r}")
    try:
        if tag == "date":
            return datetime.date.fromisoformat(text)
        if tag == "timestamp":
            return datetime.datetime.fromisoformat(text)
        if tag == "time":
            return datetime.time.fromisoformat(text)
        if tag == "decimal":
            return decimal.Decimal(text)
        if tag == "bytes":
            return bytes.fromhex(text)
        if tag == "float" and text in _NON_FINITE:
            return _NON_FINITE[text]
    except (ValueError, decimal.InvalidOperation) as exc:
        raise ValueError(f"value {doc!r}: {exc}") from exc
    raise ValueError(f"unknown value tag {tag!r} (known: date, timestamp, time, decimal, bytes, float)")


# -- predicates -----------------------------------------------------------------------------------
def predicate_to_json(predicate: Predicate) -> dict[str, Any]:
    """``predicate`` as JSON (see the module docstring).

    Raises:
        ValueError: a predicate kind or a literal with no JSON form.
    """
    if isinstance(predicate, Compare):
        return {"kind": "compare", "column": predicate.column, "op": predicate.op, "value": value_to_json(predicate.value)}
    if isinstance(predicate, IsIn):
        return {"kind": "in", "column": predicate.column, "values": [value_to_json(v) for v in predicate.values]}
    if isinstance(predicate, IsNull):
        return {"kind": "is_null", "column": predicate.column, "negated": bool(predicate.negated)}
    if isinstance(predicate, And | Or):
        kind = "and" if isinstance(predicate, And) else "or"
        return {"kind": kind, "left": predicate_to_json(predicate.left), "right": predicate_to_json(predicate.right)}
    if isinstance(predicate, Not):
        return {"kind": "not", "inner": predicate_to_json(predicate.inner)}
    raise ValueError(f"predicate kind {type(predicate).__name__} has no JSON form")


_KEYS = {
    "compare": {"column", "op", "value"},
    "in": {"column", "values"},
    "is_null": {"column", "negated"},
    "and": {"left", "right"},
    "or": {"left", "right"},
    "not": {"inner"},
}


def _column(doc: Mapping[str, Any]) -> str:
    column = doc["column"]
    if not isinstance(column, str) or not column:
        raise ValueError(f"predicate {doc['kind']!r}: 'column' must be a column name, got {column!r}")
    return column


def predicate_from_json(doc: Any) -> Predicate:
    """The predicate ``predicate_to_json`` made ``doc`` from.

    Raises:
        ValueError: an unknown kind, unknown or missing keys, or values of the wrong type.
    """
    if not isinstance(doc, Mapping):
        raise ValueError(f"not a predicate: {doc!r}")
    kind = doc.get("kind")
    if kind not in _KEYS:
        raise ValueError(f"unknown predicate kind {kind!r} (known: {', '.join(_KEYS)})")
    keys = set(doc) - {"kind"}
    if keys != _KEYS[kind]:
        unknown, missing = sorted(keys - _KEYS[kind]), sorted(_KEYS[kind] - keys)
        raise ValueError(f"predicate {kind!r}: unknown keys {unknown}, missing keys {missing}")
    if kind == "compare":
        if doc["op"] not in COMPARE_OPS:
            raise ValueError(f"predicate 'compare': unknown op {doc['op']!r} (known: {', '.join(COMPARE_OPS)})")
        return Compare(_column(doc), doc["op"], value_from_json(doc["value"]))
    if kind == "in":
        if not isinstance(doc["values"], list):
            raise ValueError(f"predicate 'in': 'values' must be a list, got {doc['values']!r}")
        return IsIn(_column(doc), tuple(value_from_json(v) for v in doc["values"]))
    if kind == "is_null":
        if not isinstance(doc["negated"], bool):
            raise ValueError(f"predicate 'is_null': 'negated' must be a boolean, got {doc['negated']!r}")
        return IsNull(_column(doc), doc["negated"])
    if kind == "not":
        return Not(predicate_from_json(doc["inner"]))
    left, right = predicate_from_json(doc["left"]), predicate_from_json(doc["right"])
    return And(left, right) if kind == "and" else Or(left, right)
