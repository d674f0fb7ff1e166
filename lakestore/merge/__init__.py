from lakestore.merge.engine import MergeEngine, create_merge_engine

__all__ = ["MergeEngine", "create_merge_engine"]
