"""/docs works with no network: every asset from the server itself, and the key scheme declared."""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import urljoin

from server_harness import RunningServer, TenantClient

ASSET = re.compile(r"""(?:src|href)=["']([^"']+)["']""")


def test_docs_page_loads_every_asset_from_the_server(server: RunningServer) -> None:
    with server.client() as anonymous:
        page = anonymous.get("/docs")
        assert page.status_code == 200
        assert page.headers["content-type"].startswith("text/html")
        assets = ASSET.findall(page.text)
        # the stylesheet, the favicon and the Swagger UI bundle, nothing from elsewhere
        assert len(assets) == 3, assets
        assert not [a for a in assets if a.startswith(("http:", "https:", "//"))], assets
        kinds = set()
        for asset in assets:
            response = anonymous.get(urljoin(server.url + "/docs", asset))
            assert response.status_code == 200, asset
            assert len(response.content) > 1000, asset
            kinds.add(response.headers["content-type"].split(";")[0])
        assert {"text/css", "image/png"} <= kinds
        assert kinds & {"text/javascript", "application/javascript"}
        # the page loads the OpenAPI document from the same server
        assert "url: '/openapi.json'" in page.text
        assert anonymous.get("/openapi.json").status_code == 200
        assert anonymous.get("/redoc").status_code == 200


def test_openapi_declares_the_key_so_try_it_out_sends_it(
    server: RunningServer, make_tenant: Callable[..., TenantClient]
) -> None:
    with server.client() as anonymous:
        document = anonymous.get("/openapi.json").json()
    scheme = document["components"]["securitySchemes"]["ApiKey"]
    assert scheme == {**scheme, "type": "apiKey", "in": "header", "name": "X-API-Key"}
    search = document["paths"]["/v1/memories/search"]["get"]
    assert search["security"] == [{"ApiKey": []}]
    assert "security" not in document["paths"]["/health"]["get"]
    # what "Try it out" sends once a key is entered under "Authorize": the header, and it works
    tenant = make_tenant("docs")
    tenant.http.post("/v1/memories", json={"content": "Swagger can call me"})
    with server.client() as anonymous:
        without = anonymous.get("/v1/memories/search", params={"q": "swagger"})
        assert without.status_code == 401
        found = anonymous.get(
            "/v1/memories/search", params={"q": "swagger"}, headers={scheme["name"]: tenant.key}
        )
    assert found.status_code == 200
    assert found.json()["results"][0]["memory"]["content"] == "Swagger can call me"
