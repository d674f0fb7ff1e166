"""The YAML table component (``assets.lifecycle.component.PaimonTableComponent``): a new table
declared in a temporary defs folder loads with its lifecycle assets, checks, job, schedule and
sensor coverage; bad declarations fail at load time with a clear message; the TPC-H tables,
declared the same way, give the definitions captured before they moved to YAML."""

from __future__ import annotations

import datetime as dt
import json
import textwrap
import uuid
from pathlib import Path

import dagster as dg
import pyarrow as pa
import pytest

from assets.common.declared import Column, TableDeclaration, column_field
from assets.common.tables import LINEITEM_SCHEMA, ORDERS_SCHEMA, ensure_table
from assets.lifecycle.component import PaimonTableComponent
from pipelines.definitions import defs
from resources import LakestoreResource, LandingResource, spark_resource

pytestmark = pytest.mark.dagster

CAPTURED = Path(__file__).with_name("tpch_definitions.json")

EVENTS = """
type: assets.lifecycle.component.PaimonTableComponent
attributes:
  name: events
  database: shop
  columns:
    - {name: event_id, type: BIGINT NOT NULL}
    - {name: amount, type: "DECIMAL(15, 2)"}
    - {name: tags, type: "ARRAY<STRING>"}
    - {name: device, type: "ROW<os STRING, version INT>"}
    - {name: dt, type: STRING, nullable: false}
  primary_keys: [dt, event_id]
  partition_keys: [dt]
  options:
    bucket: 1
    write-only: true
  partitions: {start: "2024-01-01"}
  stages: [ingest, changelog, compact, tag, expire]
  schedules:
    - {job: events_daily_job, stages: [ingest, changelog, compact], cron: "15 1 * * *"}
    - {job: events_nightly_job, name: events_nightly, stages: [tag, expire], cron: "0 4 * * *"}
  sorted_runs_sensor: true
"""

CLICKS = """
type: assets.lifecycle.component.PaimonTableComponent
attributes:
  name: clicks
  database: shop
  columns:
    - {name: click_id, type: BIGINT NOT NULL}
    - {name: dt, type: STRING NOT NULL}
  partition_keys: [dt]
  landing: {folder: raw_clicks, asset: raw/clicks}
  partitions: {start: "2024-01-01"}
  stages: [ingest, compact]
  schedules:
    - {job: events_daily_job, stages: [ingest, compact], cron: "15 1 * * *"}
  sorted_runs_sensor: true
"""


def load_project(root: Path, monkeypatch: pytest.MonkeyPatch, tables: dict[str, str]) -> dg.Definitions:
    """A project of its own under ``root`` (dg.toml, a package with a defs folder holding one
    folder per table), loaded as Dagster loads a components project."""
    package = f"proj_{uuid.uuid4().hex[:8]}"
    root.mkdir(parents=True, exist_ok=True)
    (root / "dg.toml").write_text(f'directory_type = "project"\n\n[project]\nroot_module = "{package}"\n')
    (root / package / "defs").mkdir(parents=True)
    (root / package / "__init__.py").write_text("")
    (root / package / "defs" / "__init__.py").write_text("")
    for name, text in tables.items():
        (root / package / "defs" / name).mkdir()
        (root / package / "defs" / name / "defs.yaml").write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(root))
    return dg.load_from_defs_folder(path_within_project=root)


def with_catalog(table_defs: dg.Definitions, warehouse: Path) -> dg.Definitions:
    """The definitions with the resources the lifecycle assets need (Spark is not started)."""
    resources = {
        "catalog": LakestoreResource(warehouse=str(warehouse)),
        "landing": LandingResource(root=str(warehouse / "landing")),
        "spark": spark_resource("local[1]"),
    }
    return dg.Definitions.merge(table_defs, dg.Definitions(resources=resources))


