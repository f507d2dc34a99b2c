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
    # libnotify's servers read the text as markup: a command's tags are shown as text (2026-12-06).
    assert fit_notification("linux", "<b>T</b>", "rm <b>x</b> & y") == ("<b>T</b>", "rm &lt;b&gt;x&lt;/b&gt; &amp; y")


def test_a_python_that_cannot_see_the_systems_gtk_is_named_as_the_cause_not_appindicator() -> None:
    from app.ui.tray.platforms import missing_tray_support, system_has_gi

    pyenv = "/home/ana/.pyenv/versions/3.12.4/bin/python3"
    said = missing_tray_support("linux", "xorg", executable=pyenv, has_gi=False, system_gi=True)
    assert said is not None and pyenv in said and "/usr/bin/python3 -m venv --system-site-packages" in said
    assert "gir1.2-ayatanaappindicator3-0.1" not in said, "it is installed already: the interpreter is the cause"
    # The packages truly missing: install them.
    missing = missing_tray_support("linux", "xorg", executable=pyenv, has_gi=False, system_gi=False)
    assert missing is not None and "gir1.2-ayatanaappindicator3-0.1" in missing
    assert missing_tray_support("linux", "appindicator", has_gi=True, system_gi=True) is None
    assert missing_tray_support("darwin", "darwin", has_gi=False, system_gi=False) is None
    fedora = {"/usr/lib64/python3*/site-packages/gi": ["/usr/lib64/python3.12/site-packages/gi"]}
    assert system_has_gi(lambda pattern: fedora.get(pattern, []))
    assert not system_has_gi(lambda pattern: [])
