"""What Paimon 2.0's HiveCatalog writes into the Hive Metastore for a Paimon table: the HMS
``Table`` (``newHmsTable`` + ``updateHmsTable``), its columns with Hive type names
(``HiveTypeUtils``), its parameters (``sync-all-properties``), and partition objects.
"""

from __future__ import annotations

import getpass
import time
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import unquote

from lakestore.format.types import DataField, DataType
from lakestore.io.hive_metastore import ttypes
from lakestore.meta.schema import TableSchema

TABLE_TYPE_PROP = "table_type"
PAIMON_TABLE_TYPE = "PAIMON"
STORAGE_HANDLER_PROP = "storage_handler"  # hive_metastoreConstants.META_TABLE_STORAGE
STORAGE_HANDLER = "org.apache.paimon.hive.PaimonStorageHandler"
INPUT_FORMAT = "org.apache.paimon.hive.mapred.PaimonInputFormat"
OUTPUT_FORMAT = "org.apache.paimon.hive.mapred.PaimonOutputFormat"
SERDE = "org.apache.paimon.hive.PaimonSerDe"
EXTERNAL_PROP = "EXTERNAL"
# HMS 4's MetastoreDefaultTransformer marks a MANAGED_TABLE it stored as EXTERNAL_TABLE with this
TRANSLATED_TO_EXTERNAL = "TRANSLATED_TO_EXTERNAL"
LOCATION_PROP = "paimon_location"  # location-in-properties (LocationKeyExtractor.TBPROPERTIES_LOCATION_KEY)
COMMENT_PROP = "comment"
MANAGED_TABLE = "MANAGED_TABLE"
EXTERNAL_TABLE = "EXTERNAL_TABLE"
HIVE_PREFIX = "hive."
_KEPT_WITHOUT_SYNC = ("partition.expiration-time", "data-file.path-directory")
MAX_CHAR_LENGTH = 255  # HiveChar.MAX_CHAR_LENGTH
MAX_VARCHAR_LENGTH = 65535  # HiveVarchar.MAX_VARCHAR_LENGTH
TAG_TO_PARTITION = "metastore.tag-to-partition"
PARTITIONED_TABLE = "metastore.partitioned-table"


def hive_type(dtype: DataType) -> str:
    """Hive's type name of a Paimon type, as ``HiveTypeUtils.toTypeInfo(type).getTypeName()``."""
    root = dtype.root
    simple = {
        "BOOLEAN": "boolean",
        "TINYINT": "tinyint",
        "SMALLINT": "smallint",
        "INT": "int",
        "INTEGER": "int",
        "BIGINT": "bigint",
        "FLOAT": "float",
        "DOUBLE": "double",
        "DATE": "date",
        "TIME": "string",
        "TIME_WITHOUT_TIME_ZONE": "string",
        "TIMESTAMP": "timestamp",
        "TIMESTAMP_WITHOUT_TIME_ZONE": "timestamp",
        "TIMESTAMP_LTZ": "timestamp with local time zone",
        "TIMESTAMP_WITH_LOCAL_TIME_ZONE": "timestamp with local time zone",
        "BINARY": "binary",
        "VARBINARY": "binary",
        "BYTES": "binary",
        "BLOB": "binary",
        "STRING": "string",
        "VARIANT": "struct<value:binary,metadata:binary>",
    }
    if root in simple:
        return simple[root]
    if root == "DECIMAL":
        return f"decimal({dtype.precision},{dtype.scale})"
    if root in ("CHAR", "VARCHAR"):
        limit = MAX_CHAR_LENGTH if root == "CHAR" else MAX_VARCHAR_LENGTH
        if dtype.length is None or dtype.length > limit:
            return "string"
        return f"{root.lower()}({dtype.length})"
    if root in ("ARRAY", "VECTOR"):
        assert dtype.element is not None
        return f"array<{hive_type(dtype.element)}>"
    if root == "MULTISET":
        assert dtype.element is not None
        return f"map<{hive_type(dtype.element)},int>"
    if root == "MAP":
        assert dtype.key is not None and dtype.value is not None
        return f"map<{hive_type(dtype.key)},{hive_type(dtype.value)}>"
    if root == "ROW":
        return "struct<" + ",".join(f"{f.name}:{hive_type(f.type)}" for f in dtype.fields) + ">"
    return "string"


