"""The web dashboard: see, search, fix and add memories in a browser.

Server-rendered pages (Jinja2, autoescaped) with a little htmx for the
search-as-you-type box, all served from the package: no CDN, no build step.
Every action goes through the same :class:`~memoryd.service.MemoryService`
as the REST API, with the same validation. The API key a person signs in
with is kept in a session cookie (HttpOnly, SameSite=Strict, gone when the
browser closes); the server's browser guard refuses requests from other
origins, so another web page cannot act with it.
"""

from memoryd.dashboard.app import install
from memoryd.web.session import COOKIE, is_dashboard_path

__all__ = ["COOKIE", "install", "is_dashboard_path"]
