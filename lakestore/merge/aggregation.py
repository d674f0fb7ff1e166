"""The aggregation merge engine: each value column has an aggregate function
(``fields.<f>.aggregate-function``, default ``last_non_null_value``), evaluated per key group
with Arrow's grouped kernels.

Retractions (-U/-D) subtract for sum and count and divide for product; for other functions
they raise ``MergeEngineError`` unless ``fields.<f>.ignore-retract`` is set. ``count`` is made
compaction-stable by turning each input row into 1 (non-null) or 0 when it is written, after
which merging sums the stored counts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from lakestore.errors import MergeEngineError, OptionError
from lakestore.format.arrow_ops import as_numpy, from_numpy, indices
from lakestore.format.kv import DELETE, INSERT, VALUE_KIND
from lakestore.format.types import DataType
from lakestore.merge.engine import (
    Groups,
    MergeEngine,
    delete_bases,
    first_valid_index,
    keep_lone_rows,
    last_valid_index,
    retract_mask,
    take_or_null,
)
from lakestore.merge.nested_agg import NESTED_FUNCTIONS, aggregate_nested, check_nested_function

_RETRACTABLE = {"sum", "count", "product", "last_value", "last_non_null_value"}
_PICKING = {"last_value", "last_non_null_value", "first_value", "first_non_null_value"}
_NUMERIC = {"TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL"}
# Java's Character.isWhitespace, what Paimon's StringUtils.isBlank tests (blank: only these)
_JAVA_WHITESPACE = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \u1680" + "".join(map(chr, range(0x2000, 0x2007))) + "\u2008\u2009\u200a\u2028\u2029\u205f\u3000"
)
_JAVA_BLANK = "^[" + "".join(f"\\x{{{ord(c):x}}}" for c in _JAVA_WHITESPACE) + "]*$"  # RE2


def is_java_blank(text: str) -> bool:
    return not text.strip(_JAVA_WHITESPACE)


class AggregationEngine(MergeEngine):
    name = "aggregation"

    def __init__(
        self,
        *,
        value_types: Mapping[str, DataType],
        functions: Mapping[str, str],
        ignore_retract: Mapping[str, bool],
        delimiters: Mapping[str, str],
        default_function: str | None,
        distinct: Mapping[str, bool] | None = None,
        nested_keys: Mapping[str, Sequence[str]] | None = None,
        remove_record_on_delete: bool = False,
    ) -> None:
        self.functions: dict[str, str] = {}
        # Paimon's aggregation.remove-record-on-delete: a -D removes the key; its values seed the
        # aggregation of the key's later rows (AggregateMergeFunction.initRow)
        self.remove_record_on_delete = self.keeps_deletes = remove_record_on_delete
        self.distinct = dict(distinct or {})
        self.nested_keys = {name: tuple(keys) for name, keys in (nested_keys or {}).items()}
        for name, dtype in value_types.items():
            function = functions.get(name) or default_function or "last_non_null_value"
            if function in NESTED_FUNCTIONS or name in self.nested_keys:
                check_nested_function(
                    name, function, dtype, distinct=self.distinct.get(name, False), nested_key=self.nested_keys.get(name, ())
                )
            elif dtype.is_nested and function not in _PICKING:
                raise OptionError(f"aggregate function {function!r} cannot aggregate the nested column {name!r} ({dtype})")
            if function in ("sum", "product", "count") and dtype.root not in _NUMERIC:
                raise OptionError(f"aggregate function {function!r} of column {name!r} needs a numeric type, not {dtype}")
            if function in ("bool_and", "bool_or") and dtype.root != "BOOLEAN":
                raise OptionError(f"aggregate function {function!r} of column {name!r} needs BOOLEAN")
            if function == "listagg" and not dtype.is_string:
                raise OptionError(f"listagg of column {name!r} needs a string type")
            self.functions[name] = function
        self.ignore_retract = dict(ignore_retract)
        self.delimiters = dict(delimiters)
        if remove_record_on_delete:
            for name, ignore in self.ignore_retract.items():
                if ignore:
                    raise OptionError(f"aggregation.remove-record-on-delete and fields.{name}.ignore-retract conflict (as in Paimon)")

    def seeding_options(self) -> tuple[str, ...]:
        return ("aggregation.remove-record-on-delete",) if self.remove_record_on_delete else ()

    def prepare_input(self, rows: pa.Table) -> pa.Table:
        retract = retract_mask(rows)
        if self.remove_record_on_delete:  # -D rows remove the key: only -U rows retract
            retract &= as_numpy(rows.column(VALUE_KIND)) != DELETE
        has_retract = bool(retract.any())
        for name, function in self.functions.items():
            if has_retract and function not in _RETRACTABLE and not self.ignore_retract.get(name, False):
                raise MergeEngineError(
                    f"aggregate function {function!r} of column {name!r} cannot retract (-U/-D);"
                    f" set 'fields.{name}.ignore-retract' = 'true'"
                )
            if function == "count":
                column = rows.column(name)
                ones = pc.if_else(pc.is_valid(column), 1, 0).cast(column.type)
                rows = rows.set_column(rows.schema.get_field_index(name), name, ones)
        return rows

    def merge(self, rows: pa.Table, key_columns: Sequence[str]) -> pa.Table:
        if rows.num_rows == 0:
            return rows
        if self.remove_record_on_delete:
            kinds = as_numpy(rows.column(VALUE_KIND))
            if (kinds == DELETE).any():
                return self._merge_with_deletes(rows, key_columns, kinds)
        return self._merge(rows, key_columns)

    def _merge_with_deletes(self, rows: pa.Table, key_columns: Sequence[str], kinds: np.ndarray) -> pa.Table:
        """Paimon's AggregateMergeFunction with remove-record-on-delete: the key's rows before
        its last -D are forgotten, the -D row's values are the accumulator the later rows
        aggregate onto (as an insert of those values would), and a key whose last row is the -D
        merges to DELETE."""
        groups = Groups.of(rows, key_columns)
        base = delete_bases(rows, groups, leading=False)
        ended_deleted = kinds[groups.lasts] == DELETE
        keep = np.arange(rows.num_rows) >= np.repeat(base, groups.ends - groups.starts)
        seeded = rows.set_column(
            rows.schema.get_field_index(VALUE_KIND), VALUE_KIND, from_numpy(np.where(kinds == DELETE, INSERT, kinds).astype(np.int8))
        ).filter(from_numpy(keep))
        merged = self._merge(seeded, key_columns)
        n = rows.num_rows
        positions = np.arange(n)
        sizes = groups.ends - groups.starts
        for name, function in self.functions.items():
            if function in ("first_value", "first_non_null_value"):
                # stateful in Paimon: the first insert of the merge (non-null one) initialises the
                # aggregator, which a -D does not reset: the -D's value stays if one came before
                column = rows.column(name)
                counted = kinds != DELETE
                if function == "first_non_null_value" and column.null_count:
                    counted &= as_numpy(pc.is_valid(column))
                first = np.minimum.reduceat(np.where(counted, positions, n), groups.starts)
                later = np.minimum.reduceat(np.where(counted & (positions > np.repeat(base, sizes)), positions, n), groups.starts)
                index = np.where((first < base) | (later >= groups.ends), base, later)
                chosen = take_or_null(column, np.where(base >= 0, index, -1))
                current = merged.column(name)
                merged = merged.set_column(merged.schema.get_field_index(name), name, pc.if_else(from_numpy(base >= 0), chosen, current))
            if function == "listagg":
                # a blank -D value stays the accumulator until a non-blank value replaces it
                seed = take_or_null(rows.column(name), base)
                column = merged.column(name)
                merged = merged.set_column(merged.schema.get_field_index(name), name, pc.if_else(pc.is_null(column), seed, column))
        merged = merged.set_column(
            merged.schema.get_field_index(VALUE_KIND), VALUE_KIND, from_numpy(np.where(ended_deleted, DELETE, INSERT).astype(np.int8))
        )
        return keep_lone_rows(merged, rows, groups)

    def _merge(self, rows: pa.Table, key_columns: Sequence[str]) -> pa.Table:
        groups = Groups.of(rows, key_columns)
        retract = retract_mask(rows)
        ids = groups.ids()
        columns = []
        for name in rows.column_names:
            column = rows.column(name)
            function = self.functions.get(name)
            if name == VALUE_KIND:
                columns.append(from_numpy(np.full(groups.count, INSERT, dtype=np.int8)))
            elif name in key_columns or function is None:
                columns.append(column.take(indices(groups.lasts)))
            else:
                merged = self._aggregate(name, function, column, groups, ids, retract)
                columns.append(merged.cast(column.type) if merged.type != column.type else merged)
        return pa.Table.from_arrays(columns, schema=rows.schema)

    def _aggregate(
        self, name: str, function: str, column: pa.ChunkedArray, groups: Groups, ids: np.ndarray, retract: np.ndarray
    ) -> pa.Array:
        if function == "product" and retract.any() and pa.types.is_integer(column.type) and not self.ignore_retract.get(name, False):
            return self._integer_product_with_retract(name, column, groups, ids, retract)
        if retract.any():
            if self.ignore_retract.get(name, False) or function not in _RETRACTABLE:
                column = pc.if_else(from_numpy(retract), pa.nulls(len(column), column.type), column)
            elif function in ("sum", "count"):
                column = pc.if_else(from_numpy(retract), pc.negate(column), column)
            elif function == "product":
                column = pc.if_else(from_numpy(retract), pc.divide(pa.scalar(1.0), column.cast(pa.float64())), column.cast(pa.float64()))
            elif function in ("last_value", "last_non_null_value"):
                column = pc.if_else(from_numpy(retract), pa.nulls(len(column), column.type), column)
        if function == "last_value":
            return take_or_null(column, groups.lasts)
        if function == "first_value":
            return take_or_null(column, groups.starts)
        if function == "last_non_null_value":
            return take_or_null(column, last_valid_index(column, groups))
        if function == "first_non_null_value":
            return take_or_null(column, first_valid_index(column, groups))
        if function == "listagg":
            return self._listagg(name, column, groups, ids)
        if function in NESTED_FUNCTIONS:
            return aggregate_nested(
                function, column, groups.starts, ids, distinct=self.distinct.get(name, False), nested_key=self.nested_keys.get(name, ())
            )
        kernel = {
            "sum": "sum",
            "count": "sum",
            "product": "product",
            "min": "min",
            "max": "max",
            "bool_and": "all",
            "bool_or": "any",
        }[function]
        table = pa.table({"g": from_numpy(ids), "v": column})
        if column.null_count:
            table = table.filter(pc.is_valid(table.column("v")))
        result = table.group_by("g", use_threads=False).aggregate([("v", kernel)])
        values = result.column(f"v_{kernel}")
        position = np.full(groups.count, -1, dtype=np.int64)
        position[as_numpy(result.column("g"))] = np.arange(result.num_rows)
        return take_or_null(values, position)

    def _listagg(self, name: str, column: pa.ChunkedArray, groups: Groups, ids: np.ndarray) -> pa.Array:
        """Paimon 2.0's listagg: the key's non-blank values joined by the delimiter, in order
        (blank = empty or Java whitespace only, skipped since Paimon 2.0; 0.9 to 1.4 joined them).
        ``fields.<f>.distinct``: a value adds only its delimiter-separated tokens that are neither
        blank nor already in the result (the first value is kept whole)."""
        delimiter = self.delimiters.get(name, ",")
        keep = pc.invert(pc.fill_null(pc.match_substring_regex(column, _JAVA_BLANK), True))
        if self.distinct.get(name, False):
            out: list[str | None] = [None] * groups.count
            tokens: dict[int, set[str]] = {}
            for value, group in zip(column.filter(keep).to_pylist(), ids[as_numpy(keep)].tolist(), strict=True):
                seen = tokens.get(group)
                if seen is None:
                    out[group], tokens[group] = value, set(value.split(delimiter))
                    continue
                added = [t for t in value.split(delimiter) if t not in seen and not is_java_blank(t)]
                if added:
                    seen.update(added)
                    out[group] = delimiter.join([out[group] or "", *added])
            return pa.array(out, column.type)
        table = pa.table({"g": from_numpy(ids), "v": column}).filter(keep)
        result = table.group_by("g", use_threads=False).aggregate([("v", "list")])
        position = np.full(groups.count, -1, dtype=np.int64)
        position[as_numpy(result.column("g"))] = np.arange(result.num_rows)
        return take_or_null(pc.binary_join(result.column("v_list"), delimiter), position)

    def _integer_product_with_retract(
        self, name: str, column: pa.ChunkedArray, groups: Groups, ids: np.ndarray, retract: np.ndarray
    ) -> pa.Array:
        """Product of the inserted values divided by the product of the retracted ones, in
        float64 then rounded back to the integer type. The result must be an integer: a merged
        row cannot store a fraction, and (unlike Paimon, whose integer division or lone
        retraction silently give a value that later merges get wrong) lakestore refuses such a
        write with a typed error. A retraction therefore has to meet its insert in one merge."""
        floats = column.cast(pa.float64())
        inverted = pc.if_else(from_numpy(retract), pc.divide(pa.scalar(1.0), floats), floats)
        merged = self._aggregate(name, "product", inverted, groups, ids, np.zeros(len(retract), dtype=bool))
        values = np.asarray(merged.to_numpy(zero_copy_only=False), dtype=np.float64)
        rounded = np.rint(values)
        valid = ~np.isnan(values)
        inexact = valid & (np.abs(values - rounded) > 1e-9 * np.maximum(1.0, np.abs(values)))
        if inexact.any():
            raise MergeEngineError(
                f"product of integer column {name!r}: a -U/-D retracts a value that is not merged with it "
                f"(the result {float(values[inexact][0])!r} is not an integer); write the retraction together with its insert, "
                f"use a DOUBLE/DECIMAL column or set 'fields.{name}.ignore-retract' = 'true'"
            )
        return from_numpy(np.where(valid, rounded, 0).astype(np.int64), null=~valid).cast(column.type)
