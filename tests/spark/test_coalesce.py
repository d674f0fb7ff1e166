"""Spark's small Arrow batches are joined before the table writer sees them
(``lakestore.spark.tasks.coalesce``): same rows in the same order, batches within the bounds."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from lakestore.spark.tasks import coalesce

SCHEMA = pa.schema([("id", pa.int64()), ("s", pa.string())])


def _batches(sizes: list[int]) -> list[pa.RecordBatch]:
    out, start = [], 0
    for n in sizes:
        ids = list(range(start, start + n))
        strings = pa.array([f"v{i}" if i % 3 else None for i in ids], pa.string())
        out.append(pa.record_batch([pa.array(ids, pa.int64()), strings], schema=SCHEMA))
        start += n
    return out


@settings(deadline=None)
@given(st.lists(st.integers(0, 40), max_size=30), st.integers(1, 60))
def test_coalesce_keeps_rows_and_order_within_bounds(sizes, rows):
    batches = _batches(sizes)
    joined = list(coalesce(iter(batches), rows=rows, nbytes=1 << 40))
    assert pa.Table.from_batches(joined, schema=SCHEMA).to_pylist() == [row for b in batches for row in b.to_pylist()]
    assert all(b.num_rows > 0 for b in joined)
    # every joined batch but the last reached the row bound, and none took a batch past it needlessly
    assert all(b.num_rows >= rows for b in joined[:-1])
    assert all(b.num_rows < rows + 40 for b in joined)


def test_coalesce_stops_at_the_byte_bound():
    batches = _batches([1000] * 10)
    joined = list(coalesce(iter(batches), rows=1 << 30, nbytes=batches[0].nbytes * 3))
    assert [b.num_rows for b in joined] == [3000, 3000, 3000, 1000]