def test_a_declared_table_loads_with_its_lifecycle(tmp_path, monkeypatch):
    loaded = with_catalog(load_project(tmp_path, monkeypatch, {"events": EVENTS}), tmp_path / "warehouse")
    dg.Definitions.validate_loadable(loaded)
    repo = loaded.get_repository_def()
    graph = repo.asset_graph
    keys = {k.to_user_string() for k in graph.get_all_asset_keys()}
    assert keys == {"landing/events", "events/ingested", "events/changelog", "events/compacted", "events/tagged", "events/expired"}
    assert not graph.get(dg.AssetKey(["landing", "events"])).is_executable  # files arrive from outside
    assert graph.get(dg.AssetKey(["events", "ingested"])).parent_keys == {dg.AssetKey(["landing", "events"])}
    assert graph.get(dg.AssetKey(["events", "tagged"])).parent_keys == {dg.AssetKey(["events", "compacted"])}
    checks = {(c.asset_key.to_user_string(), c.name) for c in graph.asset_check_keys}
    assert checks == {
        ("events/ingested", "rows_reconcile_with_landing"),
        ("events/ingested", "sorted_runs_below_stop_trigger"),
        ("events/changelog", "changelog_rows_match_files"),
        ("events/compacted", "compaction_preserves_rows"),
        ("events/compacted", "newest_snapshot_readable"),
        ("events/expired", "retention_respected"),
    }
    partitions = graph.get(dg.AssetKey(["events", "ingested"])).partitions_def
    assert isinstance(partitions, dg.DailyPartitionsDefinition) and partitions.start.date() == dt.date(2024, 1, 1)

    def selected(job: str) -> set[str]:
        return {k.to_user_string() for k in repo.get_job(job).asset_layer.selected_asset_keys}

    assert selected("events_daily_job") == {"events/ingested", "events/changelog", "events/compacted"}
    assert selected("events_nightly_job") == {"events/tagged", "events/expired"}
    assert selected("compaction_job") == {"events/compacted"}
    schedules = {s.name: (s.cron_schedule, s.job_name) for s in repo.schedule_defs}
    assert schedules == {
        "events_daily_job_schedule": ("15 1 * * *", "events_daily_job"),
        "events_nightly": ("0 4 * * *", "events_nightly_job"),
    }
    assert [(s.name, s.job_name) for s in repo.sensor_defs] == [("sorted_runs_sensor", "compaction_job")]

    schedule = repo.get_schedule_def("events_daily_job_schedule")
    tick = schedule.evaluate_tick(
        dg.build_schedule_context(scheduled_execution_time=dt.datetime(2024, 3, 2, 1, 15, tzinfo=dt.UTC), repository_def=repo)
    )
    assert [(r.partition_key, r.run_key) for r in tick.run_requests] == [("2024-03-01", "events_daily_job-2024-03-01")]
    tick = schedule.evaluate_tick(
        dg.build_schedule_context(scheduled_execution_time=dt.datetime(2024, 1, 1, 1, 15, tzinfo=dt.UTC), repository_def=repo)
    )
    assert not tick.run_requests and "2023-12-31 is outside the partition range" in (tick.skip_message or "")


def test_the_sensor_watches_a_declared_table(tmp_path, monkeypatch):
    warehouse = tmp_path / "warehouse"
    loaded = with_catalog(load_project(tmp_path, monkeypatch, {"events": EVENTS}), warehouse)
    catalog = LakestoreResource(warehouse=str(warehouse))
    spec = PaimonTableComponent.resolve_from_yaml(textwrap.dedent(EVENTS).split("attributes:\n", 1)[1]).spec()
    table = ensure_table(catalog.open(), spec, catalog.lifecycle_options())
    assert table.identifier == "shop.events"
    rows = pa.table(
        {
            "event_id": [1, 2],
            "amount": [None, None],
            "tags": [["a"], []],
            "device": [None, {"os": "x", "version": 1}],
            "dt": ["2024-02-01"] * 2,
        }
    ).cast(spec.schema)
    for _ in range(table.options.compaction_trigger):
        table.write_arrow(rows, commit_user="test")
    sensor = loaded.get_repository_def().get_sensor_def("sorted_runs_sensor")
    with dg.instance_for_test() as instance:
        result = sensor(dg.build_sensor_context(instance=instance, resources={"catalog": catalog}, definitions=loaded))
    assert [(r.partition_key, tuple(r.asset_selection)) for r in result.run_requests] == [
        ("2024-02-01", (dg.AssetKey(["events", "compacted"]),))
    ]
    assert json.loads(result.cursor) == {"events": table.latest_snapshot().id}


