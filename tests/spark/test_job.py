"""A Spark job's typed description (lakestore/spark/job.py), no Spark session: the table reference,
the scan and the overwritten partition round-trip through their JSON documents, unknown versions,
keys and kinds are refused naming the option, credentials are classified in one place and never
land in a reference, and a process opens a job's table once (lakestore/spark/tasks.job_table)."""

from __future__ import annotations

import datetime
import decimal
import json
import types

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lakestore
from lakestore.commit.snapshot_commit import RenamingSnapshotCommit
from lakestore.io.factory import file_io_for, publisher_for
from lakestore.io.fileio import LocalFileIO
from lakestore.io.lock import JdbcCatalogLock, LockOptions
from lakestore.io.publish import MetadataPublisher
from lakestore.io.s3 import S3Config, S3FileIO
from lakestore.io.secrets import CREDENTIAL_ENV, is_secret, secret_keys, without_secrets
from lakestore.scan import ScanSpec
from lakestore.spark import tasks
from lakestore.spark.job import (
    OVERWRITE_OPTION,
    SCAN_OPTION,
    TABLE_OPTION,
    TableRef,
    partition_from_json,
    partition_to_json,
    scan_from_json,
    scan_to_json,
    table_ref,
)
from lakestore.spark.options import overwrite_of, overwrite_option, scan_of, scan_option, table_options, table_ref_of

SCHEMA = pa.schema([("p", pa.string()), ("d", pa.date32()), ("id", pa.int64()), ("v", pa.string())])
S3_KEYS = {"s3.access-key": "AKIDEXAMPLE", "s3.secret-key": "wJalrXUtnFEMI", "s3.session-token": "FwoGZXIvYXdzE"}


@pytest.fixture
def table(catalog):
    return catalog.create_table("db.t", schema=SCHEMA, partition_keys=["p", "d"])


@pytest.fixture(autouse=True)
def _no_aws_environment(monkeypatch):
    for names in CREDENTIAL_ENV.values():
        for name in names:
            monkeypatch.delenv(name, raising=False)


# -- the table ------------------------------------------------------------------------------------
def test_a_table_reference_round_trips_and_opens_the_same_table_and_branch(table):
    table.write_arrow(pa.table({"p": ["x"], "d": [datetime.date(2024, 1, 1)], "id": [1], "v": ["a"]}, schema=SCHEMA))
    table.manage.create_tag("t1")
    dev = table.manage.create_branch("dev", tag="t1")
    for t in (table, dev):
        ref = table_ref(t)
        assert ref == TableRef(t.path, branch=t.branch, name="db.t")
        assert TableRef.from_json(ref.to_json()) == ref
        opened = ref.open()
        assert (opened.path, opened.branch, opened.identifier) == (t.path, t.branch, "db.t")
    by_name = TableRef("db.t", warehouse=table.path.rsplit("/", 2)[0], branch="dev")
    assert by_name.open().branch == "dev"
    assert table_ref_of(table_options(table)) == table_ref(table)


@given(
    st.builds(
        TableRef,
        st.text(min_size=1),
        warehouse=st.none() | st.text(),
        branch=st.none() | st.text(),
        name=st.none() | st.text(),
        options=st.dictionaries(st.text(), st.text(), max_size=4).map(lambda d: tuple(d.items())),
    )
)
def test_every_table_reference_round_trips(ref):
    assert TableRef.from_json(ref.to_json()) == ref


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("not json", "not a JSON document"),
        ("[1]", "JSON object"),
        (json.dumps({"table": "/t"}), "version None"),
        (json.dumps({"version": 2, "table": "/t"}), "version 2"),
        (json.dumps({"version": 1, "table": "/t", "file_io": "gASV"}), r"unknown keys \['file_io'\]"),
        (json.dumps({"version": 1}), r"missing keys \['table'\]"),
        (json.dumps({"version": 1, "table": 3}), "'table' must be str"),
        (json.dumps({"version": 1, "table": "/t", "options": {"a": 1}}), "strings to strings"),
    ],
)
def test_a_table_document_is_read_strictly(text, match):
    with pytest.raises(lakestore.OptionError, match=f"{TABLE_OPTION}.*{match}|{match}"):
        TableRef.from_json(text)
    with pytest.raises(lakestore.OptionError, match=TABLE_OPTION):
        TableRef.from_json(text)


