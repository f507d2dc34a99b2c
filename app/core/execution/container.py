"""The OS container every command runs in: what it keeps read-only and how bubblewrap starts it.

Why (issue 21, ../shared/containment-notes.md): no parser stops a same-user process from writing a
file; the kernel does. On Linux each command runs under `bwrap` in its own pid namespace (so the tray
can tell its requests from the user's, and they cannot shed it), with the files that control the
app read-only. Every decision is a pure function of (platform, environment, paths, checks) so tests
give it each platform's values; only `prepare` and `probe` touch the system.

What it does not stop is said in the README: a same-user service that starts programs on request
(systemd --user over an abstract bus address, ssh localhost, XTEST typing) mints a process outside.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import functools
import logging
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from app.core.execution import landlock, lone_files, seatbelt, start_files
from app.core.execution.process_marks import children
from app.core.i18n import _
from app.core.messages import BUS_HIDDEN_NOTE, NEVER_ASKED_PROTECTED, UNPROTECTED_WHY
from app.core.paths import (
    DESKTOP_FILE_NAME,
    AppPaths,
    claude_config_folder,
    file_identity,
    hidden_folders,
    protected_paths,
    runtime_dir,
)
from app.core.system_programs import system_program

log = logging.getLogger(__name__)

BWRAP = "bwrap"
BWRAP_ENV = "COWORK_TERMINAL_BWRAP"  # another bwrap program; tests point it at a missing one
PROBE_TIMEOUT_S = 10.0
LINKS_LOOKED_AT = 400  # files of each program folder looked at for a second name (a few ms)
LINK_ENTRIES_LOOKED_AT = 2000  # entries of each configuration folder looked at for symlinks

# Claude Desktop's MSIX package keeps its config here (platform-notes.md).
MSIX_CLAUDE = ("Packages", "Claude_pzs8sxrjxfjjc", "LocalCache", "Roaming", "Claude")
# Shell start-up files that live alone in the home folder: bound read-only file by file (a program
# outside that replaces one by rename detaches the bind: containment-notes.md section 1).
SHELL_FILES = (
    ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
    ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".pam_environment",
    ".bash_aliases",  # sourced by Debian's and Ubuntu's own ~/.bashrc
    ".bash_completion", ".zlogout", ".inputrc",  # bash-completion's, zsh's at logout, readline's key macros
    # Other shells' (a red team, 2026-12-05, wrote each unheld): csh's and tcsh's (`.cshdirs` is sourced
    # at login where `savedirs` is set), ksh93's and mksh's interactive files, xonsh's.
    ".cshrc", ".tcshrc", ".login", ".logout", ".cshdirs", ".kshrc", ".mkshrc", ".xonshrc",
    ".yashrc", ".yash_profile",  # yash's interactive and login files (last sitting's note left them)
)  # fmt: skip
# GnuPG's daemons' settings, in GNUPGHOME or ~/.gnupg: the user's gpg-agent, scdaemon and dirmngr run
# outside any container and start the programs these name (`pinentry-program`): a red team, 2026-12-05,
# ran one outside that outlived a pause; gpg.conf's and gpgsm.conf's `agent-program`, and GnuPG 2.4's
# common.conf, name the agent gpg starts where none runs: a review). The folder itself stays
# writable (keys, trust database).
GNUPG_FILES = ("gpg-agent.conf", "scdaemon.conf", "dirmngr.conf", "gpg.conf", "gpgsm.conf", "common.conf")
# Folders of other shells' start-up files in the XDG configuration folder, protected where present as
# fish's is: nushell's `config.nu`, `env.nu` and `autoload/`, xonsh's `rc.xsh` and `rc.d/`, elvish's `rc.elv`,
# Oils' `oshrc` and `yshrc` (and their `.d` folders), ion's `initrc`.
SHELL_CONFIG_FOLDERS = ("nushell", "xonsh", "elvish", "oils", "ion")
# Run by display managers and startx; and X resources, which Tk takes into every window's options
# (`~/.Xdefaults` where the display has none, `~/.Xresources` through xrdb at the next login): a
# resource naming a script for a widget's option ran it in the approval prompt.
X_SESSION_FILES = (
    ".xprofile",
    ".xsessionrc",
    ".xsession",
    ".xinitrc",
    ".Xdefaults",
    ".Xresources",
    ".xinputrc",
    ".i18n",
)  # im-config's, at every X login; Fedora's older lang.sh sources ~/.i18n
# Files in the XDG configuration folder that login scripts source: /etc/profile.d/bash_completion.sh,
# Arch's locale.sh (`locale.conf`); and less's settings (since 582: `#env` there sets LESSOPEN, a
# program less runs on every file it shows, in `man` and `git log` outside: red team, 2026-12-05).
CONFIG_FILES = ("bash_completion", "locale.conf", "lesskey", "less")  # `less`: lesskey's compiled form

# The container's first process where Landlock scopes cannot be had (landlock.py's Perl init does the
# same job and scopes the command): runs the command, writes its status to the fd named first (one
# line, the exit code; the command does not inherit it, and the init keeps it open until it ends, so
# that its end tells start_files.py the container is gone), then lives until the namespace is empty
# so a finished command's background job lives on (bash reaps orphans on SIGCHLD). bash, not
# Python: a Python init cost about 30 ms per command here, bash about 2.
# The traps keep Ctrl-C and a polite SIGTERM for the command; they are not inherited as "ignore".
# Before anything it checks the lifeline named second, and starts nothing when its starter is gone.
# The check of a starter's lifeline (see `lifeline`), in bash: end of file (or anything to read)
# means whoever started the container is gone; a lifeline that is not open is a caller's mistake.
LIFELINE_CHECK = (
    '{ : <&"$life"; } 2>/dev/null || { echo "cowork-init: no lifeline on fd $life" >&2; exit 126; }\n'
    'read -t 0 -u "$life" && exit 137\n'
    "exec {life}<&-\n"
)
# The most tasks (processes and threads) one command's container may have at once, so that a fork
# bomb, or a loop of background jobs, stops there and not at the user's or the machine's limit (a red
# team, 2026-12-05, made 1504 in one container; the tray must still be able to start bwrap and the
# approval prompt). 8192: everyday builds stay far below (`make -j` on 128 cores, cargo's rustc with
# its codegen threads, npm's and Gradle's thread pools: a few hundred to about 3000 here), and it is
# a quarter of the default pid_max (32768) and under systemd's default TasksMax for a user where
# pid_max is that small. Set with bash's `ulimit -u` (RLIMIT_NPROC, soft and hard) where it counts
# the container's own tasks: in its own user namespace on Linux 5.14+ (read_only.py's MAX_TASKS
# says why and how it was measured), not for root, whom the kernel exempts.
MAX_TASKS = 8192
TASK_LIMIT = (
    "read -r inside outside count </proc/self/uid_map 2>/dev/null\n"
    '[ "$inside $outside $count" = "0 0 4294967295" ] || ulimit -u @MAX@ 2>/dev/null\n'
)
INIT_SCRIPT = (
    "trap : INT TERM HUP QUIT\n"
    "fd=$1 life=$2; shift 2\n"
    f"{LIFELINE_CHECK}"
    '"$@" {fd}>&-\n'
    'printf \'%s\\n\' "$?" >&"$fd"\n'
    "exec </dev/null >/dev/null 2>&1\n"
    "while set -- /proc/[0-9]*; [ $# -gt 1 ]; do sleep 0.2; done\n"
)
# Before the Perl init (landlock.py), which cannot be given the limit itself: bash, then exec (about
# 1 ms more per container, measured; a spare's is paid before its command comes).
LIMITED_START = 'exec "$@"\n'


def task_limit(euid: int, abi: int | None = None) -> str:
    """The bash lines that limit a container's tasks (MAX_TASKS), or none where RLIMIT_NPROC would
    not count them alone: a kernel older than 5.14 (Landlock ABI 2 means 5.19, as in read_only.py),
    and root, whom the kernel exempts (an app of the desktop does not run as root; a pids cgroup
    would be the way, and is not made here). The lines themselves skip a container without a user
    namespace of its own (setuid bwrap), where the limit would count every process of the user."""
    if euid == 0:
        return ""
    abi = landlock.kernel_abi() if abi is None else abi
    if abi < landlock.TASKS_ABI:
        return ""
    return TASK_LIMIT.replace("@MAX@", str(MAX_TASKS))


def limited_init(init: Sequence[str], euid: int) -> tuple[str, ...]:
    """The Perl init `init` started by a bash that first limits the container's tasks (`task_limit`),
    where they are limited; the bash init (INIT_SCRIPT) limits them itself."""
    limit = task_limit(euid) if init else ""
    if not limit:
        return tuple(init)
    return ("/bin/bash", "--norc", "--noprofile", "-c", limit + LIMITED_START, "cowork-limit", *init)


ON = "on"
MISSING = "missing"  # no bwrap program
USERNS = "userns"  # the kernel refuses unprivileged user namespaces
APPARMOR = "apparmor"  # Ubuntu 23.10+: AppArmor confines namespaces of unconfined programs
FAILED = "failed"  # another reason, in bwrap's own words
# The probe did not end in time: not taken for bwrap failing (its commands would run unprotected, and a
# command that loads the computer as a server starts could bring that about): refused, probed again.
SLOW = "slow"
UNSUPPORTED = "unsupported"  # no container for this OS here (Windows jobs protect no files)
OFF = "off"  # the user switched it off in the app
PRIVILEGED = "privileged"  # the user allowed a command that gains privileges (sudo), which no container allows
# macOS: every command under `sandbox-exec` with a profile that denies writes to the protected set
# (seatbelt.py). Not `on`: no pid namespace, init, status pipe or spares, so everything keyed on `on`
# treats its commands as uncontained (what they leave is ended by their process group); only `wrap` differs.
SEATBELT = "seatbelt"
SEATBELT_FAILED = "seatbelt-failed"  # sandbox-exec missing, or its probe failed or did not end: not used

# bwrap's stderr for each reason (Debian, upstream, Ubuntu): containment-notes.md section 1.
USERNS_SIGNS = ("No permissions to create new namespace", "Creating new namespace failed")
APPARMOR_SIGNS = ("setting up uid map: Permission denied", "Failed RTM_NEWADDR: Operation not permitted")


@dataclass(frozen=True)
class ProtectedSet:
    """What commands may read but not change: folders (whole) and lone files."""

    folders: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    # Protected only where they exist: the app takes a Claude Desktop folder as a sign that Claude
    # Desktop is installed (claude/locations.py), so none is created just to protect it.
    if_present: tuple[str, ...] = ()
    # Lone files and `if_present` folders missing when prepared: not bound (a mount point would be
    # created on the host), guarded instead (start_files.py).
    absent: tuple[str, ...] = ()
    # Members that are symlinks (dotfiles kept in a repository, GNU stow, home-manager): (the link,
    # where it points). What they point to is bound; the link itself lies in a folder commands may
    # write, so its name is guarded wherever what it points to is bound, and the link put back
    # (start_files.py). Not a bwrap argument: bwrap cannot bind onto a symlink's own name.
    links: tuple[tuple[str, str], ...] = ()
    # Folders whose symlinks have what they point to protected too, where a command could change it
    # (`link_targets`): the configuration folders; not the program's (its links are its own) nor the
    # user site's (a package linked there is the user's work).
    follow_links: tuple[str, ...] = ()
    link_pairs: tuple[tuple[str, str], ...] = ()  # (a symlink in a protected folder, what it points to)
    program: tuple[str, ...] = ()  # the program's own folders among them (`hold_members` leaves them out)
    identities: tuple[tuple[int, int] | None, ...] = ()  # each folder's (device, inode) when prepared
    # Each folder whose links are followed, with the links among its own entries as prepared (`_links_in`)
    followed_links: tuple[tuple[str, frozenset[tuple[str, str]]], ...] = ()
    # When each such folder's entries last changed, as last looked at (`folders_changed`)
    seen_changed_at: dict[str, int | None] = field(default_factory=dict, compare=False, hash=False)

    def all(self) -> tuple[str, ...]:
        return (*self.folders, *self.files, *self.if_present, *self.absent)

    def folders_changed(self) -> bool:
        """Whether to prepare anew: a folder bound read-only was deleted or made anew since `prepare`:
        bwrap cannot bind a missing one, and a container started before (a spare, the session's) still binds the
        old one, wherever it went, and leaves the new one writable (a review, 2026-12-05:
        `mv ~/.claude ~/.claude-old; mkdir ~/.claude` by the user, then a command wrote into it)."""
        moved = any(
            file_identity(folder) != known for folder, known in zip(self.folders, self.identities, strict=False)
        )
        # Or a link added to (or changed in) a folder whose links are followed (the user's `stow` while
        # the tray runs: what it points to stayed writable until the tray's next start, an eighth red
        # team, 2026-12-05). Its links are read again only when its entries changed (a stat a folder);
        # a file saved there by rename (Claude's own) changes no link and prepares nothing anew. Only
        # the folder's own entries: a link made deeper in it counts from the next prepare.
        return moved or any(self._links_changed(folder, links) for folder, links in self.followed_links)

    def _links_changed(self, folder: str, links: frozenset[tuple[str, str]]) -> bool:
        now = _changed_at(folder)
        if now is not None and now == self.seen_changed_at.get(folder):
            return False
        if _links_in(folder) != links:
            return True
        self.seen_changed_at[folder] = now
        return False


def protected_set(
    platform: str,
    environ: Mapping[str, str],
    home: str,
    app_folders: Iterable[str],
    program_folders: Iterable[str],
    user_site: str | None,
    hostname: str = "",
) -> ProtectedSet:
    """The protected set for one OS, as plain paths (not yet resolved or created).

    `app_folders`: our data, log and outputs folders; `program_folders`: the package, its venv or
    editable source tree; `user_site`: where Python's user start-up hooks live (`.pth`,
    `usercustomize`), for every interpreter we start."""
    join = os.path.join if platform != "win32" else _win_join
    folders = [*app_folders, *program_folders]
    if user_site:
        folders.append(user_site)
    configuration = len(folders)  # from here on: folders whose symlinks are followed (ProtectedSet)
    folders.append(join(home, ".claude"))
    files = [join(home, ".claude.json")]
    moved = claude_config_dir(platform, environ, home)
    if moved is not None:
        folders.append(moved)  # Claude Code's folder and its `.claude.json`, where the user moved them
    if platform == "win32":
        appdata = environ.get("APPDATA") or join(home, "AppData", "Roaming")
        local = environ.get("LOCALAPPDATA") or join(home, "AppData", "Local")
        folders.append(join(appdata, "Microsoft", "Windows", "Start Menu", "Programs", "Startup"))
        # Git Bash reads the shell's start-up files as bash does anywhere; PowerShell its profiles.
        # Documents moved to OneDrive (Windows 11's backup, often on) holds the profiles there (a red team)
        documents = (join(home, "Documents"), join(home, "OneDrive", "Documents"))
        where_present: tuple[str, ...] = (
            join(appdata, "Claude"), join(local, *MSIX_CLAUDE),
            *(join(d, shell) for d in documents for shell in ("PowerShell", "WindowsPowerShell")),
        )  # fmt: skip
        files += [join(home, name) for name in SHELL_FILES]
        return ProtectedSet(tuple(dict.fromkeys(folders)), tuple(files), where_present, program=tuple(program_folders))
    if platform == "darwin":
        where_present = (join(home, "Library", "Application Support", "Claude"),)
        folders.append(join(home, "Library", "LaunchAgents"))
    else:
        config = _xdg(environ, "XDG_CONFIG_HOME", join(home, ".config"))
        data = _xdg(environ, "XDG_DATA_HOME", join(home, ".local", "share"))
        cache = _xdg(environ, "XDG_CACHE_HOME", join(home, ".cache"))
        # ~/.fonts and ~/.fontconfig: fontconfig's older folders, read still; not made where missing
        # (clutter in the home folder), guarded instead.
        # zsh reads its start-up files from $ZDOTDIR, which ~/.zshenv often sets to ~/.config/zsh.
        zdotdir = os.path.normpath(environ.get("ZDOTDIR", "") or ".")
        zsh = [zdotdir] if os.path.isabs(zdotdir) and not _holds(zdotdir, os.path.normpath(home)) else []
        # Where present too: the X settings daemons' files (xsettingsd's, Xfce's xfconf), which can name
        # a GTK module for the tray's menu as gtk-3.0's do; Flatpak's exported folder, listed in
        # XDG_DATA_DIRS, whose dbus-1 services and systemd units run outside (fifth red team, 2026-12-04).
        # Folders that only the user makes, or the program that reads them at its first start: where
        # present too, guarded where missing (start_files.py) rather than made. An empty folder in the
        # user's home for every shell and service we know of is clutter, and each folder bound costs
        # every container about 0.25 ms to start (docs/benchmarks.md, twenty-third sitting). The folders a
        # desktop's own programs make at any time (gtk-3.0, dconf, autostart, fonts, ...) are still made
        # below, so that no folder of theirs that appears while a command runs is taken for the command's.
        rare = (
            join(config, "fish"),
            *(join(config, name) for name in SHELL_CONFIG_FOLDERS),
            join(data, "nushell"),  # nushell sources every file in its `vendor/autoload` there at start
            join(data, "fish"),  # fish sources its `vendor_conf.d` there at start (and loads its functions)
            # Plasma's widgets (QML, run by plasmashell at login once added) and KWin's scripts
            join(data, "plasma"),
            join(data, "kwin"),
            # PipeWire's `context.exec` and WirePlumber's scripts: programs its daemons start at login.
            join(config, "pipewire"),
            join(config, "wireplumber"),
            join(data, "wireplumber"),
            join(config, "environment.d"),  # variables for every program the user manager starts
            # Lines of systemd-tmpfiles' user service, run as the user manager starts: `w+ %h/.bashrc`
            # appends to a protected file outside any container (tmpfiles.d(5), red team 2026-12-04).
            join(config, "user-tmpfiles.d"),
            join(data, "user-tmpfiles.d"),
            join(config, "autostart-scripts"),  # Plasma 5 runs each script in it at login
            join(data, "systemd"),  # user units too (systemd.unit(5): $XDG_DATA_HOME/systemd/user)
            join(home, ".fonts.conf.d"),  # fontconfig's older folder, still included
            join(home, ".bashrc.d"),  # every file in it is sourced by Fedora's own ~/.bashrc
            # bash-completion 2 loads `completions/<program>` from there into the user's shell at the
            # first Tab after <program> (red team, 2026-12-05), as it does ~/.bash_completion.
            join(data, "bash-completion"),
        )
        where_present = (join(config, "Claude"), join(home, ".fonts"), join(home, ".fontconfig"),
                         join(config, "xsettingsd"), join(config, "xfce4", "xfconf"), join(data, "flatpak", "exports"),
                         *rare, join(config, "zsh"), *zsh)  # fmt: skip
        files += [join(home, name) for name in X_SESSION_FILES]
        files += [join(config, name) for name in CONFIG_FILES]
        if hostname:  # Xlib reads ~/.Xdefaults-<host> on every display, and Xft its dpi: text unreadable
            files.append(join(home, f".Xdefaults-{hostname}"))
        folders += [
            join(config, "autostart"),
            join(config, "systemd"),  # user units, and user.conf (the user manager's environment)
            # gnome-shell runs an enabled extension's `extension.js` at login: made when missing (the
            # Extensions app makes it whenever the user installs one; an empty one changes nothing).
            join(data, "gnome-shell", "extensions"),
            join(data, "dbus-1"),
            # GTK 3 loads the shared libraries `gtk-modules` names in gtk-3.0/settings.ini into every
            # GTK program, the tray's menu on most desktops included (so do GNOME's X settings, from
            # dconf's database); Plasma runs the scripts in plasma-workspace/env at login. Made when
            # missing (empty, they change nothing), so that no folder the user's own programs make
            # while a command runs is taken for the command's.
            join(config, "gtk-3.0"),
            join(config, "dconf"),
            join(config, "plasma-workspace"),
            join(data, "glib-2.0"),  # GSettings schemas: the defaults of GNOME's settings, such X settings too
            join(config, "fontconfig"),  # which font a name means: the prompt's text could be made blank
            join(data, "fonts"),  # a font named as a system one, its glyphs swapped: "Deny" drawn as "Allow"
            # fontconfig takes a font's file from a cache there, even for the system's fonts: a copy
            # of /var/cache/fontconfig's with one path changed drew "DejaVu Sans" from another file.
            join(cache, "fontconfig"),
        ]
        files.append(join(home, ".fonts.conf"))  # fontconfig's older place
        # less's settings where XDG_CONFIG_HOME's has none (CONFIG_FILES): the source file, the compiled one;
        # and Debian's lesspipe (LESSOPEN in Ubuntu's own ~/.bashrc) runs ~/.lessfilter on every file shown.
        files += [join(home, ".lesskey"), join(home, ".less"), join(home, ".config", "lesskey"),
                  join(home, ".config", "less"), join(home, ".lessfilter")]  # fmt: skip
        # The launcher in the menu starts the tray: a changed one would start a look-alike at the
        # user's next click (and one made where the package's is would hide it).
        files.append(join(data, "applications", DESKTOP_FILE_NAME))
        # ... and `applications/cowork/terminal.desktop` has the same desktop id (a subfolder's name joins
        # it with a dash): guarded, like a missing start-up file (fifth red team, 2026-12-04).
        files.append(join(data, "applications", *DESKTOP_FILE_NAME.split("-", 1)))
    files += [join(home, name) for name in SHELL_FILES]
    gnupg = environ.get("GNUPGHOME") or join(home, ".gnupg")
    files += [join(gnupg, name) for name in GNUPG_FILES]
    unique, followed = tuple(dict.fromkeys(folders)), tuple(dict.fromkeys([*folders[configuration:], *where_present]))
    return ProtectedSet(
        unique, tuple(dict.fromkeys(files)), where_present, follow_links=followed, program=tuple(program_folders)
    )


def claude_config_dir(platform: str, environ: Mapping[str, str], home: str) -> str | None:
    """`$CLAUDE_CONFIG_DIR` (`paths.claude_config_folder`: a trailing separator would lose its symlink's
    guard), or None when it is the home folder or one above it (that would make the home read-only)."""
    folder = claude_config_folder(platform, environ)
    if folder is None:
        return None
    where = type(folder)(home)  # the same flavour of path
    if folder == where or folder in where.parents:
        return None
    return str(folder)


def _xdg(environ: Mapping[str, str], name: str, default: str) -> str:
    value = environ.get(name, "")
    return value if os.path.isabs(value) else default


def _win_join(*parts: str) -> str:
    return "\\".join(p.rstrip("\\") for p in parts)


def program_folders(package_dir: str, prefix: str, base_prefix: str, home: str) -> list[str]:
    """The program's own files: the package (an editable install's source too), a venv, and the
    Python it runs on where that lives in the home folder (pyenv, uv, conda): its standard library
    is imported by every process of ours, `-I` or not (a red-team route edited tkinter there)."""
    folders = [package_dir]
    if os.path.normcase(prefix) != os.path.normcase(base_prefix):  # a venv, not the system's Python
        folders.append(prefix)
    base, home = os.path.normcase(base_prefix), os.path.normcase(home).rstrip("/\\")
    if home and base.startswith(home + os.sep):
        folders.append(base_prefix)
    return folders


# -- Linux: bubblewrap ---------------------------------------------------------------------------


def mount_args(protected: ProtectedSet, writable_parent: Callable[[str], bool]) -> list[str]:
    """bwrap's arguments that make `protected` read-only: every ancestor a command could rename
    (its parent is writable) bound onto itself first, since `mv ~/.claude ~/.x; mkdir ~/.claude`
    defeats a bind of the folder alone; then each member, shallow before deep.

    A member inside another read-only folder gets no bind of its own (nor do the ancestors between):
    it is read-only already, and a writable bind of such an ancestor (a venv's `site-packages`
    between the venv and the package in it) would make it writable again.

    Paths must be resolved and exist (`prepare`): bwrap fails on a missing one and follows a
    symlink to where it points. Lone files and absent members get `--ro-bind-try`, which binds them
    where they exist when the container starts (one deleted since `prepare` must not fail every
    command); where they do not, start_files.py guards them."""
    members = bound_members(protected)
    ancestors: set[str] = set()
    for path in members:
        for ancestor in Path(path).parents:
            if str(ancestor) == ancestor.root:
                break
            if writable_parent(str(ancestor)) and str(ancestor) not in members:
                ancestors.add(str(ancestor))
    args: list[str] = []
    for path in sorted(ancestors | members, key=lambda p: (p.count("/"), p)):
        if path in ancestors:
            args += ["--bind", path, path]
        elif path in protected.files or path in protected.absent:  # bound if it exists then, else guarded
            args += [start_files.GUARD_FLAG, path, path]
        else:
            args += ["--ro-bind", path, path]
    return args


def bound_members(protected: ProtectedSet) -> set[str]:
    """The members that need a bind of their own: those not inside another protected folder."""
    folders = {folder.rstrip("/") for folder in (*protected.folders, *protected.if_present)}
    return {
        member
        for member in protected.all()
        if not any(member.startswith(folder + "/") for folder in folders if folder != member.rstrip("/"))
    }


SYSTEM_BUS_SOCKETS = ("/run/dbus/system_bus_socket", "/run/systemd/private")  # /var/run is a link to /run


def hidden_args(
    environ: Mapping[str, str], exists: Callable[[str], bool], uid: int | None = None, tmp_buses: Sequence[str] = ()
) -> list[str]:
    """Hide what starts programs outside the container for the asking: the session bus (a D-Bus
    service file registered from inside was started by dbus-daemon outside; and any bus starts a
    service it knows with the environment a client gave it), wherever its address puts it
    (`dbus-launch` and sessions without systemd: `/tmp/dbus-...`), dbus-daemon's own folder of
    services in the runtime folder (one planted there was started when the tray opened a folder),
    the accessibility bus (its launcher's, in the runtime folder), the sound servers, systemd's user
    manager, the system bus, Wayland's and X11's path sockets (a Wayland compositor may let any client type). The
    runtime folder is found without $XDG_RUNTIME_DIR too (`uid`): MCP clients start servers without
    it, and its bus was then in reach (red team, 2026-12-04). Abstract sockets are Landlock's to
    scope (landlock.py)."""
    sockets: list[str] = []
    folders: list[str] = []
    runtime = runtime_dir(environ, uid, exists)
    if runtime is not None:
        # PipeWire's and PulseAudio's daemons load modules on request, some of which make a pipe at
        # any path the client names (`module-pipe-sink file=...`): files made outside, anywhere.
        sockets += [f"{runtime}/bus", f"{runtime}/pipewire-0", f"{runtime}/pipewire-0-manager"]
        wayland = environ.get("WAYLAND_DISPLAY", "")
        sockets += [wayland if wayland.startswith("/") else f"{runtime}/{wayland}"] if wayland else []
        sockets += [f"{runtime}/wayland-0", f"{runtime}/wayland-1"]
        folders += [f"{runtime}/systemd", f"{runtime}/at-spi", f"{runtime}/pulse", f"{runtime}/dbus-1"]
    sockets += bus_socket_paths(environ.get("DBUS_SESSION_BUS_ADDRESS", ""))
    # The system bus, and systemd's own socket (root's): through them logind powers the computer off
    # for the user of an active session, udisks mounts and NetworkManager changes the network, with
    # no password (polkit's allow_active), asked by any script the classifier cannot read (a red team,
    # 2026-12-05). Commands that need it (systemctl, nmcli, timedatectl) fail inside, and say so.
    sockets += [*SYSTEM_BUS_SOCKETS, *bus_socket_paths(environ.get("DBUS_SYSTEM_BUS_ADDRESS", ""))]
    sockets += list(tmp_buses)  # `dbus-launch`'s, a second session's: named in this environment or not (red team)
    args: list[str] = []
    for socket_path in dict.fromkeys(sockets):
        if exists(socket_path):
            args += ["--ro-bind", "/dev/null", socket_path]
    for folder in (*folders, "/tmp/.X11-unix"):
        if exists(folder):
            args += ["--tmpfs", folder]
    return args


def hidden_locks(folders: Iterable[str], shown: Iterable[str], exists: Callable[[str], bool]) -> list[str]:
    """An empty read-only folder over each of the app's own folders (`paths.hidden_folders`: its data,
    logs and lock files), with the files of `shown` bound back read-only. The journal holds every
    app's commands and their output: read-only, it was still read (a red team, 2026-12-05: one
    agent's `grep -ra` over ~/.local/share found another app's secrets in it). A read-only lock file
    still takes a `flock`, and a command's process holding the tray's or a server's made the tray
    that started next say another one seemed to run, or a dead server seem alive (a review,
    2026-12-05). The tray shows its own lock to its commands: it holds that lock as long as it lives,
    and its containers end with it."""
    listed = [folder for folder in dict.fromkeys(folders) if exists(folder)]
    tops = [folder for folder in listed if not any(_inside(folder, other) for other in listed if other != folder)]
    args = [arg for folder in tops for arg in ("--tmpfs", folder)]
    args += [arg for file in shown if exists(file) for arg in ("--ro-bind", file, file)]
    return args + [arg for folder in tops for arg in ("--remount-ro", folder)]


def outputs_args(outputs: str, own: str | None, exists: Callable[[str], bool] = os.path.isdir) -> list[str]:
    """An empty read-only folder over the folder of whole outputs, with the app's own (`own`, where
    it exists: its first kept file makes it) bound back read-only: each app keeps its commands' whole
    outputs there, and one agent's `grep -r` over the outputs folder read another app's (a red team,
    2026-12-05). Real paths: bwrap binds where a link points, and a tmpfs over a link's name would
    hide nothing."""
    shown = [os.path.realpath(own)] if own else []
    return hidden_locks([os.path.realpath(outputs)], shown, exists)


def _inside(path: str, folder: str) -> bool:
    return path.startswith(folder.rstrip("/") + "/")


def tmp_buses(folder: str = "/tmp", listening: Callable[[], set[str] | None] | None = None) -> list[str]:
    """The sockets of session buses in /tmp (`dbus-launch` and sessions without systemd make
    `/tmp/dbus-XXXXXXXX`): hidden whether or not this process's environment names them. Only those a
    program listens on: a red team (2026-12-06) made 3,500 dead ones, whose three bwrap arguments
    each took every command past bwrap's limit of 9,000 (`listening`: the paths, /proc/net/unix's)."""
    names = bus_names(folder)
    found = [path for path in (os.path.join(folder, name) for name in names) if _is_socket(path)]
    if not found:
        return []
    live = (listening or listening_sockets)()
    return found if live is None else [path for path in found if path in live]


# /tmp's names that start with "dbus-", as last listed, by folder: (the folder's device, inode and
# change time then, whether that time was settled, the names). Listing /tmp took 0.08 ms of each
# command's start with 200 entries; a stat tells whether an entry came or went since.
_bus_names_seen: dict[str, tuple[tuple[int, int, int], bool, list[str]]] = {}
# A folder's change time is a coarse clock's (a tick of some milliseconds; two seconds on FAT): an
# entry made in the tick of the last change leaves it as it was, so a listing is kept only when that
# change was older than this at the stat before it (as git trusts an index entry only when the file
# is older than the index). A /tmp that changes more often than this is listed at each command.
CHANGE_SETTLED_NS = 2_500_000_000


def bus_names(folder: str) -> list[str]:
    """The names in `folder` that start with "dbus-", listed again only when the folder changed."""
    now = time.time_ns()
    try:
        info = os.stat(folder)
    except OSError:
        return []
    key = (info.st_dev, info.st_ino, info.st_mtime_ns)
    seen = _bus_names_seen.get(folder)
    if seen is not None and seen[0] == key and seen[1]:
        return seen[2]
    try:
        names = sorted(name for name in os.listdir(folder) if name.startswith("dbus-"))
    except OSError:
        return []
    _bus_names_seen[folder] = (key, now - info.st_mtime_ns > CHANGE_SETTLED_NS, names)
    return names


def listening_sockets(table: str = "/proc/net/unix") -> set[str] | None:
    """The paths of the Unix sockets a program listens on (in this network namespace): the last field
    of /proc/net/unix's lines whose flags say so (`__SO_ACCEPTCON`); None when the table cannot be
    read, and then every bus socket is hidden. A line that does not parse is skipped alone: a socket's
    name is printed byte for byte, newlines too, so a command can add lines of its own (a review,
    2026-12-06: one bad line made the whole table read as empty, and no bus was hidden)."""
    found = set()
    try:
        with open(table, errors="replace") as lines:
            next(lines, None)  # the heading
            for line in lines:
                fields = line.split(None, 7)
                with contextlib.suppress(ValueError):
                    if len(fields) == 8 and int(fields[3], 16) & SO_ACCEPTCON:
                        found.add(fields[7].rstrip("\n"))
    except OSError:
        return None
    return found


SO_ACCEPTCON = 0x10000  # /proc/net/unix's Flags: a listening socket


def _is_socket(path: str) -> bool:
    try:
        return stat.S_ISSOCK(os.lstat(path).st_mode)
    except OSError:
        return False


def bus_socket_paths(address: str) -> list[str]:
    """The socket files a D-Bus address names (`unix:path=/tmp/dbus-x,guid=...;...`: each of its
    addresses, values %-escaped); not abstract ones, which have no file."""
    from urllib.parse import unquote

    found = []
    for entry in address.split(";"):
        transport, _, pairs = entry.partition(":")
        if transport != "unix":
            continue
        for pair in pairs.split(","):
            key, _, value = pair.partition("=")
            if key == "path" and os.path.isabs(unquote(value)):
                found.append(unquote(value))
    return found


_lifeline: tuple[int, int] | None = None  # (read end, write end), made by this process
_lifeline_lock = threading.Lock()


def lifeline() -> int:
    """The read end of a pipe whose write end only this process holds, so it reads end of file
    once this process is gone. Why: bwrap 0.8's --die-with-parent misses a starter that dies while
    bwrap sets up (the inner process arms its death signal after the outer one died; fixed upstream
    in 2026, a071f9d, not in the distributions), and the command then outlives the tray that started
    it: 24 of 40 containers did, their starter killed within 6 ms of starting them. The init checks
    the lifeline before it starts the command; after that check --die-with-parent holds."""
    global _lifeline
    with _lifeline_lock:
        if _lifeline is None:
            read_end, write_end = os.pipe()  # both close-on-exec: no other child inherits the write end
            _lifeline = (read_end, write_end)
        return _lifeline[0]


def _forget_lifeline() -> None:
    """A forked child holds its parent's write end: its containers watch a lifeline of their own."""
    global _lifeline
    _lifeline = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_lifeline)


