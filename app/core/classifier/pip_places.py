"""Where `pip install` (and `uv pip`) puts packages, where no container keeps the protected set
read-only: the folder an option or a variable names, the Python whose pip runs, or the user site
it falls back to. Noted as written, so that `names_protected`/`writes_into` hold a command that
installs into the app's own venv, its base Python or the user site (red team 13, 2026-12-06)."""

from __future__ import annotations

import configparser
import functools
import glob
import os
import posixpath
import re
import shutil
import stat
from collections.abc import Callable

from .findings import M, _snip
from .options import long_option
from .rule import Analysis
from .tables import _PRIVILEGE, _PYTHON
from .words import _Word, _word_end

# Where `pip install` puts packages other than the running Python's own site-packages: the folder an
# option names, or with `--user` (or PIP_USER set) the user site, whose `.pth` files and
# usercustomize every Python runs at start. Noted as written, so that where no container keeps the
# user site read-only, a person is asked (names_protected; red team 13, 2026-12-06). A venv's own
# `pip install` names none of them and is judged as before.
_PIP_PLACES = frozenset({"prefix", "root", "target", "src"})
# pip's general options that take a value, which may come before its subcommand
_PIP_GENERAL_VALUES = frozenset({"--python", "--log", "--log-file", "--local-log", "--proxy", "--retries",
                                 "--timeout", "--exists-action", "--trusted-host", "--cert", "--client-cert",
                                 "--cache-dir", "--use-feature", "--use-deprecated", "--keyring-provider",
                                 "--resume-retries"})  # fmt: skip
# pip's general long options (optparse takes a prefix naming one alone: `pip --pyth PY install x`)
_PIP_GENERAL_LONG = (*(o[2:] for o in _PIP_GENERAL_VALUES), "help", "debug", "isolated", "require-virtualenv",
                     "verbose", "version", "quiet", "no-input", "no-cache-dir", "disable-pip-version-check",
                     "no-color", "no-python-version-warning")  # fmt: skip
_PYTHON_PREFIXES = frozenset(
    f"--{'python'[:n]}" for n in range(1, 7) if long_option(f"--{'python'[:n]}", _PIP_GENERAL_LONG) == "python"
)
# What may come between `pip` and its subcommand with a value: the general options, `--pyth` among them
GENERAL_VALUES = _PIP_GENERAL_VALUES | _PYTHON_PREFIXES
# Long options of `pip install` that share a beginning with those: pip (optparse) takes any prefix
# naming one option alone (`--tar DIR` is `--target`), and refuses one naming several (`--pref`).
_PIP_LONG = (*_PIP_PLACES, "prefer-binary", "pre", "root-user-action", "trusted-host", "timeout", "user")
_PIP_VALUE_LETTERS = frozenset("rcetfiC")  # pip's one-letter options that take a value
# `pip install`'s long options, those that take a value first: a word after one is its value, never an
# option (`pip install --log --dry-run x` logs to a file named `--dry-run` and installs)
_INSTALL_VALUES = frozenset({"requirement", "constraint", "editable", "target", "platform", "python-version",
                             "implementation", "abi", "root", "prefix", "src", "upgrade-strategy", "index-url",
                             "extra-index-url", "find-links", "no-binary", "only-binary", "progress-bar",
                             "root-user-action", "report", "config-settings", "global-option", "build-option",
                             "group", "requirements-from-script", "hash", "index", "extra-index"})  # fmt: skip
_INSTALL_LONG = (*_INSTALL_VALUES, *_PIP_GENERAL_LONG, "dry-run", "user", "no-user", "upgrade", "force-reinstall",
                 "no-deps", "pre", "ignore-installed", "ignore-requires-python", "no-build-isolation",
                 "use-pep517", "no-use-pep517", "check-build-dependencies", "break-system-packages", "compile",
                 "no-compile", "no-warn-script-location", "no-warn-conflicts", "prefer-binary", "require-hashes",
                 "no-clean", "no-index", "only-deps", "no-deps")  # fmt: skip
