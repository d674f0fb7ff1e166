"""The Dagster resource and the CLI open the Hive catalog with its options (arbitrary catalog
options pass through both)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pyarrow as pa
import pytest

import lakestore
from lakestore.catalog.hive import HiveCatalog
from lakestore.cli import main as cli_main
from tests.hms import Metastore


def test_the_resource_and_the_cli_take_the_hive_options(metastore: Metastore, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    pytest.importorskip("dagster", reason="the Dagster resource needs the pipeline extra (pip install -e '.[pipeline]')")
    from resources.lakestore_catalog import LakestoreResource

    wh = tmp_path / "wh"
    resource = LakestoreResource(
        warehouse=str(wh),
        metastore="hive",
        catalog_uri=metastore.uri,
        catalog_extra_options={"location-in-properties": "true", "client-pool-size": "3"},
    )
    assert resource.catalog_options() == {
        "metastore": "hive",
        "uri": metastore.uri,
        "location-in-properties": "true",
        "client-pool-size": "3",
    }
    catalog = resource.open()
    assert isinstance(catalog, HiveCatalog) and catalog.location_in_properties and catalog.address.pool_size == 3
    db = f"cli_{uuid.uuid4().hex[:8]}"
    catalog.create_database(db)
    catalog.create_table(f"{db}.t", schema=pa.schema([("id", pa.int64())])).write_arrow(pa.table({"id": [1, 2]}))
    options = ["-o", "metastore=hive", "-o", f"uri={metastore.uri}", "-o", "location-in-properties=true"]
    assert cli_main(["-w", str(wh), *options, "--json", "tables"]) == 0
    assert {"table": f"{db}.t"} in json.loads(capsys.readouterr().out)
    assert cli_main(["-w", str(wh), *options, "--json", "databases"]) == 0
    assert db in capsys.readouterr().out
    assert cli_main(["-w", str(wh), "-o", "metastore=hive", "-o", "uri=http://nowhere", "databases"]) == 1
    assert "thrift://host:port" in capsys.readouterr().err
    assert lakestore.Catalog(str(wh), options=resource.catalog_options()).get_table(f"{db}.t").to_arrow().num_rows == 2
