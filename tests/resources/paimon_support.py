"""Helpers of the resource tests: a quiet in-process materialization and its metadata."""

from __future__ import annotations

from typing import Any

import dagster as dg

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
