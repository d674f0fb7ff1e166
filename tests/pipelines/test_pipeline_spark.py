"""Level 3: the whole graph on a real local SparkSession and an ephemeral Dagster instance: a
3-day backfill of ingestion in one run, maintenance, a single real partition, an idempotent
re-run; table contents checked against the landing data model."""

from __future__ import annotations

import re
from pathlib import Path

import dagster as dg
import numpy as np
import pyarrow as pa
import pytest
from conftest import QUIET, make_pipeline, range_tags

from assets.common.days import day_number
from assets.common.lsm import table_shape
from assets.common.tables import DAILY_NATION_REVENUE, ORDER_STATUS
from assets.landing.tpch import load_tpch
from lakestore.cli import main as lakestore_cli
from tests.oracle.driver import oracle_available, oracle_read

pytestmark = [pytest.mark.dagster, pytest.mark.spark, pytest.mark.slow]

FIRST, LAST, NEXT = "1992-01-01", "1992-01-03", "1992-01-04"
PARTITIONED = [
    ["landing", "orders"],
    ["landing", "lineitem"],
    *[[t, stage] for t in ("orders", "lineitem") for stage in ("ingested", "changelog", "compacted")],
]


def expected_orders(data, last_day: str) -> dict[int, tuple[str, object]]:
    """{orderkey: (status, price)} live after ingesting every day from the first up to ``last_day``."""
    last = day_number(last_day)
    fate = data.fates["orders"]
    live = (fate.order_day >= day_number(FIRST)) & (fate.order_day <= last) & ~((fate.delete_day != -1) & (fate.delete_day <= last))
    updated = (fate.update_day != -1) & (fate.update_day <= last)
    orders = data.tables["orders"]
    status = np.where(updated, "F", np.asarray(orders.column("o_orderstatus").to_pylist(), dtype=object))
    prices = orders.column("o_totalprice").to_pylist()
    new_prices = data.new_price.to_pylist()
    keys = orders.column("o_orderkey").to_pylist()
    return {keys[i]: (status[i], new_prices[i] if updated[i] else prices[i]) for i in np.flatnonzero(live)}


def table_orders(pipeline) -> dict[int, tuple[str, object]]:
    rows = pipeline.catalog.open().get_table("tpch.orders").to_arrow(columns=["o_orderkey", "o_orderstatus", "o_totalprice"])
    return {r["o_orderkey"]: (r["o_orderstatus"], r["o_totalprice"]) for r in rows.to_pylist()}


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """dimensions, then a 3-day backfill of the ingestion job in ONE run, then maintenance."""
    pipeline = make_pipeline(tmp_path_factory.mktemp("pipeline"))
    results = {}
    results["dimensions"] = pipeline.job("dimensions_job").execute_in_process(instance=pipeline.instance, run_config=QUIET)
    results["backfill"] = pipeline.job("daily_ingestion_job").execute_in_process(
        instance=pipeline.instance, tags=range_tags(FIRST, LAST), run_config=QUIET
    )
    results["maintenance"] = pipeline.job("maintenance_job").execute_in_process(
        instance=pipeline.instance, tags=range_tags(FIRST, LAST), run_config=QUIET
    )
    return pipeline, results


def test_three_day_backfill_succeeds_in_one_run(ran):
    pipeline, results = ran
    assert all(r.success for r in results.values())
    runs = pipeline.instance.get_runs(filters=dg.RunsFilter(job_name="daily_ingestion_job"))
    assert len(runs) == 1
    for key in PARTITIONED:
        assert pipeline.instance.get_materialized_partitions(dg.AssetKey(key)) == {FIRST, "1992-01-02", LAST}, key
    # one ingestion commit per day, identified by the day number
    orders = pipeline.catalog.open().get_table("tpch.orders")
    idents = sorted(s.commit_identifier for s in orders.snapshots() if s.commit_user == "ingest-orders")
    assert idents == [day_number(FIRST), day_number(FIRST) + 1, day_number(LAST)]


