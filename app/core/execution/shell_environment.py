"""Builds the environment a command runs in, so that it matches what the user's own terminal sees.

Three layers, lowest first:
1. The base: this process's environment, on macOS merged with the user's login-shell environment
   (a GUI-launched app gets PATH=/usr/bin:/bin:/usr/sbin:/sbin, so brew, node, pyenv... are
   "not found"). Resolved once per process, like VS Code's shell-environment resolution, with a
   time limit and a safe fallback. Variables that belong to our process, not the user, removed.
2. `NON_INTERACTIVE_DEFAULTS`: there is no TTY, so anything that would wait on one must not.
   They beat the base, because the user's values (GIT_EDITOR=vim) are meant for a terminal.
3. The overlay: the model's `env` argument, which beats everything ("unless the caller's env
   says otherwise").
"""

from __future__ import annotations

import contextlib
import logging
import os
import shlex
import signal
import subprocess
import sys
import uuid
from collections.abc import Callable, Mapping, Sequence

from app.core.execution import bundle_runtime

log = logging.getLogger(__name__)

# Opt in (1) or out (0) of the login-shell probe; the default is on for macOS only.
LOGIN_SHELL_ENV = "COWORK_TERMINAL_LOGIN_SHELL"
# Set while the probe runs, so a user's rc file can skip slow work (VS Code sets
# VSCODE_RESOLVING_ENVIRONMENT for the same reason). Never passed on to commands.
RESOLVING_ENV = "COWORK_TERMINAL_RESOLVING_ENVIRONMENT"

# A slow rc file (nvm, conda init) takes a second or two; past this we give up and fall back.
LOGIN_SHELL_TIMEOUT_S = 5.0
# After killing a probe that timed out, how long to wait for its pipe to close.
PROBE_KILL_GRACE_S = 1.0

NON_INTERACTIVE_DEFAULTS: Mapping[str, str] = {
    # git asks for a username/password on the terminal; fail at once instead of hanging.
    "GIT_TERMINAL_PROMPT": "0",
    # Git Credential Manager (the Windows default) would open a sign-in prompt and wait.
    "GCM_INTERACTIVE": "never",
    # Pagers wait for a keypress; output must come back whole.
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    # `git commit` without -m, `git merge`, `rebase --continue` accept the prepared message
    # instead of opening an editor (also covers the rebase sequence editor).
    "GIT_EDITOR": "true",
    # apt/dpkg take defaults instead of opening debconf dialogs.
    "DEBIAN_FRONTEND": "noninteractive",
    # pip never prompts (credentials, uninstall confirmation): it fails instead.
    "PIP_NO_INPUT": "1",
    # Colour codes are noise that costs the model tokens; tools that force colour into pipes
    # honour this convention (no-color.org).
    "NO_COLOR": "1",
}
# Deliberately not set: EDITOR/VISUAL (editors fail fast on a closed stdin, and `true` would make
# `crontab -e` report success having done nothing); CI (changes what tools do, e.g. frozen
# lockfiles); GIT_SSH_COMMAND (would override the user's core.sshCommand).

# Appended to PATH (when they exist and are missing) if the login shell could not be read: the
# usual homes of Homebrew and hand-installed tools that a GUI-launched process lacks.
FALLBACK_PATH_DIRS = (
    "/opt/homebrew/bin",
    "/opt/homebrew/sbin",
    "/usr/local/bin",
    "/usr/local/sbin",
    "/usr/bin",
    "/bin",
    "/usr/sbin",
    "/sbin",
)

# Describe the probe shell, not the user: dropped from the login environment.
PROBE_ONLY_VARIABLES = frozenset({"_", "PWD", "OLDPWD", "SHLVL"})

# Library search paths PyInstaller's bootloader points into the bundle, saving the user's value
# in `<NAME>_ORIG` (pyinstaller.org, "The Bootstrap Process in Detail").
_BUNDLE_LIBRARY_PATHS = ("LD_LIBRARY_PATH", "LIBPATH")