def test_the_table_option_replaces_the_string_options_and_the_pickled_file_io_is_refused(table):
    options = table_options(table)
    with pytest.raises(lakestore.OptionError, match="cannot be combined"):
        table_ref_of({**options, "warehouse": "/elsewhere"})
    with pytest.raises(lakestore.OptionError, match="cannot be combined"):
        table_ref_of({**options, "s3.endpoint": "http://x"})
    with pytest.raises(lakestore.OptionError, match="lakestore.file-io"):
        table_ref_of({"path": table.path, "lakestore.file-io": "gASVAAAA"})
    # a user's own options stay theirs, credentials included (they chose to show them to Spark)
    user = table_ref_of({"path": "db.t", "warehouse": "/wh", "s3.secret-key": "mine"})
    assert user.catalog_options == {"s3.secret-key": "mine"} and "mine" not in repr(user)


# -- credentials ----------------------------------------------------------------------------------
def test_credentials_are_classified_in_one_place():
    aliases = ["s3.access-key", "fs.s3.accessKeyId", "s3a.access-key", "s3.access.key", "s3.secret-key", "fs.s3.accessKeySecret"]
    aliases += ["s3a.secret-key", "s3.secret.key", "s3.session-token", "fs.s3.securityToken", "s3a.session-token"]
    for key in [*aliases, "token", "jdbc.password", "dlf.access-key-secret", "my.Password", "oauth.token"]:
        assert is_secret(key), key
    for key in ["s3.endpoint", "s3.region", "uri", "jdbc.user", "lock.enabled", "catalog-key", "s3.path-style-access", "jdbc.sslmode"]:
        assert not is_secret(key, "value"), key
    assert is_secret("uri", "jdbc:postgresql://lake:pw@db:5432/locks")
    assert is_secret("uri", "jdbc:postgresql://db:5432/locks?user=lake&password=pw")
    assert not is_secret("uri", "jdbc:postgresql://lake@db:5432/locks?sslmode=require")
    options = {**S3_KEYS, "s3.endpoint": "http://s3", "token": "t", "jdbc.password": "p"}
    assert secret_keys(options) == sorted([*S3_KEYS, "token", "jdbc.password"])
    assert without_secrets(options) == {"s3.endpoint": "http://s3"}


def _fake_table(publisher: MetadataPublisher, path: str = "s3://b/wh/db.db/t"):
    """What table_ref reads of a table (no server: the reference is built without I/O)."""
    store = types.SimpleNamespace(
        file_io=publisher.file_io, publisher=publisher, snapshot_commit=RenamingSnapshotCommit(publisher), path=path, branch="main"
    )
    return types.SimpleNamespace(store=store, path=path, identifier="db.t", branch="main")


def _s3_table(options):
    file_io = file_io_for("s3://b/wh", options)
    return _fake_table(publisher_for(file_io, options))


def test_a_reference_never_holds_credentials_and_they_must_come_from_the_environment(monkeypatch):
    options = {"s3.endpoint": "http://127.0.0.1:9000", "s3.conditional-create": "true", **S3_KEYS}
    with pytest.raises(lakestore.OptionError, match="s3.access-key, s3.secret-key, s3.session-token") as refused:
        table_ref(_s3_table(options))
    assert "AWS_SECRET_ACCESS_KEY" in str(refused.value) and "wJalrXUtnFEMI" not in str(refused.value)
    executor_env = {"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI", "AWS_SESSION_TOKEN": "FwoGZXIvYXdzE"}
    with pytest.raises(lakestore.OptionError, match="s3.session-token"):  # a different value is not the same credential
        table_ref(_s3_table(options), environments=[{**executor_env, "AWS_SESSION_TOKEN": "other"}])
    ref = table_ref(_s3_table(options), environments=[executor_env])  # spark.executorEnv.* holds them
    assert not secret_keys(ref.catalog_options) and not any(v in ref.to_json() for v in S3_KEYS.values())
    assert ref.catalog_options["s3.endpoint"] == "http://127.0.0.1:9000" and ref.catalog_options["s3.conditional-create"] == "true"
    # the process's own environment serves too: the credentials come from there on both sides
    for name, value in executor_env.items():
        monkeypatch.setenv(name, value)
    from_env = table_ref(_s3_table({"s3.endpoint": "http://127.0.0.1:9000", "s3.conditional-create": "true"}))
    assert from_env == ref
    rebuilt = file_io_for("s3://b/wh", from_env.catalog_options)  # an executor: credentials from its environment
    assert rebuilt.config == _s3_table(options).store.file_io.config


