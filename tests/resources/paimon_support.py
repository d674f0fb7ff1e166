"""Helpers of the resource tests: a quiet in-process materialization and its metadata."""

from typing import Any

import dagster as dg
import pyarrow as pa

from resources import PaimonIOManager

QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


def run(assets: list[Any], io_manager: PaimonIOManager, *, partition_key: str | None = None, **kwargs: Any) -> dg.ExecuteInProcessResult:
    """Materialize ``assets`` (in process) with ``io_manager``; raises what a step raises."""
    return dg.materialize(assets, resources={"io_manager": io_manager}, partition_key=partition_key, run_config=QUIET, **kwargs)


def output_metadata(result: dg.ExecuteInProcessResult, key: str) -> dict[str, Any]:
    """The materialization metadata of asset ``key`` ("db/t") in ``result``, values unwrapped."""
    events = [e for e in result.get_asset_materialization_events() if e.asset_key.to_user_string() == key]
    assert events, f"no materialization of {key}"
    metadata = events[-1].materialization.metadata
    return {k: getattr(v, "value", v) for k, v in metadata.items()}


def materialize_days(warehouse: str, keys: list[str]) -> int:
    """In a separate process: materialize ``db.shared``'s daily partitions ``keys`` one run each
    (100 rows per day); returns how many runs succeeded."""
    days = dg.DailyPartitionsDefinition(start_date="2024-01-01", end_date="2024-01-31")

    @dg.asset(key=["db", "shared"], partitions_def=days, metadata={"partition_expr": "day"})
    def shared(context: dg.AssetExecutionContext) -> pa.Table:
        return pa.table({"day": [context.partition_key] * 100, "v": list(range(100))})

    return sum(run([shared], PaimonIOManager(warehouse=warehouse), partition_key=key).success for key in keys)
