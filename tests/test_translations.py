"""The catalogs are complete: every English text the app and the installer show has a checked
translation in Spanish, German and Russian. Run `python tests/i18n_catalogs.py update` after
changing texts, then translate what it added."""

from __future__ import annotations

import re
import string

import pytest
from babel import Locale
from babel.messages.catalog import Catalog

from app.core.i18n import load_translation
from tests.i18n_catalogs import (
    APP_DOMAIN,
    DESKTOP_FILE,
    INSTALLER_DOMAIN,
    NSIS_TRANSLATIONS,
    ROOT,
    TRANSLATED,
    app_messages,
    desktop_file_text,
    desktop_messages,
    installer_messages,
    installer_names,
    read_catalog,
    write_nsis_translations,
)
from tests.python_source import parse_file

DOMAINS = {APP_DOMAIN: app_messages, INSTALLER_DOMAIN: lambda: {**installer_messages(), **desktop_messages()}}
CATALOGS = [(language, domain) for language in TRANSLATED for domain in DOMAINS]
PRINTF = re.compile(r"%(?:\([^)]*\))?[-#0 +]*\d*(?:\.\d+)?[a-zA-Z%]")
NSIS_VARIABLE = re.compile(r"\$\{\w+\}|\$\w+")


def placeholders(text: str) -> list[str]:
    """The parts of a text that the program fills in: {name}, %(name)s, %s, ${NSIS_DEFINE}."""
    fields = sorted(f"{{{name}}}" for _, name, _, _ in string.Formatter().parse(text) if name is not None)
    return fields + sorted(PRINTF.findall(text)) + sorted(NSIS_VARIABLE.findall(text))


def messages(catalog: Catalog) -> dict:
    return {message.id: message for message in catalog if message.id}


@pytest.mark.parametrize(("language", "domain"), CATALOGS)
def test_every_english_text_of_the_source_is_in_the_catalog(language: str, domain: str) -> None:
    missing = set(DOMAINS[domain]()) - set(messages(read_catalog(language, domain)))
    assert not missing, f"not in {language}/{domain}.po (run `python tests/i18n_catalogs.py update`): {missing}"


@pytest.mark.parametrize(("language", "domain"), CATALOGS)
def test_the_catalog_holds_no_text_the_source_no_longer_has(language: str, domain: str) -> None:
    stale = set(messages(read_catalog(language, domain))) - set(DOMAINS[domain]())
    assert not stale, f"{language}/{domain}.po has texts the source lost (run the update): {stale}"


@pytest.mark.parametrize(("language", "domain"), CATALOGS)
def test_every_entry_is_translated_and_none_is_fuzzy(language: str, domain: str) -> None:
    catalog = read_catalog(language, domain)
    bad = []
    for message in messages(catalog).values():
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        if message.fuzzy or not all(strings) or message.pluralizable and len(strings) != catalog.num_plurals:
            bad.append(message.id)
    assert not bad, f"{language}/{domain}.po: untranslated, fuzzy or missing plural forms: {bad}"


@pytest.mark.parametrize(("language", "domain"), CATALOGS)
def test_every_translation_keeps_the_placeholders_of_its_english_text(language: str, domain: str) -> None:
    wrong = []
    for message in messages(read_catalog(language, domain)).values():
        english = message.id if isinstance(message.id, tuple) else (message.id,)
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        expected = placeholders(english[-1])
        for translated in strings:
            # Every plural form keeps the English plural's placeholders: Russian's "one" form also
            # serves 21, 31..., so no form may spell the count out.
            if placeholders(translated) != expected:
                wrong.append((message.id, translated))
    assert not wrong, f"{language}/{domain}.po: placeholders differ from the English: {wrong}"


def cldr_form(language: str, count: int) -> int:
    """Which plural form CLDR gives `count`: the index of its category among the language's."""
    rule = Locale.parse(language).plural_form
    categories = [tag for tag in ("zero", "one", "two", "few", "many", "other") if tag in rule.tags | {"other"}]
    return categories.index(rule(count))


@pytest.mark.parametrize("language", TRANSLATED)
def test_the_app_reads_each_catalog_as_babel_does_with_cldrs_plural_forms(language: str) -> None:
    """Our stdlib compiler (used at build time and from a source checkout) loses no message, and
    each count gets the form CLDR says (Russian: 1 and 21 one form, 2-4 and 22 another, 5-20 a third)."""
    translation = load_translation(language)
    catalog = read_catalog(language, APP_DOMAIN)
    for message in messages(catalog).values():
        if isinstance(message.id, tuple):
            for count in (1, 2, 5, 11, 21, 22, 112, 1_000_000):
                expected = message.string[cldr_form(language, count)]
                assert translation.ngettext(*message.id, count) == expected
        else:
            assert translation.gettext(message.id) == message.string