def inherited(status_fd: int, read_fd: int, mark: str | None = None) -> tuple[int, ...]:
    """The file descriptors a contained command's bwrap is started with (`pass_fds`), for its status
    pipe (`status_fd` the write end, `read_fd` the read end); the container of a command marked
    `mark` is guarded from here until its init ends (start_files.py)."""
    start_files.register(status_fd, read_fd, mark)
    return (status_fd, lifeline())


# The kernel's settings, read-only inside: root needs no capability to write them, and one command
# set kernel.core_pattern to a program of its own, which the kernel then ran as root outside on the
# next crash (red team, 2026-12-04); sysfs's uevent_helper is the same kind of door.
KERNEL_SETTINGS = ("--ro-bind", "/proc/sys", "/proc/sys", "--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger",
                   "--ro-bind", "/sys", "/sys")  # fmt: skip
# The capabilities a command keeps when the app runs as root (Docker's default set, less MKNOD):
# enough to install packages and own files. Without CAP_SYS_ADMIN (umount and remount) and
# CAP_DAC_READ_SEARCH (open_by_handle_at reaches any file) root's commands are held by the read-only
# binds as anyone's are: with all of root's, one unmounted ~/.bashrc's bind and wrote it (red team,
# 2026-12-04). bwrap sets no_new_privs, so no program run inside gains them back.
ROOT_CAPABILITIES = ("CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL", "CAP_SETGID",
                     "CAP_SETUID", "CAP_SETFCAP", "CAP_NET_BIND_SERVICE", "CAP_NET_RAW", "CAP_SYS_CHROOT",
                     "CAP_AUDIT_WRITE")  # fmt: skip