_TAKES_VALUE = _INSTALL_VALUES | {o[2:] for o in _PIP_GENERAL_VALUES}


def _pip_places(args: list[_Word]) -> list[_Word]:
    """The folders given to `pip install` by `--prefix`, `--root`, `--target` (`-t`) and `--src`."""
    found = []
    for k, a in enumerate(args):
        v = a.value if a.value is not None else a.pattern  # `--prefix=$HOME/.local`: by its pattern
        following = args[k + 1 : k + 2]
        if v == "--":
            break
        if v.startswith("--") and long_option(v, _PIP_LONG) in _PIP_PLACES:
            found += [_attached(a, len(v) - v.index("=") - 1, "=")] if "=" in v else following
        elif v.startswith("-") and not v.startswith("--") and "t" in v:
            at = v.index("t")
            if not _PIP_VALUE_LETTERS & set(v[1:at]):  # `-rt`: `t` is -r's file, not an option
                found += [_attached(a, len(v) - at - 1, "t")] if v[at + 1 :] else following
    return found


def _attached(word: _Word, length: int, after: str) -> _Word:
    """An option's value joined to it (`--prefix=~/x`, `-tvendor`), said as written after `after`."""
    value = _word_end(word, length)
    said = word.source.partition(after)[2].strip("'\"") or word.source
    return _Word(value.value, said, value.pattern, value.glob)


def install_places(ctx: Analysis, args: list[_Word]) -> None:
    if _installs_nothing(args):
        return  # `--dry-run` resolves and downloads only, `--help` says how
    places = _pip_places(args)
    settings: dict[str, str] | None = None  # read once, where needed
    for key in ("target", "prefix", "root"):  # the server's, which the command's pip is given
        variable = f"PIP_{key.upper()}"
        value = os.environ.get(variable)
        if value and variable not in ctx.report.variables:
            places.append(_Word(value, f"${variable}", value))
        elif not value and not ctx.report.variables & {variable, "PIP_CONFIG_FILE"}:
            # in pip's settings (`pip config set install.target DIR`, an earlier command's)
            if settings is None:
                try:
                    settings = _pip_settings("")
                except _Unreadable:
                    settings = {}  # said where it matters (`_installs_for_user`)
            value = settings.get(key)
            if value:
                places.append(_Word(value, value, value))
    for word in places:
        if _installs_into(ctx, word):  # `--target <our venv's site-packages>`
            ctx.add(M, "pip install: installs into {source}", source=_snip(word.source))
    user: bool | _CannotTell | None = _user_given(ctx, args)
    if places or user:
        _named_by_command(ctx)
    elif user is None:
        user = own_places(ctx, args, install=True)
    else:  # `--no-user`, `PIP_USER=0`: into that Python's own site-packages, never falling back to the user site
        own_places(ctx, args, install=False)
    if user is _CANNOT_TELL:
        ctx.add(M, "pip install: where it installs cannot be told (a pip settings file is too large to read)")
    elif user:
        ctx.add(
            M, "pip install --user: installs into your Python user folder, which every Python program you start loads"
        )
    if user:
        for site in _user_sites(ctx.home):
            ctx.note_written(_Word(None, "~/.local/lib", site, glob=True))


def _installs_nothing(args: list[_Word]) -> bool:
    """`pip install` given `--dry-run`, `--help` or `-h` as an option, not as another option's value
    (`--log --dry-run`, `-c --dry-run`, `-rh`): pip's options read as optparse reads them."""
    taken = False
    for a in _before_end(args):
        v = a.value if a.value is not None else a.pattern
        if taken:
            taken = False
        elif v.startswith("--"):
            option = long_option(v, _INSTALL_LONG)
            if option in ("dry-run", "help"):
                return True
            taken = option in _TAKES_VALUE and "=" not in v
        elif v.startswith("-") and len(v) > 1:
            for k, letter in enumerate(v[1:], 1):
                if letter == "h":
                    return True
                if letter in _PIP_VALUE_LETTERS:  # `-rREQS` or `-r REQS`: the rest is its value
                    taken = k == len(v) - 1
                    break
    return False


