"""Random sequences of writes, overwrites, compactions, tags, expirations, rollbacks and orphan
cleanups. After every step each retained snapshot and each tag reads exactly what it read when it
was created; after orphan cleanup the table directory holds exactly the referenced files."""

from __future__ import annotations

import os
import shutil
import tempfile
import time

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lakestore
from lakestore.lifecycle import expire_snapshots
from tests.lifecycle.conftest import SCHEMA, rows

FAR_FUTURE_MS = 4_102_444_800_000  # 2100-01-01: every snapshot is "old"

write_op = st.tuples(st.just("write"), st.sampled_from(["a", "b"]), st.sets(st.integers(0, 9), min_size=1, max_size=5))
overwrite_op = st.tuples(st.just("overwrite"), st.sampled_from(["a", "b"]), st.sets(st.integers(0, 9), min_size=1, max_size=3))
compact_op = st.tuples(st.just("compact"), st.booleans())
tag_op = st.tuples(st.just("tag"), st.integers(0, 3), st.integers(0, 10))  # name index, snapshot pick
untag_op = st.tuples(st.just("untag"), st.integers(0, 3))
expire_op = st.tuples(st.just("expire"), st.integers(1, 4), st.one_of(st.none(), st.integers(1, 6)), st.booleans())
rollback_op = st.tuples(st.just("rollback"), st.booleans(), st.integers(0, 10))
orphans_op = st.tuples(st.just("orphans"))
ops = st.lists(
    st.one_of(write_op, write_op, overwrite_op, compact_op, tag_op, untag_op, expire_op, rollback_op, orphans_op), min_size=1, max_size=14
)


def _referenced(table: lakestore.Table, snapshots) -> tuple[set[str], set[str]]:
    """Data files and manifest files of ``snapshots``, found through the scan planner and the
    manifest lists (independently of lakestore.lifecycle)."""
    data: set[str] = set()
    manifests: set[str] = set()
    store = table.store.manifests()
    reader = table.store.split_reader()
    from lakestore.read.planner import ScanPlanner

    for snap in snapshots:
        for split in ScanPlanner(table.schema, store).plan(snap):
            data.update(os.path.normpath(reader.file_path(split.partition_values, split.bucket, f)) for f in split.files)
        for name in (snap.base_manifest_list, snap.delta_manifest_list):
            manifests.add(name)
            manifests.update(m.file_name for m in store.read_list(name))
    return data, manifests


def _on_disk(table: lakestore.Table) -> tuple[set[str], set[str]]:
    data, manifests = set(), set()
    for root, _, names in os.walk(table.path):
        rel = os.path.relpath(root, table.path)
        top = rel.split(os.sep)[0]
        for name in names:
            if top == "manifest":
                manifests.add(name)
            elif top not in ("schema", "snapshot", "tag"):
                data.add(os.path.normpath(os.path.join(root, name)))
    return data, manifests


def _check(table: lakestore.Table, expected: dict[int, list], tags: dict[str, int]) -> None:
    ids = table.store.snapshot_manager.list_ids()
    assert set(ids) <= set(expected)
    assert not ids or ids == list(range(ids[0], ids[-1] + 1))
    for sid in ids:
        assert rows(table.to_arrow(snapshot_id=sid)) == expected[sid], f"snapshot {sid}"
    assert {t.name: t.snapshot_id for t in table.manage.tags()} == tags
    for name, sid in tags.items():
        assert rows(table.to_arrow(tag=name)) == expected[sid], f"tag {name}"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops)
def test_random_lifecycle(sequence):
    tmp = tempfile.mkdtemp(prefix="lifecycle-")
    try:
        _run(tmp, sequence)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _run(tmp: str, sequence) -> None:
    catalog = lakestore.Catalog(tmp)
    catalog.create_database("db")
    table = catalog.create_table(
        "db.t",
        schema=SCHEMA,
        partition_keys=["dt"],
        primary_keys=["dt", "id"],
        options={"bucket": "2", "num-sorted-run.compaction-trigger": "2"},
    )
    expected: dict[int, list] = {}
    tags: dict[str, int] = {}
    counter = 0
    model: dict[tuple[str, int], float] = {}  # what the latest snapshot must hold
    for op in sequence:
        kind = op[0]
        if kind in ("write", "overwrite"):
            counter += 1
            ids = sorted(op[2])
            data = pa.table({"dt": [op[1]] * len(ids), "id": ids, "v": [float(counter)] * len(ids)}, schema=SCHEMA)
            before = table.store.snapshot_manager.latest_id() or 0
            table.write_arrow(data, overwrite={"dt": op[1]} if kind == "overwrite" else None)
            if kind == "overwrite":
                model = {k: v for k, v in model.items() if k[0] != op[1]}
            model.update({(op[1], i): float(counter) for i in ids})
            # a write may also commit a COMPACT snapshot (compaction trigger): record each one
            for sid in range(before + 1, table.store.snapshot_manager.latest_id() + 1):
                expected[sid] = rows(table.to_arrow(snapshot_id=sid))
            assert expected[table.store.snapshot_manager.latest_id()] == sorted((d, i, v) for (d, i), v in model.items())
        elif kind == "compact":
            before = rows(table.to_arrow())
            for snap in table.compact(full=op[1]):
                expected[snap.id] = rows(table.to_arrow(snapshot_id=snap.id))
                assert expected[snap.id] == before
        elif kind == "tag":
            ids = table.store.snapshot_manager.list_ids()
            name = f"tag{op[1]}"
            if ids and name not in tags:
                sid = ids[op[2] % len(ids)]
                table.manage.create_tag(name, sid)
                tags[name] = sid
        elif kind == "untag":
            name = f"tag{op[1]}"
            if name in tags:
                table.manage.delete_tag(name)
                del tags[name]
        elif kind == "expire":
            _, retain_min, retain_max, all_old = op
            ids = table.store.snapshot_manager.list_ids()
            if retain_max is not None and retain_max < retain_min:
                retain_max = retain_min
            if all_old:
                expire_snapshots(
                    table.store, num_retained_min=retain_min, num_retained_max=retain_max, time_retained_ms=0, now_ms=FAR_FUTURE_MS
                )
                keep = retain_min
            else:  # nothing is old enough: only num-retained.max removes snapshots
                expire_snapshots(table.store, num_retained_min=retain_min, num_retained_max=retain_max, time_retained_ms=10**12)
                keep = retain_max if retain_max is not None else len(ids)
            assert table.store.snapshot_manager.list_ids() == (ids[-keep:] if ids else [])
        elif kind == "rollback":
            _, to_tag, pick = op
            if to_tag and tags:
                name = sorted(tags)[pick % len(tags)]
                target = tags[name]
                table.manage.rollback_to(tag=name)
            else:
                ids = table.store.snapshot_manager.list_ids()
                if not ids:
                    continue
                target = ids[pick % len(ids)]
                table.manage.rollback_to(target)
            assert table.latest_snapshot().id == target
            model = {(d, i): v for d, i, v in expected[target]}
            tags = {n: s for n, s in tags.items() if s <= target}
            expected = {s: r for s, r in expected.items() if s <= target}
        elif kind == "orphans":
            result = table.maintenance.remove_orphan_files(older_than_ms=int(time.time() * 1000) + 60_000)
            retained = [table.snapshot(i) for i in table.store.snapshot_manager.list_ids()] + [t.snapshot for t in table.manage.tags()]
            want_data, want_manifests = _referenced(table, retained)
            have_data, have_manifests = _on_disk(table)
            assert have_data == want_data, (sorted(have_data ^ want_data), result)
            assert have_manifests == want_manifests
        _check(table, expected, tags)