def capability_args(euid: int, *, read_only: bool = False) -> list[str]:
    """bwrap's arguments that limit a container started by root (`ROOT_CAPABILITIES`); none for
    anyone else, whose commands have no capabilities in the host's namespaces. `read_only`: the
    read-only tool's, without CAP_AUDIT_WRITE (the audit socket is the host's in every network
    namespace: a read-only command wrote records into the kernel's log, a red team, 2026-12-05)."""
    if euid != 0:
        return []
    kept = [capability for capability in ROOT_CAPABILITIES if not (read_only and capability == "CAP_AUDIT_WRITE")]
    return ["--cap-drop", "ALL", *[arg for capability in kept for arg in ("--cap-add", capability)]]


def bwrap_argv(
    bwrap: str,
    mounts: Sequence[str],
    hidden: Sequence[str],
    command: Sequence[str],
    status_fd: int = 2,
    init: Sequence[str] = (),
    lifeline_fd: int | None = None,
) -> list[str]:
    """The whole bwrap command line: the host's files, a pid namespace of its own (`--proc`), the
    init as pid 1, whose process group is the command's, and death with the thread that started it.
    `init`: the Landlock-scoping one (landlock.py), which makes its group itself; else the bash one,
    in a new session made by bwrap (its group, and no TIOCSTI). The init is given the status fd,
    then the lifeline (this process's, unless told), then the command."""
    life = lifeline() if lifeline_fd is None else lifeline_fd
    start_files.note_guards(status_fd, mounts)
    hidden = still_there(hidden)
    first = list(init) or [
        "/bin/bash",
        "--norc",
        "--noprofile",
        "-c",
        task_limit(os.geteuid()) + INIT_SCRIPT,
        "cowork-init",
    ]
    return [
        bwrap,
        "--dev-bind", "/", "/",
        "--unshare-pid", "--proc", "/proc", *KERNEL_SETTINGS,
        "--die-with-parent", *(landlock.INIT_ENV if init else ["--new-session"]), "--as-pid-1",
        *capability_args(os.geteuid()), *mounts, *hidden,
        "--", *first, str(status_fd), str(life), *command,
    ]  # fmt: skip


