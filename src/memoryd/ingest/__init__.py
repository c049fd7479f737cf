"""The write path: direct memories, conversation capture, one module a stage."""
