"""A table declared in YAML, materialized on Spark with an ephemeral instance: landing files of
two days (an upsert and a delete on the second), a backfill of both days' ingestion and
compaction in one run, the nightly job's tags and expiration, and a re-run that commits nothing.
Also: ``dg list defs`` lists the project's declared tables."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import QUIET, range_tags
from test_table_component import EVENTS, load_project

from assets.common.tables import ensure_table
from assets.lifecycle.component import PaimonTableComponent
from resources import LakestoreResource, LandingResource, spark_resource

ROOT = Path(__file__).resolve().parents[2]
# events with a row kind column, so a landing file can update and delete
CHANGES = EVENTS.replace(
    "    - {name: dt, type: STRING, nullable: false}",
    "    - {name: dt, type: STRING, nullable: false}\n    - {name: op, type: STRING NOT NULL}",
).replace("    write-only: true", "    write-only: true\n    rowkind.field: op")


def land(root: Path, day: str, rows: list[dict], schema: pa.Schema) -> None:
    folder = root / "events" / f"dt={day}"
    folder.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), folder / "part-0.parquet")


@pytest.mark.spark
@pytest.mark.slow
def test_a_declared_table_runs_on_spark(tmp_path, monkeypatch):
    warehouse, landing_root = tmp_path / "warehouse", tmp_path / "landing"
    catalog = LakestoreResource(warehouse=str(warehouse))
    resources = {
        "catalog": catalog,
        "landing": LandingResource(root=str(landing_root)),
        "spark": spark_resource("local[2]", conf={"spark.driver.memory": "1g"}),
    }
    loaded = dg.Definitions.merge(
        load_project(tmp_path / "project", monkeypatch, {"events": CHANGES}),
        dg.Definitions(resources=resources, executor=dg.in_process_executor),
    )
    spec = PaimonTableComponent.resolve_from_yaml(CHANGES.split("attributes:\n", 1)[1]).spec()
    row = {"amount": None, "tags": ["web"], "device": {"os": "linux", "version": 6}}
    land(landing_root, "2024-02-01", [{**row, "event_id": i, "dt": "2024-02-01", "op": "+I"} for i in range(5)], spec.schema)
    land(
        landing_root,
        "2024-02-02",
        [
            {**row, "event_id": 9, "dt": "2024-02-02", "op": "+I"},
            {**row, "event_id": 1, "dt": "2024-02-01", "op": "+U", "tags": ["app"]},
            {**row, "event_id": 2, "dt": "2024-02-01", "op": "-D"},
        ],
        spec.schema,
    )
    instance = dg.DagsterInstance.ephemeral()
    daily = loaded.resolve_job_def("events_daily_job")
    run = daily.execute_in_process(instance=instance, tags=range_tags("2024-02-01", "2024-02-02"), run_config=QUIET)
    assert run.success
    assert all(e.passed for e in run.get_asset_check_evaluations()), [e for e in run.get_asset_check_evaluations() if not e.passed]
    nightly = loaded.resolve_job_def("events_nightly_job")
    assert nightly.execute_in_process(instance=instance, tags=range_tags("2024-02-01", "2024-02-02"), run_config=QUIET).success

    table = ensure_table(catalog.open(), spec)
    rows = {r["event_id"]: r for r in table.to_arrow().to_pylist()}
    assert sorted(rows) == [0, 1, 3, 4, 9] and rows[1]["tags"] == ["app"] and rows[9]["device"] == {"os": "linux", "version": 6}
    assert {t.name for t in table.manage.tags()} == {"2024-02-01", "2024-02-02"}
    assert table.latest_snapshot().commit_kind == "COMPACT"

    # re-running a day finds the landed commit instead of writing it again
    latest = table.latest_snapshot().id
    again = daily.execute_in_process(instance=instance, partition_key="2024-02-02", asset_selection=[dg.AssetKey(["events", "ingested"])])
    assert again.success and table.latest_snapshot().id == latest


@pytest.mark.skipif(shutil.which("dg", path=str(Path(sys.executable).parent)) is None, reason="dagster-dg-cli is not installed")
def test_dg_lists_the_declared_tables(tmp_path):
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    env = {**os.environ, "DAGSTER_HOME": str(home), "TMPDIR": str(tmp_path)}
    dg_cli = str(Path(sys.executable).parent / "dg")
    out = subprocess.run([dg_cli, "list", "defs", "--json"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    listed = json.loads(out.stdout)
    keys = {a["asset_key"] for a in listed["assets"]}
    assert {f"{t}/{s}" for t in ("orders", "lineitem") for s in ("ingested", "changelog", "compacted", "tagged", "expired")} <= keys
    assert {s["name"] for s in listed["schedules"]} == {"daily_ingestion_schedule", "nightly_maintenance_schedule"}
    assert {s["name"] for s in listed["sensors"]} == {"sorted_runs_sensor"}


@pytest.mark.skipif(shutil.which("dg", path=str(Path(sys.executable).parent)) is None, reason="dagster-dg-cli is not installed")
def test_dg_scaffolds_a_table_that_loads(tmp_path, monkeypatch):
    project = tmp_path / "project"
    package = "scaffolded_lakehouse"
    (project / package / "defs").mkdir(parents=True)
    (project / package / "__init__.py").write_text("")
    (project / package / "defs" / "__init__.py").write_text("")
    (project / "dg.toml").write_text(
        f'directory_type = "project"\n\n[project]\nroot_module = "{package}"\nregistry_modules = ["assets.lifecycle.component"]\n'
    )
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    env = {**os.environ, "DAGSTER_HOME": str(home), "TMPDIR": str(tmp_path), "PYTHONPATH": os.pathsep.join([str(project), str(ROOT)])}
    dg_cli = str(Path(sys.executable).parent / "dg")
    command = [dg_cli, "scaffold", "defs", "assets.lifecycle.component.PaimonTableComponent", "sales/orders"]
    out = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    monkeypatch.syspath_prepend(str(project))
    loaded = dg.load_from_defs_folder(path_within_project=project)
    assert {a.key.to_user_string() for a in loaded.assets or ()} >= {"orders/ingested", "orders/compacted", "orders/tagged"}
    assert {s.name for s in loaded.schedules or ()} == {"orders_daily_job_schedule", "orders_nightly_job_schedule"}
