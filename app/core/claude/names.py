"""Claude's apps as people know them: the tray, its windows and its notices name them so."""

from __future__ import annotations

from app.core.i18n import _

# What Claude's apps call themselves in the MCP handshake -> the name people know them by.
CLIENT_NAMES = {"claude-ai": "Claude Desktop", "claude-code": "Claude Code"}


# Claude Cowork (Claude Desktop's agent mode, "local-agent-mode" in its own folders) runs the servers
# of Claude Desktop's config. Public reports do not show the name it gives in the handshake, so any
# name that says it is Cowork is shown as Cowork (issue 24, item 7).
COWORK_NAME = "Claude Cowork"
COWORK_SIGNS = ("cowork", "local-agent-mode")


def friendly_client_name(name: str | None) -> str:
    """ "Claude Desktop" for "claude-ai": a notice names the app the user knows, never "Claude" for any client."""
    if name and any(sign in name.lower() for sign in COWORK_SIGNS) and "cowork-terminal" not in name.lower():
        return COWORK_NAME
    return CLIENT_NAMES.get(name or "", name or _("An AI agent"))


def client_named(name: str, label: str) -> str:
    """ "Claude Desktop (claude-ai 0.12)": the app the user knows, with what it calls itself."""
    friendly = friendly_client_name(name)
    return label if friendly == name else f"{friendly} ({label})"
