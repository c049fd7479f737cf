"""``memoryd keys``: the API keys of this home's user for ``memoryd serve``.

The same keys ``GET/POST/DELETE /v1/keys`` manage, for a person at the
server's host: a lost key is replaced here (a new one, then the old one
revoked) without a working key to call the API with.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from memoryd.cli.app import SERVER, app, console, emit, service
from memoryd.terms import wire

if TYPE_CHECKING:
    from memoryd.service import MemoryService
    from memoryd.tenancy.tenants import Tenants

keys_app = typer.Typer(
    name="keys",
    help="API keys for memoryd serve: list, create (shown once), revoke.",
    no_args_is_help=True,
)
app.add_typer(keys_app, name="keys", rich_help_panel=SERVER)


def _tenants(svc: MemoryService) -> Tenants:
    from memoryd.tenancy.tenants import Tenants

    return Tenants(svc.engine)


@keys_app.command("list")
def list_keys() -> None:
    """The keys of this user: prefix, name, created, last used, revoked."""
    with service() as svc:
        keys = _tenants(svc).list_keys(svc.tenant_id)

    def human() -> None:
        if not keys:
            console.print("[yellow]no keys[/yellow]: memoryd keys create makes one")
            return
        table = Table(header_style="bold")
        for column in ("id", "prefix", "name", "created", "last used", "revoked"):
            table.add_column(column)
        for key in keys:
            table.add_row(
                key.id[:8],
                key.prefix + "…",
                key.name,
                _day(key.created_at),
                _day(key.last_used_at),
                _day(key.revoked_at),
            )
        console.print(table)

    emit({"keys": [wire(k) for k in keys]}, human)


@keys_app.command("create")
def create_key(
    name: Annotated[str, typer.Option(metavar="NAME", help="What the key is for.")] = "",
) -> None:
    """A new key for this user; the secret is shown only now."""
    with service() as svc:
        key, secret = _tenants(svc).create_key(svc.tenant_id, name)
    emit(
        {**wire(key), "api_key": secret},
        lambda: console.print(
            f"[green]created[/green] key {key.id[:8]} for {svc.tenant_id}; it is shown only "
            f"now, keep it (e.g. as OMEM_API_KEY or MEMORYD_API_KEY):\n  {secret}",
            highlight=False,
        ),
    )


@keys_app.command("revoke")
def revoke_key(
    key_id: Annotated[
        str, typer.Argument(metavar="ID", help="The key's id (keys list), or a unique start of it.")
    ],
) -> None:
    """Revoke a key: requests with it are refused from now on."""
    from memoryd.ids import resolve_id

    with service() as svc:
        full_id = resolve_id(
            "API key",
            key_id,
            lambda prefix, n: svc.store.ids_with_prefix(
                "api_keys", "id", prefix, "tenant_id = ?", [svc.tenant_id], n
            ),
        )
        key = _tenants(svc).revoke_key(svc.tenant_id, full_id)
    emit(wire(key), lambda: console.print(f"[green]revoked[/green] key {key.id} ({key.prefix}…)"))


def _day(value: datetime | None) -> str:
    return "" if value is None else f"{value:%Y-%m-%d %H:%M}"
