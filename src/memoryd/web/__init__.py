"""What every HTTP door shares: the guard (who is calling), the error format, request
bodies, uploads, streamed exports and the dashboard's session.

The REST API (:mod:`memoryd.server`), the memory proxy (:mod:`memoryd.proxy`) and the
dashboard (:mod:`memoryd.dashboard`) are built on these and never on each other; only
the server's app (:mod:`memoryd.server.app`) mounts the three, the one place a door
imports another (docs/architecture.md).
"""
