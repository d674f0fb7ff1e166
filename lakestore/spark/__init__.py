"""lakestore on Spark: distributed write, read and compaction (the only package importing pyspark).

```python
from lakestore.spark import create_spark_session, write_dataframe, read_dataframe, compact
spark = create_spark_session("local[*]")
write_dataframe(df, table)                    # one snapshot, buckets assigned on executors
df = read_dataframe(spark, table, filter=lakestore.col("dt") == "2024-01-01")
compact(spark, table, full=True)              # one COMPACT snapshot
```
"""

from lakestore.spark.compact import compact
from lakestore.spark.read import read_dataframe
from lakestore.spark.session import create_spark_session
from lakestore.spark.types import spark_schema, spark_type
from lakestore.spark.write import write_dataframe

__all__ = ["compact", "create_spark_session", "read_dataframe", "spark_schema", "spark_type", "write_dataframe"]
