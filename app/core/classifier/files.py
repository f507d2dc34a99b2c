"""Removing, moving and re-permissioning files."""

from __future__ import annotations

import fnmatch
import posixpath
import re

from .findings import D, M, _snip
from .options import _operands
from .protected import _norm_path
from .stdin import _Stdin
from .words import _GLOB, _Word


class _FileRules:
    """Rules for rm and friends, find/fd actions, mv, rsync, chmod/chown.

    Mixed into _Analyzer: `self` is the analyzer, which provides add, argv, inner, sub_script, code_words,
    wrapper, guard_parents and the rest. Each `cmd_<name>` handles a program, found by name in argv.
    """

    # ---- removal

    def cmd_rm(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        flags: set[str] = set()
        longs: set[str] = set()
        end = False
        for w in args:
            v = w.value
            if not end and v is None:
                self.add(D, f"cannot tell: rm may take options from {_snip(w.source)}")
            elif not end and v == "--":
                end = True
            elif not end and v is not None and v.startswith("--"):
                longs.add(v.split("=", 1)[0])
            elif not end and v is not None and v.startswith("-") and v != "-":
                flags.update(v[1:])
        if {"r", "R"} & flags or "--recursive" in longs or "--no-preserve-root" in longs:
            self.add(D, "rm -r: recursive removal")
        if "f" in flags or "--force" in longs:
            self.add(D, "rm -f: forced removal")
        if bulk:
            self.add(D, "rm via xargs or find: removes every file it is given")
        self.add(M, "rm: removes files")

    def cmd_rmdir(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        self.add(M, f"{name}: removes files")
        self.guard_parents(name, _operands(args))

    cmd_unlink = cmd_rmdir

    def cmd_shred(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        self.add(D, f"{name}: destroys file contents beyond recovery")

    cmd_wipe = cmd_srm = cmd_shred

    def cmd_rimraf(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        self.add(D, f"{name}: recursive removal")

    cmd_del_cli = cmd_rimraf

    def cmd_find(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        i = 0
        while i < len(args):
            v = args[i].value
            if v == "-delete":
                self.add(D, "find -delete: removes every match")
            elif v in ("-exec", "-execdir", "-ok", "-okdir"):
                end = next((j for j in range(i + 1, len(args)) if args[j].value in (";", "+")), len(args))
                self.inner(args[i + 1 : end], None, True, depth)
                i = end
            elif v in ("-fprint", "-fprint0", "-fprintf", "-fls"):
                self.add(M, f"find {v}: writes a file")
            i += 1

    def cmd_fd(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        for i, a in enumerate(args):
            if a.value in ("-x", "--exec", "-X", "--exec-batch"):
                end = next((j for j in range(i + 1, len(args)) if args[j].value == ";"), len(args))
                self.inner(args[i + 1 : end], None, True, depth)
                return

    cmd_fdfind = cmd_fd

    def cmd_mv(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        self.add(M, f"{name}: moves files")
        operands = _operands(args, frozenset({"-t", "--target-directory", "-S", "--suffix"}))
        self.guard_parents(name, operands[:-1] if len(operands) > 1 else operands)

    def cmd_rsync(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        for a in args:
            if a.value is not None and a.value.startswith(("--delete", "--remove-source-files")):
                self.add(D, f"rsync {a.value.split('=')[0]}: deletes files")
        self.add(M, "rsync: copies files")

    # ---- permissions

    def cmd_chmod(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        recursive = False
        operands: list[_Word] = []
        reference = False
        for a in args:
            v = a.value
            if v is not None and (v == "--recursive" or re.fullmatch(r"-[RcfvhHLP]+", v)):
                recursive = recursive or v == "--recursive" or "R" in v
            elif v is not None and v.startswith("--"):
                reference = reference or v.startswith("--reference")
            else:
                operands.append(a)
        targets = operands if reference else operands[1:]
        if recursive:
            broad = [t for t in targets if self.is_broad(t)]
            if broad:
                self.add(D, f"{name} -R on a broad path: {_snip(broad[0].source)}")
            self.guard_parents(name, targets)
            self.add(M, f"{name} -R: changes permissions recursively")
        else:
            self.add(M, f"{name}: changes permissions")

    cmd_chown = cmd_chgrp = cmd_chmod

    def is_broad(self, w: _Word) -> bool:
        """The root, a top-level folder, the home folder or above, everything in one of them, or a
        path we cannot know. A relative path counts from the folder the command runs in."""
        if w.value is None and w.pattern.strip("*") == "":
            return True
        path = _norm_path(w.pattern)
        home = _norm_path(self.home)
        if self.cwd is not None and not re.match(r"^/|^[a-z]:/|^~", path):
            path = _norm_path(posixpath.join(self.cwd, path))
        if not w.glob and w.value is not None and path.startswith("/"):
            path = posixpath.normpath(path)
        candidates = {"/", home, posixpath.dirname(home)}
        top = re.fullmatch(r"/[^/]*|[a-z]:/?[^/]*|/[a-z]/[^/]*|~/?", path)
        if top or path in candidates:
            return True
        if w.glob and re.fullmatch(r"[^*?\[]*/\*", path) and posixpath.normpath(posixpath.dirname(path)) in candidates:
            return True  # `*` in the home folder: all of it
        fuzzy = w.glob or w.value is None
        if not fuzzy or not path.startswith("/"):
            return False
        # A pattern in the first two levels (/home/*, /*/x, /Users/*) reaches whole home folders.
        return any(_GLOB.search(part) for part in path.split("/")[1:3]) or any(
            fnmatch.fnmatchcase(c, path) for c in candidates
        )