def test_the_file_systems_describe_themselves_as_options(tmp_path, monkeypatch):
    config = S3Config(endpoint="https://s3.example", region="eu-west-1", path_style=False, request_timeout_s=12.5)
    s3 = S3FileIO(config, conditional_create=True)
    again = file_io_for("s3://b/x", s3.catalog_options())
    assert (again.config, again.conditional_create) == (s3.config, True)
    assert s3.catalog_options() is not None and not any(k.startswith("lock") for k in s3.catalog_options())  # no lock in it
    lock = LockOptions(uri=f"jdbc:sqlite:{tmp_path}/locks.db", user="lake", catalog_key="k", expire_ms=3000, acquire_timeout_ms=9000)
    locked = MetadataPublisher(LocalFileIO(), JdbcCatalogLock(lock), catalog_key="k")
    options = locked.catalog_options()
    assert options is not None and LocalFileIO().catalog_options() == {}  # the file system's options hold no lock
    rebuilt = publisher_for(file_io_for(str(tmp_path), options), options)  # what an executor builds
    assert type(rebuilt.file_io) is LocalFileIO and isinstance(rebuilt.lock, JdbcCatalogLock)
    assert rebuilt.lock.options == lock and rebuilt.catalog_key == "k"
    with_password = MetadataPublisher(LocalFileIO(), JdbcCatalogLock(LockOptions(uri="jdbc:postgresql://db/locks", password="pw")))
    table = _fake_table(with_password, str(tmp_path))
    with pytest.raises(lakestore.OptionError, match="jdbc.password: PGPASSWORD"):
        table_ref(table)
    monkeypatch.setenv("PGPASSWORD", "pw")
    assert "jdbc.password" not in table_ref(table).catalog_options
    built_in_code = _fake_table(MetadataPublisher(type("MyIO", (LocalFileIO,), {})()), "/t")
    with pytest.raises(lakestore.OptionError, match="MyIO"):
        table_ref(built_in_code)


def test_an_executor_opens_a_locked_table_under_the_same_lock(tmp_path):
    options = {"lock.enabled": "true", "uri": f"jdbc:sqlite:{tmp_path}/locks.db", "catalog-key": "k", "lock-acquire-timeout": "300 ms"}
    catalog = lakestore.Catalog(str(tmp_path / "wh"), options=options)
    catalog.create_database("db")
    table = catalog.create_table("db.t", schema=SCHEMA)
    ref = TableRef.from_json(table_ref(table).to_json())  # what Spark's processes receive
    assert ref.warehouse is None and ref.catalog_options["lock.enabled"] == "true"
    opened = ref.open()
    publisher = opened.store.publisher
    assert isinstance(publisher.lock, JdbcCatalogLock) and publisher.lock.options == catalog.publisher.lock.options
    assert publisher.catalog_key == "k" and opened.store.snapshot_commit.publisher is publisher
    other = JdbcCatalogLock.from_options(options)  # another process holds the table's lock: the executor waits
    with other.hold("k.db.t"), pytest.raises(lakestore.LockAcquireTimeoutError):
        opened.write_arrow(pa.table({"p": ["a"], "d": [datetime.date(2024, 1, 1)], "id": [1], "v": ["x"]}, schema=SCHEMA))
    other.close()
    opened.write_arrow(pa.table({"p": ["a"], "d": [datetime.date(2024, 1, 1)], "id": [1], "v": ["x"]}, schema=SCHEMA))
    assert table.to_arrow().num_rows == 1