def _field_schema(field: DataField) -> Any:
    return ttypes().FieldSchema(name=field.name, type=hive_type(field.type), comment=field.description)


def current_user() -> str:
    try:
        return getpass.getuser()
    except Exception:
        return "lakestore"


def table_parameters(schema: TableSchema, *, sync_all_properties: bool) -> dict[str, str]:
    """The parameters Paimon mirrors from the table's options (``sync-all-properties``, default
    true: every option plus ``primary-key``, ``partition``, ``bucket-key``; false: ``hive.*``
    options without the prefix, ``partition.expiration-time`` and ``data-file.path-directory``)."""
    options = {str(k): str(v) for k, v in schema.options.items()}
    if sync_all_properties:
        params = dict(options)
        for key, values in (("primary-key", schema.primary_keys), ("partition", schema.partition_keys), ("bucket-key", schema.bucket_keys)):
            if values:
                params[key] = ",".join(values)
        return params
    params = {k[len(HIVE_PREFIX) :]: v for k, v in options.items() if k.startswith(HIVE_PREFIX)}
    params.update({k: options[k] for k in _KEPT_WITHOUT_SYNC if k in options})
    return params


def metastore_partitioned(schema: TableSchema) -> bool:
    """Whether HMS holds partitions of this table (Paimon's ``metastorePartitioned``)."""
    options = schema.options
    partitioned = bool(schema.partition_keys) and str(options.get(PARTITIONED_TABLE, "false")).lower() == "true"
    return partitioned or bool(options.get(TAG_TO_PARTITION))


def new_hms_table(
    database: str,
    table: str,
    schema: TableSchema,
    location: str,
    *,
    external: bool,
    sync_all_properties: bool,
    location_in_properties: bool,
) -> Any:
    """The HMS ``Table`` Paimon's ``createHiveTable`` registers."""
    t = ttypes()
    now = int(time.time())
    params = table_parameters(schema, sync_all_properties=sync_all_properties)
    params[TABLE_TYPE_PROP] = PAIMON_TABLE_TYPE
    params[STORAGE_HANDLER_PROP] = STORAGE_HANDLER
    if external:
        params[EXTERNAL_PROP] = "TRUE"
    hms_table = t.Table(
        tableName=table,
        dbName=database,
        owner=current_user(),
        createTime=now,
        lastAccessTime=now,
        retention=2**31 - 1,
        partitionKeys=[],
        parameters=params,
        tableType=EXTERNAL_TABLE if external else MANAGED_TABLE,
    )
    update_hms_table(hms_table, schema, location, location_in_properties=location_in_properties)
    return hms_table


def update_hms_table(hms_table: Any, schema: TableSchema, location: str, *, location_in_properties: bool) -> None:
    """Formats, SerDe, columns, partition keys, comment and location (Paimon's ``updateHmsTable``)."""
    t = ttypes()
    sd = hms_table.sd if hms_table.sd is not None else t.StorageDescriptor()
    sd.inputFormat = INPUT_FORMAT
    sd.outputFormat = OUTPUT_FORMAT
    serde = sd.serdeInfo if sd.serdeInfo is not None else t.SerDeInfo()
    serde.parameters = {}
    serde.serializationLib = SERDE
    sd.serdeInfo = serde
    tag_field = schema.options.get(TAG_TO_PARTITION)
    if schema.partition_keys and str(schema.options.get(PARTITIONED_TABLE, "false")).lower() == "true":
        keys = set(schema.partition_keys)
        hms_table.partitionKeys = [_field_schema(schema.field(k)) for k in schema.partition_keys]
        sd.cols = [_field_schema(f) for f in schema.fields if f.name not in keys]
    else:
        if tag_field:
            hms_table.partitionKeys = [t.FieldSchema(name=tag_field, type="string", comment=None)]
        else:
            hms_table.partitionKeys = []
        sd.cols = [_field_schema(f) for f in schema.fields]
    if sd.parameters is None:
        sd.parameters = {}
    hms_table.sd = sd
    if hms_table.parameters is None:
        hms_table.parameters = {}
    if schema.comment is not None:
        hms_table.parameters[COMMENT_PROP] = schema.comment
    if location_in_properties:
        hms_table.parameters[LOCATION_PROP] = location
    else:
        sd.location = location


