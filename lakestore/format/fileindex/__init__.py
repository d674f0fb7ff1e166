"""Paimon file indexes (bloom-filter, bitmap, bsi): building them with data files and skipping
files and rows with them on read."""
