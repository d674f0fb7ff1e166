"""The Hive catalog's options and typed errors: a bad ``uri``, an unreachable metastore, a
missing client package, ``hive-conf-dir``'s ``hive-site.xml``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

import lakestore
from lakestore.catalog.hive import HiveCatalog
from lakestore.errors import CatalogUnreachableError, InvalidCatalogUriError, OptionError
from tests.hms import Metastore
from tests.postgres import free_port

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("uri", ["http://hms:9083", "thrift://hms", "hms:9083", "thrift://hms:port", "thrift://hms:9083/db"])
def test_a_bad_uri_says_what_an_address_looks_like(tmp_path: Path, uri: str):
    with pytest.raises(InvalidCatalogUriError, match="thrift://host:port"):
        lakestore.Catalog(str(tmp_path), options={"metastore": "hive", "uri": uri})


def test_no_uri_and_no_conf_dir_names_both(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("HIVE_CONF_DIR", raising=False)
    with pytest.raises(InvalidCatalogUriError, match="needs option 'uri'.*hive-conf-dir"):
        lakestore.Catalog(str(tmp_path), options={"metastore": "hive"})
    with pytest.raises(InvalidCatalogUriError, match="hive-site.xml"):
        lakestore.Catalog(str(tmp_path), options={"metastore": "hive", "hive-conf-dir": str(tmp_path / "missing")})
    with pytest.raises(OptionError, match="client-pool-size"):
        lakestore.Catalog(str(tmp_path), options={"metastore": "hive", "uri": "thrift://h:9083", "client-pool-size": "0"})


def test_an_unreachable_metastore_is_a_typed_error(tmp_path: Path):
    port = free_port()  # nothing listens there
    with pytest.raises(CatalogUnreachableError, match=f"thrift://127.0.0.1:{port}.*check that the metastore runs"):
        lakestore.Catalog(str(tmp_path), options={"metastore": "hive", "uri": f"thrift://127.0.0.1:{port}"})


def test_a_missing_client_package_says_what_to_install(tmp_path: Path):
    code = (
        "import sys; sys.modules['thrift'] = None; sys.modules['hive_metastore'] = None\n"
        "import lakestore\n"
        "try:\n"
        f"    lakestore.Catalog({str(tmp_path)!r}, options={{'metastore': 'hive', 'uri': 'thrift://127.0.0.1:9083'}})\n"
        "except lakestore.MissingDriverError as exc:\n"
        "    print('MissingDriverError', exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert "MissingDriverError" in out.stdout and "pip install 'lakestore[hive]'" in out.stdout, out.stdout + out.stderr


def test_hive_conf_dir_gives_the_uri_and_the_warehouse(metastore: Metastore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "hive-site.xml").write_text(
        '<?xml version="1.0"?><configuration>'
        f"<property><name>hive.metastore.uris</name><value>{metastore.uri}</value></property>"
        f"<property><name>hive.metastore.warehouse.dir</name><value>{tmp_path}/hwh</value></property>"
        "</configuration>"
    )
    catalog = lakestore.Catalog("", options={"metastore": "hive", "hive-conf-dir": str(conf)})
    assert isinstance(catalog, HiveCatalog) and catalog.warehouse == f"{tmp_path}/hwh"
    monkeypatch.setenv("HIVE_CONF_DIR", str(conf))  # Paimon's fallback when hive-conf-dir is not set
    from_env = lakestore.Catalog(str(tmp_path / "wh"), options={"metastore": "hive"})
    assert from_env.address.text() == metastore.uri
    catalog.create_database("confdir", exist_ok=True)
    table = catalog.create_table("confdir.t", schema=pa.schema([("id", pa.int64())]), exist_ok=True)
    assert table.path == f"{tmp_path}/hwh/confdir.db/t"
    catalog.drop_database("confdir", cascade=True)
