"""Ingestion: Spark reads a day's landing files and ``lakestore.spark.write_dataframe`` commits
them, one commit per day with commit user ``ingest-<table>`` and the day number as identifier,
so re-running a day finds the landed commit instead of writing twice.

The landed commit is looked up among the retained snapshots, then in the day's tag (the tag
stage creates ``<day>`` on the ingestion commit): a day whose commit was expired since, by the
pipeline or by ``lakestore expire``, is still not ingested twice."""

import dagster as dg
import pyarrow.compute as pc
import pyarrow.parquet as pq
from dagster_pyspark import LazyPySparkResource

import lakestore
from assets.common.days import day_number
from assets.common.lsm import stop_trigger, table_shape
from assets.common.metadata import Stopwatch, commit_stats, materialization_metadata
from assets.common.partitions import single_run
from assets.common.tables import TableSpec, ensure_table
from assets.landing.tpch import load_tpch
from assets.lifecycle.keys import ingest_user, ingested_key
from assets.lifecycle.plan import DEFAULT_PLAN, LifecyclePlan
from resources import LakestoreResource, LandingResource

RECONCILE = "rows_reconcile_with_landing"
SORTED_RUNS = "sorted_runs_below_stop_trigger"


def find_ingestion(table: lakestore.Table, tags: dict[str, lakestore.Snapshot], user: str, day: str) -> lakestore.Snapshot | None:
    """The snapshot of ``day``'s landed ingestion commit: retained, or kept by the day's tag (the
    tag may be on a later snapshot when the commit had expired before tagging, or nothing landed)."""
    return table.store.find_commit(user, day_number(day)) or tags.get(day)


def committed_rows(snapshot: lakestore.Snapshot | None, user: str, day: str) -> int | None:
    """Rows the day's ingestion commit added (an APPEND: its delta record count); None when
    ``snapshot`` is not that commit (a tag on a later snapshot) and the count is gone."""
    if snapshot is None:
        return 0
    if snapshot.commit_user != user or snapshot.commit_identifier != day_number(day):
        return None
    return snapshot.delta_record_count


