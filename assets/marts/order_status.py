"""Order status in a partial-update table fed by two sources, each through its own consumer id:
the ``orders`` changelog (changelog-producer lookup) sets status and price from its +I/+U rows
(status 'X' from -D rows: the order was deleted; -U rows carry nothing new), and the ``lineitem``
changes name the orders whose lines changed, whose live line count and last ship date are then
read from lineitem as of the consumed snapshot. Each source writes only its columns; the merge
engine combines them."""

import dagster as dg
import pyarrow as pa
import pyarrow.compute as pc

import lakestore as ls
from assets.common.metadata import Stopwatch, commit_stats, materialization_metadata
from assets.common.partitions import daily_partitions, single_run
from assets.common.tables import LINEITEM, ORDER_STATUS, ORDER_STATUS_SCHEMA, ORDERS, ensure_table
from assets.lifecycle.keys import changelog_key
from assets.marts.changes import ChangeFeed, read_at, require_changelog
from lakestore.scan.changes import ROW_KIND_COLUMN
from resources import LakestoreResource

KEY = dg.AssetKey(["marts", "order_status"])
FROM_ORDERS = "status-from-orders"
FROM_LINEITEM = "status-from-lineitem"
MATCHES = "status_matches_sources"
DELETED = "X"
ORDER_COLUMNS = ["dt", "o_orderkey", "o_orderstatus", "o_totalprice"]
LINE_COLUMNS = ["dt", "l_orderkey"]


def _null(type_: pa.DataType, n: int) -> pa.Array:
    return pa.nulls(n, type_)


def from_orders(changes: pa.Table) -> pa.Table:
    """Mart rows from orders change rows, in change order (the last row of a key wins): +I/+U set
    status and price, -D sets status 'X' (null price: partial-update keeps the last price)."""
    kind = changes.column(ROW_KIND_COLUMN)
    rows = changes.filter(pc.not_equal(kind, "-U"))
    deleted = pc.equal(rows.column(ROW_KIND_COLUMN), "-D")
    n = rows.num_rows
    return pa.table(
        {
            "dt": rows.column("dt"),
            "o_orderkey": rows.column("o_orderkey"),
            "o_orderstatus": pc.if_else(deleted, pa.scalar(DELETED), rows.column("o_orderstatus")),
            "o_totalprice": pc.if_else(deleted, pa.scalar(None, pa.decimal128(15, 2)), rows.column("o_totalprice")),
            "line_count": _null(pa.int64(), n),
            "last_shipdate": _null(pa.date32(), n),
        },
        schema=ORDER_STATUS_SCHEMA,
    )


def from_lineitem(changes: pa.Table, lineitem: ls.Table, snapshot_id: int) -> pa.Table:
    """Mart rows for the orders whose lines changed: live line count (0 when none is left) and last
    ship date, from lineitem as of ``snapshot_id`` (the snapshot the feed consumed through)."""
    touched = changes.select(LINE_COLUMNS).group_by(LINE_COLUMNS).aggregate([])
    dts = pc.unique(touched.column("dt")).to_pylist()
    lines = read_at(lineitem, snapshot_id, columns=["dt", "l_orderkey", "l_linenumber", "l_shipdate"], filter=ls.col("dt").isin(dts))
    live = lines.group_by(LINE_COLUMNS).aggregate([("l_linenumber", "count"), ("l_shipdate", "max")])
    rows = touched.join(live, keys=LINE_COLUMNS, join_type="left outer")
    return pa.table(
        {
            "dt": rows.column("dt"),
            "o_orderkey": rows.column("l_orderkey"),
            "o_orderstatus": _null(pa.string(), rows.num_rows),
            "o_totalprice": _null(pa.decimal128(15, 2), rows.num_rows),
            "line_count": pc.fill_null(rows.column("l_linenumber_count"), 0).cast(pa.int64()),
            "last_shipdate": rows.column("l_shipdate_max").cast(pa.date32()),
        },
        schema=ORDER_STATUS_SCHEMA,
    )