def test_tables_naming_one_job_share_it(tmp_path, monkeypatch):
    loaded = load_project(tmp_path, monkeypatch, {"events": EVENTS, "clicks": CLICKS})
    repo = with_catalog(loaded, tmp_path / "warehouse").get_repository_def()
    keys = {k.to_user_string() for k in repo.get_job("events_daily_job").asset_layer.selected_asset_keys}
    assert keys == {"events/ingested", "events/changelog", "events/compacted", "clicks/ingested", "clicks/compacted"}
    compaction = {k.to_user_string() for k in repo.get_job("compaction_job").asset_layer.selected_asset_keys}
    assert compaction == {"events/compacted", "clicks/compacted"}
    assert sorted(s.name for s in repo.schedule_defs) == ["events_daily_job_schedule", "events_nightly"]
    assert [s.name for s in repo.sensor_defs] == ["sorted_runs_sensor"]
    # clicks: no changelog stage, its landing asset and folder as declared
    assert repo.asset_graph.get(dg.AssetKey(["clicks", "ingested"])).parent_keys == {dg.AssetKey(["raw", "clicks"])}


def test_one_component_builds_alone():
    component = PaimonTableComponent.resolve_from_yaml(textwrap.dedent(EVENTS).split("attributes:\n", 1)[1])
    built = dg.build_defs_for_component(component)
    assert {s.name for s in built.schedules or ()} == {"events_daily_job_schedule", "events_nightly"}
    assert [s.name for s in built.sensors or ()] == ["sorted_runs_sensor"]


BAD = [
    ("stages: [ingest, changelog, compact, tag, expire]", "stages: [ingest, compact, archive]", "archive"),
    (
        "    write-only: true",
        "    write-only: true\n    snapshot.bogus-option: 3",
        "'snapshot.bogus-option' is an option lakestore does not know",
    ),
    ("    bucket: 1", "    bucket: many", "'bucket' = 'many' is not supported"),
    ('  partitions: {start: "2024-01-01"}\n', "", "partitions"),
    ("  primary_keys: [dt, event_id]", "  primary_keys: [dt, event_key]", "primary key column(s) ['event_key'] not in the schema"),
    ("stages: [ingest, changelog, compact, tag, expire]", "stages: [ingest, changelog, tag, expire]", "stage 'tag' needs stage 'compact'"),
    ('type: "DECIMAL(15, 2)"', 'type: "DECIMAL(99, 2)"', "invalid decimal"),
    ('type: "ARRAY<STRING>"', 'type: "ARRAY<STRING"', "expected '>'"),
    ("stages: [tag, expire], cron", "stages: [], cron", "schedule of job 'events_nightly_job' runs stages []"),
    ("  sorted_runs_sensor: true", "  sorted_runs_sensor: true\n  retention_days: 3", "retention_days"),
    ("{name: dt, type: STRING, nullable: false}", "{name: dt, type: DATE, nullable: false}", "holds the day as YYYY-MM-DD: type STRING"),
]


@pytest.mark.parametrize(("old", "new", "message"), BAD, ids=[b[2][:30] for b in BAD])
def test_a_bad_declaration_fails_at_load(tmp_path, monkeypatch, old, new, message):
    assert old in EVENTS
    with pytest.raises(Exception) as info:  # Dagster wraps the validation error with the component's path
        load_project(tmp_path, monkeypatch, {"events": EVENTS.replace(old, new)})
    text = "".join(str(e) for e in _chain(info.value))
    assert message in text, text
    assert "events" in text