def table_location(hms_table: Any) -> str | None:
    """The table's location: ``paimon_location`` when set, else ``sd.location``."""
    location = (hms_table.parameters or {}).get(LOCATION_PROP)
    if location:
        return str(location)
    return hms_table.sd.location if hms_table.sd is not None else None


def is_paimon_table(hms_table: Any) -> bool:
    """Paimon recognises its tables by their input and output formats (``isPaimonTable``)."""
    sd = hms_table.sd
    return sd is not None and sd.inputFormat == INPUT_FORMAT and sd.outputFormat == OUTPUT_FORMAT


def is_external(hms_table: Any) -> bool:
    """External as Paimon decides it (``tableType``), except that a managed table HMS 4 stored as
    external (``TRANSLATED_TO_EXTERNAL=TRUE``) stays managed: lakestore's drop deletes its data."""
    params = hms_table.parameters or {}
    if str(params.get(TRANSLATED_TO_EXTERNAL, "")).upper() == "TRUE":
        return False
    return hms_table.tableType == EXTERNAL_TABLE


def partition_spec(partition_path: str) -> dict[str, str]:
    """``dt=2024-01-01/hr=3`` -> {"dt": "2024-01-01", "hr": "3"} (escaped values decoded)."""
    spec: dict[str, str] = {}
    for part in partition_path.strip("/").split("/"):
        if part:
            key, _, value = part.partition("=")
            spec[unquote(key)] = unquote(value)
    return spec


def new_partitions(database: str, table: str, hms_table: Any, paths: Sequence[str], keys: Sequence[str]) -> list[Any]:
    """HMS ``Partition`` objects for partition paths (relative to the table), as Paimon's
    ``createPartitionsUtil`` builds them: the table's storage descriptor with the partition's
    location (``paimon_location`` with ``location-in-properties``)."""
    t = ttypes()
    now = int(time.time())
    base = (table_location(hms_table) or "").rstrip("/")
    in_properties = LOCATION_PROP in (hms_table.parameters or {})
    out = []
    for path in paths:
        spec = partition_spec(path)
        sd = t.StorageDescriptor(
            cols=hms_table.sd.cols,
            location=None,
            inputFormat=hms_table.sd.inputFormat,
            outputFormat=hms_table.sd.outputFormat,
            serdeInfo=hms_table.sd.serdeInfo,
            parameters={},
        )
        params: dict[str, str] = {}
        location = f"{base}/{path.strip('/')}"
        if in_properties:
            params[LOCATION_PROP] = location
        else:
            sd.location = location
        out.append(
            t.Partition(
                values=[spec.get(k, "") for k in keys],
                dbName=database,
                tableName=table,
                createTime=now,
                lastAccessTime=now,
                sd=sd,
                parameters=params,
            )
        )
    return out


def partition_statistics(stats: Mapping[str, int], last_update_s: int, total_buckets: int) -> dict[str, str]:
    """The parameters Paimon's ``alterPartitions`` sets from ``PartitionStatistics``."""
    return {
        "numFiles": str(stats["files"]),
        "totalSize": str(stats["bytes"]),
        "numRows": str(stats["rows"]),
        "lastUpdateTime": str(last_update_s),
        "totalBuckets": str(total_buckets),
        "transient_lastDdlTime": str(last_update_s),
    }
