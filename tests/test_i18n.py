"""The app's language: chosen from each platform's settings, picked in the tray, and its formats."""

from __future__ import annotations

import gettext
import io
import os
import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

import pytest
from babel.dates import format_skeleton
from babel.numbers import format_decimal

from app.core import i18n
from app.core.i18n import language as lang
from app.core.i18n.formats import (
    LOCALES,
    format_date_time,
    format_day_month_time,
    format_number,
    format_time,
    format_weekday_time,
)


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({"LANG": "de_DE.UTF-8"}, "de"),
        ({"LANG": "ru_RU.UTF-8"}, "ru"),
        ({"LANG": "es_MX.UTF-8"}, "es"),
        ({"LANG": "fr_FR.UTF-8"}, "en"),
        ({"LANG": "de_DE.UTF-8", "LC_MESSAGES": "ru_RU.UTF-8"}, "ru"),
        ({"LANG": "de_DE.UTF-8", "LC_MESSAGES": "ru_RU.UTF-8", "LC_ALL": "es_ES.UTF-8"}, "es"),
        ({"LANG": "fr_FR.UTF-8", "LANGUAGE": "fr:de:en"}, "de"),
        ({"LANG": "de_DE.UTF-8", "LANGUAGE": "ru"}, "ru"),
        ({"LANG": "de_AT.UTF-8@euro"}, "de"),
        ({"LANG": "C.UTF-8", "LANGUAGE": "de"}, "en"),
        ({"LC_ALL": "POSIX", "LANG": "de_DE.UTF-8"}, "en"),
        ({"LANGUAGE": "de"}, "en"),
        ({}, "en"),
    ],
)
def test_linux_follows_the_locale_variables_as_gettext_reads_them(environ: dict, expected: str) -> None:
    assert lang.detect_language("linux", environ) == expected


def test_macos_follows_the_locale_variables_when_a_terminal_set_them() -> None:
    assert lang.detect_language("darwin", {"LANG": "ru_RU.UTF-8"}, apple_languages=["de-DE"]) == "ru"


def test_a_macos_app_started_from_finder_follows_the_language_and_region_list() -> None:
    assert lang.detect_language("darwin", {}, apple_languages=["fr-FR", "es-419", "en-US"]) == "es"
    assert lang.detect_language("darwin", {}, apple_languages=[]) == "en"


@pytest.mark.parametrize(
    ("langid", "expected"),
    [
        (0x0407, "de"),
        (0x0C07, "de"),
        (0x0419, "ru"),
        (0x0C0A, "es"),
        (0x080A, "es"),
        (0x0409, "en"),
        (0x040C, "en"),
        (None, "en"),
    ],
)
def test_windows_follows_the_users_display_language(langid: int | None, expected: str) -> None:
    assert lang.detect_language("win32", {}, windows_ui_lang=langid) == expected


def test_windows_ignores_a_lang_variable_that_git_bash_sets_on_its_own() -> None:
    assert lang.detect_language("win32", {"LANG": "en_US.UTF-8"}, windows_ui_lang=0x0407) == "de"


def test_a_language_picked_in_the_tray_is_remembered_privately_and_can_be_dropped(tmp_path: Path) -> None:
    assert lang.chosen_language(tmp_path) is None
    lang.choose_language(tmp_path, "ru")
    assert lang.chosen_language(tmp_path) == "ru"
    assert (tmp_path / lang.LANGUAGE_FILE).stat().st_mode & 0o777 == 0o600
    lang.choose_language(tmp_path, None)
    assert lang.chosen_language(tmp_path) is None


def test_an_unknown_language_in_the_settings_file_means_follow_the_os(tmp_path: Path) -> None:
    (tmp_path / lang.LANGUAGE_FILE).write_text("xx\n")
    assert lang.chosen_language(tmp_path) is None


MOMENT = datetime(2026, 3, 2, 9, 5, 7)  # a Monday in March: "März", "мар.", Spanish's 9:05


