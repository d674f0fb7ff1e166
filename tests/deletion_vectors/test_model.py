"""Property: upserts and deletes across commits and compactions of a deletion-vector table read
back as a dict model says, and the table keeps Paimon's invariant (level 0 empty after each
commit; at most one live row per key over the levels >= 1, with vectors applied)."""

from __future__ import annotations

import tempfile
from collections import Counter

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lakestore
from lakestore.read.deletion_vectors import apply_vector, read_vectors
from tests.compact._tables import live_files

SCHEMA = pa.schema([("p", pa.string()), ("k", pa.int32()), ("v", pa.int64()), ("op", pa.string())])
_ROW = st.tuples(st.sampled_from(["a", "b"]), st.integers(0, 11), st.integers(-5, 5), st.sampled_from(["+I", "+U", "-D", "+I"]))
_STEP = st.one_of(st.lists(_ROW, min_size=1, max_size=12), st.sampled_from(["compact", "full"]))


def _apply(model: dict, rows, engine: str) -> None:
    for p, k, v, op in rows:
        if op == "-D":
            model.pop((p, k), None)
        elif engine == "aggregation" and (p, k) in model:
            model[(p, k)] = (model[(p, k)][0] + v, op)
        else:
            model[(p, k)] = (v, op)


def _check_invariant(table: lakestore.Table) -> None:
    reader = table.store.split_reader()
    files = live_files(table)
    assert all(f.level > 0 for f in files), "level 0 must be moved up at every commit"
    for split in table.scan().plan():
        vectors = read_vectors(table.store.file_io, table.path, dict(split.deletion_files))
        keys: Counter = Counter()
        for f in split.files:
            whole = reader.read_file(split.partition_values, split.bucket, f, ["p", "k"], system=False)
            rows = apply_vector(whole, vectors.get(f.file_name))
            keys.update(zip(rows["p"].to_pylist(), rows["k"].to_pylist(), strict=True))
        assert max(keys.values(), default=1) == 1, "a key is live twice above level 0"


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    steps=st.lists(_STEP, min_size=1, max_size=7),
    engine=st.sampled_from(["deduplicate", "aggregation"]),
    trigger=st.sampled_from(["2", "5"]),
    buffer=st.sampled_from(["64 b", "256 mb"]),
)
def test_deletion_vector_table_matches_dict_model(steps, engine, trigger, buffer):
    """A 64-byte write buffer flushes every row batch: several level-0 runs, and back-pressure
    compactions, within one commit."""
    options = {"bucket": "2", "deletion-vectors.enabled": "true", "num-sorted-run.compaction-trigger": trigger, "write-buffer-size": buffer}
    if engine == "deduplicate":
        options["rowkind.field"] = "op"
    else:
        options.update({"merge-engine": "aggregation", "fields.v.aggregate-function": "sum", "fields.op.aggregate-function": "last_value"})
    with tempfile.TemporaryDirectory(prefix="dvmodel-") as wh:
        catalog = lakestore.Catalog(wh)
        catalog.create_database("db")
        table = catalog.create_table("db.t", schema=SCHEMA, partition_keys=["p"], primary_keys=["p", "k"], options=options)
        model: dict = {}
        for step in steps:
            if step == "compact" or step == "full":
                table.compact(full=step == "full")
            else:
                rows = step if engine == "deduplicate" else [r for r in step if r[3] != "-D"]
                if not rows:
                    continue
                columns = list(zip(*rows, strict=True))
                batch = pa.table({n: list(c) for n, c in zip(SCHEMA.names, columns, strict=True)}, schema=SCHEMA)
                table.write_arrow(batch.to_batches(max_chunksize=3))  # several flushes when the buffer is tiny
                _apply(model, rows, engine)
            got = {(r["p"], r["k"]): (r["v"], r["op"]) for r in table.to_arrow().to_pylist()}
            assert got == model
            _check_invariant(table)
