"""A lakestore table and its lifecycle as declared in YAML (the ``attributes`` of a
``PaimonTableComponent``'s ``defs.yaml``), checked when it loads: the schema (a list of columns with
Paimon type names, or a ``module:attribute`` reference to a pyarrow schema), the keys, the table
options (only options lakestore implements), where ingestion finds a day's files, the lifecycle
stages and their schedules. No Dagster here: ``assets.common.tables`` reads the TPC-H declarations
with it too, and ``assets.lifecycle.component`` turns a declaration into Dagster definitions.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from assets.common.tables import TableSpec
from lakestore.errors import LakestoreError
from lakestore.format.types import DataField, DataType, parse_type
from lakestore.meta.options import validate as validate_options

Stage = Literal["ingest", "changelog", "compact", "tag", "expire"]
STAGES: tuple[Stage, ...] = ("ingest", "changelog", "compact", "tag", "expire")
# a stage's asset depends on the asset of the stage named here (the factories' wiring)
NEEDS = {"changelog": "ingest", "compact": "ingest", "tag": "compact", "expire": "tag"}
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


class DeclarationError(ValueError):
    """A table declaration that lakestore refuses (raised inside pydantic validation, so Dagster
    reports it with the ``defs.yaml`` location)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Column(_Strict):
    """One column: ``{name: o_orderkey, type: BIGINT NOT NULL}``. ``nullable: false`` is the same
    as ``NOT NULL`` in the type."""

    name: str
    type: str
    nullable: bool = True


class Landing(_Strict):
    """Where ingestion reads a day: ``<LandingResource root>/<folder>/<day column>=YYYY-MM-DD/*.parquet``."""

    folder: str | None = Field(default=None, description="Folder under the landing root (default: the table name).")
    asset: str | None = Field(default=None, description="Upstream asset key, slash-separated (default: landing/<table>).")
    external: bool = Field(
        default=True,
        description="True: the files arrive from outside; the component declares the upstream asset as an external asset. "
        "False: another asset of the project (materializable) writes them and the ingestion job runs it.",
    )
    expected_rows: Literal["none", "tpch"] = Field(
        default="none", description="tpch: also check each day's live rows against dbgen's bounds (the TPC-H pipeline)."
    )


class Partitions(_Strict):
    """The daily partitions of every stage (ISO days; ``end`` is exclusive, open-ended when absent)."""

    start: str
    end: str | None = None
    timezone: str = "UTC"
    calendar: str = Field(default="partition range", description="How schedules name the range when they skip a day outside it.")

    @field_validator("start", "end")
    @classmethod
    def _iso_day(cls, value: str | None) -> str | None:
        if value is not None and not _DAY.match(value):
            raise DeclarationError(f"partition bounds are ISO days (YYYY-MM-DD), got {value!r}")
        return value


class Schedule(_Strict):
    """A job running some stages of the table for the previous day's partition on a cron schedule.
    Tables naming the same job share it (its selection is the union of their stages); they must
    then agree on the cron, the schedule name, ``include`` and the description."""

    job: str
    stages: list[Stage]
    cron: str
    name: str | None = Field(default=None, description="Schedule name (default: <job>_schedule).")
    run_key_prefix: str | None = Field(default=None, description="Run keys are <prefix>-<day> (default: the job name).")
    include: str | None = Field(default=None, description="More assets for the job, as a Dagster asset selection string.")
    description: str | None = None

    @property
    def schedule_name(self) -> str:
        return self.name or f"{self.job}_schedule"

    @property
    def prefix(self) -> str:
        return self.run_key_prefix or self.job


