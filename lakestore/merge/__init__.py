"""Merge engines and the factory choosing one from a table's options."""

from lakestore.errors import OptionError, UnsupportedTableError
from lakestore.merge.aggregation import AggregationEngine
from lakestore.merge.engine import DeduplicateEngine, FirstRowEngine, MergeEngine, drop_retracts, retract_count
from lakestore.merge.partial_update import PartialUpdateEngine
from lakestore.meta.schema import TableSchema


def create_merge_engine(schema: TableSchema) -> MergeEngine:
    options = schema.core_options()
    engine = options.merge_engine
    value_fields = [f for f in schema.fields if f.name not in schema.primary_keys]
    if engine == "deduplicate":
        return DeduplicateEngine(ignore_delete=options.ignore_delete)
    if engine == "first-row":
        return FirstRowEngine(ignore_delete=options.ignore_delete)
    if engine == "partial-update":
        sequence_groups = options.field_options("sequence-group")
        seq_fields = {c for seq in sequence_groups for c in seq.split(",")}
        grouped = {c for members in sequence_groups.values() for c in members}
        explicit = options.field_options("aggregate-function")
        default = options.default_aggregate_function
        # Paimon aggregates no sequence field; last_non_null_value outside sequence groups is what
        # partial-update does anyway; other functions Paimon evaluates within their sequence
        # group (agg, or aggReversed for an older group sequence): not implemented here
        keys = tuple(
            f"fields.{f.name}.aggregate-function" if f.name in explicit else "fields.default-aggregate-function"
            for f in value_fields
            if f.name not in seq_fields
            and (explicit.get(f.name) or default)
            and ((explicit.get(f.name) or default) != "last_non_null_value" or f.name in grouped)
        )
        if keys:
            keys = tuple(dict.fromkeys(keys))
            raise UnsupportedTableError(f"partial-update with aggregate functions ({', '.join(keys)}) is not implemented", options=keys)
        return PartialUpdateEngine(
            value_columns=[f.name for f in value_fields],
            sequence_groups=sequence_groups,
            ignore_delete=options.ignore_delete,
        )
    if engine == "aggregation":
        return AggregationEngine(
            value_types={f.name: f.type for f in value_fields},
            functions=options.field_options("aggregate-function"),
            ignore_retract=options.field_options("ignore-retract"),
            delimiters=options.field_options("list-agg-delimiter"),
            default_function=options.default_aggregate_function,
            distinct=options.field_options("distinct"),
            nested_keys=options.field_options("nested-key"),
        )
    raise OptionError(f"merge-engine {engine!r} is not implemented")


__all__ = ["MergeEngine", "create_merge_engine", "drop_retracts", "retract_count"]
