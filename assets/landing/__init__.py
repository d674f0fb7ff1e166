"""Landing zone: TPC-H data from DuckDB's dbgen, landed as one parquet file per table and day."""
