"""The memory proxy: memory for any OpenAI- or Anthropic-compatible chat client.

A client points its base URL at ``memoryd serve`` and authenticates with its
memoryd key; each chat request gets the tenant's recalled memories injected
and goes on to the configured upstream, and each exchange is remembered
after the answer (see docs/proxy.md).
"""