def test_the_installer_translations_file_is_generated_from_the_catalogs(tmp_path, monkeypatch) -> None:
    committed = NSIS_TRANSLATIONS.read_text(encoding="utf-8")
    monkeypatch.setattr("tests.i18n_catalogs.NSIS_TRANSLATIONS", tmp_path / "translations.nsh")
    write_nsis_translations()
    assert (tmp_path / "translations.nsh").read_text(encoding="utf-8") == committed, (
        "installer/windows/translations.nsh is out of date: run `python tests/i18n_catalogs.py update`"
    )


def test_the_linux_launcher_carries_each_languages_texts_from_the_catalogs() -> None:
    assert DESKTOP_FILE.read_text(encoding="utf-8") == desktop_file_text(), (
        "installer/linux/cowork-terminal.desktop is out of date: run `python tests/i18n_catalogs.py update`"
    )
    assert "Comment[de]=" in desktop_file_text() and "GenericName[ru]=" in desktop_file_text()


def test_no_text_is_formatted_before_it_is_translated() -> None:
    """`_(f"...")` or `_("..." % x)` would look up a text no catalog holds."""
    offenders = []
    for path in sorted((ROOT / "app").rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"\b(?:N?_|ngettext)\(\s*f[\"']", line):
                offenders.append(f"{path.name}:{number}")
    assert not offenders, offenders


def test_the_installer_shows_no_text_that_skips_the_catalogs() -> None:
    """Each page text, message box, section name and log line the installer shows is a $(LangString)."""
    script = (ROOT / "installer" / "windows" / "cowork-terminal.nsi").read_text(encoding="utf-8")
    shown_at = r'^\s*(?:MessageBox \S+|DetailPrint|!define MUI_\w*TEXT|Section)\s+"([^"]*)"'
    shown = re.findall(shown_at, script, re.MULTILINE)
    assert shown, "the pattern no longer finds the installer's texts"
    # ${APP_NAME} is a name; "-..." sections are hidden; "Uninstall" is NSIS's name for the uninstaller.
    literal = [text for text in shown if not re.fullmatch(r"\$\(T_\w+\)|\$\{APP_NAME\}|-[\w ]+|Uninstall", text)]
    assert not literal, f"installer texts outside the catalogs: {literal}"
    used = set(re.findall(r"\$\((T_\w+)\)", script))
    assert used == set(installer_names()), "every $(T_...) used is defined in English, and every one defined is used"


def test_no_function_that_translates_also_assigns_the_name_underscore() -> None:
    """`_, x = pair()` in a function makes `_` local there, and its `_("...")` then fails at run time."""
    import ast

    offenders = []
    for path in sorted((ROOT / "app").rglob("*.py")):
        for node in ast.walk(parse_file(path)):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            names = [n for n in ast.walk(node) if isinstance(n, ast.Name) and n.id == "_"]
            if any(isinstance(n.ctx, ast.Store) for n in names) and any(isinstance(n.ctx, ast.Load) for n in names):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    assert not offenders, offenders


def test_spanish_speaks_to_the_user_as_tu_and_calls_the_computer_ordenador() -> None:
    """The approval window says "Permítelo solo si sabes…": every other text says tú too, not usted,
    and the computer is always "ordenador"."""
    usted = re.compile(
        r"\b(usted|permítalo|lo permite|instálelo|instale|reinstale|reinicie|elimínelas|devuélvale|"
        r"conecte de nuevo|vuelva a conectar|ha dicho|"
        r"ha permitido|se le preguntara|sin preguntarle|su ordenador|de sus archivos|su carpeta personal|"
        r"sus documentos|lo que tiene|equipos?)\b",
        re.IGNORECASE,
    )
    for domain in DOMAINS:
        for message in messages(read_catalog("es", domain)).values():
            strings = message.string if isinstance(message.string, tuple) else (message.string,)
            for text in strings:
                assert not usted.search(text), (message.id, text)
    translation = load_translation("es")
    assert translation.gettext("Changes your computer") == "Cambia tu ordenador"
    assert translation.gettext("Deletes everything you have") == "Borra todo lo que tienes"
