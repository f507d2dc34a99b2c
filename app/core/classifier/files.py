"""Removing, moving and re-permissioning files."""

from __future__ import annotations

import fnmatch
import itertools
import os
import posixpath
import re

from app.core.i18n import N_

from .code_options import code_file, code_text, option_values, vim_remote, vim_script
from .danger import Danger
from .findings import BULK_COMMAND, DELETE_RECURSIVE, D, M, _snip
from .handoff import hands_off
from .hosts import remote_here
from .options import _long_flags, _operands, fills_code, split_options, splits_into_options
from .protected import _norm_path
from .rule import Analysis
from .scripts import run_script, runs_project_files, script_path, typed_commands
from .stdin import _Stdin
from .tables import _names
from .words import _Word, _word_end, is_glob, splits_into_words

# ---- removal


def note_changed(ctx: Analysis, words: list[_Word]) -> None:
    """Files a command removes or re-permissions: where no container guards the protected set, a glob
    that deletes one of it is seen there (`rm -f ~/.b?shrc`, names_protected). Not written: `chmod +x
    x.sh && ./x.sh` runs the script that was read."""
    for w in words:
        pattern = ctx.path_pattern(w)
        if pattern is not None:
            ctx.report.changed.add(pattern)


def cmd_rm(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    note_changed(ctx, _operands(args))
    flags: set[str] = set()
    longs: set[str] = set()
    operands: list[_Word] = []
    scratch: list[_Word] = []
    end = False
    for w in args:
        v = w.value
        if ctx.scratch(w):
            scratch.append(w)  # the agent's own temporary file: see scratch.py
        elif not end and v is None:
            ctx.add(D, "cannot tell: rm may take options from {source}", source=_snip(w.source))
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
        if not operands and not scratch:
            ctx.add(
                D, "rm -r: recursive removal", N_("Deletes folders and everything in them"), danger=Danger.LOSES_FILES
            )
        for w in operands:
            inside = inside_working_folder(ctx, w, named_only=True)
            shown = shown_path(ctx, w)
            whole = whole_of(ctx, w)
            if whole is not None:  # the worst case gets the strongest words
                shown = whole[1]
                plain = _WHOLE_WORDS[whole[0]]
            elif shown is None:  # an expansion decides the name
                plain = N_("Deletes {source} (a name known only when it runs) and everything in it")
            elif ctx.cwd is None and not _ABSOLUTE.match(shown):  # after `cd "$dir"`
                plain = (
                    N_("Deletes everything matching {shown} in a folder known only when it runs")
                    if w.glob
                    else N_("Deletes {shown} and everything in it, in a folder known only when it runs")
                )
            elif w.glob:
                plain = N_("Deletes everything matching {shown}, folders and all they hold")
            else:
                plain = N_("Deletes the folder {shown} and everything in it")
            # `build/`: rm follows a symlink named so (GNU), and empties the folder it points to.
            kind = DELETE_RECURSIVE if inside and not (w.value or "").endswith("/") else None
            danger = Danger.LOSES_EVERYTHING if whole is not None else Danger.LOSES_FILES
            ctx.add(D, "rm -r: recursive removal", plain, kind, shown, danger=danger, shown=shown or "",
                    source=_snip(w.source))  # fmt: skip
    elif "f" in flags or "--force" in longs:
        # Removing named files in the working folder: the same as plain rm (which does not ask
        # either for a file the user can write), so routine. Elsewhere, or a glob across
        # folders, or a name we cannot see: the user is asked.
        for w in operands:
            shown = shown_path(ctx, w) or _snip(w.source)
            if inside_working_folder(ctx, w, named_only=False):
                plain = N_("Deletes the files matching {shown}") if w.glob else N_("Deletes the file {shown}")
                ctx.add(M, "rm -f: removes files in the working folder", plain, shown=shown)
            else:
                ctx.add(D, "rm -f: forced removal", N_("Deletes {shown} without asking"), danger=Danger.LOSES_FILES,
                        shown=shown)  # fmt: skip
    for w in scratch:
        ctx.add(M, "rm: removes its own temporary file", N_("Deletes the temporary file {source} this command made"),
                source=_snip(w.source))  # fmt: skip
    if bulk:
        ctx.add(D, "{name} via xargs or find: removes every file it is given", name=name, danger=Danger.LOSES_FILES)
    ctx.add(M, "rm: removes files")


_ABSOLUTE = re.compile(r"/|[A-Za-z]:/")  # a path that does not depend on the working folder

_WHOLE_WORDS = {
    "root": N_("Deletes every file on this computer you are allowed to delete ({shown}): this cannot be undone"),
    "home": N_("Deletes your whole home folder {shown} and everything in it: this cannot be undone"),
    "home contents": N_("Deletes everything in your whole home folder ({shown}): this cannot be undone"),
    "root contents": N_(
        "Deletes every file on this computer you are allowed to delete ({shown}): this cannot be undone"
    ),
}


def whole_of(ctx: Analysis, w: _Word) -> tuple[str, str] | None:
    """("home", path) when `w` is the whole home folder, ("home contents", pattern) for all that is in
    it (`~/*`, `$HOME/.*`), the same for the root folder; None for anything narrower."""
    if w.value is None and "*" in w.pattern:
        return None  # a part only known when it runs: said as such
    path = w.pattern.replace("\\", "/")
    if not _ABSOLUTE.match(path):
        if ctx.cwd is None:  # `cd "$dir" && rm -rf *`: a folder only known when it runs, not the root
            return None
        path = posixpath.join(ctx.cwd, path)
    # As written, then where rm lands (`build/cache/../../ana` with `cache` a link: red team, 2026-12-05)
    found = _whole(path, {posixpath.normpath(ctx.home)}, w.glob)
    if found is None:
        real = physical(path, pattern=w.glob)
        found = _whole(real, {posixpath.normpath(ctx.home), real_folder(ctx.home)}, w.glob)
    return found


def _whole(path: str, homes: set[str], glob: bool) -> tuple[str, str] | None:
    folder, last = posixpath.split(path.rstrip("/")) if glob else (path, "")
    folder = posixpath.normpath(folder) if folder else "/"
    if glob and re.fullmatch(r"\.?\*|\{\*,\.\*\}|\{\.\*,\*\}", last):
        if folder in homes:
            return "home contents", path
        if folder == "/":
            return "root contents", path
        return None
    if glob:
        return None
    if folder in homes:
        return "home", folder
    if folder == "/":
        return "root", "/"
    return None


def shown_path(ctx: Analysis, w: _Word) -> str | None:
    """The path `w` names, made absolute from the working folder where it is known; None for a
    name an expansion decides. Globs stay as written (`/home/ana/project/*.o`). Where a link on the
    way leads elsewhere, the place rm reaches (`physical`), once it is not where the working folder
    or the home folder is: `cache/*` with `cache` a link to ~ is `/home/ana/*` (red team, 2026-12-05)."""
    if w.value is None:
        return None
    value = w.value
    if ctx.cwd is not None and not value.startswith("/"):
        value = posixpath.join(ctx.cwd, value)
    return place_of(ctx, value, w.glob) if value else None


def place_of(ctx: Analysis, path: str, glob: bool) -> str:
    """`path` as written (normalized), or where rm and a glob reach it once links are followed
    (`physical`) when that is elsewhere relative to the folder the command started in and the home
    folder: a link the folder itself is reached by (`/tmp` on macOS, a project under a linked
    folder) changes no word, a link on the way the command names does."""
    lexical = posixpath.normpath(path)
    real = physical(path, pattern=glob)
    if real in (lexical, "/private" + lexical):  # macOS: /tmp, /var and /etc are links into /private
        return lexical
    for anchor in (getattr(ctx, "start", None), ctx.home):  # `start`: the analyzer's, where the line starts
        if not isinstance(anchor, str) or not anchor.startswith("/"):
            continue
        anchor = posixpath.normpath(anchor).rstrip("/")
        if lexical.startswith(anchor + "/") and real == real_folder(anchor).rstrip("/") + lexical[len(anchor) :]:
            return lexical
    return real


# Windows' spellings of a drive (`C:/`, Git Bash's `/c/`): not this system's folders to follow
_WINDOWS_STYLE = re.compile(r"[A-Za-z]:/|/[A-Za-z](?:/|$)")
_GLOB_SIGN = re.compile(r"[*?\[{]")


def physical(path: str, *, pattern: bool = False) -> str:
    """Where the kernel takes the absolute POSIX `path`: its folders through the links that exist now,
    `..` from where a link leads (`build/cache/../..`, `cache` a link to ~/a, is ~'s parent, not
    `build`'s: red team, 2026-12-05); its last name as written, since rm deletes a link and not
    what it points to, unless it is `.`, `..` or ends in `/` (rm then goes through it). With
    `pattern`, the parts from the first with a glob sign on stay as written: bash lists the folder
    before them (`cache/*` is `~/*`). What does not exist stays as written (it may be made by the
    same command line); so does a Windows path, and any path off POSIX."""
    lexical = posixpath.normpath(path)
    if os.name != "posix" or not path.startswith("/") or _WINDOWS_STYLE.match(path):
        return lexical
    parts, rest = path.split("/"), []
    if pattern:
        at = next((i for i, part in enumerate(parts) if _GLOB_SIGN.search(part)), len(parts))
        parts, rest = parts[:at], parts[at:]
    try:
        if rest or parts[-1] in ("", ".", ".."):
            real = os.path.realpath("/".join(parts) or "/")
        else:
            real = posixpath.join(os.path.realpath("/".join(parts[:-1]) or "/"), parts[-1])
    except (OSError, ValueError):  # `$'a\x00b'`: a name no file has; a loop of links
        return lexical
    joined = posixpath.join(real, *rest)
    return joined if ".." in rest else posixpath.normpath(joined)


def real_folder(path: str) -> str:
    """`path` with every link on it followed (itself too): where a folder is."""
    return physical(path.rstrip("/") + "/") if len(path) > 1 else physical(path)


def inside_working_folder(ctx: Analysis, w: _Word, *, named_only: bool) -> bool:
    """Whether `w` names something strictly inside the working folder: a relative path without
    `..`, or an absolute one under a known working folder; never when the working folder is
    the home folder or the root. A glob is accepted only in the last part (`*.o`, `src/*.o`),
    and not at all when `named_only`. `build/` counts as `build`."""
    value = w.value
    if value is None or (w.glob and named_only) or value.startswith("~"):
        return False
    parts = value.rstrip("/").split("/")
    if any(part == ".." for part in parts) or (w.glob and any(is_glob(p) for p in parts[:-1])):
        return False
    cwd = ctx.cwd
    real_cwd = real_folder(cwd) if cwd is not None else None  # `cd cache`, `cache` a link to ~: the home folder
    if cwd is not None and any(is_broad(ctx, _Word(c, c, c)) for c in {cwd, real_cwd or cwd}):
        return False
    if value.startswith("/"):
        base = posixpath.normpath(cwd) if cwd is not None else None
        if base is None or not posixpath.normpath(value).startswith(base.rstrip("/") + "/"):
            return False
    elif posixpath.normpath(value) in (".", ""):
        return False
    if cwd is None or not cwd.startswith("/"):
        return True  # after `cd "$dir"`: where it leads is not known here
    # and where rm lands too: `build/Documents` with `build` a link to ~ is ~/Documents (red team, 2026-12-05)
    real = physical(posixpath.join(cwd, value), pattern=w.glob)
    return real.startswith((real_cwd or cwd).rstrip("/") + "/")


SYNC_WORDS = N_("Deletes files that are not in the source")
_RSYNC_DELETING = frozenset({"--del", "--remove-source-files", "--remove-sent-files"})


def cmd_rmdir(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    if bulk:  # `find DIR -type f -exec unlink {} \;`: every file found (fifth red team)
        ctx.add(D, "{name} via xargs or find: removes every file it is given", name=name, danger=Danger.LOSES_FILES)
    ctx.add(M, "{name}: removes files", name=name)
    note_changed(ctx, _operands(args))
    ctx.guard_parents(name, _operands(args))


def cmd_truncate(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    if bulk:  # `find DIR -type f -exec truncate -s0 {} +` empties every file found (fifth red team)
        ctx.add(D, "{name} via xargs or find: empties every file it is given", name=name, danger=Danger.LOSES_FILES)
    ctx.add(M, "{name}: changes the size of files", name=name)
    note_changed(ctx, _operands(args, frozenset({"-s", "--size", "-r", "--reference"})))


def cmd_shred(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    ctx.add(D, "{name}: destroys file contents beyond recovery", name=name, danger=Danger.LOSES_FILES)
    note_changed(ctx, _operands(args, frozenset({"-n", "--iterations", "-s", "--size"})))


def cmd_rimraf(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    ctx.add(D, "{name}: recursive removal", name=name, danger=Danger.LOSES_FILES)


def cmd_find(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    given = args[_find_options(args) :]
    starts = list(itertools.takewhile(lambda a: not (a.pattern or "-").startswith(("-", "(", "!")), given))
    if any(a.value in _FIND_ACTIONS for a in args):  # what it acts on: any file under where it starts
        for start in starts or [_Word(".", ".", ".")]:
            ctx.note_written(_Word(None, start.source, start.pattern.rstrip("/") + "/*", glob=True))
    i = 0
    while i < len(args):
        v = args[i].value
        value = i > 0 and args[i - 1].value in _FIND_VALUES
        if v is None and not value and _may_be_option(args[i]):
            # `find $X`, `xargs find`: a word only known when it runs may be `-delete` or `-exec` (a
            # fuzzer against bash, 2026-12-05); `"$HOME/x"` may not
            ctx.add(D, "cannot tell: {name} takes options from {source}", name=name, source=_snip(args[i].source))
        elif value and _may_split(ctx, args[i]):
            # So may a value bash splits into words (`-name x${IFS}-o${IFS}-delete`, `-name $f`: a red
            # team, 2026-12-05); `-name "$x"` not, nor `depth=2; find . -maxdepth $depth` (a review)
            split_options(ctx, name, args[i].source)
        if v == "-delete":
            ctx.add(D, "find -delete: removes every match", danger=Danger.LOSES_FILES)
        elif v in ("-exec", "-execdir", "-ok", "-okdir"):
            end = next((j for j in range(i + 1, len(args)) if args[j].value in (";", "+")), len(args))
            if fills_code(args[i + 1 : end], ["{}"]):  # `-exec sh -c 'echo {}' \;`: a file's name is code
                ctx.add(D, BULK_COMMAND)
            ctx.inner(args[i + 1 : end], None, True, depth)
            i = end
        elif v in ("-fprint", "-fprint0", "-fprintf", "-fls"):
            ctx.add(M, "find {v}: writes a file", v=v)
        i += 1


def _may_be_option(w: _Word) -> bool:
    """Whether a word only known when it runs may start with `-`, or split into words that do (an
    expansion outside double quotes)."""
    return w.pattern[:1] in ("*", "-", "") or splits_into_words(w.source)


def _may_split(ctx: Analysis, w: _Word) -> bool:
    """Whether an option's value may become several words, one of them find's action: an expansion
    outside quotes (options.splits_into_options), or a glob that may match a file named as one (`-name
    *` beside a file `-delete`)."""
    if w.value is None:
        return splits_into_options(ctx, w)
    return w.glob and any(fnmatch.fnmatchcase(action, w.value) for action in _FIND_ACTIONS)


def _find_options(args: list[_Word]) -> int:
    """How many words of find's own options come before where it starts (`-L`, `-H`, `-P`, `-D x`, `-O2`)."""
    i = 0
    while (
        i < len(args)
        and args[i].value in ("-H", "-L", "-P", "-D")
        or (i < len(args) and (args[i].value or "").startswith("-O"))
    ):
        i += 2 if args[i].value == "-D" else 1
    return i


# find's primaries and options that take the next word as their value (a name, a time, a file)
_FIND_VALUES = _names(
    "-name -iname -path -ipath -wholename -iwholename -regex -iregex -lname -ilname -newer -anewer "
    "-cnewer -samefile -type -xtype -user -group -uid -gid -perm -size -mtime -atime -ctime -mmin -amin "
    "-cmin -used -links -inum -maxdepth -mindepth -fstype -context -printf -fprint -fprint0 -fls "
    "-regextype -D -files0-from -newermt -newerat -newerct -newermm -newerma -newermc -newerBt -newerBm"
)
_FIND_ACTIONS = frozenset({"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"})


def cmd_fd(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    for i, a in enumerate(args):
        v = a.value or ""
        # `-Hx`, `-uXrm`: flags, then x; after a letter that takes a value (`-tx`: type x), it is that value
        cluster = re.fullmatch(r"-[a-zA-DF-Zabfghik-npq-rsuvwyz]*?[xX](.*)", v) if not v.startswith("--") else None
        joined = v.startswith(("--exec=", "--exec-batch=")) or (cluster is not None and cluster[1] != "")
        if v in ("--exec", "--exec-batch") or cluster is not None or joined:  # `--exec-batch=rm -rf`: red team
            end = next((j for j in range(i + 1, len(args)) if args[j].value == ";"), len(args))
            value = len(v) - v.index("=") - 1 if "=" in v and v.startswith("--") else len(cluster[1]) if cluster else 0
            first = [_word_end(a, value)] if joined else []
            ctx.inner([*first, *args[i + 1 : end]], None, True, depth)
            return


def cmd_mv(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    ctx.add(M, "{name}: moves files", name=name)
    operands = _operands(args, frozenset({"-t", "--target-directory", "-S", "--suffix"}))
    targeted = any(a.value == "-t" or (a.value or "").startswith("--target-directory") for a in args)
    sources = operands if targeted or len(operands) < 2 else operands[:-1]
    note_changed(ctx, sources)  # gone from where they were (writes_into: `mv <venv>/site.py /tmp`)
    # A word only bash knows is left to the container (`mv "$f" old/` in a loop): a move is undone by another.
    broad = [s for s in sources if s.pattern.strip("*") and is_broad(ctx, s)]
    if broad:  # `mv ~ /tmp/x`, `mv /usr /old`: the session or the system loses its folder
        where = _snip(broad[0].source)
        ctx.add(D, "{name} of a broad path: {where}", N_("Moves all of {where} somewhere else"),
                danger=Danger.SYSTEM, name=name, where=where)  # fmt: skip
    ctx.guard_parents(name, sources)


def cmd_rsync(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    for a in args:
        if a.value is not None and a.value.split("=")[0] in _RSYNC_DELETING or (a.value or "").startswith("--delete"):
            value = (a.value or "").split("=")[0]
            plain = N_("Deletes the files it copies, once copied") if "remove" in value else SYNC_WORDS
            ctx.add(D, "rsync {value}: deletes files", plain, danger=Danger.LOSES_FILES, value=value)
    # `host:path` runs rsync's server (or what --rsync-path names) through ssh; `host::module` too with -e
    daemon_by_ssh = bool(option_values(args, ["-e", "--rsh"], "BeTfM@"))
    here = remote_here(_operands(args, _RSYNC_VALUES), daemon=daemon_by_ssh)
    if here is not None:
        hands_off(ctx, f"{name} {_snip(here.source)}")
    ctx.add(M, "rsync: copies files")


# rsync's options that take the next word (`--chown 0:0` is no host `0`); not those a flag is a
# prefix of (`--partial-dir`, `--checksum-choice`): the flag would be read as them, the next word skipped
_RSYNC_VALUES = _names(
    "-e --rsh --rsync-path -B --block-size -f --filter --exclude --include --exclude-from --include-from "
    "--files-from -T --temp-dir --compare-dest --copy-dest --link-dest --suffix --chmod --chown --usermap "
    "--groupmap --timeout --contimeout --bwlimit --max-size --min-size --max-delete --max-alloc --modify-window "
    "-@ --out-format --log-file --log-file-format --password-file --port --address --sockopts --protocol "
    "--iconv --cc --zc --zl --skip-compress --info --debug --stderr -M --remote-option --outbuf --write-batch "
    "--only-write-batch --read-batch --stop-after --stop-at --early-input"
)


# ---- permissions


def cmd_chmod(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
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
    note_changed(ctx, targets)
    if recursive:
        broad = [t for t in targets if is_broad(ctx, t)]
        if broad:
            where = _snip(broad[0].source)
            ctx.add(
                D,
                "{name} -R on a broad path: {where}",
                N_("Changes who may use everything in {where}"),
                danger=Danger.PERMISSIONS,
                name=name,
                where=where,
            )
        ctx.guard_parents(name, targets)
        ctx.add(M, "{name} -R: changes permissions recursively", name=name)
    else:
        ctx.add(M, "{name}: changes permissions", name=name)


def is_broad(ctx: Analysis, w: _Word) -> bool:
    """The root, a top-level folder, the home folder or above, everything in one of them, or a
    path we cannot know. A relative path counts from the folder the command runs in."""
    if w.value is None and w.pattern.strip("*") == "":
        return True
    if _broad(ctx, w, w.pattern):
        return True
    # where links on the way lead (`cache/*`, `cache` a link to ~: red team, 2026-12-05)
    path = w.pattern.replace("\\", "/")
    if ctx.cwd is not None and not re.match(r"^/|^[A-Za-z]:/|^~", path):
        path = posixpath.join(ctx.cwd, path)
    if not path.startswith("/"):
        return False
    real = physical(path, pattern=w.glob or w.value is None)
    return real != posixpath.normpath(path) and _broad(ctx, w, real, real_folder(ctx.home))


def _broad(ctx: Analysis, w: _Word, pattern: str, real_home: str | None = None) -> bool:
    path = _norm_path(pattern)
    home = _norm_path(ctx.home)
    if ctx.cwd is not None and not re.match(r"^/|^[a-z]:/|^~", path):
        path = _norm_path(posixpath.join(ctx.cwd, path))
    if not w.glob and w.value is not None and path.startswith("/"):
        path = posixpath.normpath(path)
    candidates = {"/", home, posixpath.dirname(home)}
    if real_home is not None:
        candidates |= {_norm_path(real_home), posixpath.dirname(_norm_path(real_home))}
    top = re.fullmatch(r"/[^/]*|[a-z]:/?[^/]*|/[a-z]/[^/]*|~/?", path)
    if top or path in candidates:
        return True
    if w.glob and re.fullmatch(r"[^*?\[]*/\*", path) and posixpath.normpath(posixpath.dirname(path)) in candidates:
        return True  # `*` in the home folder: all of it
    fuzzy = w.glob or w.value is None
    if not fuzzy or not path.startswith("/"):
        return False
    # A pattern in the first two levels (/home/*, /*/x, /Users/*) reaches whole home folders.
    return any(is_glob(part) for part in path.split("/")[1:3]) or any(fnmatch.fnmatchcase(c, path) for c in candidates)


def cmd_cmake(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """cmake's `-E` tools: `remove_directory` and `rm -r` delete folders as rm does, `env` runs a
    command (red team, 2026-12-04: `cmake -E remove_directory ~/Documents` was moderate)."""
    at = next((i for i, a in enumerate(args) if a.value == "-E"), None)
    tool = args[at + 1].value if at is not None and at + 1 < len(args) else None
    if tool is None and at is not None and at + 1 < len(args):
        ctx.add(D, "cannot tell what runs: cmake -E from an expansion")
    elif tool in ("remove_directory", "rm"):
        rest = args[at + 2 :] if at is not None else []
        if tool == "remove_directory" or any(re.fullmatch(r"-[a-zA-Z]*[rR][a-zA-Z]*", a.value or "") for a in rest):
            ctx.add(D, "cmake -E {tool}: recursive removal", tool=tool, danger=Danger.LOSES_FILES)
        else:
            ctx.add(M, "cmake -E rm: removes files")
    elif tool == "env" and at is not None:  # `cmake -E env [--unset=NAME] [NAME=VALUE]... CMD`
        after = args[at + 2 :]
        while after and after[0].value is not None and (after[0].value.startswith("-") or "=" in after[0].value):
            after = after[1:]
        ctx.inner(after, None, bulk, depth)
    elif tool in ("chdir", "time") and at is not None:  # `cmake -E chdir DIR CMD`, `cmake -E time CMD`
        ctx.inner(args[at + (3 if tool == "chdir" else 2) :], None, bulk, depth)
    else:
        ctx.add(M, "{name}: builds software", name=name)
    for option, script in option_values(args, ["-P"]):  # `cmake -P x.cmake`: a script (fifth red team)
        code_file(ctx, name, f"{name} {option}", script, cmake_script)


def cmd_ctest(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`ctest -S x.cmake` runs a CMake script (fifth red team's second pass); otherwise it runs tests."""
    ctx.add(M, "{name}: builds software", name=name)
    for j, a in enumerate(args[:-1]):
        if a.value in ("-S", "-SP", "-SR", "--script", "--script-new-process"):
            code_file(ctx, name, f"{name} {a.value}", args[j + 1], cmake_script)
    ctx.may_run(args, depth)  # `ctest --test-command rm -rf DIR`


def cmake_script(ctx: Analysis, name: str, what: str, text: str) -> None:
    """A CMake script: judged by the calls it names; one that calls a command by a name made when
    it runs (`cmake_language(CALL ...)`) or reads another file (`include()`) cannot be told."""
    if re.search(r"\b(?:cmake_language|include|add_subdirectory)\s*\(", text, re.I):
        ctx.add(D, "cannot tell what runs: {path} calls functions by names made when it runs", path=what)
    code_text(ctx, name, what, text)


def cmd_run_parts(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """run-parts DIR runs every program in DIR: each is read as a script is (fifth red team: one
    written there by the same command line deleted a folder)."""
    operands = _operands(args, frozenset({"-u", "--umask", "--regex", "-a", "--arg"}))
    if {"--test", "--list"} & {a.value for a in args} or not operands:
        return
    folder = operands[0]
    path = None if folder.value is None else script_path(ctx.cwd, folder.value)
    if path is None:
        ctx.add(D, "cannot tell what runs: {name} runs {value}, a script in a folder not known here", name=name,
                value=_snip(folder.source))  # fmt: skip
        return
    # what an archive unpacks above it lands below it too (`tar xf x.tar; run-parts new`)
    below = path + "/"
    if any(p == path or p.startswith((below, "*")) or fnmatch.fnmatchcase(below, p) for p in ctx.report.surely_written):
        ctx.add(D, "cannot tell what runs: the command changes the script {path} before running it", path=_snip(path))
        return
    named = r".*" if any((a.value or "").startswith(("--regex", "--lsbsysinit")) for a in args) else r"[A-Za-z0-9_-]+"
    try:
        found = sorted(entry for entry in os.listdir(path) if re.fullmatch(named, entry))
    except (OSError, ValueError):
        found = []
    for entry in found:
        program = posixpath.join(path, entry)
        if os.path.isfile(program) and os.access(program, os.X_OK):  # run-parts runs only executables
            run_script(ctx, name, _Word(program, program, program), "exec")
    ctx.add(M, "{name}: runs the programs in {value}", name=name, value=_snip(folder.source))


def cmd_java(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`java Tool.java` runs a source file: read as a script is (fifth red team: one that ran rm
    was moderate); anything else is a program no rule knows."""
    values = frozenset({"-cp", "-classpath", "--class-path", "-p", "--module-path", "--add-modules", "--source"})
    operands = _operands(args, values)
    first = next((k for k, a in enumerate(args) if operands and a is operands[0]), len(args))
    source = any((a.value or "").startswith("--source") for a in args[:first])  # `java --source 17 notes.txt`
    if operands and ((operands[0].value or "").endswith(".java") or source):
        run_script(ctx, name, operands[0], "program")
        return
    ctx.as_unknown_program(name, args, depth, noted=False)  # its words were never noted as written


def cmd_ed(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """ed: a line typed into it that starts with `!` runs in the shell (red team, 2026-12-04), and so
    does a file operand that starts with one (`ed -s '!rm -rf DIR'` reads what it prints: judged moderate,
    a red team, 2026-12-05)."""
    ctx.add(M, "{name}: edits files", name=name)
    for operand in _operands(args, frozenset({"-p", "--prompt"})):
        if operand.pattern.startswith("!"):
            ctx.code_words([operand], f"{name} !", strip_prefix="!")
    typed = typed_commands(ctx, name, stdin)
    if typed is not None:  # `!CMD`, `r !CMD`, `w !CMD`, `1,$w !CMD`
        for line in typed.splitlines():
            if "!" in line:
                ctx.sub_script(line.split("!", 1)[1], f"{name} !")


def cmd_systemd_tmpfiles(
    ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int
) -> None:
    """`--remove`, `--clean` and `--purge` delete what the configuration it is given names, which a
    command may have written (red team, 2026-12-04: `R DIR` in a file of its own)."""
    deleting = sorted({"--remove", "--clean", "--purge"} & {a.value for a in args})
    if deleting:
        ctx.add(D, "{name} {option}: deletes what its configuration names", name=name, option=deleting[0],
                danger=Danger.LOSES_FILES)  # fmt: skip
    else:
        ctx.add(M, "{name}: makes or changes files its configuration names", name=name)


def cmd_vim(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """vim, vi, ex: what is typed into it is Ex commands (`echo '!rm -rf DIR' | ex -s`: fourth red team),
    judged as its `-c` commands are (code_options.py); its own options are judged there too, and
    what it tells a running vim to do (`--remote-send`) in vim_remote."""
    ctx.add(M, "{name}: edits files", name=name)
    vim_remote(ctx, name, args)
    typed = typed_commands(ctx, name, stdin)
    if typed is not None:
        vim_script(ctx, name, "typed", typed)


_MAKE_SETTING = re.compile(r"(?P<name>[^\s=:!?+]+)\s*(?P<op>!=|::?:?=|\+=|\?=|=)(?P<value>.*)", re.S)


def cmd_make(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """make: the project's makefile is the project's (not read here), but one typed into it (`make -f -
    <<< ...`) is written in the command: its recipe lines are judged as the shell runs them."""
    ctx.add(M, "{name}: builds software", name=name)
    _make_settings(ctx, name, args)
    if any(word.procsub for _option, word in option_values(args, ["-f", "--file", "--makefile"])):
        ctx.add(D, "cannot tell what runs: {name} runs the output of another command", name=name)
    folders = option_values(args, ["-C", "--directory"])
    files = option_values(args, ["-f", "--file", "--makefile"])
    folder = folders[-1][1].value if folders else None
    named = [word.value for _option, word in files if word.value not in (None, "-", "/dev/stdin")]
    runs_project_files(ctx, [n for n in named if n] or ["GNUmakefile", "makefile", "Makefile"], folder)
    typed = any(word.value in ("-", "/dev/stdin") for _option, word in files)
    text = typed_commands(ctx, name, stdin) if typed else None
    if text is not None:
        for line in text.splitlines():
            recipe = line[1:] if line.startswith("\t") else line.partition(";")[2] if ":" in line else ""
            if recipe.strip():
                ctx.sub_script(recipe, f"{name} recipe")
    ctx.may_run(args, depth)


def _make_settings(ctx: Analysis, name: str, args: list[_Word]) -> None:
    """`make .SHELLFLAGS='-c "rm -rf DIR" #'`: every recipe runs as `sh FLAGS`; `x!=CMD` runs CMD."""
    for a in args:
        setting = _MAKE_SETTING.match(a.value or "")
        if setting is not None and (setting["op"] == "!=" or setting["name"] == ".SHELLFLAGS"):
            code = setting["value"] if setting["op"] == "!=" else f"sh {setting['value']} :"  # `sh -ec :`
            ctx.sub_script(code, f"{name} {setting['name']}")


MAKE_FLAGS_VARIABLES = frozenset({"MAKEFLAGS", "GNUMAKEFLAGS", "MFLAGS"})


def make_flags(ctx: Analysis, name: str, value: str) -> None:
    """`MAKEFLAGS='--eval=x:=$(shell rm -rf DIR)' make` (or GNUMAKEFLAGS, MFLAGS, given to `env` or
    exported): make reads the value as options of its own, so it is judged as `make --eval=...` is (a
    red team, 2026-12-05: moderate, where the same words on make's command line were held). make
    splits it at blanks a backslash does not quote; a first word with no `-` nor `=` is letters of
    flags. Whichever program the variable is given to: a build it starts may run make."""
    words = [re.sub(r"\\(.)", r"\1", w) for w in re.split(r"(?<!\\)\s+", value.strip()) if w]
    if words and not words[0].startswith("-") and "=" not in words[0]:
        words[0] = f"-{words[0]}"
    given = [_Word(w, w, w) for w in [*words, value]]  # the whole value too: `--eval=... rm -rf DIR` at once
    _make_settings(ctx, f"make ({name})", given)
    ctx.may_run(given, 0)


LANDS_BY_NAME = frozenset({"cp", "mv", "install", "ln"})  # into a folder, each file keeps its name (note_landed)

# Where a command writes a file whose name it takes from elsewhere: a URL's last name in the current
# folder (`cd ~ && curl -O https://x/.bashrc`), a clone's folder, `ln -s FILE` alone, what `rename`
# renames, `split`'s prefix, a backup suffix (`cp -b -S rc x ~/.bash`). A third red team: each
# wrote a member of the protected set where no container runs (names_protected).
# split's and csplit's options that take a value (the one before the input file is not its prefix)
_SPLIT_VALUES = _names(
    "-a -b -C -l -n -t -f --suffix-length --bytes --line-bytes --lines --number --separator --additional-suffix"
    " --filter --prefix --suffix-format --digits"
)
# gzip's and xz's `-S SUFFIX`: the name a file loses or is given (`gzip -d -S x ~/.bashrcx`, a red team);
# and decompressors no other rule knows, whose files lose their own suffix (`lzip -d ~/.bashrc.lz`)
_SUFFIXED = _names("gzip gunzip xz unxz lzma unlzma pigz unpigz lzip plzip clzip lunzip brotli unbrotli lzop")
_GZIP_LIKE = frozenset({"gzip", "gunzip", "pigz", "unpigz"})
_UNPACKERS = frozenset({"gunzip", "unxz", "unlzma", "unpigz", "lunzip", "unbrotli"})
# Their own suffixes, for the decompressors analyzer._DECOMPRESSORS does not know (a review, 2026-12-06)
_OWN_SUFFIXES = {"pigz": (".gz", ".z", ".zz"), "lzip": (".lz",), "brotli": (".br",), "lzop": (".lzo",)}
_OWN_SUFFIXES.update({"unpigz": _OWN_SUFFIXES["pigz"], "plzip": (".lz",), "clzip": (".lz",), "lunzip": (".lz",)})
_OWN_SUFFIXES["unbrotli"] = (".br",)
NAMED_ELSEWHERE = (
    LANDS_BY_NAME | _SUFFIXED | _names("curl wget git rename prename perl-rename split csplit sed perl patch")
)


def note_named_elsewhere(ctx: Analysis, name: str, args: list[_Word]) -> None:
    values = [a.value or "" for a in args]
    here = ctx.cwd if ctx.cwd is not None else "*"
    if name == "curl" and any(v in ("-O", "--remote-name", "--remote-name-all", "-J") or
                              (re.fullmatch(r"-[a-zA-Z]*O[a-zA-Z]*", v)) for v in values):  # fmt: skip
        folder = next((w.pattern for _o, w in option_values(args, ["--output-dir"])), here)
        _write_names(ctx, folder, [_last_name(w.pattern) for w in _operands(args, _CURL_VALUES)])
    elif name == "wget" and not any(v.startswith(("-O", "--output-document")) for v in values):
        folder = next((w.pattern for _o, w in option_values(args, ["-P", "--directory-prefix"], "P")), here)
        whole = any(v in ("-r", "--recursive", "-m", "--mirror", "--content-disposition") for v in values)
        urls = [w for w in _operands(args, frozenset({"-P", "-e", "-t", "-T", "-U", "--user-agent"})) if w.value != "-"]
        _write_names(ctx, folder, ["*"] if whole else [_last_name(w.pattern) for w in urls])
    elif name == "git" and [a.value for a in _operands(args)][:1] == ["clone"]:
        given = _operands(args, _CLONE_VALUES)[1:]
        if len(given) == 1:  # into a folder named after the repository, here
            _write_names(ctx, here, [_last_name(given[0].pattern).removesuffix(".git")])
    elif name == "git" and [a.value for a in _operands(args)][:1] in (["apply"], ["am"]):
        if not {"--check", "--stat", "--numstat", "--summary"} & set(values) or "--apply" in values:
            _patched(ctx, here)  # `git apply x.diff && bash x.sh`: the files the diff names
    elif name == "patch" and not {"--dry-run", "-o", "--output"} & {v.split("=", 1)[0] for v in values}:
        into = next((w.pattern for _o, w in option_values(args, ["-d", "--directory"], "dBDFiopruVxYz")), ".")
        _patched(ctx, posixpath.join(here, into))
    elif name == "ln" and len(_operands(args)) == 1:  # `ln -s FILE`: a link of the same name, here
        _write_names(ctx, here, [posixpath.basename(_operands(args)[0].pattern.rstrip("/"))])
    elif name in ("rename", "prename", "perl-rename"):  # anything in the folders of what it renames
        for w in _operands(args)[1:]:
            ctx.note_written(_Word(None, w.source, posixpath.join(posixpath.dirname(w.pattern) or ".", "*"), True))
    elif name in ("split", "csplit") and _operands(args, _SPLIT_VALUES):
        operands = _operands(args, _SPLIT_VALUES)
        prefix = next((w for _o, w in option_values(args, ["-f", "--prefix"], "f")), None) if name == "csplit" else None
        chosen = prefix or (operands[1] if name == "split" and len(operands) > 1 else None)
        default = "x" if name == "split" else "xx"  # `split f` writes xaa..., `csplit f 3` xx00...
        last = chosen or _Word(default, default, default)
        # a suffix of letters or digits (split's), unless csplit's -b format says otherwise
        formatted = name == "csplit" and option_values(args, ["-b", "--suffix-format"], "bfn")
        ctx.note_written(_Word(None, last.source, last.pattern + ("*" if formatted else "[a-z0-9]*"), True))
    elif name in _SUFFIXED:
        _suffixed(ctx, name, args)
    # `-b` or `-S` also among other flags (`cp -fbS rc`, `ln -sfb`), and GNU's prefixes of the long options
    backup = name in LANDS_BY_NAME and any(_BACKUP_FLAG.match(v) or _backup_option(v) for v in values)
    in_place = name in _IN_PLACE_SUFFIX and any(_IN_PLACE_SUFFIX[name].fullmatch(v) for v in values)
    targets = _operands(args)[-1:] if backup else _operands(args) if in_place else []
    if backup:  # into a folder (`cp -b .bash ~`, `cp -bt ~ .bash`): the file there of each one's name
        operands = _operands(args, _BACKUP_VALUES)
        named = next((w for _o, w in option_values(args, ["-t", "--target-directory"], "tmogS")), None)
        sources = operands if named is not None else operands[:-1]
        landing = named or (operands[-1] if operands else None)
        for w in sources if landing is not None else ():
            base = posixpath.basename(w.pattern.rstrip("/"))
            if base not in ("", ".", "..") and landing is not None:
                pattern = f"{landing.pattern.rstrip('/')}/{base}*"
                ctx.note_written(_Word(None, f"{landing.source.rstrip('/')}/{base}", pattern, True))
    for w in targets:  # `cp -b -S rc x ~/.bash`, `sed -irc 1p ~/.bash`: a name with a suffix beside it
        if w.pattern.rstrip("/") not in ("", ctx.home) and not w.pattern.endswith("/"):
            ctx.note_written(_Word(None, w.source, w.pattern + "*", True))


# A cluster of flags with `-b` or `-S` before any letter that takes a value (cp's, mv's, ln's, install's)
_BACKUP_FLAG = re.compile(r"-[^\W\d_tmogS]*[bS]")
_BACKUP_VALUES = _names("-S --suffix -t --target-directory -m --mode -o --owner -g --group")


def _backup_option(v: str) -> bool:
    """`--backup`, `--suffix=rc`, or a prefix of either GNU takes for it (`--back`, `--suf rc`)."""
    given = v.split("=", 1)[0]
    return (len(given) >= 3 and "--backup".startswith(given)) or (len(given) >= 4 and "--suffix".startswith(given))


# gzip's own suffixes besides those analyzer._COMPRESSED takes off (`gunzip ~/.bashrc-gz` writes ~/.bashrc)
_GZIP_SUFFIXES = ("-gz", "-z", "_z")
_XZ_VALUES = "SFCTM"  # xz's one-letter options that take a value: -S, --format, --check, --threads, --memlimit
_SUFFIXED_VALUES = _names("-S --suffix -F --format -C --check -T --threads -M --memlimit")


def _cluster_flags(args: list[_Word], takes_value: str) -> set[str]:
    """The one-letter flags given, up to a letter that takes the rest as its value (`gzip -Src`: `-S rc`)."""
    flags: set[str] = set()
    skip = False
    for w in args:
        v = w.value if w.value is not None else w.pattern
        if skip or v == "--":
            skip = False
            if v == "--":
                break
            continue
        if v.startswith("-") and not v.startswith("--"):
            for k, letter in enumerate(v[1:], 1):
                flags.add(letter)
                if letter in takes_value:
                    skip = k == len(v) - 1  # `-S rc`: the next word is its value
                    break
    return flags


def _suffixed(ctx: Analysis, name: str, args: list[_Word]) -> None:
    """gzip's and xz's files, named by `-S SUFFIX`: unpacked, each loses it (`gzip -d -S x ~/.bashrcx`
    writes ~/.bashrc), packed, each gains it (`gzip -S rc ~/.bash`). A suffix an expansion decides
    leaves any shorter name of the file written (a red team: where no container runs, names_protected)."""
    flags, longs = _cluster_flags(args, _XZ_VALUES), _long_flags(args)
    if {"c", "t", "l"} & flags or {"--stdout", "--to-stdout", "--test", "--list"} & longs:
        return  # to its output, or only read
    # GNU's prefixes of the long options too (`gzip --suffi=x --decomp`: a review, 2026-12-06)
    decompress = any(_prefix_of(v, ("--decompress", "--uncompress"), 3) for v in longs)
    unpacks = name in _UNPACKERS or "d" in flags or decompress
    unpacks = unpacks and "z" not in flags and "--compress" not in longs
    given = [w for _o, w in option_values(args, ["-S", "--suffix"], _XZ_VALUES)]
    suffixes: list[str | None] = [w.value for w in given] + _suffix_prefixed(args)
    if unpacks and name in _GZIP_LIKE:
        suffixes += _GZIP_SUFFIXES
    if unpacks:
        suffixes += _OWN_SUFFIXES.get(name, ())
    if not suffixes:
        return
    for w in _operands(args, _SUFFIXED_VALUES):
        if w.value == "-" or w.pattern.endswith("/"):
            continue
        for suffix in suffixes:
            if not unpacks:  # `gzip -S rc ~/.bash` writes ~/.bashrc
                ctx.note_written(_Word(None, w.source, w.pattern + (suffix if suffix is not None else "*"), True))
            elif suffix is None:  # any name the file's may be cut to
                base = posixpath.basename(w.pattern)
                for k in range(1, len(base)):
                    if base[:k] not in (".", ".."):
                        cut = w.pattern[: len(w.pattern) - len(base) + k]
                        ctx.note_written(_Word(None, w.source, cut, True))
            elif suffix and w.pattern.endswith(suffix) and w.pattern != suffix:
                ctx.note_written(_Word(None, w.source, w.pattern[: -len(suffix)], True), writes=w.value is not None)


def _prefix_of(given: str, options: tuple[str, ...], shortest: int) -> bool:
    """Whether a long option given is one of `options` or a prefix of one GNU's getopt takes for it."""
    return len(given) >= shortest and any(option.startswith(given) for option in options)


def _suffix_prefixed(args: list[_Word]) -> list[str | None]:
    """The values of `--suffix` given by a shorter prefix (`--suffi=x`, `--suf x`), which
    option_values does not read: None where an expansion decides."""
    values: list[str | None] = []
    for k, a in enumerate(args):
        if a.value == "--":
            break
        given = (a.value if a.value is not None else a.pattern).split("=", 1)
        if given[0] == "--suffix" or not _prefix_of(given[0], ("--suffix",), 4):
            continue
        if len(given) > 1:
            values.append(given[1] if a.value is not None else None)
        elif k + 1 < len(args):
            values.append(args[k + 1].value)
    return values


# One-letter flags that take nothing may come before `i` (`sed -nirc`, `perl -pirc`): not `-Ilib`, `-Mstrict`.
_IN_PLACE_SUFFIX = {"sed": re.compile(r"-[nrEsuz]*i.+|--in-place=.+"), "perl": re.compile(r"-[aclnpsTtuUwW0-9]*i.+")}
_CURL_VALUES = _names(
    "-o --output -H --header -d --data --data-raw --data-binary -X --request -u --user -A --user-agent -e --referer "
    "-b --cookie -c --cookie-jar -F --form -T --upload-file -w --write-out --output-dir -m --max-time "
    "--connect-timeout -x --proxy -r --range -K --config --retry -E --cert --cacert --key"
)
_CLONE_VALUES = _names(
    "--depth -b --branch -o --origin -c --config --reference --separate-git-dir -u --upload-pack --template "
    "-j --jobs --filter --shallow-since --shallow-exclude"
)


def _last_name(url: str) -> str:
    """The name a download or a clone takes from its address (`https://x/a/.bashrc?v=1#top`: `.bashrc`)."""
    return posixpath.basename(re.split(r"[?#]", url, maxsplit=1)[0].rstrip("/"))


def _patched(ctx: Analysis, folder: str) -> None:
    """A diff applied in `folder` changes the files it names, not read here: any of them there may
    be written (a second red team, 2026-12-05, as for an archive: `patch -p1 < x.diff && bash x.sh`
    judged the x.sh on disk). Not surely written: `git apply x.diff && npm test` reads its scripts."""
    ctx.note_written(_Word(None, folder, posixpath.join(posixpath.normpath(folder), "*"), True))


def _write_names(ctx: Analysis, folder: str, names: list[str]) -> None:
    for name in names:
        if name:
            ctx.note_written(_Word(None, name, posixpath.join(folder, name), True))
