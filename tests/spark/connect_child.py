"""A Spark Connect client, run by tests/spark/test_connect.py in a process of its own (a process
with a remote session cannot also hold the classic sessions of the other Spark tests).

Usage: python connect_child.py <sc://host:port> <warehouse>; prints one JSON document."""

from __future__ import annotations

import json
import sys

from pyspark.sql import SparkSession

import lakestore
from lakestore.spark import register, write_dataframe

SCHEMA = "dt string, id long, v string"


def main(url: str, warehouse: str) -> None:
    spark = SparkSession.builder.remote(url).getOrCreate()
    register(spark)
    catalog = lakestore.Catalog(warehouse)
    table = catalog.get_table("db.t")
    df = spark.createDataFrame([(("a", "b")[i % 2], i, f"v{i}") for i in range(200)], SCHEMA)
    write_dataframe(df, table)
    write_dataframe(spark.createDataFrame([("a", 0, "new")], SCHEMA), table)
    read = spark.read.format("paimon").option("warehouse", warehouse).load("db.t")
    filtered = read.where("dt = 'a' and id < 10").orderBy("id").select("v").toPandas()["v"].tolist()
    count = read.count()
    write_dataframe(df.repartition(4), catalog.get_table("db.d"))
    spark.stop()
    print(json.dumps({"filtered": filtered, "count": count}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
