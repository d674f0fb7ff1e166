"""Paimon's ``LookupMergeFunction``: how tables written with lookup compaction merge.

Paimon 2.0 wraps the merge function of a primary-key table in ``LookupMergeFunction`` when the
table needs lookup (``CoreOptions.needLookup``: ``changelog-producer`` = lookup,
``deletion-vectors.enabled``, ``force-lookup``; first-row tables are left unwrapped). Each lookup
compaction folds the key's version from the levels above its output into the record it writes,
so of a key's records at levels >= 1 only the one at the lowest such level counts: a key merges
its level-0 records with that one record. Readers (merge on read) and every compaction of such a
table use the rule, and so must every writer's compaction fold the deeper version in."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from lakestore.format.arrow_ops import as_numpy, from_numpy
from lakestore.format.arrow_ops import mask as arrow_mask
from lakestore.merge.engine import Groups
from lakestore.meta.options import CoreOptions

LEVEL = "_LAKESTORE_LEVEL"  # a record's level while rows of several levels merge (never written)


def uses_lookup_merge(options: CoreOptions) -> bool:
    """Whether Paimon merges the table's records through ``LookupMergeFunction``."""
    if options.merge_engine == "first-row":
        return False
    return options.changelog_producer == "lookup" or options.deletion_vectors or bool(options.get("force-lookup"))


def with_level(rows: pa.Table, level: int) -> pa.Table:
    return rows.append_column(LEVEL, from_numpy(np.full(rows.num_rows, level, dtype=np.int32)))


def lookup_versions(rows: pa.Table, key_columns: list[str]) -> pa.Table:
    """The rows a lookup merge takes from ``rows`` (sorted by key, with a ``LEVEL`` column):
    every record of level 0 (or below: not yet written) and each key's records at its lowest
    level >= 1. The ``LEVEL`` column is removed."""
    if rows.num_rows == 0:
        return rows.drop_columns([LEVEL])
    levels = as_numpy(rows.column(LEVEL)).astype(np.int64, copy=False)
    groups = Groups.of(rows, key_columns)
    high = np.where(levels > 0, levels, np.iinfo(np.int64).max)
    lowest = np.minimum.reduceat(high, groups.starts)
    keep = (levels <= 0) | (levels == np.repeat(lowest, groups.ends - groups.starts))
    rows = rows.drop_columns([LEVEL])
    return rows if keep.all() else rows.filter(arrow_mask(keep))


__all__ = ["LEVEL", "lookup_versions", "uses_lookup_merge", "with_level"]