HIDING_WIDTHS = {"--ro-bind": 3, "--bind": 3, "--ro-bind-try": 3, "--tmpfs": 2, "--remount-ro": 2}


def still_there(hidden: Sequence[str], exists: Callable[[str], bool] = os.path.lexists) -> list[str]:
    """`hidden` without what hides a path that is gone: a spare is started some time after its
    value was read (`for_paths`), and bwrap would make the mount point of a bind or a tmpfs where
    nothing is, a file or folder left on the host (an ended bus's socket)."""
    kept: list[str] = []
    gone: set[str] = set()
    at = 0
    while at < len(hidden):
        flag = hidden[at]
        width = HIDING_WIDTHS.get(flag)
        if width is None:  # not one of ours: the rest as given
            return kept + list(hidden[at:])
        step = list(hidden[at : at + width])
        at += width
        target = step[-1]
        if (flag == "--tmpfs" or step[:2] == ["--ro-bind", "/dev/null"]) and not exists(target):
            gone.add(target)
            continue
        if any(target == top or target.startswith(top.rstrip("/") + "/") for top in gone):
            continue  # under a gone tmpfs (a file bound read-only, a remount): bwrap could not start
        kept += step
    return kept


def classify_failure(returncode: int | None, stderr: str) -> str:
    """Which reason a failed probe shows, from bwrap's own words (None returncode: not found)."""
    if returncode is None:
        return MISSING
    if any(sign in stderr for sign in APPARMOR_SIGNS):
        return APPARMOR
    if any(sign in stderr for sign in USERNS_SIGNS):
        return USERNS
    return FAILED