def _user_given(ctx: Analysis, args: list[_Word]) -> bool | None:
    """Whether the command tells pip to install into the user site: the last of `--user` and
    `--no-user` given, else the value of the PIP_USER it sets (`PIP_USER=0`: no; one not told here:
    yes). None: the command does not say."""
    given = [a.value == "--user" for a in _before_end(args) if a.value in ("--user", "--no-user")]
    if given:
        return given[-1]
    if "PIP_USER" not in ctx.report.variables:
        return None
    values = _assigned(ctx.text, ("PIP_USER",))
    return not values or values[-1].strip("'\"").casefold() not in ("0", "false", "no", "off", "n", "f", "")


def _before_end(args: list[_Word]) -> list[_Word]:
    """The words before `--`, where options are."""
    return next((args[:k] for k, a in enumerate(args) if a.value == "--"), args)


class _CannotTell(int):
    """Where pip installs cannot be told (a settings file too large to read): true, as the user
    site is noted written and so held, but said so."""


_CANNOT_TELL = _CannotTell(1)


def own_places(ctx: Analysis, args: list[_Word], *, install: bool) -> bool | _CannotTell:
    """Note the site-packages of the Python whose pip (or uv) installs or uninstalls (`install`
    False) as the command runs it, where it can be told (`_pip_prefix`): our venv's or base Python's
    is held. True: pip installs into the user site instead (`_installs_for_user`)."""
    _named_by_command(ctx)
    prefix, pip = _pip_prefix(ctx, args)
    outside = install and prefix is not None and pip and not os.path.isfile(f"{prefix}/pyvenv.cfg")
    if outside and prefix is not None and (user := _installs_for_user(ctx, prefix, args)):  # uv never falls back
        return user
    if prefix is not None:
        # into that Python's own site-packages: our venv's (`<venv>/bin/pip install`) or base Python's is held
        _installs_into(ctx, _Word(None, f"{prefix}/lib", f"{prefix}/lib/*", glob=True))
    return False


# What a command sets that sends pip or uv elsewhere: the folder (PIP_TARGET, PIP_PREFIX), the Python
# (PIP_PYTHON, UV_PYTHON), the venv (VIRTUAL_ENV, UV_PROJECT_ENVIRONMENT), the pip a bare name finds
# (PATH, an activation), the settings pip reads (PIP_CONFIG_FILE, whose file it may write first).
_MOVES_INSTALLS = ("PIP_TARGET", "PIP_PREFIX", "PIP_PYTHON", "UV_PYTHON", "VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT",
                   "PATH", "PIP_CONFIG_FILE")  # fmt: skip
# a word's value as written: quoted ('...', "..."; `"~/My Code/.venv"`) or not
_VALUE = r"((?:'[^']*'|\"[^\"]*\"|[^\s;&|'\"()<>`])*)"
_SOURCED = re.compile(rf"(?<![^\s;&|(`])(?:source|\.)\s+{_VALUE}")


def _assigned(text: str, names: tuple[str, ...] | list[str]) -> list[str]:
    """The values `text` gives the variables `names`, as written: `X=v cmd`, `export X="v"`, `env X=v
    cmd`, `X+=v` (which adds to it: a folder it names counts as well)."""
    if not names:
        return []
    return [m[1] for m in re.finditer(rf"(?<![^\s;&|(`])(?:{'|'.join(names)})\+?={_VALUE}", text)]


