"""Retrieval and speed benchmarks for memoryd (protocol: BENCHMARKS.md)."""

from memoryd.threads import limit_blas

limit_blas()  # as the memoryd command does, before anything imports NumPy
