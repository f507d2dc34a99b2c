"""The words a person reads, in their language: gettext with catalogs for es, de and ru.

Wrap each text a person reads in `_()` (or `ngettext()` when it counts something) where it is
shown, with named `{placeholders}` filled in after translation. Texts defined at import time are
marked with `N_()` and translated where they are shown. Texts the model reads stay English and
are never wrapped: they are instructions to a model.

The language is chosen once per process, on first use (`setup`): the one picked in the tray's
Language menu, else the OS's. A missing catalog or message falls back to the English text.
Catalogs are `app/locale/<lang>/LC_MESSAGES/cowork-terminal.po`; builds ship them compiled
(.mo, see setup.py and the PyInstaller spec); a source checkout compiles them in memory.
"""

from __future__ import annotations

import gettext
import io
import os
from collections.abc import Mapping
from pathlib import Path

from app.core.i18n.catalog import compile_mo, parse_po
from app.core.i18n.language import ENGLISH, LANGUAGE_NAMES, LANGUAGES, chosen_language, system_language

__all__ = ["LANGUAGES", "LANGUAGE_NAMES", "N_", "_", "current_language", "ngettext", "setup", "use_language"]

DOMAIN = "cowork-terminal"
LOCALE_DIR = Path(__file__).resolve().parent.parent.parent / "locale"

_translation: gettext.NullTranslations | None = None
_language: str | None = None


def _(message: str) -> str:
    """`message` in the user's language (English when it has no translation)."""
    return _current().gettext(message)


def ngettext(singular: str, plural: str, count: int) -> str:
    """The form of a counted text that fits `count` in the user's language (Russian has three)."""
    return _current().ngettext(singular, plural, count)


def N_(message: str) -> str:
    """Marks a text for translation where it is defined; `_()` translates it where it is shown."""
    return message


def current_language() -> str:
    _current()
    assert _language is not None
    return _language


def setup(environ: Mapping[str, str] | None = None) -> str:
    """Choose this process's language: the tray's Language setting, else the OS's. Returns its code."""
    env = os.environ if environ is None else environ
    from app.core.paths import AppPaths

    picked = chosen_language(AppPaths.from_environment(dict(env)).data_dir)
    use_language(picked or system_language(env))
    assert _language is not None
    return _language


def use_language(code: str) -> None:
    """Speak `code` from now on (the tray calls this when the user picks a language)."""
    global _translation, _language
    _language = code if code in LANGUAGES else ENGLISH
    _translation = load_translation(_language)
    _translate_argparse()


def load_translation(code: str) -> gettext.NullTranslations:
    """The catalog of `code`: its compiled .mo when it is at least as new as the .po, else the .po
    compiled in memory (a source checkout or an edited catalog); English needs none."""
    if code == ENGLISH:
        return gettext.NullTranslations()
    po_path = LOCALE_DIR / code / "LC_MESSAGES" / f"{DOMAIN}.po"
    mo_path = po_path.with_suffix(".mo")
    try:
        if mo_path.exists() and (not po_path.exists() or mo_path.stat().st_mtime >= po_path.stat().st_mtime):
            with open(mo_path, "rb") as file:
                return gettext.GNUTranslations(file)
        data = compile_mo(parse_po(po_path.read_text(encoding="utf-8")))
        return gettext.GNUTranslations(io.BytesIO(data))
    except (OSError, ValueError):
        return gettext.NullTranslations()  # no catalog: English, rather than no app


def _current() -> gettext.NullTranslations:
    if _translation is None:
        setup()
    assert _translation is not None
    return _translation


def _translate_argparse() -> None:
    """Let argparse's own words ("usage:", "show this help message and exit") come from our catalog.

    argparse looks its texts up through the module-level names `_` and `ngettext` it imported
    from gettext; pointing them at ours translates `--help` and usage errors whole.
    """
    import argparse

    argparse._ = _  # type: ignore[attr-defined]
    argparse.ngettext = ngettext  # type: ignore[attr-defined]
