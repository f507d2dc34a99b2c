"""The translation catalogs as the source defines them: extraction, and the `update` command.

Two domains: `cowork-terminal` (every `_()`, `N_()` and `ngettext()` text under app/, and the
plain words the classifier derives from its reasons' templates: `classifier_messages`) and
`installer` (the `LangString NAME ${LANG_ENGLISH} "..."` texts of installer/windows/*.nsi, and the
GenericName and Comment of the Linux launcher installer/linux/cowork-terminal.desktop).
tests/test_translations.py compares the catalogs with what this extracts.

    python tests/i18n_catalogs.py update

adds new English texts to every catalog (untranslated, so the tests fail until someone translates
them), drops texts the source no longer has, writes installer/windows/translations.nsh (the
installer's texts in each language) and the launcher's `Key[lang]=` lines.
"""

from __future__ import annotations

import ast
import re
import sys
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po, write_po

try:
    from tests.python_source import parse_file
except ImportError:  # run as a script: tests/ is on sys.path itself
    from python_source import parse_file  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parent.parent
LOCALE_DIR = ROOT / "app" / "locale"
TRANSLATED = ("es", "de", "ru")
APP_DOMAIN = "cowork-terminal"
INSTALLER_DOMAIN = "installer"
NSIS_DIR = ROOT / "installer" / "windows"
NSIS_TRANSLATIONS = NSIS_DIR / "translations.nsh"
NSIS_LANGUAGES = {"es": "SPANISH", "de": "GERMAN", "ru": "RUSSIAN"}
DESKTOP_FILE = ROOT / "installer" / "linux" / "cowork-terminal.desktop"
DESKTOP_KEYS = ("GenericName", "Comment")  # what a launcher or app menu shows besides the name
KEYWORDS = {"_": None, "N_": None, "ngettext": (1, 2)}
# The string: plain characters, NSIS escapes ($\r, $\n, $\"), or $ before anything else (${DEFINE}, $$).
LANGSTRING = re.compile(r'^LangString\s+(\w+)\s+\$\{LANG_ENGLISH\}\s+"((?:[^"$]|\$\\.|\$[^\\])*)"\s*$', re.MULTILINE)

HEADER_DATE = datetime(2026, 11, 30, tzinfo=timezone.utc)

Message = str | tuple[str, str]


def app_messages() -> dict[Message, list[str]]:
    """Every marked text under app/, with where it is (file:line), in source order."""
    found: dict[Message, list[str]] = {}
    for filename, lineno, message, _comments, _context in extract_from_dir(
        ROOT / "app", method_map=[("**.py", "python")], keywords=KEYWORDS, comment_tags=()
    ):
        if isinstance(message, tuple):
            message = tuple(message)
        found.setdefault(message, []).append(f"app/{filename}:{lineno}")
    for message, where in classifier_messages().items():
        found.setdefault(message, []).extend(where)
    return found


def classifier_messages() -> dict[str, list[str]]:
    """The plain words each classifier rule derives from its reason ("{name}: kills every process
    with that name" -> "kills every process with that name"), found in the source: the person
    reads them translated, the model in English. Rules that give their own words mark them N_()."""
    from app.core.classifier import findings

    found: dict[str, list[str]] = {}
    folder = ROOT / "app" / "core" / "classifier"
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(parse_file(path)):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add"
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id in ("self", "ctx", "report")
            ):
                continue  # fmt: skip
            plain = node.args[2] if len(node.args) > 2 else None
            if isinstance(plain, (ast.Name, ast.Call)):
                continue  # the rule's own words, marked N_() where they are written
            for reason in _strings(node.args[1], findings):
                words = findings.plain_template(reason, defaultdict(str))
                for template in _templates(words):
                    found.setdefault(template, []).append(f"app/core/classifier/{path.name}:{node.lineno}")
    return found


def _strings(node: ast.expr, module: object) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        return _strings(node.body, module) + _strings(node.orelse, module)
    if isinstance(node, ast.Name) and isinstance(getattr(module, node.id, None), str):
        return [getattr(module, node.id)]
    raise ValueError(f"a classifier reason this extraction cannot read: {ast.dump(node)}")


def _templates(words: object) -> list[str]:
    from app.core.classifier.findings import Words

    assert isinstance(words, Words)
    inner = [t for _, value in words.values if isinstance(value, Words) for t in _templates(value)]
    return [words.template, *inner]


def nsis_to_text(nsis: str) -> str:
    """An NSIS string as the person reads it: `$\\r$\\n` is a line break, `$\\"` a quote."""
    return nsis.replace("$\\r$\\n", "\n").replace('$\\"', '"').replace("$$", "$")