def test_every_check_passed(ran):
    _, results = ran
    evaluations = [e for r in results.values() for e in r.get_asset_check_evaluations()]
    names = {(e.asset_key.to_user_string(), e.check_name) for e in evaluations}
    assert {
        ("orders/ingested", "rows_reconcile_with_landing"),
        ("lineitem/ingested", "sorted_runs_below_stop_trigger"),
        ("orders/compacted", "newest_snapshot_readable"),
        ("lineitem/expired", "retention_respected"),
        ("orders/changelog", "changelog_rows_match_files"),
        ("lineitem/changelog", "changelog_rows_match_files"),
    } <= names
    assert [(e.asset_key.to_user_string(), e.check_name) for e in evaluations if not e.passed] == []


def test_tables_hold_the_landed_changes(ran):
    pipeline, _ = ran
    data = load_tpch(pipeline.landing.resolved_root(), pipeline.landing.scale_factor)
    assert table_orders(pipeline) == expected_orders(data, LAST)
    lake = pipeline.catalog.open()
    # compaction left one sorted run per bucket in the compacted days
    assert {s.sorted_runs for s in table_shape(lake.get_table("tpch.orders"), partitions=[FIRST, "1992-01-02", LAST])} == {1}
    assert lake.get_table("tpch.customer").to_arrow().num_rows == data.tables["customer"].num_rows


def test_materialization_metadata(ran):
    pipeline, _ = ran
    event = pipeline.instance.get_latest_materialization_event(dg.AssetKey(["orders", "ingested"]))
    meta = event.asset_materialization.metadata
    assert meta["snapshot_kind"].value == "APPEND, APPEND, APPEND"
    assert meta["rows_added"].value == sum(
        load_tpch(pipeline.landing.resolved_root(), 0.01).landing_rows("orders", d).num_rows for d in (FIRST, "1992-01-02", LAST)
    )
    assert meta["files_added"].value >= 3 and meta["bytes_added"].value > 0
    assert "| partition | bucket | level | files | rows |" in meta["lsm_shape"].value
    assert meta["duration_s"].value > 0


def test_changelog_stage(ran):
    pipeline, _ = ran
    data = load_tpch(pipeline.landing.resolved_root(), 0.01)
    days = (FIRST, "1992-01-02", LAST)
    orders = pipeline.instance.get_latest_materialization_event(dg.AssetKey(["orders", "changelog"])).asset_materialization.metadata
    assert orders["changelog_producer"].value == "lookup"
    assert orders["changelog_files"].value >= 3 and orders["changelog_bytes"].value > 0
    # lookup changelog: every landed insert is a +I, every update a -U/+U pair, a delete a -D
    landed = [data.landing_rows("orders", d) for d in days]
    ops = [op for rows in landed for op in rows.column("_op").to_pylist()]
    assert orders["rows_+I"].value + orders["rows_+U"].value + orders["rows_-D"].value > 0
    assert orders["rows_-U"].value == orders["rows_+U"].value
    assert orders["rows_+I"].value + orders["rows_+U"].value <= len(ops)
    lineitem = pipeline.instance.get_latest_materialization_event(dg.AssetKey(["lineitem", "changelog"])).asset_materialization.metadata
    assert lineitem["changelog_producer"].value == "none"
    assert lineitem["rows_+I"].value + lineitem["rows_-D"].value == sum(data.landing_rows("lineitem", d).num_rows for d in days)
    assert "| day | snapshot | +I | -U | +U | -D | files | bytes |" in orders["days"].value


def test_daily_tags_and_retention(ran):
    pipeline, _ = ran
    lake = pipeline.catalog.open()
    for name in ("orders", "lineitem"):
        table = lake.get_table(f"tpch.{name}")
        tags = {t.name: t.snapshot_id for t in table.manage.tags()}
        assert sorted(tags) == [FIRST, "1992-01-02", LAST]
        day1 = table.to_arrow(tag=FIRST)
        assert set(day1.column("dt").to_pylist()) == {FIRST}


