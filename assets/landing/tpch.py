"""TPC-H data from DuckDB's ``dbgen`` (offline: the extension file shipped in the
``duckdb-extension-tpch`` package) and deterministic change traffic in the spirit of TPC-H's
refresh functions.

Every order gets a fixed fate from a hash of its key: 30% are updated once, 1-7 days after
their order date (status -> 'F', total price adjusted; their lineitems' status -> 'F'), 5% are
deleted 1-10 days after it (with their lineitems). The landing file of day D holds the orders
placed on D (+I) and the updates/deletes that happen on D (+U/-D) of earlier orders; every row
keeps its order's date in ``dt`` (the table partition) and carries D in ``_seq``.
"""

from __future__ import annotations

import importlib.util
import os
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from assets.common.days import day_number
from assets.common.tables import CUSTOMER_SCHEMA, LINEITEM_FLAGS, LINEITEM_SCHEMA, NATION_SCHEMA, ORDERS_SCHEMA

TPCH_TABLES = ("orders", "lineitem", "customer", "nation")
LANDED_TABLES = ("orders", "lineitem")
SCHEMAS = {"orders": ORDERS_SCHEMA, "lineitem": LINEITEM_SCHEMA, "customer": CUSTOMER_SCHEMA, "nation": NATION_SCHEMA}
NO_DAY = np.int64(-1)
_LOCK = threading.Lock()


def tpch_extension_path() -> str:
    """The tpch extension file shipped inside the duckdb-extension-tpch wheel."""
    spec = importlib.util.find_spec("duckdb_extension_tpch")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("package duckdb-extension-tpch is not installed (pip install 'lakestore[pipeline]')")
    import duckdb  # noqa: PLC0415 - heavy, only needed when generating

    root = Path(next(iter(spec.submodule_search_locations)))
    wanted = root / "extensions" / f"v{duckdb.__version__}" / "tpch.duckdb_extension"
    if wanted.exists():
        return str(wanted)
    found = sorted(root.rglob("tpch.duckdb_extension"))
    if not found:
        raise RuntimeError(f"no tpch.duckdb_extension under {root}")
    return str(found[-1])


def _dbgen(scale_factor: float) -> dict[str, pa.Table]:
    import duckdb  # noqa: PLC0415

    con = duckdb.connect()
    try:
        con.sql(f"LOAD '{tpch_extension_path()}'")
        con.sql(f"CALL dbgen(sf={float(scale_factor)!r})")
        return {name: con.sql(f"SELECT * FROM {name}").to_arrow_table() for name in TPCH_TABLES}
    finally:
        con.close()


