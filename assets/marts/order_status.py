"""Order status in a partial-update table fed by two sources: the orders changes of a day set
status and price (status 'X' once an order is deleted), the lineitem changes set the live line
count and last ship date. Each source writes only its columns; the merge engine combines them."""

import dagster as dg
import pyarrow as pa
import pyarrow.compute as pc

import lakestore as ls
from assets.common.days import day_number
from assets.common.metadata import Stopwatch, commit_stats, materialization_metadata
from assets.common.tables import LINEITEM, ORDER_STATUS, ORDER_STATUS_SCHEMA, ORDERS, ensure_optional_table, ensure_table
from assets.lifecycle.keys import ingested_key
from assets.marts.changes import day_change
from pipelines.partitions import daily_partitions, single_run
from resources import LakestoreResource, LandingResource

KEY = dg.AssetKey(["marts", "order_status"])
FROM_ORDERS = "status-from-orders"
FROM_LINEITEM = "status-from-lineitem"
MATCHES = "status_matches_sources"
DELETED = "X"


def _null(type_: pa.DataType, n: int) -> pa.Array:
    return pa.nulls(n, type_)


def from_orders(before: pa.Table, after: pa.Table) -> pa.Table:
    gone = before.join(after.select(["dt", "o_orderkey"]), keys=["dt", "o_orderkey"], join_type="left anti")
    n_after, n_gone = after.num_rows, gone.num_rows
    return pa.table({
        "dt": pa.concat_arrays([after.column("dt").combine_chunks(), gone.column("dt").combine_chunks()]),
        "o_orderkey": pa.concat_arrays([after.column("o_orderkey").combine_chunks(), gone.column("o_orderkey").combine_chunks()]),
        "o_orderstatus": pa.concat_arrays([after.column("o_orderstatus").combine_chunks(), pa.array([DELETED] * n_gone, pa.string())]),
        "o_totalprice": pa.concat_arrays([after.column("o_totalprice").combine_chunks(), _null(pa.decimal128(15, 2), n_gone)]),
        "line_count": _null(pa.int64(), n_after + n_gone),
        "last_shipdate": _null(pa.date32(), n_after + n_gone),
    }, schema=ORDER_STATUS_SCHEMA)


def from_lineitem(before: pa.Table, after: pa.Table) -> pa.Table:
    orders = pa.concat_tables([before.select(["dt", "l_orderkey"]), after.select(["dt", "l_orderkey"])]).group_by(["dt", "l_orderkey"]).aggregate([])
    live = after.group_by(["dt", "l_orderkey"]).aggregate([("l_linenumber", "count"), ("l_shipdate", "max")])
    rows = orders.join(live, keys=["dt", "l_orderkey"], join_type="left outer")
    return pa.table({
        "dt": rows.column("dt"), "o_orderkey": rows.column("l_orderkey"),
        "o_orderstatus": _null(pa.string(), rows.num_rows), "o_totalprice": _null(pa.decimal128(15, 2), rows.num_rows),
        "line_count": pc.fill_null(rows.column("l_linenumber_count"), 0).cast(pa.int64()),
        "last_shipdate": rows.column("l_shipdate_max").cast(pa.date32()),
    }, schema=ORDER_STATUS_SCHEMA)


def check_matches(mart: ls.Table, orders: ls.Table, lineitem: ls.Table, dts: list[str]) -> dg.AssetCheckResult:
    """Status and price equal the live orders' (or 'X' when deleted); line counts equal the live lineitems'."""
    where = ls.col("dt").isin(dts)
    status = mart.to_arrow(filter=where)
    live_orders = orders.to_arrow(columns=["dt", "o_orderkey", "o_orderstatus", "o_totalprice"], filter=where)
    lines = lineitem.to_arrow(columns=["dt", "l_orderkey", "l_linenumber"], filter=where).group_by(["dt", "l_orderkey"]).aggregate([("l_linenumber", "count")])
    expected = {(r["dt"], r["o_orderkey"]): (r["o_orderstatus"], r["o_totalprice"]) for r in live_orders.to_pylist()}
    line_counts = {(r["dt"], r["l_orderkey"]): r["l_linenumber_count"] for r in lines.to_pylist()}
    bad = []
    for r in status.to_pylist():
        k = (r["dt"], r["o_orderkey"])
        if r["o_orderstatus"] is not None:
            want = expected.get(k, (DELETED, None))
            if (r["o_orderstatus"], r["o_totalprice"] if r["o_orderstatus"] != DELETED else None) != want:
                bad.append(k)
        if r["line_count"] is not None and r["line_count"] != line_counts.get(k, 0):
            bad.append(k)
    missing = [k for k in expected if k not in {(r["dt"], r["o_orderkey"]) for r in status.to_pylist()}]
    return dg.AssetCheckResult(
        check_name=MATCHES, asset_key=KEY, passed=not bad and not missing,
        description=(f"mismatched {bad[:5]}, missing {missing[:5]}" if bad or missing else None),
        metadata={"orders_checked": status.num_rows, "mismatched": len(bad), "missing": len(missing)},
    )


@dg.asset(
    key=KEY,
    deps=[ingested_key("orders"), ingested_key("lineitem")],
    partitions_def=daily_partitions,
    backfill_policy=single_run,
    group_name="marts",
    kinds={"lakestore"},
    output_required=False,
    description="Order status, price, line count and last ship date (partial-update merge engine; two writers).",
    check_specs=[dg.AssetCheckSpec(MATCHES, asset=KEY, description="Every touched order's mart row matches orders and lineitem.")],
)
def order_status_asset(context: dg.AssetExecutionContext, catalog: LakestoreResource, landing: LandingResource):
    watch = Stopwatch()
    lake = catalog.open()
    mart, reason = ensure_optional_table(lake, ORDER_STATUS, context.log)
    if mart is None:
        context.log.warning(f"not materialized: {reason}")
        return
    orders = ensure_table(lake, ORDERS, catalog.lifecycle_options())
    lineitem = ensure_table(lake, LINEITEM, catalog.lifecycle_options())
    root = landing.resolved_root()
    snapshots, touched = [], set()
    for day in context.partition_keys:
        ident = day_number(day)
        for user, source, keys, columns, build in (
            (FROM_ORDERS, orders, ["dt", "o_orderkey"], ["dt", "o_orderkey", "o_orderstatus", "o_totalprice"], from_orders),
            (FROM_LINEITEM, lineitem, ["dt", "l_orderkey", "l_linenumber"], ["dt", "l_orderkey", "l_linenumber", "l_shipdate"], from_lineitem),
        ):
            if mart.snapshot_manager.find_committed(user, ident, "APPEND", after_id=None) is not None:
                continue
            change = day_change(source, root, day, keys, columns)
            if change is None:
                continue
            rows = build(change.before, change.after)
            touched |= set(rows.column("dt").to_pylist())
            snapshots.append(mart.write_arrow(rows, commit_user=user, commit_identifier=ident))
    yield dg.MaterializeResult(
        metadata=materialization_metadata(mart, commit_stats(mart, snapshots), watch, shape_partitions=sorted(touched)),
        check_results=[check_matches(mart, orders, lineitem, sorted(touched | set(context.partition_keys)))],
    )