def _chain(exc: BaseException | None):
    while exc is not None:
        yield exc
        exc = exc.__cause__ or exc.__context__


def test_two_tables_disagreeing_on_a_shared_job_fail(tmp_path, monkeypatch):
    clicks = CLICKS.replace('cron: "15 1 * * *"', 'cron: "30 1 * * *"')
    with pytest.raises(Exception) as info:
        load_project(tmp_path, monkeypatch, {"events": EVENTS, "clicks": clicks})
    text = "".join(str(e) for e in _chain(info.value))
    assert "tables clicks and events declare job 'events_daily_job' with different cron" in text


def test_columns_spell_the_tpch_schemas():
    """The column-list form gives the same Arrow schema as the Python one (ROW, DECIMAL, NOT NULL)."""
    for schema in (ORDERS_SCHEMA, LINEITEM_SCHEMA):
        columns = [Column(name=f.name, type=_paimon_text(f.type), nullable=f.nullable) for f in schema]
        assert pa.schema([column_field(c) for c in columns]) == schema


def _paimon_text(arrow: pa.DataType) -> str:
    if pa.types.is_struct(arrow):
        return "ROW<" + ", ".join(f"{f.name} {_paimon_text(f.type)}" for f in arrow) + ">"
    texts = {pa.int64(): "BIGINT", pa.int32(): "INT", pa.string(): "STRING", pa.date32(): "DATE"}
    return texts.get(arrow) or f"DECIMAL({arrow.precision}, {arrow.scale})"


def test_declarations_refuse_two_schemas():
    with pytest.raises(ValueError, match="exactly one of columns"):
        TableDeclaration(
            name="t", columns=[Column(name="dt", type="STRING")], schema_from="assets.common.tables:ORDERS_SCHEMA",
            partition_keys=["dt"], partitions={"start": "2024-01-01"},
        )  # fmt: skip


def snapshot(definitions: dg.Definitions) -> dict:
    """Asset keys (group, deps, kinds, checks), jobs (selected assets), schedules and sensors."""
    repo = definitions.get_repository_def()
    graph = repo.asset_graph
    assets = {}
    for key in graph.get_all_asset_keys():
        node = graph.get(key)
        assets[key.to_user_string()] = {
            "group": node.group_name,
            "deps": sorted(k.to_user_string() for k in node.parent_keys),
            "kinds": sorted(node.kinds),
            "partitioned": node.partitions_def is not None,
            "executable": node.is_executable,
            "checks": sorted(c.name for c in node.check_keys),
        }
    jobs = {
        job.name: {"assets": sorted(k.to_user_string() for k in job.asset_layer.selected_asset_keys), "description": job.description}
        for job in repo.get_all_jobs()
        if not job.name.startswith("__")
    }
    schedules = {
        s.name: {"cron": s.cron_schedule, "job": s.job_name, "timezone": s.execution_timezone, "status": str(s.default_status)}
        for s in repo.schedule_defs
    }
    sensors = {
        s.name: {"job": s.job_name, "interval": s.minimum_interval_seconds, "status": str(s.default_status)} for s in repo.sensor_defs
    }
    return {"assets": assets, "jobs": jobs, "schedules": schedules, "sensors": sensors}


def test_tpch_definitions_are_unchanged():
    """The pipeline's definitions equal those captured when orders and lineitem were Python
    factories (tpch_definitions.json), their table specs too."""
    from assets.common.tables import MAIN_TABLES  # noqa: PLC0415 - read from the YAML declarations

    captured = json.loads(CAPTURED.read_text())
    assert snapshot(defs) == {k: captured[k] for k in ("assets", "jobs", "schedules", "sensors")}
    specs = {
        s.name: {
            "identifier": s.identifier,
            "schema": str(s.schema),
            "primary_keys": list(s.primary_keys),
            "partition_keys": list(s.partition_keys),
            "options": dict(s.options),
            "lifecycle": s.lifecycle,
        }
        for s in MAIN_TABLES
    }
    assert specs == captured["specs"]
