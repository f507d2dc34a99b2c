"""What a program does with another command's output typed into it, where that output is not known
here: a shell, an interpreter, or a program that runs what is typed into it as its commands (ed, a
database client, gdb) runs it unseen. Said as a download when a downloader made it."""

from __future__ import annotations

from app.core.i18n import N_

from .danger import Danger
from .findings import D
from .rule import Analysis
from .stdin import _Stdin
from .tables import _DOWNLOADERS


def runs_download(ctx: Analysis, name: str) -> None:
    """`curl ... | sh`, `bash <(curl ...)`: the strongest words, not just "cannot tell"."""
    ctx.add(D, "{name} runs a program downloaded from the internet", N_("Runs a program downloaded from the internet"),
            danger=Danger.DOWNLOADED, name=name)  # fmt: skip


def piped_commands(ctx: Analysis, name: str, stdin: _Stdin) -> None:
    """`name` runs as commands what another command's output (not known here) types into it."""
    if stdin.source in _DOWNLOADERS:
        runs_download(ctx, name)
    else:
        ctx.add(D, "cannot tell what runs: {name} reads its commands from a pipe", name=name)
