"""The tray channel's Windows pipe: its name and security descriptor (pure, every system).

The pipe itself runs for real under Wine in tests/test_wine.py.
"""

from __future__ import annotations

import pytest

from app.core.channel.windows_pipe import pipe_name, pipe_sddl

SID = "S-1-5-21-1004336348-1177238915-682003330-1001"


def test_the_pipe_name_carries_the_user_sid_and_the_data_folder_key() -> None:
    assert pipe_name(SID, "0123abcd4567ef89") == (
        r"\\.\pipe\cowork-terminal-S-1-5-21-1004336348-1177238915-682003330-1001-0123abcd4567ef89"
    )


def test_the_security_descriptor_admits_only_the_user_and_system_and_inherits_nothing() -> None:
    assert pipe_sddl(SID) == f"D:P(A;;GA;;;{SID})(A;;GA;;;SY)"


@pytest.mark.parametrize("bad", ["", "S-1-5-21-1)(A;;GA;;;WD", "WD", "S-1-5-x", "S-1-5-21-1 "])
def test_a_value_that_is_not_a_sid_cannot_add_entries_to_the_descriptor(bad: str) -> None:
    with pytest.raises(ValueError):
        pipe_sddl(bad)
    with pytest.raises(ValueError):
        pipe_name(bad, "abc")


@pytest.mark.parametrize("bad", ["", "..\\x", "a-b", "a\\b"])
def test_a_data_folder_key_that_is_not_plain_letters_and_digits_is_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        pipe_name(SID, bad)
