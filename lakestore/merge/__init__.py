"""Merge engines and the factory choosing one from a table's options."""

from lakestore.errors import OptionError, UnsupportedTableError
from lakestore.merge.aggregation import AggregationEngine
from lakestore.merge.engine import DeduplicateEngine, FirstRowEngine, MergeEngine, drop_retracts, retract_count
from lakestore.merge.partial_update import PartialUpdateEngine
from lakestore.meta.schema import TableSchema


def create_merge_engine(schema: TableSchema) -> MergeEngine:
    engine = _create(schema)
    options = schema.core_options()
    if not options.sequence_ascending:
        engine.descending_fields = tuple(options.sequence_fields)
    return engine


def _create(schema: TableSchema) -> MergeEngine:
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
        functions = {}
        for f in value_fields:
            function = explicit.get(f.name) or default
            # Paimon: no function for sequence fields; last_non_null_value outside sequence
            # groups is what partial-update does anyway; any other needs a sequence group
            if f.name in seq_fields or not function or (function == "last_non_null_value" and f.name not in grouped):
                continue
            if f.name not in grouped:
                raise OptionError(f"aggregate function {function!r} of {f.name!r} needs the field in a sequence group (as Paimon)")
            if options.field_options("distinct").get(f.name):
                raise UnsupportedTableError(
                    f"'fields.{f.name}.distinct' in a partial-update sequence group is not implemented",
                    options=(f"fields.{f.name}.distinct",),
                )
            functions[f.name] = function
        return PartialUpdateEngine(
            value_columns=[f.name for f in value_fields],
            sequence_groups=sequence_groups,
            ignore_delete=options.ignore_delete,
            functions=functions,
            delimiters=options.field_options("list-agg-delimiter"),
            remove_record_on_delete=options.get("partial-update.remove-record-on-delete"),
            remove_record_on_sequence_group=options.get("partial-update.remove-record-on-sequence-group") or (),
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
            remove_record_on_delete=options.get("aggregation.remove-record-on-delete"),
        )
    raise OptionError(f"merge-engine {engine!r} is not implemented")


__all__ = ["MergeEngine", "create_merge_engine", "drop_retracts", "retract_count"]
