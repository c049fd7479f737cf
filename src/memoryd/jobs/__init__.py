"""Background work the engine owns: the task worker and the embedding queue.

Below the capabilities that queue work on them (ingest, continuity, imports), so the
engine can start and stop them without importing what they run.
"""