def linked_message() -> str:
    """What the tray says once when the program's files are hard links (`linked_program_file`)."""
    return _(
        "Cowork Terminal was installed in a way that lets commands change its own files. "
        "Reinstall it: see the README (Hard links)."
    )


def linked_member_notice(path: str) -> tuple[str, str]:
    """What the user reads once when a protected file has another name (`linked_members`): title and
    message."""
    title = _("A protected file has a second name")
    message = _(
        "Commands can change {name} through another name it has (a hard link), which Cowork Terminal "
        "cannot make read-only. Make {name} a symbolic link to that other name, or a copy of its own, "
        "then restart Cowork Terminal. The log names every such file."
    ).format(name=path)
    return title, message


def person_message(state: str, scoping: str = landlock.SCOPED) -> str | None:
    """What the tray says once when commands run unprotected, or contained but able to reach
    sockets outside (no Landlock scopes); None when protected."""
    if state == ON:
        return landlock.person_message(scoping)
    if state == MISSING:
        return _(
            "Commands run without protection: bubblewrap is missing. "
            "Install it (sudo apt install bubblewrap) and restart Cowork Terminal."
        )
    if state == APPARMOR:
        return _(
            "Commands run without protection: Ubuntu's AppArmor blocks bubblewrap. "
            "See the README (AppArmor) for the one-time fix."
        )
    if state == USERNS:
        return _(
            "Commands run without protection: this system does not allow user namespaces. "
            "See the README (bubblewrap) for how to turn them on."
        )
    if state in (UNSUPPORTED, OFF, PRIVILEGED, SLOW, SEATBELT):  # the user's click; nothing runs; macOS's normal
        return None
    if state == SEATBELT_FAILED:
        return _(
            "Commands run without protection: sandbox-exec, which keeps Cowork Terminal's files read-only "
            "on macOS, could not start. See the log for why."
        )
    return _("Commands run without protection: bubblewrap could not start. See the log for why.")


def log_message(state: str, detail: str = "", scoping: str = landlock.SCOPED) -> str:
    """The English line for the log and the journal: why a command ran unprotected (or unscoped)."""
    text = UNPROTECTED_WHY.get(state, state)
    if state == ON and scoping != landlock.SCOPED:
        text = f"{text}; {landlock.log_message(scoping)}"
    return f"{text}: {detail.strip()[:300]}" if detail.strip() and (state != ON or scoping != landlock.SCOPED) else text


@dataclass(frozen=True)
class Container:
    """How to start a command here: `wrap(argv)` gives the argv to run; `state` says whether it is
    protected (ON) and `detail` why not."""

    state: str
    bwrap: str | None = None
    mounts: tuple[str, ...] = ()
    hidden: tuple[str, ...] = ()
    detail: str = ""
    protected: ProtectedSet = field(default_factory=ProtectedSet)
    init: tuple[str, ...] = ()  # the scoping init's argv (landlock.py); empty: the bash init
    scoping: str = landlock.NOT_LINUX  # whether commands are scoped with Landlock, or why not
    # When the protected set was prepared (monotonic ns): one prepared again, after a folder of it was
    # deleted, is another value, so that a spare container started before (whose bind of that folder
    # the kernel dropped with it) is ended, never used.
    prepared: int = 0
    sandbox_exec: str | None = None  # SEATBELT: the sandbox-exec that passed the probe
    home: str = ""  # SEATBELT: the home folder, resolved (seatbelt.ancestors)

    @property
    def on(self) -> bool:
        return self.state == ON and self.bwrap is not None

    def without(self, members: Iterable[str]) -> Container:
        """This container with `members` writable (the user allowed a command that names them);
        the rest of the protected set stays read-only, and the pid namespace stays."""
        lifted = set(members)
        kept = ProtectedSet(
            tuple(f for f in self.protected.folders if f not in lifted),
            tuple(f for f in self.protected.files if f not in lifted),
            absent=tuple(f for f in self.protected.absent if f not in lifted),
        )
        if self.state == SEATBELT:  # its profile is made from `protected` (seatbelt_members), not mounts
            links = tuple(
                (link, text)
                for link, text in self.protected.links
                if link not in lifted and os.path.realpath(link) not in lifted
            )
            return dataclasses.replace(self, protected=dataclasses.replace(kept, links=links))
        return dataclasses.replace(self, mounts=tuple(mount_args(kept, _writable_parent)))

    def showing_outputs(self, outputs: str, own: str | None) -> Container:
        """This container with only the app's own folder of the outputs folder to be seen (outputs_args).
        A value of its own per app: a spare started for one app's commands is never another's (spare.take)."""
        if not self.on:
            return self
        return dataclasses.replace(self, hidden=(*self.hidden, *outputs_args(outputs, own)))

    def wrap(self, command: Sequence[str], status_fd: int, *, read_only_binds: bool = True) -> list[str]:
        """`command` inside the container, or unchanged when there is none. Without the read-only
        binds (a command the user allowed to change the protected set) the pid namespace stays.
        macOS (SEATBELT): under sandbox-exec, `status_fd` unused (no init); unchanged without the binds."""
        if self.state == SEATBELT and self.sandbox_exec is not None:
            if not read_only_binds:
                return list(command)
            folders, files = seatbelt_members(self.protected)
            return seatbelt.argv(folders, files, self.home, command, self.sandbox_exec)
        if not self.on:
            return list(command)
        assert self.bwrap is not None
        mounts = self.mounts if read_only_binds else ()
        return bwrap_argv(self.bwrap, mounts, self.hidden, command, status_fd, self.init)