def check_matches(
    mart: ls.Table, orders: ls.Table, lineitem: ls.Table, dts: list[str], *, orders_snapshot: int, lineitem_snapshot: int
) -> dg.AssetCheckResult:
    """Status and price equal the live orders' (or 'X' when deleted); line counts equal the live
    lineitems'; both sources as of the snapshots the feeds consumed through."""
    where = ls.col("dt").isin(dts)
    status = mart.to_arrow(filter=where)
    live_orders = read_at(orders, orders_snapshot, columns=ORDER_COLUMNS, filter=where)
    lines = (
        read_at(lineitem, lineitem_snapshot, columns=["dt", "l_orderkey", "l_linenumber"], filter=where)
        .group_by(["dt", "l_orderkey"])
        .aggregate([("l_linenumber", "count")])
    )
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
    present = set(zip(status["dt"].to_pylist(), status["o_orderkey"].to_pylist(), strict=True))
    missing = [k for k in expected if k not in present]
    return dg.AssetCheckResult(
        check_name=MATCHES,
        asset_key=KEY,
        passed=not bad and not missing,
        description=(f"mismatched {bad[:5]}, missing {missing[:5]}" if bad or missing else None),
        metadata={
            "orders_checked": status.num_rows,
            "mismatched": len(bad),
            "missing": len(missing),
            "orders_snapshot": orders_snapshot,
            "lineitem_snapshot": lineitem_snapshot,
        },
    )


@dg.asset(
    key=KEY,
    deps=[changelog_key("orders"), changelog_key("lineitem")],
    partitions_def=daily_partitions,
    backfill_policy=single_run,
    group_name="marts",
    kinds={"lakestore"},
    description=(
        "Order status, price, line count and last ship date (partial-update merge engine; two writers), fed by the "
        f"orders changelog and the lineitem changes through consumers '{FROM_ORDERS}' and '{FROM_LINEITEM}'."
    ),
    check_specs=[dg.AssetCheckSpec(MATCHES, asset=KEY, description="Every touched order's mart row matches orders and lineitem.")],
)
def order_status_asset(context: dg.AssetExecutionContext, catalog: LakestoreResource):
    watch = Stopwatch()
    lake = catalog.open()
    mart = ensure_table(lake, ORDER_STATUS)
    orders = ensure_table(lake, ORDERS, catalog.lifecycle_options())
    lineitem = ensure_table(lake, LINEITEM, catalog.lifecycle_options())
    require_changelog(orders)
    # consumer id = commit user: one position and one exactly-once identifier sequence per source
    by_orders = ChangeFeed(orders, mart, consumer_id=FROM_ORDERS, commit_user=FROM_ORDERS, columns=ORDER_COLUMNS).run(
        lambda changes, _through: from_orders(changes)
    )
    by_lines = ChangeFeed(lineitem, mart, consumer_id=FROM_LINEITEM, commit_user=FROM_LINEITEM, columns=LINE_COLUMNS).run(
        lambda changes, through: from_lineitem(changes, lineitem, through)
    )
    for source, result in (("orders", by_orders), ("lineitem", by_lines)):
        if result.recovered is not None:
            context.log.warning(
                f"mart commit for {source} snapshot {result.recovered} had landed without its checkpoint; not applied again"
            )
    stats = commit_stats(mart, [by_orders.snapshot, by_lines.snapshot])
    dts = sorted(stats.touched_partitions | set(context.partition_keys))
    yield dg.MaterializeResult(
        metadata=materialization_metadata(
            mart, stats, watch, shape_partitions=dts, extra={**by_orders.metadata("orders"), **by_lines.metadata("lineitem")}
        ),
        check_results=[check_matches(mart, orders, lineitem, dts, orders_snapshot=by_orders.through, lineitem_snapshot=by_lines.through)],
    )