def test_marts(ran):
    pipeline, _ = ran
    revenue = dg.AssetKey(["marts", "daily_nation_revenue"])
    assert pipeline.instance.get_materialized_partitions(revenue) == {FIRST, "1992-01-02", LAST}
    lake = pipeline.catalog.open()
    mart = lake.get_table("tpch.mart_daily_nation_revenue").to_arrow()
    orders = lake.get_table("tpch.orders").to_arrow(columns=["dt", "o_totalprice"])
    by_day = lambda t, c: {r["dt"]: r[f"{c}_sum"] for r in t.group_by("dt").aggregate([(c, "sum")]).to_pylist()}  # noqa: E731
    assert by_day(mart, "revenue") == by_day(orders, "o_totalprice")
    # fed by the orders changelog through consumers: positions past the last ingestion commit, and
    # each mart commit identified by the last orders snapshot it applied
    orders_table = lake.get_table("tpch.orders")
    assert orders_table.options.changelog_producer == "lookup"
    last_ingest = max(s.id for s in orders_table.snapshots() if s.commit_user == "ingest-orders")
    positions = orders_table.manage.consumers()
    assert positions["mart-revenue"] > last_ingest and positions["status-from-orders"] > last_ingest
    assert lake.get_table("tpch.lineitem").manage.consumers()["status-from-lineitem"] > 1
    revenue_commits = [s for s in lake.get_table("tpch.mart_daily_nation_revenue").snapshots() if s.commit_user == "mart-revenue"]
    assert revenue_commits and all(s.commit_identifier < positions["mart-revenue"] for s in revenue_commits)
    status = lake.get_table("tpch.mart_order_status").to_arrow()
    live = table_orders(pipeline)
    for r in status.to_pylist():
        assert r["o_orderstatus"] == (live[r["o_orderkey"]][0] if r["o_orderkey"] in live else "X")
        assert r["line_count"] is not None


ICEBERG_TABLES = ("orders", "lineitem", "customer", "nation", DAILY_NATION_REVENUE.name, ORDER_STATUS.name)


def _by_key(table: pa.Table, columns: list[str], keys: tuple[str, ...]) -> list[dict]:
    return table.select(columns).sort_by([(k, "ascending") for k in keys]).to_pylist()


@pytest.mark.oracle
def test_iceberg_readers_and_paimon_java_agree_on_the_pipelines_tables(ran):
    """After the backfill and maintenance every table of the pipeline has Iceberg metadata:
    pyiceberg, DuckDB (iceberg_scan) and Polars (scan_iceberg) read exactly the last-level files
    of the snapshot the metadata names, row for row what lakestore reads at that snapshot (the
    compaction stage left only such files), and Paimon 2.0 Java reads the same rows."""
    from pyiceberg.table import StaticTable

    from tests.iceberg.readers import all_readers, duckdb_connection, latest_metadata, metadata_json
    from tests.oracle.java_driver import java_oracle

    pipeline, _ = ran
    lake = pipeline.catalog.open()
    con = duckdb_connection()
    java = java_oracle()  # the session's one JVM
    try:
        for name in ICEBERG_TABLES:
            table = lake.get_table(f"tpch.{name}")
            metadata = latest_metadata(Path(table.path) / "metadata")
            snapshot_id = metadata_json(metadata)["current-snapshot-id"]
            assert snapshot_id == table.latest_snapshot().id, name
            # Iceberg publishes a primary-key table's last level only: here that is every live file
            files = [f for split in table.scan(snapshot_id=snapshot_id).plan() for f in split.files]
            assert files and {f.level for f in files} == {table.options.num_levels - 1}, name
            iceberg_files = {Path(t.file.file_path).name for t in StaticTable.from_metadata(metadata).scan().plan_files()}
            assert iceberg_files == {f.file_name for f in files}, name
            expected = table.to_arrow(snapshot_id=snapshot_id)
            columns, keys = expected.schema.names, tuple(table.primary_keys)
            want = _by_key(expected, columns, keys)
            assert len(want) > 0, name
            for reader, got in all_readers(con, metadata).items():
                assert got.schema.names == columns, (name, reader)
                assert _by_key(got, columns, keys) == want, (name, reader)
            theirs = java.read(pipeline.catalog.warehouse, f"tpch.{name}")
            assert _by_key(theirs, columns, keys) == _by_key(table.to_arrow(), columns, keys), (name, "paimon-java")
    finally:
        con.close()
    # the README's example reads this pipeline's orders with DuckDB and Polars
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text().split("\n## The Dagster pipeline", 1)[1].split("\n## ", 1)[0]
    (snippet,) = re.findall(r"```python\n(.*?)```", readme, flags=re.S)
    namespace: dict = {}
    exec(snippet.replace('Catalog("warehouse")', f"Catalog({pipeline.catalog.warehouse!r})"), namespace)  # noqa: S102 - the README's own code
    totals = lake.get_table("tpch.orders").to_arrow(columns=["dt", "o_totalprice"]).group_by("dt").aggregate([("o_totalprice", "sum")])
    assert (
        namespace["revenue"].to_arrow().sort_by("dt").column("o_totalprice").to_pylist()
        == totals.sort_by("dt").column("o_totalprice_sum").to_pylist()
    )
    assert sorted(namespace["per_day"]["dt"].to_list()) == [FIRST, "1992-01-02", LAST]


