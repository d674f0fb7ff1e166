"""lakestore benchmark suite: ``python -m bench.run [--quick] [--only N,...]``.

Every workload runs lakestore and its peers (pypaimon pure Python, pypaimon with its Rust core,
raw pyarrow) on the same data in the same run and reports ratios of medians."""
