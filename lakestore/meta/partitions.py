"""Partition specs given by callers (overwrite, drop, compact, on every engine path): one check,
so a spec naming a column that is not a partition key is refused the same way everywhere instead
of matching nothing."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lakestore.errors import PartitionValueError


def check_partition_spec(partition_keys: Sequence[str], spec: object, *, what: str = "partitions") -> dict[str, Any]:
    """``spec`` as a dict of partition key -> value; ``PartitionValueError`` if it is not a
    mapping or names a column that is not a partition key. ``what`` names the argument."""
    if not isinstance(spec, Mapping):
        raise PartitionValueError(f"{what} must be partition dicts, got {spec!r}")
    unknown = [k for k in spec if k not in partition_keys]
    if unknown:
        raise PartitionValueError(f"{what} names {unknown}, which are not partition keys {list(partition_keys)}")
    return dict(spec)


def check_partition_specs(
    partition_keys: Sequence[str], partitions: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None, *, what: str = "partitions"
) -> list[dict[str, Any]] | None:
    """One spec or a sequence of them, each checked; None stays None (no filter)."""
    if partitions is None:
        return None
    specs: Sequence[object] = [partitions] if isinstance(partitions, Mapping) else list(partitions)
    return [check_partition_spec(partition_keys, spec, what=what) for spec in specs]