class TableDeclaration(_Strict):
    """A lakestore table with its lifecycle (see the module docstring)."""

    name: str
    database: str = "default"
    columns: list[Column] | None = Field(default=None, description="The schema as a list of columns (or use schema_from).")
    schema_from: str | None = Field(default=None, description="module:attribute of a pyarrow.Schema (or use columns).")
    primary_keys: list[str] = []
    partition_keys: list[str]
    options: dict[str, str | int | float | bool] = {}
    landing: Landing = Landing()
    partitions: Partitions
    stages: list[Stage] = list(STAGES)
    schedules: list[Schedule] = []
    sorted_runs_sensor: bool = Field(default=False, description="The sorted_runs_sensor requests compaction runs for this table.")

    @field_validator("name", "database")
    @classmethod
    def _identifier(cls, value: str) -> str:
        if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", value):
            raise DeclarationError(f"table and database names are identifiers ([A-Za-z_][A-Za-z0-9_]*), got {value!r}")
        return value

    @model_validator(mode="after")
    def _check(self) -> TableDeclaration:
        schema = self.arrow_schema()  # raises on a bad schema
        names = set(schema.names)
        for kind, keys in (("primary key", self.primary_keys), ("partition key", self.partition_keys)):
            missing = [k for k in keys if k not in names]
            if missing:
                raise DeclarationError(f"{self.name}: {kind} column(s) {missing} not in the schema {sorted(names)}")
        if not self.partition_keys:
            raise DeclarationError(f"{self.name}: the lifecycle needs a day partition key (partition_keys: [dt])")
        day = schema.field(self.partition_keys[0])
        if not (pa.types.is_string(day.type) or pa.types.is_large_string(day.type)):
            raise DeclarationError(
                f"{self.name}: the first partition key {day.name!r} holds the day as YYYY-MM-DD: type STRING, not {day.type}"
            )
        if self.primary_keys and not set(self.partition_keys) <= set(self.primary_keys):
            raise DeclarationError(
                f"{self.name}: the primary keys {self.primary_keys} must include the partition keys {self.partition_keys}"
            )
        try:
            validate_options({k: _option_text(v) for k, v in self.options.items()})
        except LakestoreError as exc:
            raise DeclarationError(f"{self.name}: {exc}") from exc
        self._check_stages()
        return self

    def _check_stages(self) -> None:
        if len(set(self.stages)) != len(self.stages):
            raise DeclarationError(f"{self.name}: stages {self.stages} name a stage twice")
        if "ingest" not in self.stages:
            raise DeclarationError(f"{self.name}: the lifecycle starts with the ingest stage (stages: {self.stages})")
        for stage, needed in NEEDS.items():
            if stage in self.stages and needed not in self.stages:
                raise DeclarationError(f"{self.name}: stage {stage!r} needs stage {needed!r} (stages: {self.stages})")
        if "changelog" in self.stages and not self.primary_keys:
            raise DeclarationError(f"{self.name}: the changelog stage needs a primary-key table")
        if self.sorted_runs_sensor and "compact" not in self.stages:
            raise DeclarationError(f"{self.name}: sorted_runs_sensor requests compaction runs: add the compact stage")
        for schedule in self.schedules:
            outside = [s for s in schedule.stages if s not in self.stages]
            if outside or not schedule.stages:
                raise DeclarationError(
                    f"{self.name}: schedule of job {schedule.job!r} runs stages {schedule.stages}, not all declared in {self.stages}"
                )

    def arrow_schema(self) -> pa.Schema:
        """The table's schema: parsed from ``columns`` or imported from ``schema_from``."""
        if (self.columns is None) == (self.schema_from is None):
            raise DeclarationError(f"{self.name}: give exactly one of columns (a list) and schema_from (module:attribute)")
        if self.schema_from is not None:
            return import_schema(self.schema_from)
        if not self.columns:
            raise DeclarationError(f"{self.name}: columns is empty")
        fields = [column_field(c) for c in self.columns]
        if len({f.name for f in fields}) != len(fields):
            raise DeclarationError(f"{self.name}: a column name appears twice")
        return pa.schema(fields)

    def spec(self) -> TableSpec:
        """The ``TableSpec`` the lifecycle factories build from."""
        return TableSpec(
            self.name,
            self.arrow_schema(),
            tuple(self.primary_keys),
            tuple(self.partition_keys),
            {k: _option_text(v) for k, v in self.options.items()},
            lifecycle=True,
            database=self.database,
        )


