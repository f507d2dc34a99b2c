"""Per-platform decisions of the tray's glue (pure functions, every platform's values)."""

from __future__ import annotations

from app.ui.tray.platforms import WINDOWS_NOTIFY_TEXT_MAX, WINDOWS_NOTIFY_TITLE_MAX, fit_notification


def test_a_windows_notification_is_cut_to_what_notifyicondata_holds_and_others_are_left_whole() -> None:
    """Found by the wine lane: pystray's win32 backend raised ValueError for the 504-character
    "Git Bash is missing" text, so the user saw no notification at all."""
    title, message = "Git Bash is missing: install Git for Windows" * 3, "Checked: C:\\Program Files\\Git " * 30
    short_title, short_message = fit_notification("win32", title, message)
    assert len(short_title) == WINDOWS_NOTIFY_TITLE_MAX and short_title.endswith("\u2026")
    assert len(short_message) <= WINDOWS_NOTIFY_TEXT_MAX and short_message.endswith("\u2026")
    assert fit_notification("win32", "Paused", "Host access is paused.") == ("Paused", "Host access is paused.")
    assert fit_notification("linux", title, message) == (title, message)
    assert fit_notification("darwin", title, message) == (title, message)
