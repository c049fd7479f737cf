"""Retrieval and speed benchmarks for memoryd (protocol: BENCHMARKS.md)."""