def text_to_nsis(text: str) -> str:
    return text.replace("$", "$$").replace("$${", "${").replace('"', '$\\"').replace("\n", "$\\r$\\n")


def installer_messages() -> dict[str, list[str]]:
    """The installer's English texts, keyed by text, with the LangString names that hold them."""
    found: dict[str, list[str]] = {}
    for script in sorted(NSIS_DIR.glob("*.nsi")):
        for match in LANGSTRING.finditer(script.read_text(encoding="utf-8")):
            found.setdefault(nsis_to_text(match.group(2)), []).append(match.group(1))
    return found


def desktop_messages() -> dict[str, list[str]]:
    """The launcher's English texts (`GenericName=`, `Comment=`), keyed by text."""
    found: dict[str, list[str]] = {}
    for line in DESKTOP_FILE.read_text(encoding="utf-8").splitlines():
        key, _, value = line.partition("=")
        if key in DESKTOP_KEYS:
            found.setdefault(value, []).append(key)
    return found


def desktop_file_text() -> str:
    """The launcher with each English `Key=` followed by its translations, from the catalogs."""
    catalogs = {language: read_catalog(language, INSTALLER_DOMAIN) for language in TRANSLATED}
    lines = []
    for line in DESKTOP_FILE.read_text(encoding="utf-8").splitlines():
        key = line.partition("=")[0]
        if "[" in key and key.split("[")[0] in DESKTOP_KEYS:
            continue  # a translation: written again below its English line
        lines.append(line)
        if key in DESKTOP_KEYS:
            english = line.partition("=")[2]
            for language, catalog in catalogs.items():
                message = catalog.get(english)
                if message is not None and message.string:
                    lines.append(f"{key}[{language}]={message.string}")
    return "\n".join(lines) + "\n"


def installer_names() -> dict[str, str]:
    """LangString name -> English text."""
    return {name: text for text, names in installer_messages().items() for name in names}


def catalog_path(language: str, domain: str) -> Path:
    return LOCALE_DIR / language / "LC_MESSAGES" / f"{domain}.po"


def read_catalog(language: str, domain: str) -> Catalog:
    with open(catalog_path(language, domain), "rb") as file:
        return read_po(file, locale=language, domain=domain)


def update() -> None:
    installer = {**installer_messages(), **desktop_messages()}
    for domain, messages in ((APP_DOMAIN, app_messages()), (INSTALLER_DOMAIN, installer)):
        for language in TRANSLATED:
            path = catalog_path(language, domain)
            old = read_catalog(language, domain) if path.exists() else None
            # Dates and boilerplate fixed, so that an update changes only the lines that changed.
            catalog = Catalog(
                locale=language,
                domain=domain,
                header_comment=f"# Cowork Terminal: the {domain} texts in {language}.",
                project="Cowork Terminal",
                version="",
                copyright_holder="Cowork Terminal developers",
                msgid_bugs_address="",
                creation_date=HEADER_DATE,
                revision_date=HEADER_DATE,
                last_translator="Cowork Terminal developers",
                language_team=language,
                charset="utf-8",
                fuzzy=False,
            )
            for message, where in messages.items():
                previous = old.get(message if isinstance(message, str) else message[0]) if old else None
                if previous is not None and previous.id != message:
                    previous = None  # the plural changed: translate it again
                string = previous.string if previous is not None else ("", "") if isinstance(message, tuple) else ""
                flags = previous.flags if previous is not None else ()
                catalog.add(message, string, locations=[(w, None) for w in where], flags=flags)
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "wb") as file:
                write_po(file, catalog, width=100, omit_header=False, no_location=True)
    write_nsis_translations()
    DESKTOP_FILE.write_text(desktop_file_text(), encoding="utf-8")


def write_nsis_translations() -> None:
    lines = [
        "; The installer's texts in each language, generated from app/locale/*/LC_MESSAGES/installer.po",
        "; by `python tests/i18n_catalogs.py update`: edit the catalogs, not this file.",
    ]
    names = installer_names()
    for language, nsis_language in NSIS_LANGUAGES.items():
        catalog = read_catalog(language, INSTALLER_DOMAIN)
        for name, text in names.items():
            message = catalog.get(text)
            translated = message.string if message is not None and message.string else text
            lines.append(f'LangString {name} ${{LANG_{nsis_language}}} "{text_to_nsis(translated)}"')
    NSIS_TRANSLATIONS.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:] != ["update"]:
        raise SystemExit(__doc__)
    update()
