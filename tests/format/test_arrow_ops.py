"""The buffer-built NumPy/Python -> Arrow conversions equal pyarrow's own, and the write and read
paths never import pandas (pyarrow's conversions import it on first use: ~0.3 s per process)."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lakestore.format.arrow_ops import as_numpy, from_numpy, from_pylist, is_member, key_codes, min_max, rows_with_keys_in

ROOT = Path(__file__).resolve().parents[2]

SCALARS: list[tuple[pa.DataType, st.SearchStrategy]] = [
    (pa.bool_(), st.booleans()),
    (pa.int8(), st.integers(-(2**7), 2**7 - 1)),
    (pa.int16(), st.integers(-(2**15), 2**15 - 1)),
    (pa.int32(), st.integers(-(2**31), 2**31 - 1)),
    (pa.int64(), st.integers(-(2**63), 2**63 - 1)),
    (pa.float32(), st.floats(width=32, allow_nan=False)),
    (pa.float64(), st.floats(allow_nan=False)),
    (pa.string(), st.text()),
    (pa.binary(), st.binary()),
    (pa.date32(), st.dates()),
    (pa.time32("ms"), st.integers(0, 86_399_999)),
    (pa.timestamp("ms"), st.datetimes().map(lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000))),
    (pa.timestamp("us"), st.datetimes()),
    (pa.timestamp("ns"), st.datetimes(min_value=dt.datetime(1700, 1, 1), max_value=dt.datetime(2200, 1, 1))),
    (pa.timestamp("us", tz="UTC"), st.datetimes(timezones=st.just(dt.UTC))),
    (pa.decimal128(10, 2), st.decimals(min_value=-(10**7), max_value=10**7, places=2, allow_nan=False, allow_infinity=False)),
    (
        pa.decimal128(38, 10),
        st.decimals(min_value=-(10**27) + 1, max_value=10**27 - 1, places=10, allow_nan=False, allow_infinity=False),
    ),
]


@pytest.mark.parametrize("arrow_type,values", SCALARS, ids=[str(t) for t, _ in SCALARS])
def test_from_pylist_equals_pa_array(arrow_type: pa.DataType, values: st.SearchStrategy) -> None:
    @settings(max_examples=60, deadline=None)
    @given(st.lists(st.one_of(st.none(), values), max_size=8))
    def check(items: list) -> None:
        got = from_pylist(items, arrow_type)
        expected = pa.array(items, type=arrow_type)
        got.validate(full=True)
        assert got.type == expected.type
        assert got.equals(expected), (got, expected)

    check()


def test_from_pylist_falls_back_for_other_values() -> None:
    # a string for a date column is not a stored value: pyarrow decides (here: refuses)
    with pytest.raises((pa.ArrowInvalid, pa.ArrowTypeError, TypeError)):
        from_pylist(["2024-01-01"], pa.date32())
    exact = [decimal.Decimal("1.005")]
    assert from_pylist(exact, pa.decimal128(10, 3)).equals(pa.array(exact, pa.decimal128(10, 3)))
    nested = from_pylist([[1, 2], None], pa.list_(pa.int32()))
    assert nested.to_pylist() == [[1, 2], None]


@given(st.lists(st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)), min_size=1, max_size=50))
def test_from_numpy_with_nulls_and_as_numpy(items: list) -> None:
    null = np.array([v is None for v in items])
    values = np.array([0 if v is None else v for v in items], dtype=np.int64)
    array = from_numpy(values, null=null)
    assert array.equals(pa.array(items, type=pa.int64()))
    assert np.array_equal(as_numpy(array)[~null], values[~null])
    flags = from_numpy(values > 0)
    assert flags.to_pylist() == [bool(v > 0) for v in values]
    if len(items) > len(null[null]):
        assert min_max(array, pa.int64()).to_pylist() == [min(v for v in items if v is not None), max(v for v in items if v is not None)]


KEY_VALUES = st.one_of(st.none(), st.integers(0, 3))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(KEY_VALUES, KEY_VALUES), max_size=12), st.lists(st.tuples(KEY_VALUES, KEY_VALUES), max_size=12))
def test_key_codes_and_semi_join_match_a_model(left: list, right: list) -> None:
    def table(rows: list) -> pa.Table:
        strings = [None if r[1] is None else f"s{r[1]}" for r in rows]
        return pa.table({"a": pa.array([r[0] for r in rows], pa.int64()), "b": pa.array(strings, pa.string())})

    def pairs(t: pa.Table) -> list[tuple]:
        return list(zip(t.column("a").to_pylist(), t.column("b").to_pylist(), strict=True))

    lt, rt = table(left), table(right)
    lc, rc = key_codes([lt, rt], ["a", "b"])
    everything, codes = pairs(lt) + pairs(rt), np.concatenate([lc, rc])
    for i, x in enumerate(everything):
        for j, y in enumerate(everything):
            assert (codes[i] == codes[j]) == (x == y)
    wanted = set(pairs(rt))
    assert rows_with_keys_in(lt, rt, ["a", "b"]).tolist() == [r in wanted for r in pairs(lt)]
    assert is_member(np.array([1, 5]), np.array([], dtype=np.int64)).tolist() == [False, False]


SCRIPT = textwrap.dedent(
    """
    import json, sys
    import pyarrow as pa
    from lakestore.catalog import Catalog

    warehouse, spec, inputs = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
    commits = pa.ipc.open_file(pa.memory_map(inputs)).read_all().to_batches()  # no conversion from Python
    catalog = Catalog(warehouse)
    catalog.create_database("db", exist_ok=True)
    table = catalog.create_table("db.t", schema=commits[0].schema, **spec)
    for batch in commits:
        table.write_arrow(batch)
    table.compact(full=True)
    rows = table.to_arrow()
    batches = sum(b.num_rows for b in table.to_batches())
    print(json.dumps({"rows": rows.num_rows, "batches": batches, "pandas": "pandas" in sys.modules}))
    """
)


def _inputs(path: Path) -> Path:
    """Three commits of 100 rows over two partitions; keys overlap between commits."""
    batches = [
        pa.record_batch(
            {
                "dt": [f"2024-01-0{1 + i % 2}" for i in range(100)],
                "id": list(range(commit * 50, commit * 50 + 100)),
                "name": [f"n{i}" for i in range(100)],
                "value": [float(i) for i in range(100)],
            }
        )
        for commit in range(3)
    ]
    with pa.ipc.new_file(path, batches[0].schema) as sink:
        for batch in batches:
            sink.write_batch(batch)
    return path


SPECS = {
    "pk-fixed-buckets": {"primary_keys": ["dt", "id"], "partition_keys": ["dt"], "options": {"bucket": "2"}},
    "pk-dynamic-buckets": {"primary_keys": ["dt", "id"], "partition_keys": ["dt"]},
    "pk-deletion-vectors": {
        "primary_keys": ["dt", "id"],
        "partition_keys": ["dt"],
        "options": {"bucket": "2", "deletion-vectors.enabled": "true"},
    },
    "pk-lookup-changelog": {
        "primary_keys": ["dt", "id"],
        "partition_keys": ["dt"],
        "options": {"bucket": "1", "changelog-producer": "lookup"},
    },
    "first-row": {"primary_keys": ["dt", "id"], "partition_keys": ["dt"], "options": {"bucket": "1", "merge-engine": "first-row"}},
    "partial-update": {
        "primary_keys": ["dt", "id"],
        "partition_keys": ["dt"],
        "options": {"bucket": "1", "merge-engine": "partial-update"},
    },
    "append": {"partition_keys": ["dt"]},
}
# Not covered: the aggregation engine, whose grouped aggregates run through Acero's group_by
# (which imports pandas itself).


@pytest.mark.parametrize("name", sorted(SPECS))
def test_write_compact_and_read_never_import_pandas(tmp_path: Path, name: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "wh"), json.dumps(SPECS[name]), str(_inputs(tmp_path / "in.arrow"))],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    expected = 300 if name == "append" else 200
    assert out == {"rows": expected, "batches": expected, "pandas": False}