def _mix(keys: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser: a fixed, well-spread hash of each key (vectorised)."""
    with np.errstate(over="ignore"):
        x = keys.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


@dataclass(frozen=True)
class Fates:
    """Per row of a table: its order's date, update day and delete day (days since epoch, -1 = never)."""

    order_day: np.ndarray
    update_day: np.ndarray
    delete_day: np.ndarray


@dataclass(frozen=True)
class TpchData:
    scale_factor: float
    tables: dict[str, pa.Table]
    fates: dict[str, Fates]
    new_price: pa.Array  # o_totalprice after the update, per orders row

    def landing_rows(self, table: str, day: str) -> pa.Table:
        """The rows landing on ``day`` for ``table`` (orders or lineitem), in the table's schema."""
        d = np.int64(day_number(day))
        source = self.tables[table]
        fate = self.fates[table]
        parts = []
        for op, mask in (("+I", fate.order_day == d), ("+U", fate.update_day == d), ("-D", fate.delete_day == d)):
            idx = np.flatnonzero(mask)
            if not len(idx):
                continue
            rows = source.take(pa.array(idx))
            if op == "+U":
                rows = _apply_update(table, rows, self.new_price.take(pa.array(idx)) if table == "orders" else None)
            order_day = fate.order_day[idx]
            dt = pc.cast(pa.array(order_day.astype("datetime64[D]")), pa.string())
            rows = rows.append_column("dt", dt).append_column("_op", pa.array([op] * len(idx), pa.string()))
            rows = rows.append_column("_seq", pa.array(np.full(len(idx), d, dtype=np.int64)))
            parts.append(rows)
        schema = SCHEMAS[table]
        if not parts:
            return schema.empty_table()
        return _nest_flags(pa.concat_tables(parts)).select(schema.names).cast(schema)

    def partition_bounds(self, table: str, day: str) -> tuple[int, int]:
        """(lowest, highest) possible live row count of partition ``dt=day``: all its inserts,
        minus every delete of its rows that can ever land."""
        d = np.int64(day_number(day))
        fate = self.fates[table]
        inserted = int(np.count_nonzero(fate.order_day == d))
        deleted = int(np.count_nonzero((fate.order_day == d) & (fate.delete_day != NO_DAY)))
        return inserted - deleted, inserted


def _apply_update(table: str, rows: pa.Table, new_price: pa.Array | None) -> pa.Table:
    if table == "orders":
        rows = rows.set_column(rows.schema.get_field_index("o_orderstatus"), "o_orderstatus", pa.array(["F"] * rows.num_rows, pa.string()))
        return rows.set_column(rows.schema.get_field_index("o_totalprice"), "o_totalprice", new_price)
    return rows.set_column(rows.schema.get_field_index("l_linestatus"), "l_linestatus", pa.array(["F"] * rows.num_rows, pa.string()))


def _nest_flags(rows: pa.Table) -> pa.Table:
    """dbgen's l_returnflag and l_linestatus as the ROW column ``l_flags`` of the lineitem table."""
    if "l_returnflag" not in rows.column_names:
        return rows
    flags = pc.make_struct(rows["l_returnflag"], rows["l_linestatus"], field_names=[f.name for f in LINEITEM_FLAGS])
    return rows.append_column("l_flags", flags)


def _fates(tables: dict[str, pa.Table]) -> tuple[dict[str, Fates], pa.Array]:
    orders = tables["orders"]
    keys = np.asarray(orders.column("o_orderkey").to_numpy(), dtype=np.int64)
    order_day = np.asarray(orders.column("o_orderdate").cast(pa.int32()).to_numpy(), dtype=np.int64)
    h = _mix(keys)
    fate = h % np.uint64(20)
    updated = fate < 6  # 30% of the orders
    deleted = fate == 7  # 5%, disjoint from the updated ones
    update_day = np.where(updated, order_day + 1 + ((h // np.uint64(20)) % np.uint64(7)).astype(np.int64), NO_DAY)
    delete_day = np.where(deleted, order_day + 1 + ((h // np.uint64(20)) % np.uint64(10)).astype(np.int64), NO_DAY)
    cents = ((h // np.uint64(1000)) % np.uint64(2001)).astype(np.int64) - 1000
    price = orders.column("o_totalprice").cast(pa.float64()).to_numpy()
    new_price = pc.round(pa.array(price + cents / 100.0), 2).cast(pa.decimal128(15, 2))

    # lineitems follow their order's fate
    order_pos = np.argsort(keys, kind="stable")
    line_keys = np.asarray(tables["lineitem"].column("l_orderkey").to_numpy(), dtype=np.int64)
    at = order_pos[np.searchsorted(keys, line_keys, sorter=order_pos)]
    fates = {
        "orders": Fates(order_day, update_day, delete_day),
        "lineitem": Fates(order_day[at], update_day[at], delete_day[at]),
    }
    return fates, new_price


def _cache_dir(root: str, scale_factor: float) -> Path:
    return Path(root) / "_tpch" / f"sf={scale_factor:g}"


_MEMO: dict[tuple[str, float], TpchData] = {}


def load_tpch(landing_root: str, scale_factor: float) -> TpchData:
    """dbgen output for ``scale_factor``, generated once and cached as parquet under the landing root."""
    key = (str(Path(landing_root).resolve()), float(scale_factor))
    with _LOCK:
        if key in _MEMO:
            return _MEMO[key]
        cache = _cache_dir(landing_root, scale_factor)
        if all((cache / f"{t}.parquet").exists() for t in TPCH_TABLES):
            tables = {t: pq.read_table(cache / f"{t}.parquet") for t in TPCH_TABLES}
        else:
            tables = _dbgen(scale_factor)
            cache.mkdir(parents=True, exist_ok=True)
            for name, data in tables.items():
                write_parquet_atomic(data, cache / f"{name}.parquet")
        fates, new_price = _fates(tables)
        data = TpchData(float(scale_factor), tables, fates, new_price)
        _MEMO[key] = data
        return data


def write_parquet_atomic(data: pa.Table, path: Path) -> None:
    """Write then rename, so a reader (Spark) never sees a half-written file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    pq.write_table(data, tmp)
    os.replace(tmp, path)


def landing_dir(landing_root: str, table: str, day: str) -> Path:
    return Path(landing_root) / table / f"dt={day}"


def land_day(data: TpchData, landing_root: str, table: str, day: str) -> tuple[Path, pa.Table]:
    """Land ``table``'s rows of ``day`` as ``<root>/<table>/dt=<day>/part-00000.parquet`` (idempotent)."""
    rows = data.landing_rows(table, day)
    path = landing_dir(landing_root, table, day) / "part-00000.parquet"
    write_parquet_atomic(rows, path)
    return path, rows


def dimension_rows(data: TpchData, table: str) -> pa.Table:
    schema = SCHEMAS[table]
    return data.tables[table].select(schema.names).cast(schema)
