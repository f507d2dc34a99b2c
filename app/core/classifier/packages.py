"""Package managers: installs are moderate, removals destructive, queries safe."""

from __future__ import annotations

import re

from .findings import D, M, _snip
from .options import _operands, _short_flags, _split_options
from .stdin import _Stdin
from .tables import (
    _JS_READ,
    _JS_REMOVE,
    _PACKAGE_MANAGERS,
    _names,
)
from .words import _Word


class _PackageRules:
    """Rules for system, language and JavaScript package managers.

    Mixed into _Analyzer: `self` is the analyzer, which provides add, argv, inner, sub_script, code_words,
    wrapper, guard_parents and the rest. Each `cmd_<name>` handles a program, found by name in argv.
    """

    def subcommand(self, args: list[_Word], what: str) -> str | None:
        for a in args:
            if a.value is None:
                self.add(D, "cannot tell: {what} subcommand from {source}", what=what, source=_snip(a.source))
                return None
            if not a.value.startswith("-"):
                return a.value
        return ""

    def package_manager(self, name: str, args: list[_Word]) -> None:
        remove, read = _PACKAGE_MANAGERS[name]
        if name in ("conda", "mamba", "micromamba") and [a.value for a in _operands(args)][:2] == ["env", "remove"]:
            self.add(D, "{name} env remove: deletes an environment", name=name)
            return
        sub = self.subcommand(args, name)
        if sub is None:
            return
        if sub in remove:
            self.add(D, "{name} {sub}: removes packages", name=name, sub=sub)
        elif sub in read or (sub == "" and any(a.value in ("--version", "-V", "--help") for a in args)):
            return
        else:
            self.add(M, "{name} {sub}: changes installed software", name=name, sub=sub)

    def cmd_dpkg(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        values = {a.value for a in args}
        flags = _short_flags(args)
        if {"r", "P"} & flags or {"--remove", "--purge"} & values:
            self.add(D, "dpkg --remove: removes packages")
        elif not ({"l", "L", "s", "S", "c", "I"} & flags or any(
            (v or "").startswith(("--list", "--status", "--search", "--get-selections", "--contents", "--info",
                                  "--print-architecture", "--version"))
            for v in values
        )):  # fmt: skip
            self.add(M, "dpkg: changes installed software")

    def cmd_pacman(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        first = next((a.value for a in args if a.value and a.value.startswith("-")), "") or ""
        if first.startswith("-R") or first == "--remove":
            self.add(D, "{name} -R: removes packages", name=name)
        elif first.startswith(("-Q", "--query")) or re.fullmatch(r"-S[silgp]+", first):
            return
        elif first or name != "pacman":
            self.add(M, "{name}: changes installed software", name=name)

    cmd_yay = cmd_paru = cmd_pacman

    def cmd_nix_env(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        values = {a.value for a in args}
        if {"-e", "--uninstall"} & values:
            self.add(D, "nix-env --uninstall: removes packages")
        elif not {"-q", "--query"} & values:
            self.add(M, "nix-env: changes installed software")

    def cmd_nix(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        ops = [a.value for a in _operands(args)]
        if ops[:2] == ["profile", "remove"]:
            self.add(D, "nix profile remove: removes packages")
        else:
            self.add(M, "nix: builds or changes software")

    def cmd_uv(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        ops = _operands(args)
        sub = ops[0].value if ops else None
        if sub == "pip":
            self.package_manager("pip", args[args.index(ops[0]) + 1 :])
        elif sub == "tool" and len(ops) > 1 and ops[1].value == "uninstall":
            self.add(D, "uv tool uninstall: removes packages")
        elif sub == "run":
            self.add(M, "uv run: runs a program")
            values = _names(
                "--with --python -p --from --package --extra --group --directory --project "
                "--env-file --index --with-requirements"
            )
            after = args[args.index(ops[0]) + 1 :]
            _, i = _split_options(after, values)
            self.inner(after[i:], stdin, bulk, depth)
        elif sub not in (None, "version", "tree", "help"):
            self.add(M, "uv {sub}: changes the project or installed software", sub=sub)

    def js_package_manager(self, name: str, args: list[_Word]) -> None:
        values = [a.value for a in args]
        everywhere = any(v in ("-g", "--global", "--location=global") for v in values)
        sub = self.subcommand(args, name)
        if sub is None:
            return
        if sub == "global" and name == "yarn":
            ops = _operands(args)
            sub = ops[1].value if len(ops) > 1 else ""
            everywhere = True
        if sub in _JS_REMOVE and everywhere:
            self.add(D, "{name} {sub} -g: removes globally installed packages", name=name, sub=sub)
        elif sub in _JS_REMOVE:
            self.add(M, "{name} {sub}: removes a dependency from this project", name=name, sub=sub)
        elif sub in _JS_READ or (sub == "" and any(v in ("-v", "--version") for v in values)):
            return
        else:
            self.add(M, "{name} {sub}: changes or runs the project", name=name, sub=sub)