@pytest.mark.parametrize("language", ["es", "de", "ru"])
def test_numbers_are_written_as_cldr_writes_them(language: str) -> None:
    for value in (7, 1234, 12345, 1234567):
        assert format_number(value, language=language) == format_decimal(value, locale=language)
    for value in (1.5, 1234.5):
        assert format_number(value, 1, language=language) == format_decimal(value, "#,##0.0", locale=language)


def test_english_numbers_group_thousands_with_commas() -> None:
    assert format_number(1234567.25, 1, language="en") == "1,234,567.2"


@pytest.mark.parametrize("language", ["es", "de", "ru"])
def test_times_and_dates_are_written_as_cldr_writes_them(language: str) -> None:
    time, short = format_skeleton("Hms", MOMENT, locale=language), format_skeleton("Hm", MOMENT, locale=language)
    assert format_time(MOMENT, language=language) == time
    assert format_time(MOMENT, seconds=False, language=language) == short
    day_month, weekday = format_skeleton("MMMd", MOMENT, locale=language), format_skeleton("E", MOMENT, locale=language)
    assert format_day_month_time(MOMENT, language=language) == f"{day_month} {short}"
    assert format_weekday_time(MOMENT, language=language) == f"{weekday} {short}"
    assert format_date_time(MOMENT, language=language) == f"{format_skeleton('yMd', MOMENT, locale=language)} {time}"


@pytest.mark.parametrize("language", ["es", "de", "ru"])
def test_every_month_and_weekday_name_is_cldrs(language: str) -> None:
    for month in range(1, 13):
        day = datetime(2026, month, 12, 8, 0)
        assert format_day_month_time(day, language=language).startswith(format_skeleton("MMMd", day, locale=language))
    for offset in range(7):
        day = datetime(2026, 3, 2 + offset, 8, 0)
        assert format_weekday_time(day, language=language).startswith(format_skeleton("E", day, locale=language))


def test_english_keeps_the_24_hour_clock_and_iso_dates_the_app_always_showed() -> None:
    assert format_time(datetime(2026, 3, 2, 21, 5, 7), language="en") == "21:05:07"
    assert format_day_month_time(MOMENT, language="en") == "2 Mar 09:05"
    assert format_date_time(MOMENT, language="en") == "2026-03-02 09:05:07"
    assert sorted(LOCALES) == sorted(lang.LANGUAGES)