# -- the scan and the overwrite -------------------------------------------------------------------
def test_the_scan_round_trips_with_its_filter_and_refuses_what_it_cannot_carry():
    pred = (lakestore.col("d") >= datetime.date(2024, 1, 1)) & lakestore.col("v").isin(["a", None]) | ~lakestore.col("id").is_null()
    for spec in (
        ScanSpec(),
        ScanSpec(columns=("v", "id"), filter=pred, snapshot_id=3, limit=0),
        ScanSpec(tag="t1", filter=lakestore.col("p") == "a,b=c"),
        ScanSpec(timestamp_ms=1_700_000_000_000),
        ScanSpec(watermark=5, columns=()),
    ):
        assert scan_from_json(scan_to_json(spec)) == spec
        assert scan_of(scan_option(spec)) == spec
    with pytest.raises(lakestore.OptionError, match="incremental"):
        scan_to_json(ScanSpec(incremental_between=(1, 2)))
    with pytest.raises(lakestore.OptionError, match=SCAN_OPTION):
        scan_to_json(ScanSpec(filter=lakestore.col("a") == [1]))
    for doc, match in [
        ({"version": 1, "incremental_between": [1, 2]}, "unknown keys"),
        ({"version": 1, "filter": {"kind": "regex"}}, "unknown predicate kind"),
        ({"version": 1, "limit": -1}, "non-negative"),
        ({"version": 1, "limit": True}, "'limit' must be int"),
        ({"version": 1, "snapshot_id": 1, "tag": "t"}, "at most one"),
        ({"version": 7}, "version 7"),
    ]:
        with pytest.raises(lakestore.OptionError, match=match):
            scan_of({SCAN_OPTION: json.dumps(doc)})


@given(
    st.dictionaries(
        st.sampled_from(["p", "d"]),
        st.one_of(st.text(), st.dates(), st.datetimes(), st.decimals(allow_nan=False), st.binary(), st.integers(), st.none()),
        min_size=1,
    )
)
def test_typed_partition_values_round_trip_exactly(partition):
    back = partition_from_json(partition_to_json(partition))
    assert back == partition and all(type(back[k]) is type(v) for k, v in partition.items())


def test_the_overwrite_option_carries_typed_values(table):
    typed = {"p": "a,b=c", "d": datetime.date(2024, 1, 3)}
    assert overwrite_of(table, overwrite_option(table, typed), True) == typed
    assert partition_from_json(partition_to_json({"p": decimal.Decimal("1.10")})) == {"p": decimal.Decimal("1.10")}
    with pytest.raises(lakestore.OptionError, match=OVERWRITE_OPTION):
        overwrite_of(table, {OVERWRITE_OPTION: json.dumps({"version": 1, "partition": {"p": {"pickle": "x"}}})}, True)


# -- one open per process and job -----------------------------------------------------------------
def test_a_process_opens_a_jobs_table_once_and_keeps_a_few(table, monkeypatch):
    opened: list[str] = []
    real_open = TableRef.open

    def counting_open(self):
        opened.append(self.table)
        return real_open(self)

    monkeypatch.setattr(TableRef, "open", counting_open)
    ref = table_ref(table)
    job = tasks.new_job_id()
    first = tasks.job_table(ref, job)
    assert tasks.job_table(TableRef.from_json(ref.to_json()), job) is first  # keyed by the reference's JSON
    assert len(opened) == 1
    assert tasks.job_table(ref, tasks.new_job_id()) is not first  # another job opens it afresh
    jobs = [tasks.new_job_id() for _ in range(tasks.TABLE_CACHE_SIZE)]
    for j in jobs:
        tasks.job_table(ref, j)
    assert len(opened) == 2 + tasks.TABLE_CACHE_SIZE
    tasks.job_table(ref, job)  # evicted: the cache is bounded
    assert len(opened) == 3 + tasks.TABLE_CACHE_SIZE
    tasks.job_table(ref, jobs[-1])  # still held
    assert len(opened) == 3 + tasks.TABLE_CACHE_SIZE
