"""Numbers, times and dates as the user's language writes them (CLDR's rules for en, es, de, ru).

Four languages need a dozen facts each, so they are written here rather than taken from Babel at
run time (36 MB of locale data in every bundle); tests/test_i18n.py checks each against Babel's
CLDR data. English keeps what the app always showed, which reads the same to every English
reader (US, UK, India...): 24-hour times, "13 Mar" and ISO dates, not CLDR's US-only "3/13/26".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from app.core import i18n


@dataclass(frozen=True)
class LocaleData:
    decimal: str
    group: str
    time: str  # CLDR skeleton Hms
    short_time: str  # Hm
    day_month: str  # MMMd
    date: str  # yMd
    months: tuple[str, ...]  # abbreviated, format context (as in "2 мар.")
    weekdays: tuple[str, ...]  # abbreviated, stand-alone, Monday first


LOCALES = {
    "en": LocaleData(
        ".",
        ",",
        "HH:mm:ss",
        "HH:mm",
        "d MMM",
        "y-MM-dd",
        ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"),
        ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"),
    ),
    "es": LocaleData(
        ",",
        ".",
        "H:mm:ss",
        "H:mm",
        "d MMM",
        "d/M/y",
        ("ene", "feb", "mar", "abr", "may", "jun", "jul", "ago", "sept", "oct", "nov", "dic"),
        ("lun", "mar", "mié", "jue", "vie", "sáb", "dom"),
    ),
    "de": LocaleData(
        ",",
        ".",
        "HH:mm:ss",
        "HH:mm",
        "d. MMM",
        "d.M.y",
        ("Jan.", "Feb.", "März", "Apr.", "Mai", "Juni", "Juli", "Aug.", "Sept.", "Okt.", "Nov.", "Dez."),
        ("Mo", "Di", "Mi", "Do", "Fr", "Sa", "So"),
    ),
    "ru": LocaleData(
        ",",
        "\u00a0",
        "HH:mm:ss",
        "HH:mm",
        "d MMM",
        "dd.MM.y",
        ("янв.", "февр.", "мар.", "апр.", "мая", "июн.", "июл.", "авг.", "сент.", "окт.", "нояб.", "дек."),
        ("пн", "вт", "ср", "чт", "пт", "сб", "вс"),
    ),
}
_FIELD = re.compile(r"y+|M+|d+|H+|m+|s+|'[^']*'")


def _data(language: str | None) -> LocaleData:
    return LOCALES.get(language or i18n.current_language(), LOCALES["en"])


def format_number(value: float, decimals: int | None = 0, language: str | None = None) -> str:
    """`value` with the language's digit grouping and decimal sign: 1,234.5 / 1.234,5 / 1 234,5.

    decimals=None writes as many as the value needs, up to three (0.2, 40, 1.25), like `:g`.
    """
    data = _data(language)
    text = f"{value:,.3f}".rstrip("0").rstrip(".") if decimals is None else f"{value:,.{decimals}f}"
    return text.replace(",", "\0").replace(".", data.decimal).replace("\0", data.group)


def _pattern(pattern: str, moment: datetime, data: LocaleData) -> str:
    def field(match: re.Match[str]) -> str:
        token = match.group()
        letter, width = token[0], len(token)
        if letter == "'":
            return token[1:-1]
        if letter == "M" and width >= 3:
            return data.months[moment.month - 1]
        value = {
            "y": moment.year,
            "M": moment.month,
            "d": moment.day,
            "H": moment.hour,
            "m": moment.minute,
            "s": moment.second,
        }[letter]
        return f"{value:0{width}d}"

    return _FIELD.sub(field, pattern)


def format_time(moment: datetime, seconds: bool = True, language: str | None = None) -> str:
    """14:05:09, or 14:05 without seconds (Spanish writes 9:05:09)."""
    data = _data(language)
    return _pattern(data.time if seconds else data.short_time, moment, data)


def format_day_month_time(moment: datetime, language: str | None = None) -> str:
    """Nov 30 14:05 / 30. Nov. 14:05 / 30 нояб. 14:05."""
    data = _data(language)
    return f"{_pattern(data.day_month, moment, data)} {_pattern(data.short_time, moment, data)}"


def format_weekday_time(moment: datetime, language: str | None = None) -> str:
    """Mon 14:05 / Mo 14:05 / пн 14:05."""
    data = _data(language)
    return f"{data.weekdays[moment.weekday()]} {_pattern(data.short_time, moment, data)}"


def format_date_time(moment: datetime, language: str | None = None) -> str:
    """11/30/2026 14:05:09 / 30.11.2026 14:05:09."""
    data = _data(language)
    return f"{_pattern(data.date, moment, data)} {_pattern(data.time, moment, data)}"


def shorten_command(command: str, limit: int) -> str:
    """A command cut to `limit` characters in the middle, keeping its end: the dangerous part of a
    long command is often last (`... | sh`, `... && rm -rf ~`), so the end is never what goes."""
    if len(command) <= limit:
        return command
    tail = max(1, (limit - 1) * 2 // 5)
    head = limit - 1 - tail
    return command[:head] + "…" + command[-tail:]
