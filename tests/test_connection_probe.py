"""What "Check connection" says, from what it truly found: the entry works (the check), Claude loaded
it (its own server in the journal), Claude is installed (issue 24, item 4)."""

from __future__ import annotations

import pytest

from app.core import i18n
from app.core.journal.records import ServerRecord
from app.ui.connection_probe import check_notice, live_client_names, restart_advice

ASK = "ask Claude “What is in my Downloads folder?”"


def test_a_working_check_says_connected_only_once_claudes_own_server_connected() -> None:
    connected, title, text = check_notice("claude-desktop", "Claude Desktop", True, "", installed=True,
                                          claude_connected=True)  # fmt: skip
    assert connected and title == "Connection works"
    assert text == (
        "Claude Desktop is connected, and a test command ran. Try asking Claude “What is in my Downloads folder?”"
    )


def test_before_claudes_restart_the_check_says_ready_and_how_to_restart_each_app() -> None:
    for client_id, name, restart in (
        ("claude-desktop", "Claude Desktop", "Quit Claude Desktop completely and open it again"),
        ("claude-code", "Claude Code", "Start a new Claude Code session"),
    ):
        connected, title, text = check_notice(client_id, name, True, "", installed=True, claude_connected=False)
        assert not connected and title == f"Ready for {name}"
        assert "is connected" not in text and f"{name} has not connected yet. {restart}, then {ASK}" in text


def test_with_no_claude_installed_the_check_never_says_connected_and_says_to_install_it() -> None:
    connected, title, text = check_notice("claude-desktop", "Claude Desktop", True, "", installed=False,
                                          claude_connected=False)  # fmt: skip
    assert not connected and title == "Ready for Claude Desktop"
    assert text == (
        "Cowork Terminal is ready for Claude Desktop, but Claude Desktop was not found on this computer. "
        f"Install it and open it, then {ASK}"
    )


def test_a_failed_check_keeps_the_checks_own_words() -> None:
    said = "Claude Desktop's entry is stale."
    assert check_notice("claude-desktop", "Claude Desktop", False, said, installed=True, claude_connected=True) == (
        False, "Connection problem: Claude Desktop", said,
    )  # fmt: skip


@pytest.mark.parametrize("language", ["de", "es", "ru"])
def test_the_notices_are_translated_with_their_names_filled_in(language: str) -> None:
    i18n.use_language(language)
    try:
        for installed, seen in ((True, True), (True, False), (False, False)):
            _connected, title, text = check_notice("claude-desktop", "Claude Desktop", True, "", installed=installed,
                                                   claude_connected=seen)  # fmt: skip
            assert "Claude Desktop" in text and "{" not in text and ASK not in text, (language, text)
        assert "Claude Code" in restart_advice("claude-code", "Claude Code")
    finally:
        i18n.use_language("en")


def server(name: str | None, state: str = "live") -> ServerRecord:
    return ServerRecord(1, 10, name, "1.0", False, None, 0.0, 0.0, None, state)


def test_claudes_own_servers_are_named_as_people_know_them_and_the_checks_is_not_claude() -> None:
    names = live_client_names([server("claude-ai"), server("cowork-terminal-check"), server(None),
                               server("claude-code", state="exited")])  # fmt: skip
    assert names == {"Claude Desktop", "cowork-terminal-check"}
    assert "Claude Desktop" not in live_client_names([server("cowork-terminal-check")])