def test_next_real_partition_and_idempotent_rerun(ran):
    pipeline, _ = ran
    job = pipeline.job("daily_ingestion_job")
    result = job.execute_in_process(instance=pipeline.instance, partition_key=NEXT, run_config=QUIET)
    assert result.success and all(e.passed for e in result.get_asset_check_evaluations())
    data = load_tpch(pipeline.landing.resolved_root(), pipeline.landing.scale_factor)
    assert table_orders(pipeline) == expected_orders(data, NEXT)

    orders = pipeline.catalog.open().get_table("tpch.orders")
    before = [s.id for s in orders.snapshots() if s.commit_user == "ingest-orders"]
    again = job.execute_in_process(instance=pipeline.instance, partition_key=NEXT, run_config=QUIET)
    assert again.success and all(e.passed for e in again.get_asset_check_evaluations())
    assert [s.id for s in orders.snapshots() if s.commit_user == "ingest-orders"] == before
    assert table_orders(pipeline) == expected_orders(data, NEXT)


def test_rerun_after_manual_expiration(ran):
    """``lakestore expire`` between two runs removes the ingestion commits; re-running the days
    finds them through the daily tags instead of ingesting again, and every check passes."""
    pipeline, _ = ran
    data = load_tpch(pipeline.landing.resolved_root(), pipeline.landing.scale_factor)
    before = table_orders(pipeline)
    for name in ("orders", "lineitem"):
        argv = ["-q", "-w", pipeline.catalog.warehouse, "expire", f"tpch.{name}", "--retain-min", "1", "--older-than", "0 ms"]
        assert lakestore_cli(argv) == 0
    orders = pipeline.catalog.open().get_table("tpch.orders")
    assert orders.find_commit("ingest-orders", day_number(FIRST)) is None  # expired: only the tag remembers it
    ingests = [s.id for s in orders.snapshots() if s.commit_user == "ingest-orders"]
    for job in ("daily_ingestion_job", "maintenance_job"):
        result = pipeline.job(job).execute_in_process(instance=pipeline.instance, tags=range_tags(FIRST, LAST), run_config=QUIET)
        assert result.success, job
        assert [(e.asset_key.to_user_string(), e.check_name) for e in result.get_asset_check_evaluations() if not e.passed] == []
    assert [s.id for s in orders.snapshots() if s.commit_user == "ingest-orders"] == ingests
    assert table_orders(pipeline) == before == expected_orders(data, NEXT)


@pytest.mark.oracle
def test_pypaimon_reads_the_pipelines_tables(ran):
    """The format oracle reads what the pipeline wrote (Spark-written, compacted, tagged and
    expired main tables with changelog files and consumers; the merge-engine marts) and sees the
    same live rows as lakestore."""
    if not oracle_available():
        pytest.skip("the pypaimon oracle venv (.venv-oracle) is not installed")
    pipeline, _ = ran
    lake = pipeline.catalog.open()
    names = ["orders", "lineitem", *(spec.name for spec in (DAILY_NATION_REVENUE, ORDER_STATUS) if lake.table_exists(spec.identifier))]
    for name in names:
        table = lake.get_table(f"tpch.{name}")
        ours = table.to_arrow()
        theirs = oracle_read(table.path)
        order = [(k, "ascending") for k in table.primary_keys]
        assert ours.num_rows > 0, name
        assert theirs.select(ours.column_names).cast(ours.schema).sort_by(order).equals(ours.sort_by(order)), name
