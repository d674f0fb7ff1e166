"""Bucket numbers pinned against rows really written by pypaimon and pypaimon-rust."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from lakestore.format.binary_row import encode_rows
from lakestore.format.bucket import bucket_of_hashes, compute_buckets, hash_rows
from lakestore.format.types import parse_type
from tests._support import fact_value, facts

CASES = facts()["buckets"]


def test_facts_are_consistent():
    assert {c["route"] for c in CASES} == {"python", "rust"}
    for c in CASES:
        assert c["function_mismatches"] == 0
        assert c["rows"]


@pytest.mark.parametrize("case", CASES, ids=[f"{c['name']}-{c['route']}" for c in CASES])
def test_bucket_of_real_rows(case):
    types = [parse_type(t) for t in case["bucket_key_types"]]
    keys = [[fact_value(v) for v in r["key"]] for r in case["rows"]]
    arrays = [pa.array([k[i] for k in keys], type=t.to_arrow()) for i, t in enumerate(types)]
    got = compute_buckets(types, arrays, case["num_buckets"])
    expected = np.array([r["bucket"] for r in case["rows"]], dtype=np.int32)
    bad = [(keys[i], int(got[i]), int(expected[i])) for i in np.flatnonzero(got != expected)[:5]]
    assert not bad, f"(key, lakestore bucket, oracle bucket): {bad}"
    assert got.dtype == np.int32 and len(got) == len(keys)


def test_bucket_spread_uses_every_bucket():
    case = next(c for c in CASES if c["name"] == "pk_dt_id_bigint_b7")
    assert {r["bucket"] for r in case["rows"]} == set(range(7))


def test_uniform_and_ragged_row_widths_hash_alike():
    """Rows of different byte widths in one batch hash as they would alone (ragged path)."""
    t = parse_type("STRING")
    values = ["a", "x" * 9, "", "y" * 33, "日本語テキスト"]
    batch = hash_rows(encode_rows([t], [pa.array(values)]))
    single = [int(hash_rows(encode_rows([t], [pa.array([v])]))[0]) for v in values]
    assert batch.tolist() == single


def test_negative_hash_java_semantics():
    hashes = np.array([-7, -1, 0, 5, -(2**31)], dtype=np.int32)
    # Java: Math.abs(h % n); % truncates toward zero
    assert bucket_of_hashes(hashes, 4).tolist() == [3, 1, 0, 1, 0]
    assert bucket_of_hashes(hashes, 3).tolist() == [1, 1, 0, 2, 2]


def test_empty_input():
    assert compute_buckets([parse_type("BIGINT")], [pa.array([], pa.int64())], 4).tolist() == []
