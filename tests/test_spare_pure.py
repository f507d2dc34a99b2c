"""The spare container's pure parts (app/core/execution/spare.py): how a command is written to the
waiting init, and which containers get a spare."""

from __future__ import annotations

import dataclasses

from app.core.execution import container, spare
from app.core.execution.container import Container

SCOPED = Container(container.ON, bwrap="bwrap", init=("/usr/bin/perl", "-e", "..."))


def test_a_command_is_written_as_nul_ended_fields_folder_counts_variables_then_arguments() -> None:
    written = spare.order(["/bin/bash", "-c", "echo hi"], "/tmp/a b", {"A": "1\n2", "EMPTY": ""})
    assert written == b"/tmp/a b\x002\x003\x00A=1\n2\x00EMPTY=\x00/bin/bash\x00-c\x00echo hi\x00"


def test_what_cannot_pass_through_the_pipe_starts_the_command_as_before() -> None:
    argv = ["/bin/bash", "-c", "true"]
    assert spare.order(argv, "/tmp", {"A": "x\0y"}) is None, "a NUL in a value"
    assert spare.order(["/bin/bash", "-c", "a\0b"], "/tmp", {}) is None, "a NUL in the command"
    assert spare.order(argv, "/tmp", {"A=B": "1"}) is None, "a variable name with ="
    assert spare.order(argv, "/tmp", {"": "1"}) is None, "an empty variable name"
    assert spare.order([], "/tmp", {}) is None, "no command"


def test_only_the_default_scoped_container_gets_a_spare() -> None:
    assert spare.usable(SCOPED, read_only_binds=True)
    assert not spare.usable(SCOPED, read_only_binds=False), "a command allowed to change the protected set"
    assert not spare.usable(dataclasses.replace(SCOPED, init=()), read_only_binds=True), "the bash init"
    assert not spare.usable(Container(container.OFF), read_only_binds=True), "switched off in the app"
    assert not spare.usable(Container(container.MISSING), read_only_binds=True)
    assert not spare.usable(None, read_only_binds=True)