def _named_by_command(ctx: Analysis) -> None:
    """Where no container guards them, a value the command gives one of `_MOVES_INSTALLS`, or a file
    it sources (`source <venv>/bin/activate`), that names one of the program's folders counts as
    installing there, kept as inline code naming them is (`writes_into(code=...)`; a review,
    2026-12-06). The analysis keeps no such value (only a literal set alone at the top), so it is
    read from the command's text: a relative path from the folder known here, `~` and $HOME filled
    in. Anything else stays unknown (today's reading: where pip installs is not told)."""
    if not ctx.protected.guarding:
        return
    text = ctx.text
    values = _assigned(text, [name for name in _MOVES_INSTALLS if name in ctx.report.variables])
    if ctx.report.sourced:
        values += [m[1] for m in _SOURCED.finditer(text)]
    for value in values:
        value = re.sub(r"'([^']*)'|\"([^\"]*)\"", lambda m: m[1] if m[1] is not None else m[2], value)
        for part in dict.fromkeys((value, *value.split(":"))):  # PATH's folders one by one
            path = _spelled(ctx, part)
            if path and ctx.protected.mentioned_in(path):
                ctx.report.code_naming.append(path)


def _spelled(ctx: Analysis, value: str) -> str:
    """`value` as a path: `~` and $HOME filled in, a relative one from the folder known here."""
    for home in ("~", "$HOME", "${HOME}"):
        if value == home or value.startswith(f"{home}/"):
            return ctx.home + value[len(home) :]
    if value and not value.startswith(("/", "$")) and not re.match(r"[A-Za-z]:", value) and ctx.cwd:
        return posixpath.normpath(posixpath.join(ctx.cwd, value))
    return value


def _installs_into(ctx: Analysis, word: _Word) -> bool:
    """Note the folder pip installs into as surely written, which `writes_into` counts (our venv, a
    red team, 2026-12-06), and as an archive's is: what it brings is installed software, not a
    project file the command changed before running it (scripts.runs_project_files)."""
    pattern = ctx.note_written(word)
    if pattern is not None:
        ctx.report.surely_written.add(pattern)
        ctx.report.unpacked.add(pattern)
    return pattern is not None


def _pip_prefix(ctx: Analysis, args: list[_Word]) -> tuple[str | None, bool]:
    """The prefix of the Python the command installs into: the one `--python` names (uv's `-p`
    too), or whose pip runs (`<prefix>/bin/pip`, `<prefix>/bin/python3 -m pip`; a bare name found
    on the server's PATH as the command's shell would find it), or for `uv pip` the venv it finds
    (VIRTUAL_ENV, a `.venv` in the folder or above). None when it cannot be told (a PATH or an
    activation of the command's own: `source .venv/bin/activate && pip install x`, `_named_by_command`
    reads those; a wrapper's: `uv run pip install x`); and whether pip installs there, not uv."""
    head = ctx.head
    if head is None or head.value is None:
        return None, False
    program = head.value.replace("\\", "/")
    name = program.rsplit("/", 1)[-1].casefold().removesuffix(".exe")
    python = _PYTHON.match(name) is not None
    uv = name == "uv"
    given = _pip_python(args, uv=uv)
    if given is not None:
        path = ctx.path_pattern(given) if given.value is not None and re.search(r"[/\\]", given.value) else None
        if path is None or "*" in path:
            return None, False
        return (
            path if os.path.isdir(path) else _prefix_of(path, python=True)
        ), not uv  # a venv's folder, or its python
    # PIP_CONFIG_FILE: settings the command may write before pip reads them (`target = <our venv>`)
    unknown = ctx.report.sourced or ctx.report.variables & {"PATH", "VIRTUAL_ENV", "PIP_CONFIG_FILE", "*"}
    if uv:
        if unknown or any(a.value == "--system" for a in args):
            return None, False
        return os.environ.get("VIRTUAL_ENV") or _venv_above(ctx.cwd), False
    if not (python or re.fullmatch(r"pip[0-9.]*", name)):
        return None, False
    if "/" in program:
        path = ctx.path_pattern(head)
    elif unknown or _OWN_PATH.intersection(ctx.report.runners[:-1]):
        # a bare name under an environment's runner (`uv run pip`, `poetry run pip`: its environment comes
        # first on PATH) or `sudo` (its own PATH) cannot be told; under `time`, `nice`, `env`, `xargs`... it
        # is the one the server's PATH finds (a second review, 2026-12-06)
        return None, False
    else:
        path = shutil.which(program)
    return (None if path is None or "*" in path else _prefix_of(path, python=python)), True


