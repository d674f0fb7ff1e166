"""End to end through the real UI server: ``dagster dev -w workspace.yaml`` on a free loopback
port with a project-local DAGSTER_HOME and a temporary warehouse, runs launched through the GraphQL
API (the dimensions, then one partition of the daily ingestion job: landing, Spark ingestion,
compaction, marts), polled until SUCCESS, the tables checked on disk, and the asset graph page
rendered by headless Chromium (driven by chromedriver) with every group expanded into a screenshot.
The screenshot stays in the test's temporary directory; ``LAKESTORE_UPDATE_SCREENSHOT=1`` also
copies it to docs/screenshots/asset-graph.png."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

import lakestore
from tests.pipelines.webdriver import ALT, Browser

pytestmark = [pytest.mark.dagster, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
DAY = "1992-01-01"
SCREENSHOT = ROOT / "docs" / "screenshots" / "asset-graph.png"
LAUNCH = """
mutation Launch($executionParams: ExecutionParams!) {
  launchRun(executionParams: $executionParams) {
    __typename
    ... on LaunchRunSuccess { run { runId } }
    ... on PythonError { message stack }
    ... on InvalidSubsetError { message }
    ... on RunConfigValidationInvalid { errors { message } }
  }
}"""
RUN_STATUS = "query Status($runId: ID!) { runOrError(runId: $runId) { __typename ... on Run { status } } }"
REPOSITORIES = "{ repositoriesOrError { __typename ... on RepositoryConnection { nodes { name location { name } jobs { name } } } } }"
FINISHED = {"SUCCESS", "FAILURE", "CANCELED"}


def _chromium() -> str:
    """/usr/bin/chromium, installed from Debian packages if missing (root only); skip otherwise."""
    found = shutil.which("chromium") or (os.path.exists("/usr/bin/chromium") and "/usr/bin/chromium")
    if found and shutil.which("chromedriver"):
        return found
    if os.geteuid() == 0 and shutil.which("apt-get"):
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], check=False, env=env, capture_output=True, timeout=300)
        subprocess.run(
            ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "chromium", "chromium-driver"],
            check=False,
            env=env,
            capture_output=True,
            timeout=600,
        )
    found = shutil.which("chromium") if shutil.which("chromedriver") else None
    if not found:
        pytest.skip("chromium is not installed and could not be installed (needs root and the Debian packages chromium, chromium-driver)")
    return found


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class DagsterDev:
    def __init__(self, port: int, log: Path) -> None:
        self.url = f"http://127.0.0.1:{port}"
        self.log = log

    def graphql(self, query: str, variables: dict | None = None, *, timeout: float = 30) -> dict:
        body = json.dumps({"query": query, "variables": variables or {}}).encode()
        request = urllib.request.Request(f"{self.url}/graphql", data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - loopback
            payload = json.loads(response.read())
        assert "errors" not in payload, payload["errors"]
        return payload["data"]

    def wait_ready(self, process: subprocess.Popen, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                pytest.fail(f"dagster dev exited with {process.returncode}:\n{self.tail()}")
            try:
                data = self.graphql(REPOSITORIES, timeout=5)["repositoriesOrError"]
                if data["__typename"] == "RepositoryConnection" and data["nodes"]:
                    return data["nodes"][0]
            except (urllib.error.URLError, ConnectionError, TimeoutError, json.JSONDecodeError):
                pass
            time.sleep(1)
        pytest.fail(f"dagster dev did not answer GraphQL within {timeout} s:\n{self.tail()}")

    def launch(self, repository: dict, job: str, tags: dict[str, str]) -> str:
        params = {
            "selector": {"repositoryLocationName": repository["location"]["name"], "repositoryName": repository["name"], "jobName": job},
            "runConfigData": {},
            "executionMetadata": {"tags": [{"key": k, "value": v} for k, v in tags.items()]},
        }
        result = self.graphql(LAUNCH, {"executionParams": params})["launchRun"]
        assert result["__typename"] == "LaunchRunSuccess", result
        return result["run"]["runId"]

    def wait_run(self, run_id: str, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        status = "?"
        while time.monotonic() < deadline:
            status = self.graphql(RUN_STATUS, {"runId": run_id})["runOrError"]["status"]
            if status in FINISHED:
                return status
            time.sleep(2)
        pytest.fail(f"run {run_id} still {status} after {timeout} s:\n{self.tail()}")

    def tail(self, n: int = 60) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-n:]) if self.log.exists() else ""


def _stop(process: subprocess.Popen) -> None:
    """Stop the whole process group (webserver, daemon, code server, run workers, Spark JVM)."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)  # stragglers left in the group
    process.wait(timeout=10)


