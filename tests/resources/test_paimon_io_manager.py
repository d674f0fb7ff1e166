"""PaimonIOManager, unpartitioned assets: every output type written and read back, tables created
from definition metadata, upserts, additive schema evolution and refused changes, the
materialization metadata."""

import dagster as dg
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import lakestore
from resources import LakestoreResource, PaimonIOManager
from resources.paimon import IncompatibleSchemaError, TableDefinitionError, UnsupportedOutputTypeError
from tests.resources.paimon_support import QUIET, output_metadata, run

pytestmark = pytest.mark.dagster

ROWS = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": ["a", "b", "c"]})

OUTPUTS = {
    "arrow": lambda: ROWS,
    "reader": lambda: pa.RecordBatchReader.from_batches(ROWS.schema, ROWS.to_batches(max_chunksize=2)),
    "pandas": lambda: ROWS.to_pandas(),
    "polars": lambda: pl.from_arrow(ROWS),
    "polars-lazy": lambda: pl.from_arrow(ROWS).lazy(),
}


def _sorted(table: pa.Table) -> pa.Table:
    return table.sort_by([(name, "ascending") for name in table.column_names])


@pytest.mark.parametrize("kind", list(OUTPUTS))
def test_each_output_type_is_written_and_rewritten(kind, io_manager, catalog):
    @dg.asset(key=["db", "people"])
    def people():
        return OUTPUTS[kind]()

    run([people], io_manager)
    run([people], io_manager)  # an unpartitioned asset replaces the whole table
    table = catalog.get_table("db.people")
    assert _sorted(table.to_arrow()).to_pylist() == ROWS.to_pylist()
    assert [s.commit_kind for s in table.snapshots()] == ["OVERWRITE", "OVERWRITE"]


INPUTS = {
    pa.Table: lambda v: v.to_pylist(),
    pa.RecordBatchReader: lambda v: v.read_all().to_pylist(),
    pd.DataFrame: lambda v: v.to_dict("records"),
    pl.DataFrame: lambda v: v.to_dicts(),
    pl.LazyFrame: lambda v: v.collect().to_dicts(),
}


@pytest.mark.parametrize("annotation", list(INPUTS), ids=lambda t: f"{t.__module__.split('.')[0]}.{t.__name__}")
def test_inputs_load_as_their_annotation_with_selected_columns(annotation, io_manager, monkeypatch):
    seen: list[dict] = []
    scan = lakestore.Table.scan

    def spy(self, **kwargs):
        seen.append(kwargs)
        return scan(self, **kwargs)

    monkeypatch.setattr(lakestore.Table, "scan", spy)
    captured = {}

    @dg.asset(key=["db", "people"])
    def people() -> pa.Table:
        return ROWS

    @dg.asset(key=["db", "names"], ins={"people": dg.AssetIn(key=["db", "people"], metadata={"columns": ["name"]})})
    def names(people: annotation) -> None:  # type: ignore[valid-type]
        captured["rows"] = INPUTS[annotation](people)

    run([people, names], io_manager)
    assert sorted(r["name"] for r in captured["rows"]) == ["a", "b", "c"]
    assert all(set(r) == {"name"} for r in captured["rows"])
    assert {"columns": ["name"]}.items() <= seen[-1].items()  # pushed into lakestore's scan


def test_one_part_key_goes_to_the_default_database(warehouse, catalog):
    @dg.asset
    def events() -> pa.Table:
        return ROWS

    run([events], PaimonIOManager(warehouse=warehouse, default_database="analytics"))
    assert catalog.get_table("analytics.events").to_arrow().num_rows == 3


def test_table_is_created_from_definition_metadata(io_manager, catalog):
    @dg.asset(
        key=["db", "orders"],
        metadata={
            "primary_keys": ["region", "id"],
            "partition_keys": ["region"],
            "table_options": {"bucket": 2, "snapshot.num-retained.max": "70"},
        },
    )
    def orders() -> pa.Table:
        return pa.table({"region": ["eu", "us"], "id": [1, 2], "v": [1.0, 2.0]})

    run([orders], io_manager)
    table = catalog.get_table("db.orders")
    assert table.primary_keys == ("region", "id") and table.partition_keys == ("region",)
    assert table.schema.options["bucket"] == "2" and table.schema.options["snapshot.num-retained.max"] == "70"
    assert table.to_arrow().num_rows == 2


def test_metadata_reports_the_commit_and_a_preview(io_manager, catalog):
    @dg.asset(key=["db", "people"])
    def people() -> pa.Table:
        return ROWS

    meta = output_metadata(run([people], io_manager), "db/people")
    snapshot = catalog.get_table("db.people").latest_snapshot()
    assert meta["snapshot_id"] == snapshot.id and meta["commit_kind"] == "OVERWRITE"
    assert meta["dagster/row_count"] == 3 and meta["rows_added"] == 3 and meta["files_added"] >= 1 and meta["bytes_added"] > 0
    assert meta["rows_removed"] == 0 and meta["dagster/table_name"] == "db.people"
    assert [c.name for c in meta["dagster/column_schema"].columns] == ["id", "name"]
    assert sorted(r.data["name"] for r in meta["preview"].records) == ["a", "b", "c"]
    # no links: nothing that is a path or URL
    for value in meta.values():
        assert not isinstance(value, str) or ("/" not in value and "://" not in value)
    again = output_metadata(run([people], io_manager), "db/people")
    assert again["rows_removed"] == 3 and again["files_removed"] >= 1 and again["snapshot_id"] == snapshot.id + 1


