"""The marts' change feed on real tables (no Spark, no Dagster run): the orders changelog
consumed through a consumer id, retractions in the aggregation mart, +I/+U/-D in the
partial-update mart, and exactly-once when the mart commit landed but the checkpoint did not."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest

import lakestore
from assets.common.tables import DAILY_NATION_REVENUE, ORDER_STATUS, ORDERS, ensure_table
from assets.marts.changes import ChangeFeed
from assets.marts.order_status import DELETED, from_orders
from assets.marts.revenue import revenue_delta
from lakestore.scan.changes import StreamScan

pytestmark = pytest.mark.dagster

CUSTOMERS = pa.table({"c_custkey": pa.array([1, 2], pa.int64()), "c_nationkey": pa.array([7, 8], pa.int32())})
NATIONS = pa.table({"n_nationkey": pa.array([7, 8], pa.int32()), "n_name": ["SEVEN", "EIGHT"]})


def _orders(rows: list[tuple]) -> pa.Table:
    """(dt, orderkey, custkey, price, op, seq) -> rows of the orders schema."""
    n = len(rows)
    cols = list(zip(*rows, strict=False))
    return pa.table(
        {
            "o_orderkey": pa.array(cols[1], pa.int64()),
            "o_custkey": pa.array(cols[2], pa.int64()),
            "o_orderstatus": pa.array(["O" if op == "+I" else "F" for op in cols[4]]),
            "o_totalprice": pa.array([Decimal(p) for p in cols[3]], pa.decimal128(15, 2)),
            "o_orderdate": pa.array([dt.date.fromisoformat(d) for d in cols[0]], pa.date32()),
            "o_orderpriority": pa.array(["1-URGENT"] * n),
            "o_clerk": pa.array(["c"] * n),
            "o_shippriority": pa.array([0] * n, pa.int32()),
            "o_comment": pa.array([""] * n),
            "dt": pa.array(cols[0]),
            "_op": pa.array(cols[4]),
            "_seq": pa.array(cols[5], pa.int64()),
        }
    ).cast(ORDERS.schema)


@pytest.fixture
def tables(tmp_path):
    lake = lakestore.Catalog(str(tmp_path / "warehouse"))
    orders = ensure_table(lake, ORDERS, {"bucket": "2"})
    assert orders.options.changelog_producer == "lookup"
    return orders, ensure_table(lake, DAILY_NATION_REVENUE), ensure_table(lake, ORDER_STATUS)


def _revenue(mart: lakestore.Table) -> dict[tuple[str, str], tuple[Decimal, int]]:
    """Mart rows by (day, nation); a day/nation whose orders were all retracted sums to zero (dropped)."""
    rows = {(r["dt"], r["n_name"]): (r["revenue"], r["order_count"]) for r in mart.to_arrow().to_pylist()}
    assert all(v[0] == 0 for v in rows.values() if v[1] == 0)
    return {k: v for k, v in rows.items() if v[1] != 0}


def _expected(orders: lakestore.Table) -> dict[tuple[str, str], tuple[Decimal, int]]:
    live = orders.to_arrow(columns=["dt", "o_custkey", "o_totalprice"])
    names = {1: "SEVEN", 2: "EIGHT"}
    out: dict = {}
    for r in live.to_pylist():
        key = (r["dt"], names[r["o_custkey"]])
        price, count = out.get(key, (Decimal(0), 0))
        out[key] = (price + r["o_totalprice"], count + 1)
    return out


def test_revenue_feed_retracts_and_is_exactly_once(tables, monkeypatch):
    orders, mart, _ = tables
    feed = ChangeFeed(
        orders, mart, consumer_id="mart-revenue", commit_user="mart-revenue", columns=["dt", "o_orderkey", "o_custkey", "o_totalprice"]
    )
    apply = lambda changes, _through: revenue_delta(changes, CUSTOMERS, NATIONS)  # noqa: E731

    orders.write_arrow(
        _orders([("1992-01-01", 1, 1, "10.00", "+I", 1), ("1992-01-01", 2, 2, "20.00", "+I", 1), ("1992-01-01", 3, 1, "5.00", "+I", 1)])
    )
    first = feed.run(apply)
    assert (first.start, first.through, first.recovered) == (None, 1, None)  # first run: full read
    assert orders.manage.consumers() == {"mart-revenue": 2}
    assert first.snapshot.commit_identifier == 1 and first.snapshot.commit_user == "mart-revenue"
    assert (
        _revenue(mart)
        == _expected(orders)
        == {("1992-01-01", "SEVEN"): (Decimal("15.00"), 2), ("1992-01-01", "EIGHT"): (Decimal("20.00"), 1)}
    )

    # day 2 updates order 1, deletes order 2 and inserts order 4: the changelog carries -U/+U, -D, +I
    orders.write_arrow(
        _orders([("1992-01-01", 1, 1, "12.50", "+U", 2), ("1992-01-01", 2, 2, "20.00", "-D", 2), ("1992-01-02", 4, 2, "7.00", "+I", 2)])
    )
    kinds = sorted(orders.read_changes(from_snapshot_id=1).column("_row_kind").to_pylist())
    assert kinds == ["+I", "+U", "-D", "-U"]

    # the mart commit lands, then the process dies before the checkpoint
    def crash(self):  # noqa: ANN001, ANN202
        raise RuntimeError("killed before checkpoint")

    monkeypatch.setattr(StreamScan, "checkpoint", crash)
    with pytest.raises(RuntimeError, match="killed before checkpoint"):
        feed.run(apply)
    monkeypatch.undo()
    assert orders.manage.consumers() == {"mart-revenue": 2}  # not moved
    landed = mart.latest_snapshot()
    assert (landed.commit_user, landed.commit_identifier) == ("mart-revenue", 2)
    assert _revenue(mart) == _expected(orders)

    # more upstream changes arrive before the restart; the restart must apply those and only those:
    # filter_committed says identifier 2 landed, so snapshot 2's changes are not read again
    orders.write_arrow(_orders([("1992-01-03", 5, 1, "1.00", "+I", 3)]))
    again = feed.run(apply)
    assert again.recovered == 2 and again.start == 3 and again.through == 3 and again.change_rows == 1
    # one commit since (the mart compacts fully on every commit for its Iceberg metadata: APPEND + COMPACT)
    assert again.snapshot.commit_identifier == 3 and {s.commit_identifier for s in mart.snapshots() if s.id > landed.id} == {3}
    assert orders.manage.consumers() == {"mart-revenue": 4}
    assert (
        _revenue(mart)
        == _expected(orders)
        == {
            ("1992-01-01", "SEVEN"): (Decimal("17.50"), 2),
            ("1992-01-02", "EIGHT"): (Decimal("7.00"), 1),
            ("1992-01-03", "SEVEN"): (Decimal("1.00"), 1),
        }
    )

    # later changes keep flowing incrementally; a compaction snapshot adds nothing
    orders.compact(full=True)
    orders.write_arrow(_orders([("1992-01-02", 4, 2, "7.00", "-D", 3)]))
    last = feed.run(apply)
    assert (
        last.start == 4
        and last.recovered is None
        and last.through == orders.latest_snapshot().id
        and last.snapshot.commit_identifier == last.through
    )
    assert (
        _revenue(mart)
        == _expected(orders)
        == {("1992-01-01", "SEVEN"): (Decimal("17.50"), 2), ("1992-01-03", "SEVEN"): (Decimal("1.00"), 1)}
    )


def test_order_status_takes_inserts_updates_and_deletes(tables):
    orders, _, mart = tables
    feed = ChangeFeed(
        orders,
        mart,
        consumer_id="status-from-orders",
        commit_user="status-from-orders",
        columns=["dt", "o_orderkey", "o_orderstatus", "o_totalprice"],
    )
    apply = lambda changes, _through: from_orders(changes)  # noqa: E731
    orders.write_arrow(_orders([("1992-01-01", 1, 1, "10.00", "+I", 1), ("1992-01-01", 2, 2, "20.00", "+I", 1)]))
    feed.run(apply)
    # insert and delete of order 3 within one feed run: the later change wins
    orders.write_arrow(_orders([("1992-01-01", 1, 1, "11.00", "+U", 2), ("1992-01-02", 3, 1, "3.00", "+I", 2)]))
    orders.write_arrow(_orders([("1992-01-01", 2, 2, "20.00", "-D", 3), ("1992-01-02", 3, 1, "3.00", "-D", 3)]))
    result = feed.run(apply)
    assert result.through == 3 and result.snapshot.commit_identifier == 3
    status = {r["o_orderkey"]: (r["o_orderstatus"], r["o_totalprice"]) for r in mart.to_arrow().to_pylist()}
    assert status == {1: ("F", Decimal("11.00")), 2: (DELETED, Decimal("20.00")), 3: (DELETED, Decimal("3.00"))}