def prepare(protected: ProtectedSet) -> ProtectedSet:
    """Resolve each member (bwrap binds where a symlink points, and fails on an absolute one) and
    create missing folders first (a missing one cannot be bound; `for_paths` prepares again when one
    is deleted later), and the folder of each lone file (so that it can be watched: an XDG
    `applications` folder may not exist yet); lone files that do not exist, and missing `if_present` folders, are not
    created (an empty `~/.bash_profile` would change the user's shell, a Claude folder says Claude
    Desktop is installed): they are `absent`, guarded. Members with another name (hard links) are
    told to the user (`linked_members`)."""
    folders = []
    for folder in protected.folders:
        real = os.path.realpath(folder)
        try:
            os.makedirs(real, mode=0o700, exist_ok=True)
        except OSError:
            continue
        if os.path.isdir(real):
            folders.append(real)
    # Never one that holds the home folder (`$ZDOTDIR` may name it by another path: Silverblue's /home).
    home = os.path.realpath(os.path.expanduser("~"))
    for present in protected.if_present:
        real = os.path.realpath(present)
        if os.path.isdir(real) and not _holds(real, home):
            folders.append(real)
    for lone in (*protected.files, *protected.if_present):  # its folder is watched (lone_files.py)
        with contextlib.suppress(OSError):
            os.makedirs(os.path.dirname(lone), mode=0o700, exist_ok=True)
    files = [os.path.realpath(f) for f in protected.files if os.path.isfile(f)]
    # Not there, or a symlink to nothing (`~/.bash_profile` -> a dotfiles folder's missing file): a
    # command could make it, through the symlink too, so it is guarded where the symlink points.
    absent = [os.path.realpath(f) for f in (*protected.files, *protected.if_present) if not os.path.exists(f)]
    links = {}
    for member in (*protected.folders, *protected.files, *protected.if_present):
        named = os.path.join(os.path.realpath(os.path.dirname(member)), os.path.basename(member))
        with contextlib.suppress(OSError):
            links[named] = os.readlink(named)
        # A link on the way there, in the home folder (GNU stow folds a missing `~/.config` into one
        # link to `dotfiles/config`): the member's real folder is bound, but a command could put a
        # folder of its own in the link's place (eighth red team, 2026-12-05), so the link is guarded
        # and put back as a member's own is (start_files.py).
        with contextlib.suppress(OSError):
            links.update(
                (link, text) for link, text in _links_on_the_way(member) if _holds(home, os.path.dirname(link))
            )
    followed = [os.path.realpath(f) for f in protected.follow_links if os.path.isdir(f)]
    changed_at = {folder: _changed_at(folder) for folder in followed}  # before their links are read
    followed_links = tuple((folder, _links_in(folder)) for folder in followed)
    linked = link_targets(followed, folders, os.path.expanduser("~"))
    links.update(linked.on_the_way)
    tell_linked_members(linked_members([*files, *linked.files], [*followed, *linked.folders]))
    bound = tuple(dict.fromkeys([*folders, *linked.folders]))
    return ProtectedSet(
        bound,
        tuple(dict.fromkeys([*files, *linked.files])),
        absent=tuple(dict.fromkeys([*absent, *linked.absent])),
        links=tuple(links.items()),
        link_pairs=tuple(linked.pairs),
        program=tuple(os.path.realpath(folder) for folder in protected.program),
        identities=tuple(file_identity(folder) for folder in bound),
        followed_links=followed_links,
        seen_changed_at=changed_at,
    )


def _links_in(folder: str) -> frozenset[tuple[str, str]]:
    """The symlinks among a folder's own entries, with what each says."""
    found = set()
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_symlink():
                with contextlib.suppress(OSError):
                    found.add((entry.name, os.readlink(entry.path)))
    return frozenset(found)


def _changed_at(folder: str) -> int | None:
    """When a folder's own entries last changed (its mtime, ns): a link added to it changes it."""
    try:
        return os.stat(folder).st_mtime_ns
    except OSError:
        return None


@dataclass(frozen=True)
class LinkTargets:
    """What symlinks in protected folders point to (`link_targets`), to protect as members too."""

    folders: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    absent: list[str] = field(default_factory=list)  # missing: the first missing folder on the way, or the file
    on_the_way: dict[str, str] = field(default_factory=dict)  # other symlinks met resolving them: guarded
    pairs: list[tuple[str, str]] = field(default_factory=list)  # (the link, the member made of its target)


def link_targets(
    within: Iterable[str], protected: Sequence[str], home: str, limit: int = LINK_ENTRIES_LOOKED_AT
) -> LinkTargets:
    """What the symlinks in the folders `within` point to outside the folders `protected` (GNU stow's
    `~/.config/fish/config.fish` -> `~/dotfiles/fish/config.fish`): a folder's read-only bind covers
    the link, not what it points to. Only a file or folder in the home folder that this user could
    change (never `/dev/null`, which `systemctl --user mask` links to, nor /tmp), and never a folder
    that holds the home folder or a protected one. Outside the home folder too (dotfiles on another
    disk: `stow -d /data/dotfiles -t ~`, a red team, 2026-12-05), where `_users_place` says so.
    Every other symlink met on the way (`~/dotfiles` itself a link) is guarded as a member's own link
    is. The first `limit` entries of each folder, nearest first."""
    found = LinkTargets()
    home = os.path.realpath(home)
    for top in within:
        for path in _first_entries(top, limit, folders=True):
            if not os.path.islink(path):
                continue
            target = os.path.realpath(path)
            covered = any(_holds(root, target) for root in protected)
            holds = any(_holds(target, held) for held in (*protected, home))
            if covered or holds or not _changeable(target) or not (_holds(home, target) or _users_place(target)):
                continue
            try:
                mode = os.stat(target).st_mode
            except FileNotFoundError:
                target = _first_missing(target)
                found.absent.append(target)
            except OSError:
                continue
            else:
                if stat.S_ISDIR(mode):
                    found.folders.append(target)
                elif stat.S_ISREG(mode):
                    found.files.append(target)
                else:  # a socket, a pipe, a device: nothing a program reads its code from
                    continue
            found.pairs.append((path, target))
            found.on_the_way.update(_links_on_the_way(path)[1:])
    return found


def linked_from(protected: ProtectedSet, members: Iterable[str]) -> list[str]:
    """What the symlinks inside `members` point to: a command allowed to change a stowed file
    (`~/.config/fish/config.fish`) must find the file it points to writable too."""
    members = list(members)
    return [target for link, target in protected.link_pairs if any(_holds(member, link) for member in members)]


def _first_entries(top: str, limit: int, *, folders: bool) -> Iterator[str]:
    """The first `limit` entries under `top`, nearest first and in name order within a folder: its
    files, and its folders too. Breadth first: `~/.claude/hooks` before the thousands of files in
    `~/.claude/projects`."""
    looked = 0
    queue = collections.deque([top])
    while queue:
        try:
            with os.scandir(queue.popleft()) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError:
            continue
        for entry in entries:
            is_folder = entry.is_dir(follow_symlinks=False)
            if is_folder:
                queue.append(entry.path)
            if is_folder and not folders:
                continue
            if looked >= limit:
                return
            looked += 1
            yield entry.path


def _links_on_the_way(path: str, most: int = 40) -> list[tuple[str, str]]:
    """Each symlink met resolving `path` (its own name first), with what it says; at most `most`,
    as the kernel follows at most 40."""
    found: list[tuple[str, str]] = []
    todo = os.path.abspath(path)
    while len(found) < most:
        parts = todo.split("/")
        for end in range(2, len(parts) + 1):
            prefix = "/".join(parts[:end])
            if os.path.islink(prefix):
                text = os.readlink(prefix)
                found.append((prefix, text))
                todo = os.path.normpath(os.path.join(os.path.dirname(prefix), text, *parts[end:]))
                break
        else:
            break
    return found


def _first_missing(path: str) -> str:
    """The first folder on the way to `path` that does not exist (or `path`): what a command would
    make first to put something there, so what is guarded."""
    while not os.path.lexists(os.path.dirname(path)) and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    return path


def _changeable(path: str) -> bool:
    """Whether this user could change `path`, or make it (its nearest existing folder is writable)."""
    if not os.path.lexists(path):
        path = os.path.dirname(_first_missing(path))
    return os.access(path, os.W_OK) or os.access(os.path.dirname(path), os.W_OK)


# Folders of the system, whose files a link in a configuration folder may point to (fontconfig's
# `conf.d` links into /usr/share): never bound, even for root, who could change them; a package
# manager replaces them by rename, which a bind would refuse. The kernel's and devices' too.
SYSTEM_FOLDERS = ("/usr", "/etc", "/var", "/opt", "/boot", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
                  "/srv", "/snap", "/nix", "/gnu", "/proc", "/sys", "/dev", "/run")  # fmt: skip


def _users_place(path: str) -> bool:
    """Whether `path`, outside the home folder, is a place of the user's own (`/data/dotfiles/x`):
    not in a system folder, not a folder shared by everyone (/tmp itself, sticky and writable by all),
    and writable by this user where it is, or where it would be made (`_changeable` alone takes a
    file of another user in /tmp, whose folder this user may write)."""
    if any(_holds(folder, path) for folder in SYSTEM_FOLDERS):
        return False
    place = path if os.path.lexists(path) else os.path.dirname(_first_missing(path))
    try:
        mode = os.stat(place).st_mode
    except OSError:
        return False
    shared = stat.S_ISDIR(mode) and mode & stat.S_ISVTX and mode & stat.S_IWOTH
    return not shared and os.access(place, os.W_OK)


def _holds(folder: str, path: str) -> bool:
    """Whether `path` is `folder` or lies inside it (both absolute, spelt alike)."""
    folder = folder.rstrip("/")
    return path == folder or path.startswith(folder + "/")


def _writable_parent(path: str) -> bool:
    """Whether a command could rename `path` away; a missing folder has nothing to bind (bwrap would
    fail every command on it)."""
    return os.path.isdir(path) and os.access(os.path.dirname(path), os.W_OK)


def linked_program_file(folders: Iterable[str], limit: int = LINKS_LOOKED_AT) -> str | None:
    """A file of the program's own folders that has another name: a hard link, as uv fills a venv from
    its cache and conda an environment from its `pkgs`. The read-only bind covers this name only, so a
    command can change the file through the other. Such installers link every file: the first
    `limit` files of each folder, in order, tell. None when each has one name."""
    for folder in folders:
        for path in _first_entries(folder, limit, folders=False):
            try:
                info = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
                return path
    return None


def linked_members(files: Iterable[str], folders: Iterable[str], limit: int = LINK_ENTRIES_LOOKED_AT) -> list[str]:
    """The lone members `files`, and the first `limit` files of each configuration folder of
    `folders`, that have another name: a hard link (`~/.bashrc` linked as `~/dotfiles/bashrc`). The
    read-only bind covers the name bound, and a command wrote the file through the other one (a red
    team, 2026-12-05). The other name cannot be bound: nothing short of a search of the whole file
    system finds it. A command cannot make a new one (link(2) across the bind: EXDEV). Only files this
    user could change: a home-manager dotfile resolves into a Nix store whose files are root's, and
    linked to each other where the store is optimised."""
    found = []
    for path in (*files, *(path for folder in folders for path in _first_entries(folder, limit, folders=False))):
        try:
            info = os.lstat(path)
        except OSError:
            continue
        changeable = info.st_uid == os.geteuid() or os.access(path, os.W_OK)
        if stat.S_ISREG(info.st_mode) and info.st_nlink > 1 and changeable:
            found.append(path)
    return list(dict.fromkeys(found))


