"""Which language the user reads: the OS's choice, or the one picked in the tray's Language menu.

`detect_language` is a pure function of what each platform offers, so tests call it with each
platform's values; the readers below gather those values on the machine the app runs on.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from app.core.atomic_file import write_atomic
from app.core.paths import make_private_dir

ENGLISH = "en"
LANGUAGES = ("en", "es", "de", "ru")
# Each language named in itself, as a language menu shows them: a reader finds their own
# language even when the app currently speaks one they cannot read.
LANGUAGE_NAMES = {"en": "English", "es": "Español", "de": "Deutsch", "ru": "Русский"}
# Windows LANGIDs: the low 10 bits are the primary language (winnt.h LANG_*).
WINDOWS_PRIMARY_LANGUAGES = {0x09: "en", 0x0A: "es", 0x07: "de", 0x19: "ru"}
POSIX_LOCALE_VARIABLES = ("LC_ALL", "LC_MESSAGES", "LANG")
LANGUAGE_FILE = "language"  # in the data folder: a language code, or absent to follow the OS
APPLE_LANGUAGES_TIMEOUT_S = 2.0


def detect_language(
    platform: str,
    environ: Mapping[str, str],
    windows_ui_lang: int | None = None,
    apple_languages: Sequence[str] = (),
) -> str:
    """The first of the user's languages that the app speaks, else English.

    Windows: the user's display language (GetUserDefaultUILanguage), not the environment: Git Bash
    and MSYS set LANG on their own, which would make the CLI speak another language than the tray.
    Linux and macOS: what GNU gettext reads. The locale is the first set of LC_ALL, LC_MESSAGES,
    LANG; LANGUAGE (a colon list of preferences) counts only when that locale is not C/POSIX.
    macOS apps started from Finder or at login get no LANG at all: then the Language & Region list
    (AppleLanguages) decides.
    """
    if platform == "win32":
        if windows_ui_lang is None:
            return ENGLISH
        return WINDOWS_PRIMARY_LANGUAGES.get(windows_ui_lang & 0x3FF, ENGLISH)
    locale = next((environ[name] for name in POSIX_LOCALE_VARIABLES if environ.get(name)), "")
    candidates: list[str] = []
    if locale:
        if _language_code(locale) in ("c", "posix"):
            return ENGLISH
        candidates += environ.get("LANGUAGE", "").split(":")
        candidates.append(locale)
    elif platform == "darwin":
        candidates += apple_languages
    for candidate in candidates:
        code = _language_code(candidate)
        if code in LANGUAGES:
            return code
    return ENGLISH


def _language_code(tag: str) -> str:
    """'de_DE.UTF-8@euro' -> 'de', 'pt-BR' -> 'pt', 'C.UTF-8' -> 'c'."""
    return re.split(r"[_.@-]", tag.strip(), maxsplit=1)[0].lower()


def windows_ui_language() -> int | None:
    """The user's Windows display language as a LANGID; None elsewhere."""
    if sys.platform != "win32":
        return None
    import ctypes

    return int(ctypes.windll.kernel32.GetUserDefaultUILanguage())


def apple_languages(environ: Mapping[str, str]) -> list[str]:
    """macOS's preferred languages, read only when no locale variable is set (the only case they count)."""
    if sys.platform != "darwin" or any(environ.get(name) for name in POSIX_LOCALE_VARIABLES):
        return []
    try:
        output = subprocess.run(
            ["/usr/bin/defaults", "read", "-g", "AppleLanguages"],
            capture_output=True,
            text=True,
            timeout=APPLE_LANGUAGES_TIMEOUT_S,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return re.findall(r'"?([A-Za-z]{2,3}(?:[-_][A-Za-z0-9]+)*)"?\s*,?\s*$', output, flags=re.MULTILINE)


def system_language(environ: Mapping[str, str] | None = None) -> str:
    """The OS's language on this machine, mapped to one the app speaks."""
    env = os.environ if environ is None else environ
    return detect_language(sys.platform, env, windows_ui_language(), apple_languages(env))


def chosen_language(data_dir: Path) -> str | None:
    """The language picked in the tray's Language menu, or None to follow the OS."""
    try:
        code = (data_dir / LANGUAGE_FILE).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return code if code in LANGUAGES else None


def choose_language(data_dir: Path, code: str | None) -> None:
    """Remember the user's pick (None: follow the OS again). Windows started later read it."""
    path = data_dir / LANGUAGE_FILE
    if code is None:
        path.unlink(missing_ok=True)
        return
    if code not in LANGUAGES:
        raise ValueError(f"not a language of the app: {code!r}")
    make_private_dir(data_dir)
    write_atomic(path, (code + "\n").encode())
