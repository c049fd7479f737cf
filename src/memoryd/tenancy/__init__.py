"""Tenancy: tenants and their keys, spaces and their members, sharing between spaces.

Each part takes the engine and a tenant id, never a ``MemoryService``: the
façade builds on them, not the other way round.
"""