def build_ingestion_asset(spec: TableSpec, plan: LifecyclePlan = DEFAULT_PLAN) -> dg.AssetsDefinition:
    key = ingested_key(spec.name)

    @dg.asset(
        key=key,
        deps=[plan.upstream_key(spec)],
        partitions_def=plan.partitions_def,
        backfill_policy=single_run,
        group_name=spec.name,
        kinds={"spark", "lakestore"},
        description=f"Spark ingestion of the landing files into lakestore table {spec.identifier} (one idempotent commit per day).",
        check_specs=[
            dg.AssetCheckSpec(
                RECONCILE,
                asset=key,
                description=(
                    "Committed rows equal landed rows; live rows of dt=<day> lie between inserts minus all their deletes and inserts."
                    if plan.expected_rows == "tpch"
                    else "Committed rows equal landed rows."
                ),
            ),
            dg.AssetCheckSpec(
                SORTED_RUNS, asset=key, description="Every touched bucket has fewer sorted runs than num-sorted-run.stop-trigger."
            ),
        ],
    )
    def ingested(
        context: dg.AssetExecutionContext, spark: LazyPySparkResource, catalog: LakestoreResource, landing: LandingResource
    ) -> dg.MaterializeResult:
        from lakestore.spark import write_dataframe  # noqa: PLC0415 - imports pyspark

        watch = Stopwatch()
        table = ensure_table(catalog.open(), spec, catalog.lifecycle_options())
        days = list(context.partition_keys)
        user = ingest_user(spec.name)
        tags = {tag.name: tag.snapshot for tag in table.manage.tags()}
        session = None
        new_snapshots, per_day = [], {}
        for day in days:
            path = plan.day_dir(landing.resolved_root(), spec, day)
            files = sorted(path.glob("*.parquet"))
            if not files:
                raise dg.Failure(f"no landing files in {path}: materialize {plan.upstream_key(spec).to_user_string()} for {day} first")
            landed_rows = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
            ident = day_number(day)
            snapshot = find_ingestion(table, tags, user, day)
            if snapshot is not None:
                context.log.info(f"{spec.identifier} {day}: already ingested (snapshot {snapshot.id}); nothing to do")
            elif landed_rows:
                session = session or spark.spark_session
                df = session.read.parquet(str(path))
                snapshot = write_dataframe(df, table, commit_user=user, commit_identifier=ident)
                new_snapshots.append(snapshot)
                context.log.info(
                    f"{spec.identifier} {day}: {landed_rows} landed rows committed as snapshot {snapshot.id if snapshot else None}"
                )
            per_day[day] = (landed_rows, snapshot)

        stats = commit_stats(table, new_snapshots)
        reconcile = _reconcile(table, spec, plan, landing, per_day)
        touched = sorted(stats.touched_partitions | set(days))
        shapes = table_shape(table, partitions=touched, partition_key=spec.day_column)
        worst = max((s.sorted_runs for s in shapes), default=0)
        limit = stop_trigger(table)
        meta = materialization_metadata(
            table,
            stats,
            watch,
            shape_partitions=days,
            extra={
                "days": dg.MetadataValue.int(len(days)),
                "landed_rows": dg.MetadataValue.int(sum(r for r, _ in per_day.values())),
                "days_already_ingested": dg.MetadataValue.int(
                    sum(1 for d, (_, s) in per_day.items() if s is not None and s not in new_snapshots)
                ),
            },
        )
        return dg.MaterializeResult(
            metadata=meta,
            check_results=[
                reconcile,
                dg.AssetCheckResult(
                    check_name=SORTED_RUNS,
                    asset_key=key,
                    passed=worst < limit,
                    metadata={"max_sorted_runs": worst, "stop_trigger": limit, "buckets_checked": len(shapes)},
                ),
            ],
        )

    return ingested


def _reconcile(
    table: lakestore.Table, spec: TableSpec, plan: LifecyclePlan, landing: LandingResource, per_day: dict
) -> dg.AssetCheckResult:
    """Committed rows equal landed rows per day; with ``expected_rows: tpch`` the day's live rows
    also lie within dbgen's bounds."""
    data = load_tpch(landing.resolved_root(), landing.scale_factor) if plan.expected_rows == "tpch" else None
    day_column = spec.day_column
    live = table.to_arrow(columns=[day_column], filter=lakestore.col(day_column).isin(sorted(per_day)))
    counts = {r["values"]: r["counts"] for r in pc.value_counts(live.column(day_column)).to_pylist()} if live.num_rows else {}
    problems, rows = [], []
    user = ingest_user(spec.name)
    for day, (landed_rows, snapshot) in sorted(per_day.items()):
        committed = committed_rows(snapshot, user, day)
        n = counts.get(day, 0)
        if committed is not None and committed != landed_rows:
            problems.append(f"{day}: committed {committed} rows, landed {landed_rows}")
        expected = "-"
        if data is not None:  # dbgen knows every row a day partition can ever hold
            low, high = data.partition_bounds(spec.name, day)
            expected = f"{low}..{high}"
            if not low <= n <= high:
                problems.append(f"{day}: {n} live rows in {day_column}={day}, expected {expected}")
        rows.append(f"| {day} | {landed_rows} | {'expired' if committed is None else committed} | {n} | {expected} |")
    header = f"| day | landed | committed | live in {day_column}=day | expected live |"
    table_md = header + "\n|---|---|---|---|---|\n" + "\n".join(rows)
    return dg.AssetCheckResult(
        check_name=RECONCILE,
        asset_key=ingested_key(spec.name),
        passed=not problems,
        description="; ".join(problems) if problems else "committed rows match the landing files",
        metadata={"reconciliation": dg.MetadataValue.md(table_md)},
    )
