"""The project's components (``dg.toml``'s ``defs_module``): each folder's ``defs.yaml`` declares
definitions; ``tpch/<table>/defs.yaml`` declares a main table of the TPC-H pipeline and its lifecycle."""
