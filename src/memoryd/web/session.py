"""Which paths are the dashboard's, and the cookie that carries a signed-in key.

The guard reads these before any route runs: a dashboard page is
authenticated by the cookie (or the usual ``X-API-Key``), and a page asked
for without a valid key is let through with no tenant, so that it can send
the browser to the sign-in page instead of answering JSON.
"""

from __future__ import annotations

COOKIE = "memoryd_key"
# a random session of a browser not signed in (or of a server without keys): the forms'
# token is bound to it (dashboard/protect.py)
FORM_COOKIE = "memoryd_form"
# the dashboard's own paths; the API keeps /v1, /api, /docs and /health
PREFIXES = (
    "/sign-in",
    "/sign-out",
    "/memories",
    "/search",
    "/imports",
    "/export",
    "/stats",
    "/spaces",
    "/conversations",
    "/settings",
    "/dashboard/static/",
)
# the dashboard's upload form, which may be as large as an API upload
UPLOAD_PATH = "/imports"


def is_dashboard_path(path: str) -> bool:
    return path == "/" or path.startswith(PREFIXES)
