"""Removing, moving and re-permissioning files."""

from __future__ import annotations

import fnmatch
import posixpath
import re

from app.core.i18n import N_

from .findings import DELETE_RECURSIVE, D, M, _snip
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
        operands: list[_Word] = []
        end = False
        for w in args:
            v = w.value
            if not end and v is None:
                self.add(D, "cannot tell: rm may take options from {source}", source=_snip(w.source))
                operands.append(w)  # or name what it deletes: said in the plain words below
            elif not end and v == "--":
                end = True
            elif not end and v is not None and v.startswith("--"):
                longs.add(v.split("=", 1)[0])
            elif not end and v is not None and v.startswith("-") and v != "-":
                flags.update(v[1:])
            else:
                operands.append(w)
        if {"r", "R"} & flags or "--recursive" in longs or "--no-preserve-root" in longs:
            if not operands:
                self.add(D, "rm -r: recursive removal", N_("Deletes folders and everything in them"))
            for w in operands:
                inside = self.inside_working_folder(w, named_only=True)
                shown = self.shown_path(w)
                if shown is None:  # an expansion decides the name
                    plain = N_("Deletes {source} (a name known only when it runs) and everything in it")
                elif w.glob:
                    plain = N_("Deletes everything matching {shown}, folders and all they hold")
                else:
                    plain = N_("Deletes the folder {shown} and everything in it")
                kind = DELETE_RECURSIVE if inside else None
                self.add(D, "rm -r: recursive removal", plain, kind, shown, shown=shown or "", source=_snip(w.source))
        elif "f" in flags or "--force" in longs:
            # Removing named files in the working folder: the same as plain rm (which does not ask
            # either for a file the user can write), so routine. Elsewhere, or a glob across
            # folders, or a name we cannot see: the user is asked.
            for w in operands:
                shown = self.shown_path(w) or _snip(w.source)
                if self.inside_working_folder(w, named_only=False):
                    plain = N_("Deletes the files matching {shown}") if w.glob else N_("Deletes the file {shown}")
                    self.add(M, "rm -f: removes files in the working folder", plain, shown=shown)
                else:
                    self.add(D, "rm -f: forced removal", N_("Deletes {shown} without asking"), shown=shown)
        if bulk:
            self.add(D, "rm via xargs or find: removes every file it is given")
        self.add(M, "rm: removes files")

    def shown_path(self, w: _Word) -> str | None:
        """The path `w` names, made absolute from the working folder where it is known; None for a
        name an expansion decides. Globs stay as written (`/home/ana/project/*.o`)."""
        if w.value is None:
            return None
        value = w.value
        if self.cwd is not None and not value.startswith("/"):
            value = posixpath.join(self.cwd, value)
        return posixpath.normpath(value) if value else None

    def inside_working_folder(self, w: _Word, *, named_only: bool) -> bool:
        """Whether `w` names something strictly inside the working folder: a relative path without
        `..`, or an absolute one under a known working folder; never when the working folder is
        the home folder or the root. A glob is accepted only in the last part (`*.o`, `src/*.o`),
        and not at all when `named_only`. `build/` counts as `build`."""
        value = w.value
        if value is None or (w.glob and named_only) or value.startswith("~"):
            return False
        parts = value.rstrip("/").split("/")
        if any(part == ".." for part in parts) or (w.glob and any(_GLOB.search(p) for p in parts[:-1])):
            return False
        cwd = self.cwd
        if cwd is not None and self.is_broad(_Word(cwd, cwd, cwd)):
            return False
        if value.startswith("/"):
            base = posixpath.normpath(cwd) if cwd is not None else None
            return base is not None and posixpath.normpath(value).startswith(base.rstrip("/") + "/")
        return posixpath.normpath(value) not in (".", "")

    def cmd_rmdir(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        self.add(M, "{name}: removes files", name=name)
        self.guard_parents(name, _operands(args))

    cmd_unlink = cmd_rmdir

    def cmd_shred(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        self.add(D, "{name}: destroys file contents beyond recovery", name=name)

    cmd_wipe = cmd_srm = cmd_shred

    def cmd_rimraf(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        self.add(D, "{name}: recursive removal", name=name)

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
                self.add(M, "find {v}: writes a file", v=v)
            i += 1

    def cmd_fd(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        for i, a in enumerate(args):
            if a.value in ("-x", "--exec", "-X", "--exec-batch"):
                end = next((j for j in range(i + 1, len(args)) if args[j].value == ";"), len(args))
                self.inner(args[i + 1 : end], None, True, depth)
                return

    cmd_fdfind = cmd_fd

    def cmd_mv(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        self.add(M, "{name}: moves files", name=name)
        operands = _operands(args, frozenset({"-t", "--target-directory", "-S", "--suffix"}))
        self.guard_parents(name, operands[:-1] if len(operands) > 1 else operands)

    def cmd_rsync(self, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
        for a in args:
            if a.value is not None and a.value.startswith(("--delete", "--remove-source-files")):
                self.add(D, "rsync {value}: deletes files", value=a.value.split("=")[0])
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
                where = _snip(broad[0].source)
                self.add(
                    D,
                    "{name} -R on a broad path: {where}",
                    N_("Changes who may use everything in {where}"),
                    name=name,
                    where=where,
                )
            self.guard_parents(name, targets)
            self.add(M, "{name} -R: changes permissions recursively", name=name)
        else:
            self.add(M, "{name}: changes permissions", name=name)

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