def run_cli(args: list[str], cli_env: dict[str, str], **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in cli_env.items() if k not in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")}
    return subprocess.run(
        [sys.executable, "-m", "app", *args], env={**environ, **env}, capture_output=True, text=True, timeout=60
    )


def test_the_cli_speaks_the_language_of_the_users_locale(cli_env: dict[str, str]) -> None:
    german = run_cli(["pause"], cli_env, LANG="de_DE.UTF-8")
    assert german.stdout == "Der Computerzugriff ist PAUSIERT: Neue Befehle werden abgelehnt.\n"
    russian = run_cli(["approvals"], cli_env, LANG="C.UTF-8", LC_MESSAGES="ru_RU.UTF-8")
    assert russian.stdout == "Ничто не ждёт вашего одобрения.\n"


def test_help_is_translated_whole_argparses_own_words_included(cli_env: dict[str, str]) -> None:
    result = run_cli(["pause", "--help"], cli_env, LANG="ru_RU.UTF-8")
    assert result.stdout.startswith("использование: ")
    assert "показать эту справку и выйти" in result.stdout
    assert "приостановить доступ к компьютеру" in run_cli(["--help"], cli_env, LANG="ru_RU.UTF-8").stdout
    error = run_cli(["approve"], cli_env, LANG="de_DE.UTF-8")
    assert "Fehler: folgende Argumente fehlen: command_id" in error.stderr


def test_the_language_picked_in_the_tray_wins_over_the_os(cli_env: dict[str, str], home: Path) -> None:
    lang.choose_language(home, "es")
    assert run_cli(["approvals"], cli_env, LANG="de_DE.UTF-8").stdout == "No hay nada esperando tu aprobación.\n"


def test_a_language_the_app_does_not_speak_gets_english(cli_env: dict[str, str]) -> None:
    assert run_cli(["approvals"], cli_env, LANG="fr_FR.UTF-8").stdout == "Nothing is waiting for your approval.\n"


@pytest.fixture
def speaking() -> Iterator[Callable[[str], None]]:
    """Switch this test process's language; English again afterwards."""
    yield i18n.use_language
    i18n.use_language("en")


@pytest.mark.parametrize(
    ("language", "counts"),
    [
        ("ru", {1: "1 команда", 3: "3 команды", 5: "5 команд", 11: "11 команд", 21: "21 команда", 24: "24 команды"}),
        ("de", {1: "1 Befehl", 2: "2 Befehle"}),
        ("es", {1: "1 comando", 2: "2 comandos", 1_000_000: "1000000 de comandos"}),
        ("en", {1: "1 command", 0: "0 commands"}),
    ],
)
def test_counted_texts_take_the_plural_form_of_the_language(speaking, language: str, counts: dict) -> None:
    speaking(language)
    for count, expected in counts.items():
        assert i18n.ngettext("{count} command", "{count} commands", count).format(count=count) == expected


def test_a_text_missing_from_a_catalog_falls_back_to_english(speaking) -> None:
    speaking("de")
    assert i18n._("Host access is ON.") == "Der Computerzugriff ist AN."
    assert i18n._("A text no catalog has") == "A text no catalog has"


def test_a_compiled_catalog_is_read_when_it_is_current_and_the_source_when_it_is_older(tmp_path: Path) -> None:
    """Builds ship .mo files; a source checkout (or a freshly edited .po) is compiled in memory."""
    from app.core.i18n import catalog

    po = i18n.LOCALE_DIR / "de" / "LC_MESSAGES" / f"{i18n.DOMAIN}.po"
    mo = po.with_suffix(".mo")
    assert not mo.exists(), "a stray compiled catalog in the source tree"
    try:
        entries = catalog.parse_po(po.read_text(encoding="utf-8"))
        for entry in entries:
            if entry.msgid == "Host access is ON.":
                entry.msgstr = ["compiled"]
        mo.write_bytes(catalog.compile_mo(entries))
        os.utime(mo, (po.stat().st_mtime + 10, po.stat().st_mtime + 10))
        assert i18n.load_translation("de").gettext("Host access is ON.") == "compiled"
        os.utime(mo, (po.stat().st_mtime - 10, po.stat().st_mtime - 10))
        assert i18n.load_translation("de").gettext("Host access is ON.") == "Der Computerzugriff ist AN."
    finally:
        mo.unlink(missing_ok=True)


@pytest.mark.slow
def test_the_wheel_carries_every_catalog_compiled(tmp_path: Path) -> None:
    """setup.py's build hook: a regular install gets .mo files (nothing compiles at start)."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(lang_root())],
        check=True, timeout=600,
    )  # fmt: skip
    (wheel,) = tmp_path.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        for language in ("es", "de", "ru"):
            data = archive.read(f"app/locale/{language}/LC_MESSAGES/{i18n.DOMAIN}.mo")
            translation = gettext.GNUTranslations(io.BytesIO(data))
            assert translation.gettext("Host access is ON.") == i18n.load_translation(language).gettext(
                "Host access is ON."
            )


def lang_root() -> Path:
    return Path(__file__).resolve().parent.parent


def test_the_start_at_login_entry_describes_the_app_in_each_language() -> None:
    from app.core.install.autostart import desktop_entry

    lines = desktop_entry(["cowork-terminal", "tray"]).splitlines()
    german = "Lässt einen KI-Agenten das Terminal dieses Computers nutzen, während Sie die Kontrolle behalten"
    assert f"Comment[de]={german}" in lines
    assert sum(line.startswith("Comment[") for line in lines) == 3