# Prints the environment between markers, NUL-separated. Python (run isolated, -I, so the user's
# PYTHONPATH/PYTHONHOME cannot break it) rather than `env -0`, which older macOS lacks. Written
# without ' $ ` ! or backslash so it survives quoting in sh, bash, zsh, fish and tcsh alike.
_PRINT_ENV_SNIPPET = (
    "import os,sys;z=bytes(1);m=sys.argv[1].encode();"
    "sys.stdout.buffer.write(m+z+z.join(k+bytes([61])+v for k,v in os.environb.items())+z+m);"
    "sys.stdout.flush()"
)


def should_use_login_shell(platform: str, environ: Mapping[str, str]) -> bool:
    """Whether to read the user's login-shell environment.

    macOS: yes, the GUI gives a minimal PATH. Linux: no by default, since desktop sessions already
    source ~/.profile and the probe costs start-up time; `COWORK_TERMINAL_LOGIN_SHELL=1` opts in
    (and `=0` opts macOS out). Windows: never; GUI processes get the full registry environment.
    """
    if platform == "win32":
        return False
    choice = environ.get(LOGIN_SHELL_ENV, "").strip().lower()
    if choice in {"1", "true", "yes", "on"}:
        return True
    if choice in {"0", "false", "no", "off"}:
        return False
    return platform == "darwin"


def login_shell(environ: Mapping[str, str]) -> str | None:
    """The user's login shell: `$SHELL`, else the account database, else None."""
    shell = environ.get("SHELL", "").strip()
    if shell and os.path.isabs(shell):
        return shell
    try:
        import pwd  # POSIX only

        return pwd.getpwuid(os.getuid()).pw_shell or None
    except (ImportError, KeyError):
        return None


def parse_marked_environment(output: bytes, marker: str) -> dict[str, str] | None:
    """Extract `MARK\\0k=v\\0...\\0MARK` from a shell's stdout, or None if it is not there intact.

    rc files may print banners before and after (and logout files after), so the payload is
    taken from the first `MARK\\0` to the last `\\0MARK`. Anything malformed inside means the
    output cannot be trusted, and the caller falls back.
    """
    mark = marker.encode()
    start = output.find(mark + b"\0")
    end = output.rfind(b"\0" + mark)
    if start < 0 or end < start + len(mark):
        return None
    payload = output[start + len(mark) + 1 : end]
    result: dict[str, str] = {}
    for entry in payload.split(b"\0"):
        if not entry:
            continue
        name, sep, value = entry.partition(b"=")
        if not sep or not name:
            return None
        # surrogateescape: non-UTF-8 bytes round-trip into the child's environment unchanged.
        result[name.decode("utf-8", "surrogateescape")] = value.decode("utf-8", "surrogateescape")
    return result or None


def _env_printer_argv() -> list[str] | None:
    """A command that runs our print snippet; None in a frozen bundle that has no `-c`."""
    if getattr(sys, "frozen", False):
        return None
    return [sys.executable, "-I", "-c", _PRINT_ENV_SNIPPET]


