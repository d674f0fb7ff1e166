"""Daily revenue per nation, maintained incrementally in a table with the aggregation merge engine
(``sum`` of revenue and order count). It consumes the ``orders`` changelog (changelog-producer
lookup) through a consumer id: +I/+U rows add their price and one order, -U/-D rows retract them,
so updates and deletes of earlier orders correct earlier days (sum is retractable)."""

import dagster as dg
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

import lakestore as ls
from assets.common.metadata import Stopwatch, commit_stats, materialization_metadata
from assets.common.partitions import daily_partitions, single_run
from assets.common.tables import CUSTOMER, DAILY_NATION_REVENUE, NATION, ORDERS, ensure_table
from assets.lifecycle.keys import changelog_key
from assets.marts.changes import ChangeFeed, adds, read_at, require_changelog
from resources import LakestoreResource

KEY = dg.AssetKey(["marts", "daily_nation_revenue"])
USER = "mart-revenue"
CONSUMER = "mart-revenue"
RECONCILES = "revenue_reconciles_with_orders"
ORDER_COLUMNS = ["dt", "o_orderkey", "o_custkey", "o_totalprice"]


def revenue_delta(changes: pa.Table, customers: pa.Table, nations: pa.Table) -> pa.Table:
    """Rows of the mart schema from orders change rows: per (dt, nation) the revenue and
    order-count change (zero net changes dropped)."""
    add = adds(changes)
    price = changes.column("o_totalprice").cast(pa.decimal128(18, 2))
    signed = pa.table(
        {
            "dt": changes.column("dt"),
            "o_custkey": changes.column("o_custkey"),
            "revenue": pc.if_else(add, price, pc.negate(price)),
            "order_count": pa.array(np.where(add.to_numpy(zero_copy_only=False), 1, -1), pa.int64()),
        }
    )
    with_nation = signed.join(customers, keys="o_custkey", right_keys="c_custkey").join(
        nations, keys="c_nationkey", right_keys="n_nationkey"
    )
    grouped = with_nation.group_by(["dt", "c_nationkey", "n_name"]).aggregate([("revenue", "sum"), ("order_count", "sum")])
    out = pa.table(
        {
            "dt": grouped.column("dt"),
            "n_nationkey": grouped.column("c_nationkey"),
            "n_name": grouped.column("n_name"),
            "revenue": grouped.column("revenue_sum").cast(pa.decimal128(18, 2)),
            "order_count": grouped.column("order_count_sum"),
        }
    )
    changed = pc.or_(pc.not_equal(out.column("order_count"), 0), pc.not_equal(out.column("revenue").cast(pa.float64()), 0.0))
    return out.filter(changed)


def reconcile(mart: ls.Table, orders: ls.Table, customers: pa.Table, dts: list[str], *, orders_snapshot: int) -> dg.AssetCheckResult:
    """Mart revenue per day equals the sum of live order prices (of known customers) that day, in
    the orders snapshot the mart consumed through."""
    where = ls.col("dt").isin(dts)
    live = read_at(orders, orders_snapshot, columns=["dt", "o_custkey", "o_totalprice"], filter=where)
    live = live.join(customers.select(["c_custkey"]), keys="o_custkey", right_keys="c_custkey", join_type="left semi")
    expected = {
        r["dt"]: (r["o_totalprice_sum"], r["count_all"])
        for r in live.group_by("dt").aggregate([("o_totalprice", "sum"), ([], "count_all")]).to_pylist()
    }
    got = {
        r["dt"]: (r["revenue_sum"], r["order_count_sum"])
        for r in mart.to_arrow(filter=where).group_by("dt").aggregate([("revenue", "sum"), ("order_count", "sum")]).to_pylist()
    }
    bad = [
        d
        for d in dts
        if (expected.get(d, (0, 0))[0] or 0) != (got.get(d, (0, 0))[0] or 0) or expected.get(d, (0, 0))[1] != got.get(d, (0, 0))[1]
    ]
    return dg.AssetCheckResult(
        check_name=RECONCILES,
        asset_key=KEY,
        passed=not bad,
        description=f"days that do not reconcile: {bad[:10]}" if bad else None,
        metadata={"days_checked": len(dts), "days_mismatched": len(bad), "orders_snapshot": orders_snapshot},
    )


@dg.asset(
    key=KEY,
    deps=[changelog_key("orders"), dg.AssetKey(["dimensions", "customer"]), dg.AssetKey(["dimensions", "nation"])],
    partitions_def=daily_partitions,
    backfill_policy=single_run,
    group_name="marts",
    kinds={"lakestore"},
    description=(
        "Revenue and order count per order day and nation (aggregation merge engine), fed by the orders changelog "
        f"through consumer '{CONSUMER}': every change not applied yet, whichever days it touches."
    ),
    check_specs=[dg.AssetCheckSpec(RECONCILES, asset=KEY, description="Revenue per day equals the live orders' total price per day.")],
)
def revenue_asset(context: dg.AssetExecutionContext, catalog: LakestoreResource):
    watch = Stopwatch()
    lake = catalog.open()
    mart = ensure_table(lake, DAILY_NATION_REVENUE)
    orders = ensure_table(lake, ORDERS, catalog.lifecycle_options())
    require_changelog(orders)
    customers = ensure_table(lake, CUSTOMER).to_arrow(columns=["c_custkey", "c_nationkey"])
    nations = ensure_table(lake, NATION).to_arrow(columns=["n_nationkey", "n_name"])
    if customers.num_rows == 0 or nations.num_rows == 0:
        raise dg.Failure("dimension tables are empty: materialize dimensions/customer and dimensions/nation first")
    feed = ChangeFeed(orders, mart, consumer_id=CONSUMER, commit_user=USER, columns=ORDER_COLUMNS)
    result = feed.run(lambda changes, _through: revenue_delta(changes, customers, nations))
    if result.recovered is not None:
        context.log.warning(f"mart commit for orders snapshot {result.recovered} had landed without its checkpoint; not applied again")
    stats = commit_stats(mart, [result.snapshot])
    context.log.info(
        f"applied {result.change_rows} orders change rows through snapshot {result.through}: mart snapshot {stats.snapshot_ids or 'none'}"
    )
    dts = sorted(stats.touched_partitions | set(context.partition_keys))
    yield dg.MaterializeResult(
        metadata=materialization_metadata(mart, stats, watch, shape_partitions=dts, extra=result.metadata("orders")),
        check_results=[reconcile(mart, orders, customers, dts, orders_snapshot=result.through)],
    )