# Programs that run a command with another environment first on PATH (`uv run`, `conda run`, `pyenv
# exec`, `tox exec`), or a PATH of their own (sudo and its kin)
_OWN_PATH = frozenset({"uv", "uvx", "poetry", "pipenv", "hatch", "pdm", "rye", "conda", "mamba", "micromamba",
                       "pyenv", "tox", "nox", "pixi", "pipx", *_PRIVILEGE})  # fmt: skip


def _prefix_of(program: str, *, python: bool) -> str | None:
    """The prefix of the Python whose `bin/` (Windows: `Scripts/`) holds `program`; a python.exe
    outside one is Windows' base Python, in its prefix itself."""
    folder = posixpath.dirname(program.replace("\\", "/"))
    if posixpath.basename(folder).casefold() in ("bin", "scripts"):
        return posixpath.dirname(folder)
    return folder if python else None


def _pip_python(args: list[_Word], *, uv: bool) -> _Word | None:
    """The Python `--python PATH` (pip's any prefix naming it alone: `--pyth`; uv's `-p PATH` too)
    installs into."""
    for k, a in enumerate(_before_end(args)):
        v = a.value or ""
        python = v == "--python" if uv else v.startswith("--py") and long_option(v, _PIP_GENERAL_LONG) == "python"
        if python and "=" in v:
            return _word_end(a, len(v) - v.index("=") - 1)
        if python or (uv and v == "-p"):
            return args[k + 1] if k + 1 < len(args) else None
        if uv and v.startswith("--python="):
            return _word_end(a, len(v) - len("--python="))
    return None


def _venv_above(cwd: str | None) -> str | None:
    """The `.venv` uv finds without VIRTUAL_ENV: in the folder or the nearest above it."""
    folder = cwd
    while folder:
        if os.path.isfile(posixpath.join(folder, ".venv", "pyvenv.cfg")):
            return posixpath.join(folder, ".venv")
        above = posixpath.dirname(folder)
        folder = None if above == folder else above
    return None


def _installs_for_user(ctx: Analysis, prefix: str, args: list[_Word]) -> bool | _CannotTell:
    """Whether the pip of a Python outside any venv, at `prefix`, installs into the user site:
    PIP_USER in the server's environment or `user = true` in pip's settings say so, or pip falls
    back to it because the user cannot write that Python's site-packages (red team 13's route 5).
    Not where the Python is externally managed (PEP 668: Debian's, Fedora's): pip refuses to
    install there at all unless told to break it. Settings too large to read here: asked."""
    if not os.path.isdir(prefix):  # no such Python: the command fails, installing nothing
        return False
    settings = functools.cache(lambda: _pip_settings(prefix))  # read once, and only where asked
    try:
        if glob.glob(f"{glob.escape(prefix)}/lib/python3*/EXTERNALLY-MANAGED") and not (
            any(
                (a.value or "").startswith("--b") and long_option(a.value or "", ("break-system-packages",))
                for a in _before_end(args)
            )
            or "PIP_BREAK_SYSTEM_PACKAGES" in ctx.report.variables
            or _pip_option("break-system-packages", settings)
        ):
            return False
        said = _pip_option("user", settings)
    except _Unreadable:
        return _CANNOT_TELL
    if said is not None:
        return said
    patterns = ("lib/python3*/site-packages", "Lib/site-packages", "local/lib/python3*/dist-packages")
    sites = [found for pattern in patterns for found in glob.glob(f"{glob.escape(prefix)}/{pattern}")]
    return not any(os.access(found, os.W_OK) for found in sites or [prefix])