def read_login_environment(
    shell: str,
    timeout_s: float = LOGIN_SHELL_TIMEOUT_S,
    base_env: Mapping[str, str] | None = None,
    prefix: Sequence[str] = (),
    pass_fds: Sequence[int] = (),
) -> dict[str, str] | None:
    """Run `shell -l -i -c <print env>` and return what it printed, or None on any failure.

    Login and interactive, because users put PATH edits in either kind of rc file. stdin is
    /dev/null so nothing can wait for input; the shell gets its own session (no controlling
    terminal, and one process group to kill whole on timeout, grandchildren included). `prefix`
    runs it in a container (`read_only.wrapped_here`), passed `pass_fds`.
    """
    printer = _env_printer_argv()
    if printer is None:
        printer = ["/usr/bin/env", "-0"]  # frozen: GNU env and current macOS env have -0
    marker = f"__cowork_env_{uuid.uuid4().hex}__"
    quoted = " ".join(shlex.quote(arg) for arg in printer)
    if printer[0] == "/usr/bin/env":
        command = f"printf %s {marker}; printf '\\000'; {quoted}; printf %s {marker}"
    else:
        command = f"{quoted} {marker}"
    env = dict(os.environ if base_env is None else base_env)
    env[RESOLVING_ENV] = "1"
    try:
        proc = subprocess.Popen(
            [*prefix, shell, "-l", "-i", "-c", command],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
            pass_fds=tuple(pass_fds),
        )
    except OSError:
        return None
    try:
        output, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        return None
    if proc.returncode != 0:
        return None
    parsed = parse_marked_environment(output, marker)
    if parsed is not None:
        parsed.pop(RESOLVING_ENV, None)
    return parsed


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill the probe's whole process group; never wait long on a pipe a stray child holds."""
    with contextlib.suppress(ProcessLookupError, PermissionError):  # already gone
        os.killpg(proc.pid, signal.SIGKILL)
    try:
        proc.communicate(timeout=PROBE_KILL_GRACE_S)
    except subprocess.TimeoutExpired:
        # A descendant escaped the group and holds stdout open: abandon the pipe.
        if proc.stdout is not None:
            proc.stdout.close()
        proc.wait(timeout=PROBE_KILL_GRACE_S)


def strip_own_variables(environ: Mapping[str, str], bundle_dir: str | None = None) -> dict[str, str]:
    """Remove what belongs to our process, not the user, so it cannot leak into commands.

    That is our probe flag, and what a PyInstaller bundle injects: its `_PYI_*`/`_MEIPASS2`
    bookkeeping (which confuses any other frozen app a command starts), library paths into the
    bundle (restored from `<NAME>_ORIG`), and any variable pointing into `bundle_dir` (runtime
    hooks set TCL_LIBRARY, TK_LIBRARY, ... there). COWORK_TERMINAL_HOME and COWORK_TERMINAL_BASH
    stay: they are the user's settings, a nested `cowork-terminal status` should see the same
    journal, and hiding the data folder would not be security anyway.
    """
    env = {
        key: value
        for key, value in environ.items()
        if key != RESOLVING_ENV and not key.startswith("_PYI_") and key != "_MEIPASS2"
    }
    if not bundle_dir:
        return env
    bundle = os.path.normpath(bundle_dir)

    def inside(path: str) -> bool:
        path = os.path.normpath(path) if path else path
        return path == bundle or path.startswith(bundle + os.sep)

    for name in _BUNDLE_LIBRARY_PATHS:
        original = env.pop(f"{name}_ORIG", None)
        if original is not None:
            env[name] = original
        elif name in env:
            kept = [p for p in env[name].split(os.pathsep) if p and not inside(p)]
            if kept:
                env[name] = os.pathsep.join(kept)
            else:
                del env[name]
    cleaned: dict[str, str] = {}
    for key, value in env.items():
        # A list of paths (PATH, XDG_DATA_DIRS, ...) loses only the bundle's entries that a
        # runtime hook put in front; a variable that is nothing but a bundle path goes away.
        parts = value.split(os.pathsep)
        kept = [p for p in parts if not inside(p)]
        if len(kept) == len(parts):
            cleaned[key] = value
        elif any(kept) or key == "PATH":
            cleaned[key] = os.pathsep.join(kept)
    return cleaned


def _with_fallback_path(env: dict[str, str], platform: str, is_dir: Callable[[str], bool]) -> dict[str, str]:
    if platform == "win32":
        return env
    entries = [p for p in env.get("PATH", "").split(":") if p]
    for folder in FALLBACK_PATH_DIRS:
        if folder not in entries and is_dir(folder):
            entries.append(folder)
    env["PATH"] = ":".join(entries)
    return env


# An agent the start-up files start (`eval "$(ssh-agent -s)"`), with what names it: in the probe's
# container it ends with the probe, and its socket with the container's private /tmp.
AGENT_VARIABLES = {"SSH_AUTH_SOCK": ("SSH_AGENT_PID",)}


