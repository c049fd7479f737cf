"""Readings of what people wrote: conversation turns, statements, the words of attributes.

Pure and below every capability: no store, no engine, no model but one passed in. Ingest
writes with these readings, search ranks with them, the doors parse their hosts' turns
with them, so each is written once.
"""