def _option_text(value: str | int | float | bool) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def import_schema(reference: str) -> pa.Schema:
    """The pyarrow schema ``module:attribute`` names."""
    module_name, sep, attribute = reference.partition(":")
    if not sep or not module_name or not attribute:
        raise DeclarationError(f"schema_from is module:attribute, got {reference!r}")
    try:
        value = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise DeclarationError(f"schema_from {reference!r}: {exc}") from exc
    if not isinstance(value, pa.Schema):
        raise DeclarationError(f"schema_from {reference!r} is a {type(value).__name__}, not a pyarrow.Schema")
    return value


def column_field(column: Column) -> pa.Field:
    """A column as an Arrow field, its type parsed as Paimon type text."""
    try:
        data_type = parse_paimon_type(column.type)
    except (LakestoreError, ValueError, KeyError) as exc:
        raise DeclarationError(f"column {column.name!r}: {exc}") from exc
    nullable = data_type.nullable and column.nullable
    return pa.field(column.name, data_type.to_arrow(), nullable=nullable)


def parse_paimon_type(text: str) -> DataType:
    """Paimon type text, nested types too: ``ARRAY<INT>``, ``MAP<STRING, BIGINT>``,
    ``ROW<a STRING, b DECIMAL(15, 2) NOT NULL> NOT NULL``; other types go to lakestore's parser."""
    parser = _TypeText(text)
    data_type = parser.parse()
    if parser.rest().strip():
        raise DeclarationError(f"unexpected {parser.rest()!r} after the type in {text!r}")
    return data_type


class _TypeText:
    def __init__(self, text: str) -> None:
        self.text, self.pos = text, 0

    def rest(self) -> str:
        return self.text[self.pos :]

    def _skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def _expect(self, char: str) -> None:
        self._skip()
        if not self.text.startswith(char, self.pos):
            raise DeclarationError(f"expected {char!r} at {self.rest()!r} in {self.text!r}")
        self.pos += 1

    def _word(self) -> str:
        self._skip()
        match = re.compile(r"[A-Za-z_][A-Za-z0-9_]*").match(self.text, self.pos)
        if match is None:
            raise DeclarationError(f"expected a name at {self.rest()!r} in {self.text!r}")
        self.pos = match.end()
        return match.group(0)

    def _not_null(self) -> bool:
        match = re.compile(r"\s+NOT\s+NULL\b", re.I).match(self.text, self.pos)
        if match:
            self.pos = match.end()
            return False
        return True

    def parse(self) -> DataType:
        self._skip()
        head = re.compile(r"(ARRAY|MAP|ROW)\s*<", re.I).match(self.text, self.pos)
        if head is None:  # a flat type runs to the next ',' or '>' at this level
            match = re.compile(r"(?:[^,<>()]|\([^)]*\))+").match(self.text, self.pos)
            if match is None:
                raise DeclarationError(f"expected a type at {self.rest()!r} in {self.text!r}")
            self.pos = match.end()
            return parse_type(match.group(0).strip())
        self.pos = head.end()
        kind = head.group(1).upper()
        if kind == "ARRAY":
            element = self.parse()
            self._expect(">")
            return DataType("ARRAY", self._not_null(), element=element)
        if kind == "MAP":
            key = self.parse()
            self._expect(",")
            value = self.parse()
            self._expect(">")
            return DataType.map(key, value, nullable=self._not_null())
        fields: list[DataField] = []
        while True:
            name = self._word()
            fields.append(DataField(len(fields), name, self.parse()))
            self._skip()
            if self.text.startswith(",", self.pos):
                self.pos += 1
                continue
            self._expect(">")
            return DataType.row(fields, nullable=self._not_null())


def read_declaration(path: Path) -> TableDeclaration:
    """The declaration in a ``defs.yaml`` (its ``attributes``), without Dagster's templating."""
    document: Any = yaml.safe_load(path.read_text())
    if not isinstance(document, dict) or not isinstance(document.get("attributes"), dict):
        raise DeclarationError(f"{path}: expected a mapping with 'type' and 'attributes'")
    return TableDeclaration.model_validate(document["attributes"])