def without_dead_agents(
    login_env: Mapping[str, str], environ: Mapping[str, str], exists: Callable[[str], bool] = os.path.exists
) -> dict[str, str]:
    """The login environment without an agent whose socket is gone (started in the probe's
    container): the app's own value, if it has one, is kept for commands instead."""
    env = dict(login_env)
    for socket, companions in AGENT_VARIABLES.items():
        value = env.get(socket)
        if value is None or value == environ.get(socket) or exists(value):
            continue
        for name in (socket, *companions):
            if name in environ:
                env[name] = environ[name]
            else:
                env.pop(name, None)
    return env


def base_environment(
    platform: str,
    environ: Mapping[str, str],
    login_env: Mapping[str, str] | None,
    *,
    bundle_dir: str | None = None,
    is_dir: Callable[[str], bool] = os.path.isdir,
) -> dict[str, str]:
    """Merge our environment with the login shell's (which wins), minus our own variables.

    Our environment stays underneath because it holds what the client configured for us (the
    `env` block of claude_desktop_config.json). Without a login environment, PATH gets the
    existing `FALLBACK_PATH_DIRS` appended (POSIX only), so brew tools are found anyway.
    """
    if login_env is None:
        return _with_fallback_path(strip_own_variables(environ, bundle_dir), platform, is_dir)
    merged = dict(environ)
    merged.update({k: v for k, v in login_env.items() if k not in PROBE_ONLY_VARIABLES})
    return strip_own_variables(merged, bundle_dir)


def command_environment(
    base: Mapping[str, str],
    overlay: Mapping[str, str] | None,
    *,
    platform: str = sys.platform,
) -> dict[str, str]:
    """The environment for one command: base, then the non-interactive defaults, then the overlay.

    On Windows names are case-insensitive, so an overlay `PATH` replaces the base's `Path`
    instead of sitting beside it (which one a child would see is then undefined).
    """
    env = dict(base)
    for layer in (NON_INTERACTIVE_DEFAULTS, overlay or {}):
        for key, value in layer.items():
            if platform == "win32":
                for existing in [k for k in env if k.upper() == key.upper()]:
                    del env[existing]
            env[key] = value
    return env


def contained_probe(shell: str, home: str, environ: Mapping[str, str]) -> tuple[list[str], tuple[int, ...]]:
    """What the login-shell probe runs in (`read_only.wrapped_here`), with the folders it needs seen
    where the container hides them (/tmp): the shell's, and the venv its printer runs from."""
    from app.core.execution import read_only

    printer = () if getattr(sys, "frozen", False) else (sys.prefix,)
    return read_only.wrapped_here(sys.platform, home, home, environ, (os.path.dirname(shell), *printer))


def resolve_base_environment() -> dict[str, str]:
    """`base_environment` for this process: probe the login shell when it applies. Call once.

    A frozen app starts from its environment as launched: what its runtime hooks set for the
    bundle's own GTK and Tk (bundle_runtime) is not the user's.
    """
    environ = bundle_runtime.as_launched(os.environ, bundle_runtime.launch_values())
    bundle_dir = getattr(sys, "_MEIPASS", None) if getattr(sys, "frozen", False) else None
    login_env = None
    if should_use_login_shell(sys.platform, environ):
        shell = login_shell(environ)
        if shell:
            # In the read-only container: the start-up files are protected, but not all they source
            # (oh-my-zsh's custom folder, nvm, a pyenv shim), where a command may have planted code.
            prefix, fds = contained_probe(shell, environ.get("HOME") or os.path.expanduser("~"), environ)
            base = strip_own_variables(environ, bundle_dir)
            login_env = read_login_environment(shell, base_env=base, prefix=prefix, pass_fds=fds)
            if login_env is not None and prefix:
                login_env = without_dead_agents(login_env, environ)
            elif prefix:  # never tried again outside: its start-up files could make it fail on purpose
                log.warning("the login shell's environment could not be read in its container")
    return base_environment(sys.platform, environ, login_env, bundle_dir=bundle_dir)
