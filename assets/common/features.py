"""Feature checks for lakestore capabilities that land while the pipeline is being built.

The pipeline never fakes a missing capability: it asks whether the table offers it, and when it
does not, the stage reports (and logs) that it was skipped and why.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import lakestore

COMPACT = "compact"
EXPIRE = "expire_snapshots"
CREATE_TAG = "create_tag"


def has(table: lakestore.Table, method: str) -> bool:
    return callable(getattr(table, method, None))


def call_with_supported(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call ``fn`` passing only the keyword arguments its signature accepts (APIs still settling)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return fn(*args, **kwargs)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return fn(*args, **kwargs)
    return fn(*args, **{k: v for k, v in kwargs.items() if k in params})


def as_snapshots(result: Any) -> list[lakestore.Snapshot]:
    """Normalise what a maintenance call returned into a list of snapshots."""
    if result is None:
        return []
    if isinstance(result, lakestore.Snapshot):
        return [result]
    if isinstance(result, (list, tuple)):
        return [s for s in result if isinstance(s, lakestore.Snapshot)]
    return []


def list_tags(table: lakestore.Table) -> dict[str, int] | None:
    """``{tag name: snapshot id}`` if the table can list tags, else None."""
    for name in ("tags", "list_tags"):
        fn = getattr(table, name, None)
        if not callable(fn):
            continue
        tags = fn()
        if isinstance(tags, dict):
            return {str(k): _snapshot_id(v) for k, v in tags.items()}
        out = {}
        for tag in tags:
            tag_name = getattr(tag, "name", None) or getattr(tag, "tag_name", None) or str(tag)
            out[str(tag_name)] = _snapshot_id(tag)
        return out
    return None


def _snapshot_id(value: Any) -> int:
    if isinstance(value, int):
        return value
    for attr in ("snapshot_id", "id"):
        v = getattr(value, attr, None)
        if isinstance(v, int):
            return v
    snapshot = getattr(value, "snapshot", None)
    return getattr(snapshot, "id", -1) if snapshot is not None else -1
