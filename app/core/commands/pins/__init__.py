"""What a held command runs, fixed when the user is asked, and checked again right before it starts.

A prompt shows text; what runs also depends on the folder the text names, the scripts it runs by
path and the environment it runs with. Each can change while the prompt is up (a symlink
re-pointed, a script rewritten), so the approval pins them: the folder by identity (resolved path,
device and inode), each script by a hash of its content, the environment by a digest of every
value. The command starts in the pinned folder, and only if nothing changed.

Scripts are the files the classifier read to judge the command (behind wrappers, in conditions, and
those a script sources or runs), and those found in the simple commands of the text: a program named
by path (`./x.sh`), and the words given to an interpreter (`bash x.sh`, `python3 x.py`, `source x`);
with them the files fed to a shell as its code (`cat a.sh | bash`, `bash <(cat a.sh)`, `exec 3<a.sh;
bash /dev/fd/3`) or read into its code by a command substitution (`bash -c "$(cat a.sh)"`,
`eval "$(< a.sh)"`, `bash <<< "$(cat a.sh)"`), the interpreters their `#!` lines name, the makefiles
make reads (`-f`, `-C`, `include`, found in an `-I` folder too, and those MAKEFILES names) and the
hooks a git verb runs, with the template `git init` or `git clone` copies into the repository it
makes (`--template`, GIT_TEMPLATE_DIR, init.templateDir). A script made by the command itself
(absent when asked) must still be absent at start.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
import stat
from collections.abc import Mapping, Sequence

from app.core.channel.protocol import MAX_ENV_SHOWN, MAX_PIN_SCRIPTS, Pin
from app.core.classifier.tables import GIT_PLACES
from app.core.commands.pins.fed_code import fed_to_interpreters
from app.core.commands.pins.git_hooks import git_files
from app.core.commands.pins.makefiles import project_files
from app.core.commands.pins.programs import interpreters_of, modules_of, programs_on_path, script_paths
from app.core.messages import (
    ENV_CHANGED_REASON,
    FOLDER_GONE_REASON,
    FOLDER_REPLACED_REASON,
    SCRIPT_CHANGED_REASON,
)

ABSENT = "absent"

NOT_A_FILE = "not a file"

HASH_LIMIT_BYTES = 64 * 1024 * 1024  # beyond this a script is pinned by size and change time

# The prompt shows every environment value the model sends: many change which program runs (PATH,
# GIT_DIR, CC, RUSTC_WRAPPER, npm_config_script_shell...), and no list of them is complete. A value
# whose name says it is a secret is masked, unless the name is one that picks a program.
SHOWN_ENV = re.compile(r"^(PATH|HOME|CDPATH|TMPDIR|SHELL|EDITOR|VISUAL|PAGER|MANPAGER|XDG_.+|GIT_.+|.*_ASKPASS)$")

# Of those, what makes a command wait for the user (admission): the folders programs, repositories and
# settings files are found in, and a program named by its path; a program named alone (`PAGER=cat`)
# is found on the PATH as before (red team, 2026-12-04: a planted `ls` first on a PATH ran unasked).
# Any case: Windows' `Path` is the PATH.
PICKS_FOLDERS = re.compile(
    # curl's CURL_HOME and Windows' homes too: a .curlrc there may send curl to a daemon's socket; GNUPGHOME,
    # whose gpg-agent.conf names the programs the user's agent starts outside (red team, 2026-12-05)
    rf"^(PATH|HOME|CDPATH|XDG_.+|CURL_HOME|GNUPGHOME|USERPROFILE|APPDATA|LOCALAPPDATA|GIT_(?:DIR|{GIT_PLACES}))$",
    re.I,
)

NAMES_PROGRAM = re.compile(r"^(SHELL|EDITOR|VISUAL|PAGER|MANPAGER|.*_ASKPASS)$", re.I)

BY_PATH = re.compile(r"[/\\]|^[A-Za-z]:")  # a program named by its path, POSIX or Windows
# A program's bare name: anything else in EDITOR or PAGER is a command line that a program runs through
# the shell (`EDITOR='rm -rf ~' git commit`: a red team, 2026-12-05).
BARE_NAME = re.compile(r"[\w.+-]+")

SECRET_NAME = re.compile(r"(TOKEN|SECRET|PASSWORD|PASSWD|PASS$|CREDENTIAL|API_?KEY|PRIVATE|AUTH|COOKIE|SESSION)", re.I)

MASKED = "********"

SHOWN_VALUE_CHARS = 300  # a value at most, as the prompt shows it; the digest covers it all
# ... but one that picks programs is shown whole up to this: a folder planted after PATH's first 300
# characters still decides which `ls` runs. Longer, it is cut with its length said, and the prompt,
# which must show it all, keeps Allow off (its details would not fit the screen).
SHOWN_PROGRAM_VALUE_CHARS = 4000
CUT_VALUE = re.compile(r"\.\.\. \([\d,]+ characters\)\Z")

# A value that names a file or folder: shown even under a secret-looking name (`rm -rf "$AUTH_DIR"/*`:
# a red team, 2026-12-06). Tokens and keys start with none of these.
PATH_START = re.compile(r"^(?:[/~.]|[A-Za-z]:[/\\])")

# A descriptor of the process that opens it: the server's, not the command's (and one may never end).
PROCESS_OWN = re.compile(r"^/(?:proc/|dev/(?:fd/|stdin$|stdout$|stderr$))")

SELF_PLACES = re.compile(r"^/proc/(?:self|thread-self)/(cwd|root)(/.*)?$")  # the command's folder, or /


def _pinnable(paths: Sequence[str], folder: str) -> list[str]:
    """`paths` as the server can pin them: `/proc/self/cwd/x` as the folder's `x`, and without those
    only the process opening them could read (`/dev/fd/3`: a descriptor of the server's)."""
    found = []
    for path in paths:
        own = SELF_PLACES.match(path)
        if own is not None:
            path = posixpath.normpath(posixpath.join(folder if own[1] == "cwd" else "/", (own[2] or "").lstrip("/")))
        if not PROCESS_OWN.match(path):
            found.append(path)
    return list(dict.fromkeys(found))


def content_hash(path: str) -> str:
    """The file's content as a hash; ABSENT when nothing is there, NOT_A_FILE for a folder or device."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):  # ValueError: a NUL in the name, which no file has
        return ABSENT
    if not os.path.isfile(path):
        return NOT_A_FILE
    if info.st_size > HASH_LIMIT_BYTES:
        return f"size {info.st_size} changed {info.st_mtime_ns} inode {info.st_ino}"
    digest = hashlib.sha256()
    try:  # not blocking: a FIFO put there since the stat is not waited on
        with open(os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)), "rb") as file:
            if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
                return NOT_A_FILE
            for block in iter(lambda: file.read(1 << 20), b""):
                digest.update(block)
    except OSError as exc:
        return f"unreadable ({exc.strerror})"
    return digest.hexdigest()


def env_digest(env: Mapping[str, str]) -> str:
    material = "\0".join(f"{key}={value}" for key, value in sorted(env.items()))
    return hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()


def folder_identity(folder: str) -> tuple[int, int]:
    info = os.stat(folder)
    return info.st_dev, info.st_ino


def shown_value(key: str, value: str, folder: str | None = None) -> str:
    """An environment value as the prompt shows it: masked when its name says it is a secret, unless
    it picks a program (the user decides on what it runs) or looks like a path (`looks_like_path`:
    what a command deletes or writes must show), cut when long (saying how long it is)."""
    picks = picks_programs(key, value)
    if SECRET_NAME.search(key) and not SHOWN_ENV.match(key) and not picks and not looks_like_path(value, folder):
        return MASKED
    limit = SHOWN_PROGRAM_VALUE_CHARS if picks else SHOWN_VALUE_CHARS
    if len(value) <= limit:
        return value
    return f"{value[:limit]}... ({len(value):,} characters)"


def looks_like_path(value: str, folder: str | None = None) -> bool:
    """Whether a value names a file or folder: it starts like a path (`/`, `~`, `.`, `C:\\`), or,
    from `folder`, it names one that exists, or one in a folder that exists (`notes/x`). A token or
    key does neither (one with a `/` inside names no folder)."""
    if PATH_START.match(value):
        return True
    if folder is None or not value or "\0" in value:
        return False
    place = os.path.join(folder, value)
    return os.path.lexists(place) or ("/" in value.rstrip("/") and os.path.isdir(os.path.dirname(place.rstrip("/"))))


def whole_value(shown: str) -> str | None:
    """A value as `shown_value` showed it, when that is the whole value; None when masked or cut."""
    if shown == MASKED or (len(shown) > SHOWN_VALUE_CHARS and CUT_VALUE.search(shown)):
        return None
    return shown


def pin_command(
    command: str, cwd: str, env: Mapping[str, str], read: Sequence[str] = (), path: str | None = None
) -> Pin:
    """Fix what `command` runs in `cwd` with `env`, when the user is asked (OSError: the folder is gone).
    `read`: the files the classifier read to judge it (classify's `scripts`: those a script runs or
    sources too, and those behind a wrapper, `timeout 60 ./x.sh`), which the text alone does not show;
    with the files it feeds a shell as code; then the project's modules those programs load, the
    makefiles and git hooks its tools run, the `#!` interpreters of all these, and where `path` (the
    command's PATH; this process's when None) finds each program named alone. Beyond MAX_PIN_SCRIPTS
    the files that exist are kept before the places pinned absent."""
    folder = os.path.realpath(cwd)
    identity = folder_identity(folder)
    search = os.environ.get("PATH", "") if path is None else path
    named = _pinnable([*read, *script_paths(command, folder), *fed_to_interpreters(command, folder)], folder)
    programs = programs_on_path(command, search, folder)
    runs = [*project_files(command, folder, env), *git_files(command, folder, env)]
    interpreters = interpreters_of([*named, *programs, *runs], search, folder)
    made = [*modules_of(named, folder), *runs, *interpreters, *programs]
    hashed = [(p, content_hash(p)) for p in dict.fromkeys([*named, *made]) if not PROCESS_OWN.match(p)]
    hashed.sort(key=lambda pair: pair[1] == ABSENT)  # stable: what exists first, in order
    scripts = tuple(hashed[:MAX_PIN_SCRIPTS])
    # What picks a program first, PATH before the rest: whatever else comes, the user reads its value (red
    # teams, 2026-12-05 and 2026-12-06: five variables that pick programs, sorted before PATH, hid it).
    ordered = sorted(env.items(), key=lambda pair: (not picks_programs(*pair), pair[0].upper() != "PATH", pair[0]))
    shown = tuple((key, shown_value(key, value, folder)) for key, value in ordered)[:MAX_ENV_SHOWN]
    return Pin(folder, identity, scripts, env_digest(env), shown)


def changed_since(pin: Pin, env: Mapping[str, str]) -> str | None:
    """What changed since the user was asked, in English for the model and the log; None: nothing.
    The folder is opened and checked by identity (a path re-pointed elsewhere does not pass)."""
    try:
        descriptor = os.open(pin.folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return FOLDER_GONE_REASON.format(folder=pin.folder)
    try:
        info = os.fstat(descriptor)
    finally:
        os.close(descriptor)
    if (info.st_dev, info.st_ino) != pin.folder_id:
        return FOLDER_REPLACED_REASON.format(folder=pin.folder)
    for path, digest in pin.scripts:
        if content_hash(path) != digest:
            return SCRIPT_CHANGED_REASON.format(script=path)
    if env_digest(env) != pin.env_digest:
        return ENV_CHANGED_REASON
    return None


def picks_programs(key: str, value: str) -> bool:
    """Whether an environment variable the model sends decides which program, repository or settings
    file a command uses, so the command waits for the user, who is shown its value."""
    if PICKS_FOLDERS.match(key):
        return value != "" or key.upper() != "CDPATH"  # an empty CDPATH only turns it off
    return bool(NAMES_PROGRAM.match(key)) and (bool(BY_PATH.search(value)) or not BARE_NAME.fullmatch(value or "x"))