def _asset_graph_screenshot(chromium: str, url: str, out: Path) -> str:
    """The global asset lineage with every group expanded (Dagster's Alt+E, remembered by the
    page, then a reload to lay it out again, zoomed out to fit); returns the page's text."""
    chromedriver = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    browser = Browser(chromedriver, chromium)
    try:
        browser.open(url)
        assert browser.wait_for_text("marts"), "the asset graph did not render"
        browser.press("e", modifier=ALT)
        time.sleep(1)
        browser.refresh()
        assert browser.wait_for_text("changelog"), "the groups did not expand"
        time.sleep(2)
        for _ in range(3):
            browser.script("document.querySelector('[aria-label=zoom_out]').closest('button').click()")
            time.sleep(0.5)
        time.sleep(2)
        browser.screenshot(out)
        return str(browser.script("return document.body.innerText"))
    finally:
        browser.close()


def test_dagster_dev_runs_a_partition_and_shows_the_asset_graph(tmp_path):
    chromium = _chromium()
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    # what the UI's "Join the Dagster community" dialog writes once dismissed: without it the dialog
    # covers the asset graph in the screenshot
    (home / ".nux").mkdir()
    (home / ".nux" / "nux.yaml").write_text("seen: 1\n")
    warehouse = tmp_path / "warehouse"
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "LAKESTORE_WAREHOUSE": str(warehouse),
        "LAKESTORE_LANDING": str(warehouse / "landing"),
        "TPCH_SCALE_FACTOR": "0.01",
        "PYSPARK_PYTHON": sys.executable,
        "TMPDIR": str(scratch),
        "SPARK_LOCAL_IP": "127.0.0.1",
    }
    port = _free_port()
    log = tmp_path / "dagster-dev.log"
    dagster = str(Path(sys.executable).with_name("dagster"))
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [dagster, "dev", "-w", "workspace.yaml", "-h", "127.0.0.1", "-p", str(port)],
            cwd=str(ROOT),
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = DagsterDev(port, log)
    try:
        started = time.monotonic()
        repository = server.wait_ready(process, timeout=120)
        print(f"dagster dev answered GraphQL after {time.monotonic() - started:.1f} s")
        assert {"daily_ingestion_job", "dimensions_job"} <= {j["name"] for j in repository["jobs"]}

        run_ids = {}
        for job, tags in (("dimensions_job", {}), ("daily_ingestion_job", {"dagster/partition": DAY})):
            run_ids[job] = server.launch(repository, job, tags)
            t0 = time.monotonic()
            assert server.wait_run(run_ids[job], timeout=300) == "SUCCESS", f"{job} run {run_ids[job]} failed:\n{server.tail()}"
            print(f"{job} run {run_ids[job]}: SUCCESS after {time.monotonic() - t0:.1f} s")

        # the run wrote the tables of the temporary warehouse
        lake = lakestore.Catalog(str(warehouse))
        orders = lake.get_table("tpch.orders")
        ingest = [s for s in orders.snapshots() if s.commit_user == "ingest-orders"]
        assert len(ingest) == 1 and orders.to_arrow(columns=["dt"]).column("dt").to_pylist().count(DAY) > 0
        assert orders.manage.consumers()["mart-revenue"] > ingest[0].id
        assert lake.get_table("tpch.mart_daily_nation_revenue").to_arrow().num_rows > 0

        shot = tmp_path / "asset-graph.png"
        text = _asset_graph_screenshot(chromium, f"{server.url}/asset-groups", shot)
        # the lifecycle stages are drawn, not collapsed into their groups
        for stage in ("ingested", "changelog", "compacted", "tagged", "expired", "order_status"):
            assert stage in text, f"{stage} is not on the asset graph"
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert shot.stat().st_size > 20_000, f"screenshot is only {shot.stat().st_size} bytes: the page did not render"
        if os.environ.get("LAKESTORE_UPDATE_SCREENSHOT") == "1":
            SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(shot, SCREENSHOT)
    finally:
        _stop(process)