def test_upsert_mode_replaces_rows_by_key(io_manager, catalog):
    batches = iter(
        [pa.table({"id": [1, 2], "v": ["old", "old"]}), pa.table({"id": [2, 3], "v": ["new", "new"]})],
    )

    @dg.asset(key=["db", "kv"], metadata={"primary_keys": ["id"], "write_mode": "upsert"})
    def kv() -> pa.Table:
        return next(batches)

    run([kv], io_manager)
    meta = output_metadata(run([kv], io_manager), "db/kv")
    table = catalog.get_table("db.kv")
    assert _sorted(table.to_arrow()).to_pylist() == [{"id": 1, "v": "old"}, {"id": 2, "v": "new"}, {"id": 3, "v": "new"}]
    assert meta["commit_kind"] == "APPEND"


def test_upsert_needs_a_primary_key(io_manager):
    @dg.asset(key=["db", "plain"], metadata={"write_mode": "upsert"})
    def plain() -> pa.Table:
        return ROWS

    with pytest.raises(TableDefinitionError, match="no primary key"):
        run([plain], io_manager)


def test_additive_changes_evolve_the_schema(io_manager, catalog):
    versions = iter(
        [
            pa.table({"id": pa.array([1], pa.int32()), "name": ["a"]}),
            pa.table({"id": pa.array([2], pa.int64()), "name": ["b"], "score": [0.5]}),
        ]
    )

    @dg.asset(key=["db", "evolving"], metadata={"write_mode": "append"})
    def evolving() -> pa.Table:
        return next(versions)

    run([evolving], io_manager)
    run([evolving], io_manager)
    table = catalog.get_table("db.evolving")
    assert table.schema.id == 1
    assert table.arrow_schema.field("id").type == pa.int64() and table.arrow_schema.field("score").type == pa.float64()
    assert _sorted(table.to_arrow()).to_pylist() == [{"id": 1, "name": "a", "score": None}, {"id": 2, "name": "b", "score": 0.5}]


@pytest.mark.parametrize(
    ("second", "message"),
    [
        (pa.table({"id": pa.array([2], pa.int64())}), r"lacks columns \['name'\]"),
        (pa.table({"id": pa.array([2], pa.int64()), "name": [1.5]}), "'name' changes from STRING to DOUBLE"),
        (pa.table({"id": pa.array([2], pa.int16()), "name": ["b"], "extra": pa.array([1], pa.int8())}), None),  # fine: cast + add
    ],
    ids=["dropped-column", "unrelated-type", "narrower-output-is-cast"],
)
def test_incompatible_changes_are_refused_before_anything_is_written(second, message, io_manager, catalog):
    versions = iter([pa.table({"id": pa.array([1], pa.int32()), "name": ["a"]}), second])

    @dg.asset(key=["db", "strict"], metadata={"write_mode": "append"})
    def strict() -> pa.Table:
        return next(versions)

    run([strict], io_manager)
    if message is None:
        run([strict], io_manager)
        assert catalog.get_table("db.strict").to_arrow().num_rows == 2
        return
    with pytest.raises(IncompatibleSchemaError, match=message):
        run([strict], io_manager)
    table = catalog.get_table("db.strict")
    assert table.schema.id == 0 and len(table.snapshots()) == 1 and table.to_arrow().num_rows == 1


def test_metadata_contradicting_the_table_is_refused(io_manager, catalog):
    catalog.create_database("db")
    catalog.create_table("db.keyed", schema=ROWS.schema, primary_keys=["id"])

    @dg.asset(key=["db", "keyed"], metadata={"primary_keys": ["name"]})
    def keyed() -> pa.Table:
        return ROWS

    with pytest.raises(TableDefinitionError, match="primary keys"):
        run([keyed], io_manager)


def test_unsupported_output_type_is_refused(io_manager):
    @dg.asset(key=["db", "odd"])
    def odd():
        return {"id": [1]}

    with pytest.raises(UnsupportedOutputTypeError, match="cannot store a builtins.dict"):
        run([odd], io_manager)


def test_partial_update_upserts_may_omit_columns(io_manager, catalog):
    outputs = iter([pa.table({"id": [1, 2], "name": ["a", "b"], "score": [1.0, 2.0]}), pa.table({"id": [2], "score": [9.0]})])

    @dg.asset(
        key=["db", "profiles"],
        metadata={"primary_keys": ["id"], "write_mode": "upsert", "table_options": {"merge-engine": "partial-update", "bucket": "1"}},
    )
    def profiles() -> pa.Table:
        return next(outputs)

    run([profiles], io_manager)
    run([profiles], io_manager)
    rows = _sorted(catalog.get_table("db.profiles").to_arrow()).to_pylist()
    assert rows == [{"id": 1, "name": "a", "score": 1.0}, {"id": 2, "name": "b", "score": 9.0}]


def test_definitions_load_with_settings_from_the_environment(warehouse, monkeypatch, catalog):
    @dg.asset(key=["db", "configured"])
    def configured() -> pa.Table:
        return ROWS

    settings = {"warehouse": dg.EnvVar("OWN_TABLES_WAREHOUSE")}
    defs = dg.Definitions(
        assets=[configured], resources={"io_manager": PaimonIOManager(**settings), "catalog": LakestoreResource(**settings)}
    )
    dg.Definitions.validate_loadable(defs)
    monkeypatch.setenv("OWN_TABLES_WAREHOUSE", warehouse)
    result = defs.resolve_implicit_global_asset_job_def().execute_in_process(run_config=QUIET)
    assert result.success and catalog.get_table("db.configured").to_arrow().num_rows == 3