_linked_told: set[str] = set()  # the protected files with another name the user was told of


def tell_linked_members(found: Sequence[str]) -> None:
    """Tell the user once (the tray's notifier, start_files.tell_user; a headless server's log) of
    protected files with another name (`linked_members`), as `linked_message` tells of the program's
    own; a set prepared again tells only of files not told before."""
    new = [path for path in found if path not in _linked_told]
    if not new:
        return
    _linked_told.update(new)
    log.warning("commands can change protected files through another name (a hard link): %s", ", ".join(new))
    if start_files.tell_user is not None:
        try:
            start_files.tell_user(*linked_member_notice(new[0]))
        except Exception:  # the set is prepared all the same
            log.exception("telling the user failed")


def this_protected_set(app_folders: Iterable[str], platform: str = sys.platform) -> ProtectedSet:
    """The protected set of this process's platform (or `platform`'s), environment and program."""
    import site

    import app

    # A frozen app's files are all beside its executable (PyInstaller's _internal holds the package).
    frozen = getattr(sys, "frozen", False)
    package = os.path.dirname(os.path.realpath(sys.executable) if frozen else os.path.abspath(app.__file__))
    user_site = None
    if platform == "linux":
        user_site = os.path.join(site.getuserbase(), "lib")  # ~/.local/lib: every Python's user hooks
    elif site.getusersitepackages():
        user_site = site.getusersitepackages()
    return protected_set(
        platform,
        os.environ,
        os.path.expanduser("~"),
        app_folders,
        program_folders(package, sys.prefix, sys.base_prefix, os.path.expanduser("~")),
        user_site,
        socket.gethostname(),
    )


