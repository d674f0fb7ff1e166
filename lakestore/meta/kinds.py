"""The string vocabularies of the Paimon format and of lakestore's API, as ``Literal`` types: the
values are the ones written to (and read from) snapshot JSON and table options, unchanged."""

from __future__ import annotations

from typing import Literal, get_args

# ``commitKind`` of a snapshot.
CommitKind = Literal["APPEND", "COMPACT", "OVERWRITE", "ANALYZE"]
COMMIT_KINDS: tuple[CommitKind, ...] = get_args(CommitKind)

# ``changelog-producer`` of a primary-key table.
ChangelogProducer = Literal["none", "input", "lookup", "full-compaction"]

# ``merge-engine`` of a primary-key table.
MergeEngine = Literal["deduplicate", "partial-update", "aggregation", "first-row"]

# Where a streaming scan starts when no snapshot, time or stored consumer position is given:
# the whole table first, or only changes committed from now on.
StreamStart = Literal["full", "latest"]
