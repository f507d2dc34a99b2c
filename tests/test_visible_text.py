"""What a person reads of a command shows every character: the pure function and its rules."""

from __future__ import annotations

import pytest

from app.core.visible_text import hidden_count, visible


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        ("rm -rf build", "rm -rf build"),
        ("rm -rf bu\u200bild", "rm -rf bu\\u200bild"),  # a zero-width space inside a name
        ("echo \u202egnp.exe", "echo \\u202egnp.exe"),  # right-to-left override
        ("rm -rf a\u00a0b", "rm -rf a\\u00a0b"),  # a no-break space: one word to bash, two to the eye
        ("ls\x1b[2K\rtrue", "ls^[[2K^Mtrue"),  # escape sequences that erase a terminal line
        ("a\x00b\x7fc\x9bd", "a^@b^?c\\u009bd"),  # NUL, DEL, a C1 CSI
        ("x\ufeffy\u2066z\U000e0041", "x\\ufeffy\\u2066z\\U000e0041"),  # BOM, bidi isolate, tag
        ("échec ./données", "échec ./données"),  # accented letters are text, shown as they are
        ("printf 'a\tb'\necho 2", "printf 'a\tb'\necho 2"),  # tab and newline kept for a window
        ("emoji \u2764\ufe0f", "emoji \u2764\\ufe0f"),  # a variation selector changes nothing a shell sees
        ("rm -rf bu\U00016fe4ild\U0001d159", "rm -rf bu\\U00016fe4ild\\U0001d159"),  # marks that draw nothing
    ],
)
def test_characters_that_do_not_show_are_written_out(command: str, shown: str) -> None:
    assert visible(command) == shown


def test_newlines_can_be_written_out_too_for_one_line_text() -> None:
    assert visible("a\nb", keep="") == "a^Jb"


def test_the_count_says_how_many_are_hidden() -> None:
    assert hidden_count("rm\u200b -rf\x1b[0m x\ny") == 2
    assert hidden_count("plain\ttext\n") == 0
