"""Checks for one value of a channel message: a number in range, text, a flag, an object.

A value no program of ours sends (NaN, infinity, a negative or huge number, a boolean where a
number belongs, a string where a list belongs) is refused here, before any comparison: every
comparison with NaN is false, so a NaN that got through would count as a tightening everywhere.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

MAX_ID = 2**62  # row ids, pids, sequence numbers: SQLite's integers are 64-bit


class BadValue(ValueError):
    """A value that is not one our programs send: the request is refused, nothing changes."""


def finite(value: object, name: str, low: float, high: float) -> float:
    """A real number in [low, high]: never a boolean, NaN or infinity."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BadValue(f"{name} must be a number (got {type(value).__name__})")
    if not math.isfinite(value) or not low <= value <= high:
        raise BadValue(f"{name} must be a number from {low:g} to {high:g} (got {value!r})")
    return float(value)


def whole(value: object, name: str, low: int = 0, high: int = MAX_ID) -> int:
    """A whole number in [low, high]: never a boolean or a float."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadValue(f"{name} must be a whole number (got {type(value).__name__})")
    if not low <= value <= high:
        raise BadValue(f"{name} must be from {low} to {high} (got {value})")
    return value


def optional_whole(value: object, name: str, low: int = 0, high: int = MAX_ID) -> int | None:
    return None if value is None else whole(value, name, low, high)


def text(value: object, name: str) -> str:
    if not isinstance(value, str):
        raise BadValue(f"{name} must be text (got {type(value).__name__})")
    return value


def optional_text(value: object, name: str) -> str | None:
    return None if value is None else text(value, name)


def flag(value: object, name: str) -> bool:
    if not isinstance(value, bool):
        raise BadValue(f"{name} must be true or false (got {type(value).__name__})")
    return value


def fields_of(message: object, name: str) -> Mapping[str, Any]:
    if not isinstance(message, Mapping):
        raise BadValue(f"{name} must be an object")
    return message
