"""The typed Spark job on a real local SparkSession: the options the helpers hand Spark (which it
shows in its UI, plans and event logs) hold no credential and no pickled object, only JSON
documents; a credential Spark's processes could not read from their environment is refused
before any job; and each Python worker opens a job's table once."""

from __future__ import annotations

import base64
import collections
import json

import pytest
from pyspark.sql.readwriter import DataFrameReader, DataFrameWriter

import lakestore
from lakestore.io.secrets import secret_keys
from lakestore.spark import merge_into, read_dataframe, write_dataframe
from lakestore.spark.job import OVERWRITE_OPTION, SCAN_OPTION, TABLE_OPTION, TableRef
from tests._support import assert_same_rows
from tests.spark.faults import recording
from tests.spark.test_write_read import pk_table, rows

pytestmark = pytest.mark.spark

SECRET = "pw-7f3a9c-never-shown"


@pytest.fixture
def locked_catalog(tmp_path):
    """A catalog whose options hold a credential: the lock database's password (SQLite takes
    none, so the executors, which never get it, still take the lock)."""
    options = {"lock.enabled": "true", "uri": f"jdbc:sqlite:{tmp_path}/locks.db", "jdbc.user": "lake", "jdbc.password": SECRET}
    catalog = lakestore.Catalog(str(tmp_path / "wh"), options=options)
    catalog.create_database("db")
    return catalog


@pytest.fixture
def seen_options(monkeypatch):
    """Every options dict handed to DataFrameReader/DataFrameWriter.options."""
    seen: list[dict[str, str]] = []
    for cls in (DataFrameReader, DataFrameWriter):
        original = cls.options

        def capture(self, _original=original, **options):
            seen.append({k: str(v) for k, v in options.items()})
            return _original(self, **options)

        monkeypatch.setattr(cls, "options", capture)
    return seen


def _no_secret_no_pickle(text: str) -> None:
    assert SECRET not in text
    assert "gASV" not in text and "gAJ" not in text  # base64 of a pickle (protocols 2-5)


def test_the_options_spark_sees_hold_no_credential_and_no_pickle(spark, locked_catalog, seen_options, monkeypatch):
    monkeypatch.setenv("PGPASSWORD", SECRET)  # where Spark's processes read it (libpq's variable)
    table = pk_table(locked_catalog)
    assert table.store.publisher.lock.options.password == SECRET  # the table holds it (its publisher's lock)
    data = rows(40)
    write_dataframe(spark.createDataFrame(data), table)
    write_dataframe(spark.createDataFrame(rows(5, dts=("2024-01-02",))), table, overwrite={"dt": "2024-01-02"})
    read = read_dataframe(spark, table, filter=lakestore.col("dt") == "2024-01-01", columns=["dt", "id"])
    assert read.count() == 20
    merge_into(spark.createDataFrame(rows(3)).select("dt", "id"), table, matched="delete", not_matched=None)
    assert table.to_arrow().num_rows == 22
    helpers = [o for o in seen_options if TABLE_OPTION in o]
    assert len(helpers) >= 4 and any(SCAN_OPTION in o for o in helpers) and any(OVERWRITE_OPTION in o for o in helpers)
    for options in seen_options:
        _no_secret_no_pickle(json.dumps(options))
        assert not secret_keys(options) and "lakestore.file-io" not in options
        for key in (TABLE_OPTION, SCAN_OPTION, OVERWRITE_OPTION):
            if key in options:
                assert json.loads(options[key])["version"] == 1  # a JSON document, not an encoded object
                with pytest.raises(ValueError):
                    base64.b64decode(options[key], validate=True)
        if TABLE_OPTION in options:
            ref = TableRef.from_json(options[TABLE_OPTION])
            assert ref.table == table.path and ref.catalog_options["uri"].startswith("jdbc:sqlite:")
            assert "jdbc.password" not in ref.catalog_options
    _no_secret_no_pickle(read._jdf.queryExecution().toString())


def test_a_credential_spark_cannot_read_from_its_environment_is_refused_before_any_job(spark, locked_catalog, monkeypatch):
    monkeypatch.delenv("PGPASSWORD", raising=False)
    table = pk_table(locked_catalog)
    df = spark.createDataFrame(rows(10))
    for call in (
        lambda: write_dataframe(df, table),
        lambda: read_dataframe(spark, table),
        lambda: merge_into(df, table),
    ):
        with pytest.raises(lakestore.OptionError, match="jdbc.password: PGPASSWORD") as refused:
            call()
        assert SECRET not in str(refused.value)
    assert table.latest_snapshot() is None
    monkeypatch.setenv("PGPASSWORD", "another password")  # not the table's: still refused
    with pytest.raises(lakestore.OptionError, match="jdbc.password"):
        write_dataframe(df, table)


def _opens(path) -> tuple[dict[str, collections.Counter], collections.Counter]:
    """(job id -> opens per process, write tasks per process) from the recorded points."""
    opens: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    tasks: collections.Counter = collections.Counter()
    for line in path.read_text().splitlines():
        pid, point, *items = line.split("\t")
        if point == "open-table":
            opens[items[1]][pid] += 1
        elif point == "after-write":
            tasks[pid] += 1
    return opens, tasks


def test_each_python_worker_opens_a_jobs_table_once(spark, catalog, tmp_path):
    table = pk_table(catalog)
    append = catalog.create_table("db.a", schema=table.arrow_schema)
    log = tmp_path / "points.tsv"
    with recording(spark, log):
        write_dataframe(spark.createDataFrame(rows(600)).repartition(6), append)  # six write tasks on two cores
    opens, tasks = _opens(log)
    assert sum(tasks.values()) == 6
    [(job, per_process)] = [(j, c) for j, c in opens.items() if set(c) & set(tasks)]  # the write job: tasks, plan, commit
    assert set(per_process.values()) == {1}, per_process  # once per process
    assert sum(per_process[pid] for pid in tasks) < sum(tasks.values())  # a reused worker did not open it again
    log.unlink()
    with recording(spark, log):
        got = read_dataframe(spark, append, max_tasks=4).toArrow()
        write_dataframe(spark.createDataFrame(rows(300)), table)
    assert_same_rows(got, rows(600), ["dt", "id"])
    opens, _ = _opens(log)
    assert len(opens) >= 2 and all(set(c.values()) == {1} for c in opens.values()), opens