class _Unreadable(Exception):
    """A pip settings file too large to read here (`_MAX_SETTINGS`): what it says cannot be told."""


_MAX_SETTINGS = 64 * 1024
_TRUE = ("1", "true", "yes", "on", "y", "t")


def _pip_option(key: str, settings: Callable[[], dict[str, str]]) -> bool | None:
    """pip's yes-or-no option `key` of `install`: its PIP_ variable in the server's environment, or its
    `settings` (`_pip_settings`, read when needed). None: not set."""
    said = os.environ.get("PIP_" + key.upper().replace("-", "_"))
    if said is None:
        said = settings().get(key)
    return None if said is None else said.strip().casefold() in _TRUE


def _pip_settings(prefix: str) -> dict[str, str]:
    """The settings of pip's `install` command in its settings files, read in pip's order (the last that
    sets one decides; `[install]` over `[global]`): the system's, the user's unless PIP_CONFIG_FILE
    names a file, the Python's own (`prefix`; "": none), PIP_CONFIG_FILE's (os.devnull: none is read)."""
    named = os.environ.get("PIP_CONFIG_FILE")
    found: dict[str, str] = {}
    if named == os.devnull:
        return found
    home = os.path.expanduser("~")
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    files = ["/etc/xdg/pip/pip.conf", "/etc/pip.conf"]
    if not (named and os.path.exists(named)):
        files += [os.path.join(home, ".pip", "pip.conf"), os.path.join(config, "pip", "pip.conf")]
        files += [os.path.join(home, "Library", "Application Support", "pip", "pip.conf")]
        files += [os.path.join(os.environ[n], "pip", "pip.ini") for n in ("APPDATA",) if os.environ.get(n)]
    files += [f"{prefix}/pip.conf", f"{prefix}/pip.ini"] if prefix else []
    files += [named] if named else []
    for path in files:
        text = _settings_text(path)
        if text is None:
            continue
        parser = configparser.RawConfigParser()
        try:
            parser.read_string(text, source=path)
        except configparser.Error:
            continue  # pip itself refuses it: nothing is installed
        for section in ("global", "install"):
            if parser.has_section(section):
                found.update(parser.items(section))
    return found


def _settings_text(path: str) -> str | None:
    """A settings file's text, read only where it is a regular file (links followed), without waiting:
    a FIFO there blocked the classifier, on the server's event loop, and a link to /dev/zero ate memory
    (a review, 2026-12-06). None: no such file, not a regular one (pip skips a folder; a FIFO or a
    device keeps pip from installing anything), or not text pip reads. `_Unreadable`: too large."""
    try:
        # never waiting, and a terminal named there never becomes ours
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
        fd = os.open(path, flags)
    except (OSError, ValueError):
        return None
    try:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode):
            return None
        if found.st_size > _MAX_SETTINGS:
            raise _Unreadable(path)
        data = b""
        while len(data) <= _MAX_SETTINGS and (more := os.read(fd, _MAX_SETTINGS + 1 - len(data))):
            data += more
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) > _MAX_SETTINGS:  # it grew meanwhile
        raise _Unreadable(path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None  # pip refuses it: nothing is installed


def _user_sites(home: str) -> list[str]:
    """Where `pip install --user` may put packages, for any Python the command may run: `~/.local`
    (Linux, and macOS's non-framework builds), `~/Library/Python` (macOS's framework builds),
    `%APPDATA%\\Python` (Windows), or PYTHONUSERBASE where the user moved it."""
    bases = [f"{home}/.local", f"{home}/Library/Python/*"]
    bases += [os.environ[name].replace("\\", "/") + suffix
              for name, suffix in (("APPDATA", "/Python"), ("PYTHONUSERBASE", "")) if os.environ.get(name)]  # fmt: skip
    return [f"{base.rstrip('/')}/{tail}" for base in bases for tail in ("lib/*", "Python*/site-packages/*")]
