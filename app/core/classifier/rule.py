"""What a rule sees of the analysis: the one small interface every command rule is written against.

A rule is a function `rule(ctx, name, args, stdin, bulk, depth)`: `name` is the command as bash
would find it (`rm`, whatever its quoting or folder), `args` its words after quote removal, `stdin`
what feeds it (a pipe, known text, a file), `bulk` whether xargs or find adds operands we cannot
see, `depth` how deep in the tree it sits. It says what the command would do with `ctx.add(tier,
reason, ...)` and sends any command or code it would run back through `ctx.inner` (a command's
words) or `ctx.sub_script`/`ctx.code_words` (text bash would parse again). Which rule judges
which command is decided in one table: `registry.RULES`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from .danger import Danger
from .findings import Tier, _Report
from .protected import _Protected
from .stdin import _Stdin
from .words import _Word


class Analysis(Protocol):
    """The analysis of one text (a command line, or a string bash would parse again)."""

    report: _Report
    text: str  # the text judged: the command line, or a string bash would parse again
    protected: _Protected
    home: str
    cwd: str | None  # where relative paths lead; a rule for `cd` moves it
    pushed: list[str | None]  # the folders `pushd` left, for `popd`
    own_source: bool  # the command defines a `source` of its own (a function, an alias)
    nesting: int
    head: _Word | None  # the command word of the command being judged (`.venv/bin/pip`, `python3`)

    def add(
        self,
        tier: Tier,
        reason: str,
        plain: str | None = None,
        kind: str | None = None,
        target: str | None = None,
        danger: Danger | None = None,
        **values: str,
    ) -> None: ...

    def argv(self, words: list[_Word], stdin: _Stdin | None, *, bulk: bool, depth: int) -> None: ...

    def inner(self, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None: ...

    def may_run(self, args: list[_Word], depth: int, *, shell_strings: bool = False) -> None: ...

    def sub_script(self, text: str, what: str, script: str | None = None) -> None: ...

    def code_words(self, words: list[_Word], what: str, strip_prefix: str = "") -> None: ...

    def code_loads(self, name: str, code: str) -> None: ...

    def later_expanded(self, text: str) -> None: ...

    def lasts(self, what: str, *, unless_subshell: bool = False) -> None: ...

    def guard_parents(self, name: str, words: list[_Word]) -> None: ...

    def relation_of(self, w: _Word) -> str | None: ...

    def in_project(self, path: str) -> str | None: ...

    def written_here(self, path: str) -> bool: ...

    def as_unknown_program(self, name: str, args: list[_Word], depth: int, *, noted: bool = True) -> None: ...

    def scratch(self, w: _Word) -> bool: ...

    def note_written(self, w: _Word, *, writes: bool = False) -> str | None: ...

    def path_pattern(self, w: _Word) -> str | None: ...


Rule = Callable[[Analysis, str, list[_Word], "_Stdin | None", bool, int], None]
