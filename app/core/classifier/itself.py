"""Cowork Terminal itself: its own program, its package run as a module, inline code that imports it."""

from __future__ import annotations

from .findings import RUNS_ITSELF, D, M, _snip
from .packages import package_manager
from .rule import Analysis
from .stdin import _Stdin
from .tables import _CODE_IMPORTS_SELF, _SELF_MODULE
from .words import _Word


def cmd_cowork_terminal(
    ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int
) -> None:
    """Every run of Cowork Terminal asks: through it the model could answer its own approvals or change
    the approval mode, the tools setting or a paused session. Read-only subcommands (`status`, `log`,
    `--help`) ask too; keeping no list of them is the safe side."""
    ctx.add(D, RUNS_ITSELF)


def python_module(ctx: Analysis, name: str, module: _Word | None, rest: list[_Word]) -> None:
    """`python -m MODULE ARGS...`: pip is a package manager, `app` and `app.*` are Cowork Terminal."""
    if module is None:
        ctx.add(M, "{name} -m: runs a module", name=name)
    elif module.value is None:
        ctx.add(D, "cannot tell what runs: {name} -m {source}", name=name, source=_snip(module.source))
    elif _SELF_MODULE.match(module.value):
        ctx.add(D, RUNS_ITSELF)
    elif module.value == "pip":
        package_manager(ctx, "pip", rest, 0)  # pip runs no program it is given: the depth is moot
    else:
        ctx.add(M, "{name} -m {value}: runs a module", name=name, value=_snip(module.value))


def code_runs_itself(ctx: Analysis, code: str) -> bool:
    """Inline Python (or code fed to python) that imports Cowork Terminal's package `app`."""
    if _CODE_IMPORTS_SELF.search(code):
        ctx.add(D, RUNS_ITSELF)
        return True
    return False
