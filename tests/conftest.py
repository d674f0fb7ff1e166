"""Suite-wide rules. With ``LAKESTORE_REQUIRE_ALL=1`` (set by CI) a test skipped for a missing
part of its environment (an oracle venv, Java, PostgreSQL, Chromium, an optional package) fails
instead, so a partial environment cannot pass green. Skips that hold everywhere say so with a
reason starting ``not applicable``."""

from __future__ import annotations

import os

import pytest

from tests.postgres import postgres  # noqa: F401 - the session's PostgreSQL server, a fixture

REQUIRE_ALL = os.environ.get("LAKESTORE_REQUIRE_ALL") == "1"
NOT_APPLICABLE = "not applicable"


def _skip_reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


def _fail_environment_skip(report: pytest.TestReport | pytest.CollectReport) -> None:
    if REQUIRE_ALL and report.skipped:
        reason = _skip_reason(report)
        if not reason.removeprefix("Skipped: ").startswith(NOT_APPLICABLE):
            report.outcome = "failed"
            report.longrepr = f"LAKESTORE_REQUIRE_ALL=1: skipped for its environment: {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    outcome = yield
    report = outcome.get_result()
    if not hasattr(report, "wasxfail"):
        _fail_environment_skip(report)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):  # type: ignore[no-untyped-def]
    outcome = yield
    _fail_environment_skip(outcome.get_result())
