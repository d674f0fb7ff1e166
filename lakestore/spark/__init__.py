"""lakestore on Spark: the ``paimon`` data source, DataFrame helpers (writes, reads, ``merge_into``),
compaction, and the recommended session settings (the only package importing pyspark).

```python
from lakestore.spark import create_spark_session, compact, merge_into
spark = create_spark_session("local[*]")      # registers format("paimon")
df = spark.read.format("paimon").option("warehouse", wh).load("db.t")
df.write.format("paimon").mode("append").option("warehouse", wh).save("db.t")
merge_into(changes, table, matched="delete")  # MERGE INTO table USING changes ON <key> WHEN MATCHED THEN DELETE
compact(spark, table, full=True)              # one COMPACT snapshot
```
"""

from lakestore.spark.compact import compact
from lakestore.spark.dataframe import bucket_column, distribute, read_dataframe, write_dataframe
from lakestore.spark.merge import merge_into
from lakestore.spark.session import create_spark_session, spark_settings
from lakestore.spark.source import PaimonDataSource, register
from lakestore.spark.types import spark_schema, spark_type

__all__ = [
    "PaimonDataSource",
    "bucket_column",
    "compact",
    "create_spark_session",
    "distribute",
    "merge_into",
    "read_dataframe",
    "register",
    "spark_schema",
    "spark_settings",
    "spark_type",
    "write_dataframe",
]
