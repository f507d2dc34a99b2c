"""Shells, interpreters and code in strings: text that bash or another language would run."""

from __future__ import annotations

import posixpath
import re

from .findings import TOUCHES_APP_DATA, D, M, _snip
from .options import _operands, _split_options
from .stdin import _STDIN_FILES, _Stdin
from .tables import (
    _CODE_DELETES,
    _CODE_RUNS,
    _INLINE_CODE_FLAGS,
    _PERL,
    _PYTHON,
)
from .words import _Word


class _ShellRules:
    """Parse again what a shell would run; judge inline code by what it names.

    Mixed into _Analyzer: `self` is the analyzer, which provides add, argv, inner, sub_script, code_words,
    wrapper, guard_parents and the rest. Each `cmd_<name>` handles a program, found by name in argv.
    """

    def code_words(self, words: list[_Word], what: str, strip_prefix: str = "") -> None:
        """Words bash would join and parse again as code (`sh -c`, `eval`, `ssh host ...`)."""
        values = [w.literal for w in words]
        if any(v is None for v in values):
            self.add(D, "cannot tell what runs: {what} of an expansion", what=what)
            return
        text = " ".join(v for v in values if v is not None)
        if strip_prefix and text.startswith(strip_prefix):
            text = text[len(strip_prefix) :]
        self.sub_script(text, what)

    def shell(self, name: str, args: list[_Word], stdin: _Stdin | None) -> None:
        i = 0
        inline = False
        while i < len(args):
            v = args[i].value
            if v is None:
                break
            if v in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
                i += 2
                continue
            if v == "--":
                i += 1
                break
            if v.startswith("--") or (v[:1] in "-+" and len(v) > 1):
                if not v.startswith("--") and "c" in v[1:]:
                    inline = True
                i += 1
                continue
            break
        rest = args[i:]
        if inline:
            if not rest:
                self.add(D, "cannot tell what runs: {name} -c without a command", name=name)
            else:
                self.code_words(rest[:1], f"{name} -c")
            return
        if rest and rest[0].value not in _STDIN_FILES:
            script = rest[0]
            if script.procsub or script.value is None:
                self.add(D, "cannot tell what runs: {name} runs the output of another command", name=name)
            else:
                self.add(
                    M,
                    "{name} {value}: runs a script (its contents are not checked)",
                    name=name,
                    value=_snip(script.value or ""),
                )
            return
        self.stdin_code(name, stdin, shell=True)

    def stdin_code(self, name: str, stdin: _Stdin | None, *, shell: bool) -> None:
        if stdin is None:
            self.add(
                M,
                "{name}: starts an interactive shell" if shell else "{name}: starts an interactive interpreter",
                name=name,
            )
        elif stdin.kind == "pipe":
            self.add(D, "cannot tell what runs: {name} reads its commands from a pipe", name=name)
        elif stdin.kind == "unknown" and (shell or not stdin.text):
            self.add(D, "cannot tell what runs: {name} reads {source}", name=name, source=stdin.source)
        elif stdin.kind == "file":
            self.add(
                M,
                "{name}: runs the script {source} (its contents are not checked)",
                name=name,
                source=_snip(stdin.source),
            )
        elif shell:
            self.sub_script(stdin.text, name)
        else:
            self.inline_code(name, stdin.text)

    def cmd_eval(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        if args:
            self.code_words(args, "eval")

    def cmd_source(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        if not args:
            return
        script = args[0]
        if script.value in _STDIN_FILES:
            self.stdin_code(name, stdin, shell=True)
        elif script.procsub or script.value is None:
            self.add(D, "cannot tell what runs: {name} of another command's output", name=name)
        else:
            self.add(
                M, "{name} {value}: runs a script in this shell (not checked)", name=name, value=_snip(script.value)
            )

    cmd__ = cmd_source  # `.` becomes "_" in the handler name

    def cmd_trap(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        options, i = _split_options(args)
        if len(args) - i >= 2 and args[i].value != "-":
            self.code_words(args[i : i + 1], "trap")

    def cmd_alias(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        for a in args:
            if a.value is None:
                self.add(D, "cannot tell what runs: alias of an expansion")
            elif "=" in a.value:
                self.sub_script(a.value.split("=", 1)[1], "alias")

    def interpreter(self, name: str, args: list[_Word], stdin: _Stdin | None) -> None:
        python = bool(_PYTHON.match(name))
        perl = bool(_PERL.match(name))
        flags = _INLINE_CODE_FLAGS.get(name, frozenset())
        i = 0
        while i < len(args):
            a = args[i]
            v = a.value
            if v is None:
                self.add(D, "cannot tell what runs: {name} with arguments from an expansion", name=name)
                return
            lowered = v.casefold()
            if python and v.startswith("-") and not v.startswith("--") and len(v) > 1:
                # a cluster of short options: -c and -m take the rest of it or the next word, -W/-X a value
                cluster = v[1:]
                k = next((k for k, ch in enumerate(cluster) if ch in "cmWX"), len(cluster))
                attached = cluster[k + 1 :]
                if k < len(cluster) and cluster[k] == "c":
                    following = args[i + 1].literal if i + 1 < len(args) else ""
                    self.inline_code(name, attached or following)
                    return
                if k < len(cluster) and cluster[k] == "m":
                    if attached:
                        self.python_module(name, _Word(attached, a.source, attached), args[i + 1 :])
                    else:
                        self.python_module(name, args[i + 1] if i + 1 < len(args) else None, args[i + 2 :])
                    return
                i += 2 if k < len(cluster) and not attached else 1
                continue
            if perl and v.startswith("-") and not v.startswith("--") and ("e" in v[1:] or "E" in v[1:]):
                self.inline_code(name, args[i + 1].literal if i + 1 < len(args) else "")
                return
            if lowered in flags:
                rest = args[i + 1 :] if name in ("cmd", "pwsh", "powershell") else args[i + 1 : i + 2]
                literal = [w.literal for w in rest]
                code = None if any(x is None for x in literal) else " ".join(x for x in literal if x)
                self.inline_code(name, code)
                return
            if name in ("pwsh", "powershell") and lowered.startswith(("-e", "-enc")):
                self.add(D, "cannot tell what runs: {name} with encoded code", name=name)
                return
            if v.startswith("-") and v != "-":
                i += 1
                continue
            if v in _STDIN_FILES:
                break
            if a.procsub:
                self.add(D, "cannot tell what runs: {name} runs the output of another command", name=name)
            else:
                self.add(M, "{name} {v}: runs a program (its contents are not checked)", name=name, v=_snip(v))
            return
        self.stdin_code(name, stdin, shell=False)

    def inline_code(self, name: str, code: str | None) -> None:
        if code is None:
            self.add(D, "cannot tell what runs: {name} code from an expansion", name=name)
            return
        if self.protected.mentioned_in(code):
            self.add(D, TOUCHES_APP_DATA)
        if _PYTHON.match(name) and self.code_runs_itself(code):
            return
        if _CODE_DELETES.search(code):
            self.add(D, "{name} code that deletes files or stops the machine", name=name)
        elif _CODE_RUNS.search(code):
            self.add(D, "cannot tell what runs: {name} code starts other programs", name=name)
        else:
            self.add(M, "{name}: runs inline code", name=name)

    def cmd_cd(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        """Follow `cd` within one command line, so `cd ~/x && rm y` is checked as ~/x/y."""
        operands = _operands(args)
        target = operands[0].literal if operands else self.home
        if target is None or target == "-":
            self.cwd = None
        elif target.startswith("/") or re.match(r"^[A-Za-z]:[/\\]", target):
            self.cwd = posixpath.normpath(target.replace("\\", "/"))
        elif self.cwd is not None:
            self.cwd = posixpath.normpath(posixpath.join(self.cwd, target))

    cmd_pushd = cmd_cd