def probe(bwrap: str, mounts: Sequence[str], hidden: Sequence[str], init: Sequence[str] = ()) -> tuple[str, str]:
    """Start the real container once with `true`: its state and bwrap's own words when it failed.
    A probe that times out is ended with its whole process group: bwrap's child in the new namespace,
    not yet set to die with it, slept on for good when only bwrap was killed (1 probe in 40 here)."""
    try:
        process = subprocess.Popen(
            bwrap_argv(bwrap, mounts, hidden, ["true"], 2, init),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            pass_fds=(lifeline(),),
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    except FileNotFoundError:
        return MISSING, f"{bwrap} not found"
    except OSError as exc:
        return FAILED, str(exc)
    try:
        _out, err = process.communicate(timeout=PROBE_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.communicate(timeout=1.0)  # reaped; its pipes' other ends are gone with the group
        return SLOW, str(exc)
    if process.returncode == 0:
        return ON, ""
    return classify_failure(process.returncode, err), err


def bwrap_program(environ: Mapping[str, str]) -> str:
    """The bwrap to start: the override as given, else the system's. Never a search of PATH when it
    starts: a command may write a folder early on PATH (system_programs.py)."""
    return environ.get(BWRAP_ENV) or system_program(BWRAP, environ) or f"/usr/bin/{BWRAP}"


def linux_container(
    app_folders: Iterable[str],
    environ: Mapping[str, str] | None = None,
    locks: Sequence[str] = (),
    shown: Sequence[str] = (),
) -> Container:
    """Make the protected set ready and probe bwrap with it (about 10 ms, once per process), with
    the Landlock-scoping init where the kernel has scopes; when only that fails, without it.
    `locks`, `shown`: the app's folders of lock files, hidden but for `shown` (hidden_locks)."""
    environ = os.environ if environ is None else environ
    bwrap = bwrap_program(environ)
    protected = prepare(this_protected_set(app_folders))
    mounts = tuple(mount_args(protected, _writable_parent))
    # For the probe, what is hidden but /tmp's buses: those a command can make (sockets by the
    # thousand took the probe past bwrap's limit or its time, and the next server then ran every
    # command uncontained: a red team, 2026-12-06). `for_paths` reads them again for each command.
    hidden = (*hidden_args(environ, os.path.exists, os.getuid()), *hidden_locks(locks, shown, os.path.exists))
    perl = landlock.find_perl(environ)
    scoping = landlock.plan(sys.platform, landlock.kernel_abi(), perl)
    init = limited_init(landlock.init_argv(perl), os.geteuid()) if scoping == landlock.SCOPED and perl else ()
    state, detail = probe(bwrap, mounts, hidden, init)
    if state not in (ON, SLOW) and init:
        state, unscoped_detail = probe(bwrap, mounts, hidden)
        scoping, init, detail = (landlock.FAILED, (), detail) if state == ON else (scoping, init, unscoped_detail)
    on = bwrap if state == ON else None
    return Container(state, on, mounts, hidden, detail, protected, init, scoping, prepared=time.monotonic_ns())


# -- macOS: sandbox-exec -----------------------------------------------------------------------------

PROBE_PROGRAM = "/usr/bin/true"


def seatbelt_members(protected: ProtectedSet) -> tuple[list[str], list[str]]:
    """What the profile denies writes to (seatbelt.profile): folders as subpaths, with the members
    missing when prepared (a subpath denies making them, and anything in them); lone files, and the
    names of members that are symlinks, as literals (no link replaced by a file of the command's)."""
    folders = list(dict.fromkeys((*protected.folders, *protected.if_present, *protected.absent)))
    files = [f for f in dict.fromkeys((*protected.files, *(link for link, _ in protected.links))) if f not in folders]
    return folders, files


def seatbelt_state(
    platform: str, present: bool, failure: str | None, program: str = seatbelt.SANDBOX_EXEC
) -> tuple[str, str]:
    """Whether commands run under sandbox-exec, and why not: only on macOS, where `program` is there
    (`present`) and its probe passed (`failure` None, else what went wrong). Anything else runs them
    uncontained (never refused): a broken profile must not stop every command."""
    if platform != "darwin":
        return UNSUPPORTED, ""  # Linux has bubblewrap (linux_container); Windows no container
    if not present:
        return SEATBELT_FAILED, f"{program} not found"
    if failure is not None:
        return SEATBELT_FAILED, failure
    return SEATBELT, ""


def probe_seatbelt(program: str, folders: Sequence[str], files: Sequence[str], home: str) -> str | None:
    """Run `true` once under the real profile: None when it ran, else why not (a failure to start,
    a non-zero exit with sandbox-exec's own words, no end in time: ended with its group)."""
    argv = seatbelt.argv(folders, files, home, [PROBE_PROGRAM], program)
    try:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            start_new_session=True,
        )
    except OSError as exc:
        return f"{program} could not start: {exc}"
    try:
        _out, err = process.communicate(timeout=PROBE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.communicate(timeout=1.0)
        return f"{program} did not end within {PROBE_TIMEOUT_S:.0f} s"
    if process.returncode == 0:
        return None
    return f"{program} exited with {process.returncode}: {err.strip()[:300]}".rstrip(": ")


def macos_container(
    app_folders: Iterable[str], sandbox_exec: str = seatbelt.SANDBOX_EXEC, platform: str = "darwin"
) -> Container:
    """The protected set prepared as on Linux (real paths: /tmp is /private/tmp there), and
    sandbox-exec (`sandbox_exec`: tests name a stand-in) probed once with its profile."""
    protected = prepare(this_protected_set(app_folders, platform))
    home = os.path.realpath(os.path.expanduser("~"))
    folders, files = seatbelt_members(protected)
    present = os.access(sandbox_exec, os.X_OK)
    failure = probe_seatbelt(sandbox_exec, folders, files, home) if platform == "darwin" and present else None
    state, detail = seatbelt_state(platform, present, failure, sandbox_exec)
    used = sandbox_exec if state == SEATBELT else None
    return Container(
        state, detail=detail, protected=protected, sandbox_exec=used, home=home, prepared=time.monotonic_ns()
    )


@functools.lru_cache(maxsize=4)
def container_for(app_folders: tuple[str, ...], locks: tuple[str, ...] = (), shown: tuple[str, ...] = ()) -> Container:
    """This process's container, probed once: bubblewrap on Linux, sandbox-exec on macOS (files only:
    written and tested here, never run on a Mac yet), none on Windows."""
    if sys.platform == "darwin":
        return macos_container(app_folders)
    if sys.platform != "linux":
        return Container(UNSUPPORTED)
    found = linux_container(app_folders, locks=locks, shown=shown)
    if found.on:  # a lone file replaced by rename, or made by a command: lone_files.py, start_files.py
        protected = found.protected
        start_files.remember_links(protected.links)
        start_files.remember_folders(protected.folders, protected.identities)  # one made anew: start_files
        lone_files.watch(
            (*protected.files, *protected.absent, *(link for link, _ in protected.links), *protected.folders)
        )
    return found


def guards_by_name(found: Container) -> bool:
    """Whether the OS keeps the protected set read-only by its names: bwrap's binds, macOS's profile.
    Both are made from the set as prepared, and neither covers another name a file has (a hard link)."""
    return found.on or found.state == SEATBELT


def to_prepare_again(found: Container) -> bool:
    """Whether the protected set must be prepared anew, a folder of it deleted or made anew since
    (a spare or session of the old one ends)."""
    return guards_by_name(found) and found.protected.folders_changed()


def for_paths(paths: AppPaths, *, in_tray: bool = False) -> Container:
    """The container for an app home: our data and log folders (as named and real) and outputs.
    `in_tray`: the tray's own, whose commands see the tray's lock (hidden_locks)."""
    protected = protected_paths(paths)
    folders = tuple(sorted({*protected, str(paths.outputs)}))
    locks, shown = tuple(hidden_folders(paths, protected)), (str(paths.tray_lock),) if in_tray else ()
    found = container_for(folders, locks, shown)
    if found.state == SLOW:  # not kept: the next command probes again
        container_for.cache_clear()
        return found
    if to_prepare_again(found):
        container_for.cache_clear()
        found = container_for(folders, locks, shown)
    if not found.on:
        return found
    # What is hidden, as it is now: a bus started since is hidden too, and a socket gone since gets no
    # bind, whose mount point bwrap would make on the host (an empty file where the socket was). A
    # value that differs ends a spare or a session's shell started with the old one.
    return dataclasses.replace(found, hidden=hidden_now(os.environ, locks, shown))


def hidden_now(environ: Mapping[str, str], locks: Sequence[str], shown: Sequence[str]) -> tuple[str, ...]:
    """bwrap's arguments that hide the buses, sockets and the app's own folders that exist now
    (`hidden_args`, `hidden_locks`): a few stats and a listing of /tmp."""
    return (
        *hidden_args(environ, os.path.exists, os.getuid(), tmp_buses()),
        *hidden_locks(locks, shown, os.path.exists),
    )


# -- the running container, from outside -----------------------------------------------------------


def init_pid(bwrap_pid: int, proc: str = "/proc") -> int | None:
    """The host pid of the container's init (bwrap's one child): the leader of the command's group."""
    found = children(bwrap_pid, proc)
    return found[0] if found else None


def output_held(bwrap_pid: int, proc: str = "/proc") -> bool:
    """Whether a process in the container other than its init still holds the command's output
    pipes (bwrap's own stdout and stderr): a background job that may still write. When none does,
    the caller need not wait for the end of the output, which bwrap keeps open while a job lives."""
    pipes = {read_link(f"{proc}/{bwrap_pid}/fd/{fd}") for fd in (1, 2)} - {None}
    leader = init_pid(bwrap_pid, proc)
    if leader is None or not pipes:
        return False
    todo, seen, looked_at = children(leader, proc), set(), 0
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        todo += children(pid, proc)
        try:
            fds = os.listdir(f"{proc}/{pid}/fd")
        except OSError:
            continue
        looked_at += len(fds)
        if looked_at > OUTPUT_HELD_FDS_LOOKED_AT:
            return True  # taken as held: the output's end is then waited for as a job's
        if any(read_link(f"{proc}/{pid}/fd/{fd}") in pipes for fd in fds):
            return True
    return False


# At most this many descriptors looked at by `output_held`, on the loop that runs every command and
# applies a pause: a job leaving 100 processes of 19,000 open files each held it 21 s (a red team,
# 2026-12-06). Past it, the output counts as held, the way a job's always did.
OUTPUT_HELD_FDS_LOOKED_AT = 4096


def read_link(path: str) -> str | None:
    """What the link at `path` says (a /proc fd: `pipe:[inode]`), or None."""
    try:
        return os.readlink(path)
    except OSError:
        return None


# -- the model's hint when a write hit the protected set ------------------------------------------

READ_ONLY_SIGNS = ("Read-only file system", "Device or resource busy", "Invalid cross-device link")


def protected_hint(
    stderr: str, exit_code: int | None, protected: Iterable[str], *, asked: bool = True, seatbelt: bool = False
) -> str | None:
    """English for the model when a failing command looks like it wrote into the protected set;
    `asked`: whether the user's approval mode lets such a command wait for their Allow. `seatbelt`:
    macOS's sandbox-exec, whose refusal reads "Operation not permitted", as a file of another user
    does: there only one that names a protected path counts."""
    if exit_code in (0, None):
        return None
    named = [p for p in protected if p in stderr]
    if not ("Operation not permitted" in stderr and named if seatbelt else "Read-only file system" in stderr):
        return None
    where = named[0] if named else "a file Cowork Terminal protects"
    what = (
        f"{where} is protected by Cowork Terminal (read-only for commands: its settings, Claude's configs, "
        "start-up files)."
    )
    if not asked:
        return f"{what} {NEVER_ASKED_PROTECTED}"
    return (
        f"{what} If this change is needed, ask the user, then call execute_command "
        "again with the protected path written out plainly in the command: the user is asked to allow "
        "it, and once allowed it runs without the read-only protection."
    )


# What programs say when no bus answers: sd-bus (systemctl, timedatectl, busctl), dbus-send, GLib (gdbus).
BUS_REFUSED_SIGNS = re.compile(
    r"Failed to connect to (?:system scope )?bus|connect to the system bus|system_bus_socket|NMClient|"
    r"Error connecting: Could not connect|Could not connect: Connection refused"
)


# What programs say when a process or thread could not be made (EAGAIN: the container's task limit,
# MAX_TASKS, reached), and only that: not any non-blocking read's EAGAIN (`BlockingIOError: [Errno 11]`,
# Rust's `(os error 11)`, `read: Resource temporarily unavailable`). Forks: bash's (and its retries),
# zsh's, dash's, Perl's; Python's os.fork or subprocess (the traceback's line above names the fork);
# Go's fork/exec. Threads: glibc's pthread_create, Python's, Go's, Java's, Rust's.
TASKS_REFUSED_SIGNS = re.compile(
    r"fork: (?:retry: )?Resource temporarily unavailable|fork failed: [Rr]esource temporarily unavailable|"
    r"[Cc]an(?:'|no)t fork|fork/exec [^\n]*: resource temporarily unavailable|"
    r"fork[^\n]*\n(?:[^\n]*\n){0,2}BlockingIOError: \[Errno 11\]|"
    r"pthread_create(?: failed)?:? [^\n]*Resource temporarily unavailable|can't start new thread|"
    r"failed to create new OS thread|unable to create (?:new )?native thread|failed to spawn thread"
)
TASKS_LIMIT_NOTE = (
    "A process or thread could not be started: this command tried to run more than {most} processes and "
    "threads at once, the most a command may have in Cowork Terminal's container. Start fewer at once (for "
    "example `make -j8`, not `make -j`); in the shell session (terminal_run), background jobs left by "
    "earlier commands count too. Do not retry it unchanged."
)


def bus_hint(stderr: str, exit_code: int | None) -> str | None:
    """English for the model when a failing command looks like it asked for a message bus, hidden in
    the container (hidden_args): it should not try again the same way."""
    return BUS_HIDDEN_NOTE if exit_code not in (0, None) and BUS_REFUSED_SIGNS.search(stderr) else None


def tasks_hint(stderr: str, euid: int | None = None) -> str | None:
    """English for the model when a command could not make a task, where containers limit them:
    whatever its exit code (a loop of `&` jobs goes on past a fork that failed)."""
    if not task_limit(os.geteuid() if euid is None else euid) or not TASKS_REFUSED_SIGNS.search(stderr):
        return None
    return TASKS_LIMIT_NOTE.format(most=MAX_TASKS)


def hold_members(protected: ProtectedSet) -> tuple[str, ...]:
    """The members a command is held for naming: not the program's own folders, which commands name
    to run them (the venv's python), never to change them."""
    return tuple(member for member in protected.all() if member not in protected.program)


# After a member's name: not a character that would make it a longer name (`~/.claude` in
# `~/.claude.json`); a `/`, a quote, a space, `*` or the end of the command end it.
NAME_ENDS = r"(?![\w.\-])"


def members_to_lift(command: str, members: Iterable[str], home: str) -> list[str]:
    """The members of the protected set a command names (as is, from `~` or `$HOME`) other than as
    a file it sources: it is held for them, the approval window names them, and once the user allowed
    it, it runs with exactly these writable (one reading for all three: a red team, 2026-12-05, had
    an Allow lift a member that only a `. ~/.bashrc` named, which the hold had not counted). A looser
    reading only holds less: what is not held still meets the read-only binds."""
    from app.core.classifier.protected import SOURCED  # here: the tray imports this module at its start

    return named_members(SOURCED.sub("", command), members, home)


def named_members(command: str, members: Iterable[str], home: str) -> list[str]:
    """The members of the protected set a command names, as is or from `~` or `$HOME`: whole names
    only, so that naming `~/.claude.json` does not name `~/.claude` (nor `~/.bashrc.d` `~/.bashrc`)."""
    home = home.rstrip("/")
    named = []
    for member in members:
        spellings = {member}
        if home and (member == home or member.startswith(home + "/")):
            rest = member[len(home) :]
            spellings |= {"~" + rest, "$HOME" + rest, "${HOME}" + rest}
        if any(re.search(re.escape(spelling) + NAME_ENDS, command) for spelling in spellings):
            named.append(member)
    return named


def kill_bwrap(pid: int) -> None:
    """End a container: bwrap (`pid`, the leader of its group) and whatever of its group is still
    being set up. bwrap's death takes the namespace with it, but a child killed before it asked to die
    with its parent lived on: measured, killed within 4 ms of its start, 48 of 100 ran their command
    anyway, or waited forever for the parent to finish the set-up (a red team, 2026-12-05). The group
    takes every one: the init leaves it (a new session) only after it asked. Its init is followed
    to its end first (start_files.closing): a start-up file made as it dies is still moved aside."""
    start_files.closing(pid)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
