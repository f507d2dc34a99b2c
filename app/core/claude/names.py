"""Claude's apps as people know them: the tray, its windows and its notices name them so."""

from __future__ import annotations

from app.core.i18n import _

# What Claude's apps call themselves in the MCP handshake -> the name people know them by.
CLIENT_NAMES = {"claude-ai": "Claude Desktop", "claude-code": "Claude Code"}


def friendly_client_name(name: str | None) -> str:
    """ "Claude Desktop" for "claude-ai": a notice names the app the user knows, never "Claude" for any client."""
    return CLIENT_NAMES.get(name or "", name or _("An AI agent"))


def client_named(name: str, label: str) -> str:
    """ "Claude Desktop (claude-ai 0.12)": the app the user knows, with what it calls itself."""
    friendly = friendly_client_name(name)
    return label if friendly == name else f"{friendly} ({label})"
