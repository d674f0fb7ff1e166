"""Property: random upserts/deletes (rowkind.field) over several commits read back exactly as a
dict model says, at every snapshot."""

from __future__ import annotations

import tempfile

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lakestore

SCHEMA = pa.schema([("p", pa.string()), ("k", pa.int32()), ("v", pa.int64()), ("op", pa.string())])

_OP = st.tuples(
    st.sampled_from(["a", "b"]),
    st.integers(0, 9),
    st.one_of(st.none(), st.integers(-5, 5)),
    st.sampled_from(["+I", "+U", "-D", "-U", "+I"]),
)
_COMMIT = st.lists(_OP, min_size=0, max_size=15)


def _apply(model: dict, ops) -> None:
    for p, k, v, op in ops:
        if op in ("-D", "-U"):
            model.pop((p, k), None)
        else:
            model[(p, k)] = (v, op)


def _read(table, snapshot_id=None) -> dict:
    out = table.to_arrow(snapshot_id=snapshot_id)
    return {(r["p"], r["k"]): (r["v"], r["op"]) for r in out.to_pylist()}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(commits=st.lists(_COMMIT, min_size=1, max_size=4), buffer=st.sampled_from(["64 b", "256 mb"]), buckets=st.sampled_from(["1", "3"]))
def test_pk_table_matches_dict_model(commits, buffer, buckets):
    with tempfile.TemporaryDirectory(prefix="pkmodel-") as wh:
        cat = lakestore.Catalog(wh)
        cat.create_database("db")
        t = cat.create_table(
            "db.t",
            schema=SCHEMA,
            partition_keys=["p"],
            primary_keys=["p", "k"],
            options={"bucket": buckets, "rowkind.field": "op", "write-buffer-size": buffer},
        )
        model: dict = {}
        history: list[tuple[int, dict]] = []
        for ops in commits:
            data = pa.table(
                {
                    "p": pa.array([o[0] for o in ops], pa.string()),
                    "k": pa.array([o[1] for o in ops], pa.int32()),
                    "v": pa.array([o[2] for o in ops], pa.int64()),
                    "op": pa.array([o[3] for o in ops], pa.string()),
                },
                schema=SCHEMA,
            )
            snap = t.write_arrow(data)
            _apply(model, ops)
            if not ops:
                assert snap is None  # an empty write commits nothing
            if snap is not None:
                history.append((snap.id, dict(model)))
            assert _read(t) == model
        for snapshot_id, expected in history:
            assert _read(t, snapshot_id) == expected, f"time travel to {snapshot_id}"
        # a fresh reader (no cached state) sees the same
        assert _read(lakestore.Table.from_path(t.path)) == model
