"""The ``lakestore`` console script: outputs and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pyarrow as pa
import pytest

import lakestore
from lakestore.cli import main
from lakestore.meta.schema_change import AddColumn

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.float64())])


@pytest.fixture
def warehouse(tmp_path):
    wh = str(tmp_path / "wh")
    c = lakestore.Catalog(wh)
    c.create_database("db")
    t = c.create_table(
        "db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "2", "write-only": "true"}
    )
    t.write_arrow(pa.table({"dt": ["a", "a", "b"], "id": [1, 2, 3], "v": [1.0, 2.0, 3.0]}, schema=SCHEMA))
    t.write_arrow(pa.table({"dt": ["a"], "id": [1], "v": [9.0]}, schema=SCHEMA))
    return wh


def run_json(capsys, *argv):
    code = main(["-q", "--json", *argv])
    out = capsys.readouterr().out
    return code, (json.loads(out) if out.strip() else None)


def test_listing_and_describe(warehouse, capsys):
    assert run_json(capsys, "-w", warehouse, "databases") == (0, [{"database": "db"}])
    assert run_json(capsys, "-w", warehouse, "tables") == (0, [{"table": "db.t"}])
    code, desc = run_json(capsys, "-w", warehouse, "describe", "db.t")
    assert code == 0 and [f["name"] for f in desc["fields"]] == ["dt", "id", "v"] and desc["primary_keys"] == ["dt", "id"]
    code, snaps = run_json(capsys, "-w", warehouse, "snapshots", "db.t")
    assert [s["id"] for s in snaps] == [1, 2] and snaps[-1]["total_records"] == 4


def test_files_shows_lsm_shape(warehouse, capsys):
    code, shape = run_json(capsys, "-w", warehouse, "files", "db.t")
    assert code == 0
    assert sum(r["rows"] for r in shape) == 4
    assert {r["partition"] for r in shape} == {"dt=a", "dt=b"} and {r["level"] for r in shape} == {0}
    # partition a: two commits (rows 1,2 then 1 again) -> at least two level-0 files, three rows
    assert sum(r["files"] for r in shape if r["partition"] == "dt=a") >= 2
    assert sum(r["rows"] for r in shape if r["partition"] == "dt=a") == 3


def test_index_files_of_a_dynamic_bucket_table(tmp_path, capsys):
    wh = str(tmp_path / "wh")
    catalog = lakestore.Catalog(wh)
    catalog.create_database("db")
    table = catalog.create_table(
        "db.d", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={"dynamic-bucket.target-row-num": "2"}
    )
    table.write_arrow(pa.table({"dt": ["a", "a", "a", "b"], "id": [1, 2, 3, 4], "v": [1.0, 2.0, 3.0, 4.0]}, schema=SCHEMA))
    code, index = run_json(capsys, "-w", wh, "index-files", "db.d")
    assert code == 0
    assert [(r["partition"], r["bucket"], r["type"], r["rows"]) for r in index] == [
        ("dt=a", 0, "HASH", 2),
        ("dt=a", 1, "HASH", 1),
        ("dt=b", 0, "HASH", 1),
    ]
    assert all(r["bytes"] == 4 * r["rows"] for r in index)


def test_tag_expire_rollback_orphans(warehouse, capsys):
    assert run_json(capsys, "-w", warehouse, "create-tag", "db.t", "v1", "--snapshot", "1") == (0, {"tag": "v1", "snapshot_id": 1})
    code, tags = run_json(capsys, "-w", warehouse, "tags", "db.t")
    assert [t["tag"] for t in tags] == ["v1"]
    code, result = run_json(capsys, "-w", warehouse, "expire", "db.t", "--retain-min", "1", "--older-than", "0 ms")
    assert code == 0 and result["expired_snapshots"] in ([1], [])  # [] when both landed in this millisecond
    assert run_json(capsys, "-w", warehouse, "rollback", "db.t", "--tag", "v1") == (0, {"latest_snapshot": 1})
    table = lakestore.Catalog(warehouse).get_table("db.t")
    assert sorted(table.to_arrow().column("v").to_pylist()) == [1.0, 2.0, 3.0]
    code, orphans = run_json(capsys, "-w", warehouse, "remove-orphans", "db.t", "--older-than", "0 ms", "--dry-run")
    assert code == 0 and orphans["count"] == 0
    assert run_json(capsys, "-w", warehouse, "delete-tag", "db.t", "v1")[0] == 0


def test_compact(warehouse, capsys):
    code, result = run_json(capsys, "-w", warehouse, "compact", "db.t", "--full")
    assert code == 0 and len(result["snapshots"]) == 1
    code, shape = run_json(capsys, "-w", warehouse, "files", "db.t")
    assert {r["level"] for r in shape} != {0}


def test_exit_codes(warehouse, tmp_path, capsys):
    assert main(["-w", warehouse, "describe", "db.missing"]) == 3
    assert main(["-w", warehouse, "tables", "nodb"]) == 3
    assert main(["-w", warehouse, "rollback", "db.t", "--snapshot", "99"]) == 3
    assert main(["-w", warehouse, "files", "db.t", "--tag", "nope"]) == 3
    assert main(["-w", str(tmp_path / "nowhere"), "databases"]) == 3
    assert main(["-w", warehouse, "rollback", "db.t"]) == 2
    assert main(["-w", warehouse, "describe", "not-an-identifier"]) == 2
    assert main(["-w", warehouse, "bogus"]) == 2
    assert main(["-w", warehouse, "expire", "db.t", "--older-than", "soon"]) == 2
    assert main(["-w", warehouse, "create-tag", "db.t", "v1"]) == 0
    assert main(["-w", warehouse, "create-tag", "db.t", "v1"]) == 1  # already exists
    assert main(["-w", warehouse, "expire", "db.t", "--retain-min", "0"]) == 2
    capsys.readouterr()


def test_human_output_and_console_script(warehouse):
    exe = os.path.join(os.path.dirname(sys.executable), "lakestore")
    if not os.path.exists(exe):
        pytest.skip("console script not installed")
    res = subprocess.run([exe, "-w", warehouse, "snapshots", "db.t"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    header, sep, *body = res.stdout.splitlines()
    assert header.split()[:3] == ["id", "schema_id", "kind"] and set(sep.replace(" ", "")) == {"-"} and len(body) == 2
    res = subprocess.run([exe, "-w", warehouse, "describe", "db.nope"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 3 and "not found" in res.stderr


def test_describe_at_a_snapshot_shows_the_schema_it_was_written_with(warehouse, capsys):
    lakestore.Catalog(warehouse).alter_table("db.t", [AddColumn("extra", "INT")])
    code, now = run_json(capsys, "-w", warehouse, "describe", "db.t")
    assert code == 0 and [f["name"] for f in now["fields"]] == ["dt", "id", "v", "extra"]
    code, then = run_json(capsys, "-w", warehouse, "describe", "db.t", "--snapshot", "1")
    assert code == 0 and [f["name"] for f in then["fields"]] == ["dt", "id", "v"]
    assert then["snapshot"] == 1 and then["latest_snapshot"] == 2 and then["schema_id"] == 0


def test_branch_commands_and_branch_identifiers(warehouse, capsys):
    assert run_json(capsys, "-w", warehouse, "create-tag", "db.t", "v1", "--snapshot", "1")[0] == 0
    assert run_json(capsys, "-w", warehouse, "create-branch", "db.t", "dev", "--tag", "v1") == (0, {"branch": "dev", "snapshot_id": 1})
    assert run_json(capsys, "-w", warehouse, "branches", "db.t") == (0, [{"branch": "dev"}])
    code, snaps = run_json(capsys, "-w", warehouse, "snapshots", "db.t$branch_dev")
    assert code == 0 and [s["id"] for s in snaps] == [1]
    assert run_json(capsys, "-w", warehouse, "fast-forward", "db.t", "dev") == (0, {"fast_forwarded_to": "dev", "latest_snapshot": 1})
    assert run_json(capsys, "-w", warehouse, "delete-branch", "db.t", "dev") == (0, {"deleted_branch": "dev"})
    assert main(["-q", "-w", warehouse, "snapshots", "db.t$branch_dev"]) == 3


def test_expire_partitions_names_the_missing_option(warehouse, capsys):
    assert main(["-q", "-w", warehouse, "expire-partitions", "db.t"]) == 1
    assert "partition.expiration-time" in capsys.readouterr().err


def test_global_flags_before_or_after_the_command(warehouse, capsys):
    for argv in (
        ["--json", "-w", warehouse, "tables", "db"],
        ["tables", "db", "--json", "-w", warehouse],
        ["-w", warehouse, "tables", "--json"],
    ):
        assert main(["-q", *argv]) == 0
        assert json.loads(capsys.readouterr().out) == [{"table": "db.t"}]
    assert main(["-w", warehouse, "compact", "db.t", "--full", "-q", "--json"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["snapshots"] and out.err == ""


def test_compact_with_nothing_to_do_says_so(warehouse, capsys):
    assert main(["-q", "-w", warehouse, "compact", "db.t", "--full"]) == 0
    capsys.readouterr()
    assert main(["-q", "-w", warehouse, "compact", "db.t", "--full"]) == 0
    out = capsys.readouterr().out
    assert out.strip() == "nothing to compact" and "snapshots" not in out
    code, result = run_json(capsys, "-w", warehouse, "compact", "db.t", "--full")
    assert code == 0 and result["snapshots"] == [] and result["note"] == "nothing to compact"


def test_expire_says_why_nothing_expired(warehouse, capsys):
    # two snapshots, below the table's snapshot.num-retained.min (10)
    code, result = run_json(capsys, "-w", warehouse, "expire", "db.t")
    assert code == 0 and result["expired_snapshots"] == []
    assert "keeps the newest 10" in result["note"] and "snapshot.num-retained.min" in result["note"]
    # --retain-min 1 allows it, but the oldest snapshot is younger than the table's snapshot.time-retained
    code, result = run_json(capsys, "-w", warehouse, "expire", "db.t", "--retain-min", "1")
    assert code == 0 and result["expired_snapshots"] == []
    assert "snapshot.time-retained" in result["note"] and "--older-than" in result["note"]
    # a consumer that has not read snapshot 1 pins it
    table = lakestore.Catalog(warehouse).get_table("db.t")
    table.stream(consumer_id="reader", snapshot_id=1).checkpoint()
    assert table.manage.consumers() == {"reader": 1}
    code, result = run_json(capsys, "-w", warehouse, "expire", "db.t", "--retain-min", "1", "--older-than", "0 ms")
    assert code == 0 and result["expired_snapshots"] == [] and "consumer 'reader'" in result["note"]
    # human output ends with the reason
    assert main(["-q", "-w", warehouse, "expire", "db.t"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("nothing expired: ")


def test_expire_errors_name_the_flags(warehouse, capsys):
    assert main(["-q", "-w", warehouse, "expire", "db.t", "--retain-min", "0"]) == 2
    assert "--retain-min must be at least 1" in capsys.readouterr().err
    assert main(["-q", "-w", warehouse, "expire", "db.t", "--retain-max", "3"]) == 2
    err = capsys.readouterr().err
    assert "--retain-max (3)" in err and "snapshot.num-retained.min (10)" in err and "num_retained" not in err
    assert main(["-q", "-w", warehouse, "expire", "db.t", "--retain-min", "5", "--retain-max", "3"]) == 2
    assert "--retain-max (3) is below --retain-min (5)" in capsys.readouterr().err


def test_warehouse_that_is_a_file(tmp_path, capsys):
    path = tmp_path / "warehouse.txt"
    path.write_text("")
    assert main(["-w", str(path), "databases"]) == 2
    assert "is not a directory" in capsys.readouterr().err


def test_check_names_a_snapshot_the_table_cannot_hold(warehouse, capsys):
    code, ok = run_json(capsys, "-w", warehouse, "check", "db.t")
    assert code == 0 and ok["invalid_snapshots"] == [] and ok["note"].startswith("ok")
    snapshot = os.path.join(warehouse, "db.db", "t", "snapshot", "snapshot-1")
    doc = json.loads(open(snapshot).read())
    doc["schemaId"] = 7  # a schema the table does not have
    with open(snapshot, "w") as fh:
        json.dump(doc, fh)
    code, found = run_json(capsys, "-w", warehouse, "check", "db.t")
    assert code == 1
    assert [s["snapshot"] for s in found["invalid_snapshots"]] == [1] and "7" in found["invalid_snapshots"][0]["reason"]
    assert "cannot hold" in found["note"]
