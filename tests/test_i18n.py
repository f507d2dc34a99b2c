"""The app's language: chosen from each platform's settings, picked in the tray, and its formats."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from babel.dates import format_skeleton
from babel.numbers import format_decimal

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
    [(0x0407, "de"), (0x0C07, "de"), (0x0419, "ru"), (0x0C0A, "es"), (0x080A, "es"), (0x0409, "en"),
     (0x040C, "en"), (None, "en")],
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


def test_english_keeps_the_24_hour_clock_the_app_always_showed() -> None:
    assert format_time(datetime(2026, 3, 2, 21, 5, 7), language="en") == "21:05:07"
    assert format_day_month_time(MOMENT, language="en") == "Mar 2 09:05"
    assert sorted(LOCALES) == sorted(lang.LANGUAGES)
