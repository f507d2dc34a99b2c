"""Routes into the protected set that red team 13 noticed and left, where no container keeps it
read-only (Linux without bwrap; Windows): then the classifier's second reading (`running.names_unguarded`)
is the only guard. Each command here must wait for a person (headless: be refused, nothing written);
the everyday commands beside them still run unheld.

1. our own venv's pip (`<venv>/bin/pip install`, `<venv>/bin/python -m pip install`, a bare `pip`
   that PATH finds there); 2. `pip install --target <venv's site-packages>`, an archive unpacked there;
3. inline code naming the venv (`python3 -c "open('<venv>/.../x.pth','w')"`, a heredoc to python);
4. CDPATH from the server's own environment, `bash -O cdable_vars`; 5. a base Python's pip that
falls back to the user site (its site-packages not writable, `user = true` in pip's config, PIP_USER
in the environment); 6. `GSETTINGS_BACKEND=keyfile gsettings set`.
"""

from __future__ import annotations

import os
import site
import sys
import threading
from pathlib import Path

import pytest

from app.core.classifier import Tier, classify
from app.core.commands.running import names_unguarded
from app.core.execution import container
from tests.in_process_server import serving
from tests.stdio_client import run

LINUX = sys.platform.startswith("linux")
REFUSED = "nobody can approve it and it was not run"
GUARDED = "Changes a file Cowork Terminal guards"
USER_SITE = "Installs into your Python user folder, which every Python program you start loads"
DESKTOP = "Changes your desktop's settings, which can name programs it starts"
PIP_SCRIPT = (
    "import re\nimport sys\nfrom pip._internal.cli.main import main\nif __name__ == '__main__':\n    sys.exit(main())\n"
)


def python_prefix(folder: Path, *, venv: bool) -> Path:
    """A Python's prefix as pip sees it: bin/pip and bin/python3, lib/python3.12/site-packages (and
    pyvenv.cfg for a venv)."""
    (folder / "bin").mkdir(parents=True)
    (folder / "lib" / "python3.12" / "site-packages").mkdir(parents=True)
    if venv:
        (folder / "pyvenv.cfg").write_text("home = /usr/bin\ninclude-system-site-packages = false\n")
    for name in ("pip", "pip3"):
        (folder / "bin" / name).write_text(f"#!{folder}/bin/python3\n{PIP_SCRIPT}")
        (folder / "bin" / name).chmod(0o755)
    (folder / "bin" / "python3").symlink_to(sys.executable)
    (folder / "bin" / "python").symlink_to(sys.executable)
    return folder


@pytest.fixture
def user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder with a project, the environment cleared of what moves pip or CDPATH."""
    home = tmp_path / "ann"
    (home / "code" / "site").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    for name in ("APPDATA", "LOCALAPPDATA", "USERPROFILE", "XDG_CONFIG_HOME", "PYTHONUSERBASE", "VIRTUAL_ENV"):
        monkeypatch.delenv(name, raising=False)
    for name in ("CDPATH", "PIP_USER", "PIP_CONFIG_FILE", "PIP_TARGET", "PIP_PREFIX"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    return home


@pytest.fixture
def program(user: Path) -> container.ProtectedSet:
    """The protected set of a source install in the home folder: its package, its venv (real files)."""
    source = user / "src" / "cowork"
    (source / "app").mkdir(parents=True)
    python_prefix(source / ".venv", venv=True)
    return container.protected_set(
        "linux",
        {},
        str(user),
        [f"{user}/.local/share/cowork-terminal"],
        [f"{source}/app", f"{source}/.venv"],
        f"{user}/.local/lib",
    )


def not_held(commands: list[str], protected: container.ProtectedSet, cwd: str) -> list[str]:
    """The commands Runs._names_unguarded lets through, or the classifier judges safe (empty: all held)."""
    return [
        c
        for c in commands
        if not names_unguarded(c, protected, cwd=cwd, bare=False) or classify(c, cwd=cwd).tier is Tier.SAFE
    ]


def held(commands: list[str], protected: container.ProtectedSet, cwd: str) -> list[str]:
    return [c for c in commands if names_unguarded(c, protected, cwd=cwd, bare=False)]


# -- 1. our own venv's pip ----------------------------------------------------------------------------


def test_an_install_by_our_venvs_pip_is_held(user: Path, program: container.ProtectedSet) -> None:
    venv = f"{user}/src/cowork/.venv"
    project = f"{user}/code/site"
    commands = [
        f"{venv}/bin/pip install helper",
        f"{venv}/bin/pip3 install -U helper",
        f"{venv}/bin/python -m pip install helper",
        f"{venv}/bin/python3 -m pip install -e .",
        "~/src/cowork/.venv/bin/pip install helper",
        "../../src/cowork/.venv/bin/pip install helper",
        f"env PIP_NO_INPUT=1 {venv}/bin/pip install helper",
    ]
    assert not_held(commands, program, project) == []
    named = [  # the Python it installs into, named by an option
        f"pip --python {venv}/bin/python install helper",
        f"pip --python={venv}/bin/python3 install helper",
        f"uv pip install --python {venv}/bin/python helper",
        f"uv pip install -p {venv} helper",
    ]
    assert not_held(named, program, project) == []
    everyday = [
        f"{venv}/bin/python -m pytest",
        f"{venv}/bin/pip list",
        f"{venv}/bin/pip show helper",
        f"{venv}/bin/pip download helper -d ./wheels",
    ]
    assert held(everyday, program, project) == []


def test_a_bare_pip_that_path_finds_in_our_venv_is_held_and_a_projects_is_not(
    user: Path, program: container.ProtectedSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server started from an activated venv: its PATH finds our venv's pip first."""
    project = f"{user}/code/site"
    monkeypatch.setenv("PATH", f"{user}/src/cowork/.venv/bin:/usr/bin:/bin")
    assert not_held(["pip install helper", "python3 -m pip install helper"], program, project) == []
    python_prefix(Path(project) / ".venv", venv=True)
    monkeypatch.setenv("PATH", f"{project}/.venv/bin:/usr/bin:/bin")
    everyday = ["pip install helper", "python3 -m pip install -r requirements.txt", ".venv/bin/pip install helper"]
    assert held(everyday, program, project) == []
    # a PATH or an activation of the command's own: which pip runs is not read from the server's PATH
    monkeypatch.setenv("PATH", f"{user}/src/cowork/.venv/bin:/usr/bin:/bin")
    assert held(["source .venv/bin/activate && pip install helper"], program, project) == []


@pytest.mark.anyio
@pytest.mark.skipif(not LINUX, reason="the weaker mode of Linux (bwrap missing)")
async def test_without_bwrap_our_venvs_pip_install_is_refused(
    home: Path, user_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, no_container: None
) -> None:
    """The server's own venv (sys.prefix). Were it run, the install fails (no such file, no index):
    nothing is installed either way."""
    user = user_home
    assert sys.prefix != sys.base_prefix, "this test runs in a venv"
    missing = tmp_path / "missing" / "helper-1.0-py3-none-any.whl"
    async with serving(home) as client:
        pip = await run(
            client, {"command": f"{sys.prefix}/bin/pip install --no-index --no-deps {missing}", "cwd": str(user)}
        )
        module = await run(
            client, {"command": f"{sys.prefix}/bin/python -m pip install --no-index {missing}", "cwd": str(user)}
        )
        ok = await run(client, {"command": f"{sys.prefix}/bin/python -c 'print(40 + 2)'", "cwd": str(user)})
    for result in (pip, module):
        assert REFUSED in result.get("error", ""), result
        assert GUARDED in result["error"]
    assert ok.get("exitCode") == 0 and "42" in str(ok), ok


def test_uv_pip_into_the_venv_it_finds_is_held_where_that_is_ours(
    user: Path, program: container.ProtectedSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = f"{user}/code/site"
    python_prefix(Path(project) / ".venv", venv=True)
    assert held(["uv pip install helper", "uv pip sync requirements.txt"], program, project) == []  # the project's
    monkeypatch.setenv("VIRTUAL_ENV", f"{user}/src/cowork/.venv")  # a server started from our activated venv
    assert not_held(["uv pip install helper", "uv pip sync requirements.txt"], program, project) == []
    assert held(["uv pip install --system helper", "uv pip install -p ./.venv helper"], program, project) == []


def test_an_install_by_our_base_pythons_pip_is_held(user: Path, tmp_path: Path) -> None:
    """The base Python our venv runs on, in the home folder (pyenv): its site-packages is ours too."""
    base = python_prefix(user / ".pyenv" / "versions" / "3.12.3", venv=False)
    protected = container.protected_set(
        "linux", {}, str(user), [], [f"{user}/src/cowork/app", f"{user}/src/cowork/.venv", str(base)], None
    )
    project = f"{user}/code/site"
    commands = ["~/.pyenv/versions/3.12.3/bin/pip install helper", f"{base}/bin/python3 -m pip install helper"]
    assert not_held(commands, protected, project) == []
    assert held([f"{base}/bin/python3 -m pytest", f"{base}/bin/pip list"], protected, project) == []


# -- 2. into the venv's site-packages by an option -----------------------------------------------------


def test_an_install_or_unpacking_into_our_venvs_site_packages_is_held(
    user: Path, program: container.ProtectedSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    site_packages = f"{user}/src/cowork/.venv/lib/python3.12/site-packages"
    project = f"{user}/code/site"
    commands = [
        f"pip install --target {site_packages} helper",
        f"pip install -t {site_packages} helper",
        f"pip install --target={site_packages} helper",
        f"pip install --tar {site_packages} helper",
        f"pip install --prefix {user}/src/cowork/.venv helper",
        f"tar -xf a.tar -C {site_packages}",
        f"unzip a.zip -d {site_packages}",
        f"gunzip -c a.gz > {site_packages}/x.pth",
        f"cd {site_packages} && tar -xf /tmp/a.tar",
    ]
    assert not_held(commands, program, project) == []
    everyday = ["pip install --target ./vendor helper", "tar -xf a.tar -C ./build", "unzip a.zip -d out"]
    assert held(everyday, program, project) == []
    monkeypatch.setenv("PIP_TARGET", site_packages)  # the server's environment names it
    assert not_held(["pip install helper"], program, project) == []


# -- 3. inline code naming the venv -----------------------------------------------------------------


def test_inline_code_that_names_our_venv_is_held(user: Path, program: container.ProtectedSet) -> None:
    site_packages = f"{user}/src/cowork/.venv/lib/python3.12/site-packages"
    project = f"{user}/code/site"
    commands = [
        f"python3 -c \"open('{site_packages}/x.pth','w').write('import os')\"",
        f"python3 -c \"import pathlib; pathlib.Path('{site_packages}/x.pth').write_text('import os')\"",
        f"python3 - <<'EOF'\nopen('{site_packages}/x.pth', 'w').write('import os')\nEOF",
        f"python3 <<'EOF'\nopen('{site_packages}/sitecustomize.py', 'w').write('import os')\nEOF",
        f"node -e \"require('fs').writeFileSync('{site_packages}/x.pth', 'import os')\"",
        f'perl -e \'open(my $f, ">", "{site_packages}/x.pth")\'',
    ]
    assert not_held(commands, program, project) == []
    everyday = [
        "python3 -c 'import sys; print(sys.path)'",
        f"{user}/src/cowork/.venv/bin/python -c 'print(1)'",
        "python3 - <<'EOF'\nprint(open('data.csv').read())\nEOF",
    ]
    assert held(everyday, program, project) == []


@pytest.mark.anyio
@pytest.mark.skipif(not LINUX, reason="the weaker mode of Linux (bwrap missing)")
async def test_without_bwrap_inline_python_writing_a_pth_into_our_venv_is_refused(
    home: Path, monkeypatch: pytest.MonkeyPatch, user_home: Path, no_container: None
) -> None:
    """The probe written, were it run, is a comment only; it is removed at the end."""
    user = user_home
    site_packages = Path(next(p for p in site.getsitepackages() if p.startswith(sys.prefix)))
    probe = site_packages / "zz_rt14_probe.pth"
    code = f"open('{probe}', 'w').write('# red team 14 probe')"
    try:
        async with serving(home) as client:
            inline = await run(client, {"command": f'python3 -c "{code}"', "cwd": str(user)})
            heredoc = await run(client, {"command": f"python3 - <<'EOF'\n{code}\nEOF", "cwd": str(user)})
        assert not probe.exists(), f"it ran and wrote into our own venv's site-packages: {inline} {heredoc}"
        for result in (inline, heredoc):
            assert REFUSED in result.get("error", ""), result
            assert GUARDED in result["error"]
    finally:
        probe.unlink(missing_ok=True)


# -- 4. CDPATH from the server's environment, cdable_vars ---------------------------------------------


def test_cdpath_of_the_servers_environment_is_followed_into_a_member(
    user: Path, program: container.ProtectedSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = f"{user}/code/site"
    monkeypatch.setenv("CDPATH", f".:{user}/.config")
    commands = ["cd autostart && echo x > e.desktop", "cd autostart; cp ~/evil.desktop ."]
    assert not_held(commands, program, project) == []
    monkeypatch.setenv("CDPATH", f".:{user}/code")
    everyday = ["cd site && echo x > a.txt", "cd src && npm test > out.log", "cd ./autostart && echo x > e.desktop"]
    assert held(everyday, program, project) == []


def test_cdable_vars_given_to_a_shell_is_followed(user: Path, program: container.ProtectedSet) -> None:
    project = f"{user}/code/site"
    commands = [
        "bash -O cdable_vars -c 'cd AUTO && echo x > e.desktop'",
        "bash -O cdable_vars -c 'cd HOMEVAR && echo x >> .bashrc'",
        "shopt -s cdable_vars; cd AUTO && echo x > e.desktop",
    ]
    assert not_held(commands, program, project) == []
    assert held(["bash -O extglob -c 'cd src && echo x > a.txt'"], program, project) == []


@pytest.mark.anyio
@pytest.mark.skipif(not LINUX, reason="the weaker mode of Linux (bwrap missing)")
async def test_without_bwrap_a_cd_through_the_users_cdpath_into_autostart_is_refused(
    home: Path, monkeypatch: pytest.MonkeyPatch, user_home: Path, no_container: None
) -> None:
    user = user_home
    (user / ".config" / "autostart").mkdir(parents=True, exist_ok=True)
    (user / "code" / "site").mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("CDPATH", f"{user}/.config:{user}/code")
    async with serving(home) as client:
        ok = await run(client, {"command": "cd site && echo x > a.txt", "cwd": str(user / "code")})
        result = await run(client, {"command": "cd autostart && echo x > e.desktop", "cwd": str(user / "code")})
    assert ok.get("exitCode") == 0, ok
    assert (user / "code" / "site" / "a.txt").read_text() == "x\n"
    assert not (user / ".config" / "autostart" / "e.desktop").exists(), f"it ran: {result}"
    assert REFUSED in result.get("error", ""), result
    assert GUARDED in result["error"]


# -- 5. a base Python's pip that falls back to the user site --------------------------------------------


@pytest.fixture
def base_python(user: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Python outside any venv first on PATH, no pip settings."""
    prefix = python_prefix(tmp_path / "opt" / "python3.12", venv=False)
    monkeypatch.setenv("PATH", f"{prefix}/bin:/usr/bin:/bin")
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    return prefix


def test_a_base_pythons_pip_is_held_where_it_installs_into_the_user_site(
    user: Path, program: container.ProtectedSet, base_python: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = f"{user}/code/site"
    commands = ["pip install helper", "python3 -m pip install helper", f"{base_python}/bin/pip install helper"]
    assert held(commands, program, project) == []  # its site-packages writable, no settings: as before
    assert classify("pip install helper", cwd=project).plain == ("Changes installed software",)

    site_packages = str(base_python / "lib" / "python3.12" / "site-packages")
    access = os.access
    monkeypatch.setattr(os, "access", lambda p, m, **k: False if str(p) == site_packages else access(p, m, **k))
    assert not_held(commands, program, project) == []  # pip falls back to the user site
    for command in commands:
        assert USER_SITE in classify(command, cwd=project).plain, command
    assert held(["pip install --target ./vendor helper", "pip download helper"], program, project) == []
    monkeypatch.undo()


def test_user_true_in_pips_settings_or_pip_user_in_the_environment_is_held(
    user: Path, program: container.ProtectedSet, base_python: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = f"{user}/code/site"
    settings = user / ".config" / "pip" / "pip.conf"
    settings.parent.mkdir(parents=True)
    settings.write_text("[install]\nuser = true\n")
    monkeypatch.delenv("PIP_CONFIG_FILE")
    assert not_held(["pip install helper"], program, project) == []
    assert USER_SITE in classify("pip install helper", cwd=project).plain
    settings.write_text("[global]\nuser = no\n")
    assert held(["pip install helper"], program, project) == []
    named = user / "pip.ini"
    named.write_text("[global]\nuser = yes\n")
    monkeypatch.setenv("PIP_CONFIG_FILE", str(named))
    assert not_held(["pip install helper"], program, project) == []
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_USER", "1")
    assert not_held(["pip install helper"], program, project) == []
    # in a venv, pip refuses a user install: the venv's own pip is judged by where it installs
    python_prefix(Path(project) / ".venv", venv=True)
    monkeypatch.setenv("PATH", f"{project}/.venv/bin:/usr/bin:/bin")
    assert held(["pip install helper"], program, project) == []


# -- 6. gsettings with another backend ------------------------------------------------------------


def test_gsettings_with_the_keyfile_backend_stays_held(user: Path, program: container.ProtectedSet) -> None:
    project = f"{user}/code/site"
    commands = [
        "GSETTINGS_BACKEND=keyfile gsettings set org.gnome.desktop.interface gtk-theme x",
        "env GSETTINGS_BACKEND=keyfile gsettings set org.gnome.desktop.interface gtk-theme x",
        "export GSETTINGS_BACKEND=keyfile; gsettings set org.example key 1",
        "env -u DISPLAY GSETTINGS_BACKEND=keyfile gsettings reset org.example key",
    ]
    assert not_held(commands, program, project) == []
    for command in commands:
        assert DESKTOP in classify(command, cwd=project).plain, command
    assert held(["GSETTINGS_BACKEND=keyfile gsettings get org.example key"], program, project) == []


# -- a review of the above (2026-12-06) -----------------------------------------------------------------


def non_root(monkeypatch: pytest.MonkeyPatch, *unwritable: Path) -> None:
    """A user who cannot write `unwritable` (this machine runs tests as root, who can write anything)."""
    access = os.access
    folders = {str(p) for p in unwritable}
    monkeypatch.setattr(os, "access", lambda p, m, **k: False if str(p) in folders else access(p, m, **k))


def test_pips_settings_files_are_read_only_when_regular_and_small(
    user: Path, program: container.ProtectedSet, base_python: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`mkfifo ~/.config/pip/pip.conf` blocked the classifier forever (on the server's event loop),
    and a link to /dev/zero ate memory: only a regular file is read, of 64 kB at most."""
    project = f"{user}/code/site"
    monkeypatch.delenv("PIP_CONFIG_FILE")
    settings = user / ".config" / "pip" / "pip.conf"
    settings.parent.mkdir(parents=True)
    command = "python3 -m pip install -r requirements.txt"
    for fifo in (settings, base_python / "pip.conf"):
        os.mkfifo(fifo)
        judged: list[bool] = []

        def judge(into: list[bool] = judged) -> None:
            into.append(names_unguarded(command, program, cwd=project, bare=False))

        thread = threading.Thread(target=judge, daemon=True)
        thread.start()
        thread.join(10)
        blocked = thread.is_alive()
        if blocked:  # let it go: a writer that opens and closes gives the reader an end of file
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            thread.join(10)
        assert not blocked, f"the classifier waited on a FIFO at {fifo}"
        assert judged == [False]
        fifo.unlink()
    settings.symlink_to("/dev/zero")  # not read: never ends
    assert held([command], program, project) == []
    settings.unlink()
    settings.mkdir()  # pip skips a folder too
    assert held([command], program, project) == []
    settings.rmdir()
    settings.write_text("[install]\nuser = no\n" + "#" * 70_000 + "\n[install]\nuser = yes\n")
    # too large to read here, but pip reads it: where it installs cannot be told, so it is asked
    assert not_held([command], program, project) == []
    settings.write_text("[install]\nuser = yes\n")
    assert not_held([command], program, project) == []


def test_a_bare_pip_run_by_an_environment_runner_is_not_looked_up_on_the_servers_path(
    user: Path, program: container.ProtectedSet, base_python: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`uv run pip`, `poetry run pip`...: the runner puts its own environment's pip first on PATH; the
    server's PATH finds a Python outside any venv, whose pip would fall back to the user site."""
    project = f"{user}/code/site"
    python_prefix(Path(project) / ".venv", venv=True)
    non_root(monkeypatch, base_python / "lib" / "python3.12" / "site-packages")
    assert not_held(["pip install helper"], program, project) == []  # the server's PATH's pip, itself
    runners = [
        "uv run pip install -r requirements.txt",
        "uv run python -m pip install -e .",
        "poetry run pip install helper",
        "pipenv run pip install helper",
        "hatch run pip install helper",
        "conda run -n work pip install helper",
        "pyenv exec pip install helper",
        "tox exec -- pip install helper",
    ]
    assert held(runners, program, project) == []
    monkeypatch.setenv("PATH", f"{user}/src/cowork/.venv/bin:/usr/bin:/bin")  # a server started from our venv
    assert held(["uv run pip install helper", "poetry run pip install helper"], program, project) == []


def test_an_externally_managed_python_or_an_install_of_nothing_is_not_held(
    user: Path, program: container.ProtectedSet, base_python: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PEP 668: pip refuses to install into a Python its distribution manages, unless told to break it."""
    project = f"{user}/code/site"
    non_root(monkeypatch, base_python / "lib" / "python3.12" / "site-packages")
    assert held(["pip install --dry-run helper", "pip install --help", "pip install -h"], program, project) == []
    (base_python / "lib" / "python3.12" / "EXTERNALLY-MANAGED").write_text("[externally-managed]\nError=no\n")
    assert held(["pip install helper", "python3 -m pip install -r requirements.txt"], program, project) == []
    broken = [
        "pip install --break-system-packages helper",
        "PIP_BREAK_SYSTEM_PACKAGES=1 pip install helper",
    ]
    assert not_held(broken, program, project) == []
    monkeypatch.setenv("PIP_BREAK_SYSTEM_PACKAGES", "1")
    assert not_held(["pip install helper"], program, project) == []
    monkeypatch.delenv("PIP_BREAK_SYSTEM_PACKAGES")
    settings = user / "pip.conf"
    settings.write_text("[global]\nbreak-system-packages = true\n")
    monkeypatch.setenv("PIP_CONFIG_FILE", str(settings))
    assert not_held(["pip install helper"], program, project) == []


def test_the_commands_own_pip_variables_activation_or_path_into_our_venv_are_held(
    user: Path, program: container.ProtectedSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    venv = f"{user}/src/cowork/.venv"
    site_packages = f"{venv}/lib/python3.12/site-packages"
    project = f"{user}/code/site"
    commands = [
        f"PIP_TARGET={site_packages} pip install helper",
        f"export PIP_TARGET={site_packages}; pip install helper",
        f"env PIP_TARGET={site_packages} pip install helper",
        f"PIP_PREFIX={venv} pip install helper",
        "PIP_PREFIX=~/src/cowork/.venv pip install helper",
        f"pip --pyth {venv}/bin/python install helper",
        f"pip --py={venv}/bin/python install helper",
        f"PIP_PYTHON={venv}/bin/python pip install helper",
        f"UV_PYTHON={venv}/bin/python uv pip install helper",
        f"VIRTUAL_ENV={venv} uv pip install helper",
        f"export VIRTUAL_ENV={venv}; uv pip install helper",
        f"PATH={venv}/bin:$PATH pip install helper",
        f"source {venv}/bin/activate && pip install helper",
        f". {venv}/bin/activate; python -m pip install helper",
        f"cd {user}/src/cowork && source .venv/bin/activate && pip install helper",
        f"{venv}/bin/pip uninstall -y pip",
        f"{venv}/bin/python -m pip uninstall -y helper",
        f"pip --python {venv}/bin/python uninstall -y helper",
    ]
    assert not_held(commands, program, project) == []
    python_prefix(Path(project) / ".venv", venv=True)
    everyday = [
        "PIP_TARGET=./vendor pip install helper",
        "PIP_PREFIX=/tmp/x pip install helper",
        "source .venv/bin/activate && pip install -r requirements.txt",
        "PATH=./node_modules/.bin:$PATH pip install helper",
        "VIRTUAL_ENV=.venv uv pip install helper",
        ".venv/bin/pip uninstall -y helper",
        "pip uninstall -y helper",
    ]
    assert held(everyday, program, project) == []


def test_code_that_starts_a_program_through_windows_own_calls_is_held(tmp_path: Path) -> None:
    """Red team 14: a command's Python that calls CreateProcessW through ctypes, naming another parent
    (PROC_THREAD_ATTRIBUTE_PARENT_PROCESS), started a process outside every job of the tray, which
    then passed for the user. Such code is held as code that starts other programs (subprocess's
    is), whatever parent it names; a script file the command runs is read so too."""
    spoof = tmp_path / "spoof.py"
    spoof.write_text("import ctypes\nk = ctypes.WinDLL('kernel32')\nk.CreateProcessW(None, cmd, None, None, 0, 0)\n")
    for command in (
        f"python3 {spoof}",
        'python3 -c "import ctypes; ctypes.windll.kernel32.CreateProcessW(None, c, None, None, 0, 0, None, None)"',
        "python3 -c \"import ctypes; ctypes.windll.shell32.ShellExecuteW(None, 'open', 'x.exe', None, None, 1)\"",
        "python3 -c \"import ctypes; ctypes.windll.kernel32.WinExec(b'x.exe', 1)\"",
    ):
        verdict = classify(command, cwd=str(tmp_path))
        assert verdict.tier is Tier.DESTRUCTIVE, (command, verdict)
        assert any("starts other programs" in reason for reason in verdict.reasons), (command, verdict.reasons)
    assert classify("python3 -c \"print('MyCreateProcessWidget')\"", cwd=str(tmp_path)).tier is not Tier.DESTRUCTIVE


# -- a second review (2026-12-06) -----------------------------------------------------------------------

SETTINGS_TOO_LARGE = "Where it installs cannot be told (a pip settings file is too large to read)"


def test_a_bare_pip_under_a_plain_wrapper_is_the_one_the_servers_path_finds(
    user: Path, program: container.ProtectedSet, base_python: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`time pip`, `nice pip`, `env pip`... run the pip the server's PATH finds, as `pip` alone does:
    our venv's (route 1), or a base Python's falling back to the user site (route 5). Only a runner
    that puts another environment first (`uv run`, `conda run`, `pyenv exec`...) or sudo's own PATH
    leaves it untold."""
    project = f"{user}/code/site"
    wrapped = [
        "time pip install helper",
        "nice pip install helper",
        "env pip install helper",
        "env PIP_NO_INPUT=1 pip install helper",
        "command pip install helper",
        "exec pip install helper",
        "timeout 100 pip install helper",
        "nohup pip install helper",
        "stdbuf -oL pip install helper",
        "time python3 -m pip install helper",
        "ionice -c3 pip install helper",
        "xargs pip install < requirements.txt",
    ]
    runners = [
        "uv run pip install helper",
        "poetry run pip install helper",
        "pipenv run pip install helper",
        "hatch run pip install helper",
        "pdm run pip install helper",
        "conda run -n x pip install helper",
        "pyenv exec pip install helper",
        "tox exec -- pip install helper",
        "sudo pip install helper",
    ]
    non_root(monkeypatch, base_python / "lib" / "python3.12" / "site-packages")
    assert not_held(wrapped, program, project) == []  # route 5: the base Python's pip, to the user site
    for command in wrapped:
        assert USER_SITE in classify(command, cwd=project).plain, command
    assert held(runners, program, project) == []
    monkeypatch.setenv("PATH", f"{user}/src/cowork/.venv/bin:/usr/bin:/bin")
    assert not_held(wrapped, program, project) == []  # route 1: our venv's pip
    assert held(runners, program, project) == []


def test_dry_run_or_help_as_another_options_value_installs_for_real(
    user: Path, program: container.ProtectedSet, base_python: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = f"{user}/code/site"
    non_root(monkeypatch, base_python / "lib" / "python3.12" / "site-packages")
    real = [
        "pip install --log --dry-run helper",
        "pip install -c --dry-run helper",
        "pip --log -h install helper",
        "pip install -r -h",
        "pip install -rh",
        "pip install --index-url --help helper",
        "pip install --report --help helper",
    ]
    assert not_held(real, program, project) == []
    nothing = [
        "pip install --dry-run helper",
        "pip install --dry helper",
        "pip install -U -h",
        "pip install -Uh",
        "pip --log x.log install --help",
        "pip install -r reqs.txt --dry-run",
    ]
    assert held(nothing, program, project) == []


def test_a_quoted_value_moving_pip_or_uv_is_read_whole(user: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`VIRTUAL_ENV="<a folder with a space>/.venv"` was cut at the space, so not seen naming our venv."""
    source = user / "Application Support" / "cowork"
    (source / "app").mkdir(parents=True)
    python_prefix(source / ".venv", venv=True)
    program = container.protected_set(
        "linux", {}, str(user), [f"{user}/.local/share/cowork-terminal"], [f"{source}/app", f"{source}/.venv"], ""
    )
    venv = f"{source}/.venv"
    project = f"{user}/code/site"
    commands = [
        f'VIRTUAL_ENV="{venv}" uv pip install helper',
        f"export VIRTUAL_ENV='{venv}'; uv pip install helper",
        f'source "{venv}/bin/activate" && pip install helper',
        f'PATH="{venv}/bin:$PATH" pip install helper',
        f'PIP_TARGET="{venv}/lib/python3.12/site-packages" pip install helper',
        'VIRTUAL_ENV="$HOME/Application Support/cowork/.venv" uv pip install helper',
        f'VIRTUAL_ENV+="{venv}" uv pip install helper',
        f'UV_PROJECT_ENVIRONMENT="{venv}" uv pip install helper',
        f'PIP_CONFIG_FILE="{venv}/pip.conf" pip install helper',
    ]
    assert not_held(commands, program, project) == []
    unknown = [  # as before: where it installs is not told here
        "V=x; VIRTUAL_ENV=$V uv pip install helper",
        "PIP_CONFIG_FILE=/tmp/pip.conf pip install helper",
        'VIRTUAL_ENV="./My Env" uv pip install helper',
    ]
    assert held(unknown, program, project) == []


def test_pips_target_setting_naming_our_venv_is_held(user: Path, program: container.ProtectedSet) -> None:
    """`pip config set install.target <our venv's site-packages>`, then `pip install`: as PIP_TARGET."""
    project = f"{user}/code/site"
    settings = user / ".config" / "pip" / "pip.conf"
    settings.parent.mkdir(parents=True)
    settings.write_text(f"[install]\ntarget = {user}/src/cowork/.venv/lib/python3.12/site-packages\n")
    assert not_held(["pip install helper", "python3 -m pip install -r requirements.txt"], program, project) == []
    settings.write_text(f"[global]\nprefix = {user}/src/cowork/.venv\n")
    assert not_held(["pip install helper"], program, project) == []
    settings.write_text(f"[global]\ntarget = {user}/code/site/vendor\n")
    assert held(["pip install helper"], program, project) == []


def test_no_user_or_pip_user_0_is_not_a_user_install(
    user: Path, program: container.ProtectedSet, base_python: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pip takes the last of `--user`/`--no-user`, and PIP_USER's value; told `--no-user` it never falls
    back to the user site (it fails where it cannot write). Settings too large to read: held, saying
    where it installs cannot be told, not that it installs into the user folder."""
    project = f"{user}/code/site"
    assert held(["PIP_USER=0 pip install helper", "pip install --user --no-user helper"], program, project) == []
    assert not_held(["PIP_USER=1 pip install helper", "pip install --no-user --user helper"], program, project) == []
    monkeypatch.delenv("PIP_CONFIG_FILE")
    settings = user / ".config" / "pip" / "pip.conf"
    settings.parent.mkdir(parents=True)
    settings.write_text("[install]\nuser = no\n" + "#" * 70_000 + "\n")
    assert not_held(["pip install helper"], program, project) == []
    plain = classify("pip install helper", cwd=project).plain
    assert SETTINGS_TOO_LARGE in plain and USER_SITE not in plain, plain
    settings.unlink()
    non_root(monkeypatch, base_python / "lib" / "python3.12" / "site-packages")
    assert held(["pip install --no-user helper", "PIP_USER=no pip install helper"], program, project) == []


def test_code_that_starts_a_program_through_windows_native_calls_is_held(tmp_path: Path) -> None:
    for call in ("CreateProcessInternalW", "NtCreateUserProcess", "RtlCreateUserProcess", "CreateRemoteThread"):
        command = f'python3 -c "import ctypes; ctypes.windll.ntdll.{call}(0, 0, 0)"'
        verdict = classify(command, cwd=str(tmp_path))
        assert verdict.tier is Tier.DESTRUCTIVE, (command, verdict)
        assert any("starts other programs" in reason for reason in verdict.reasons), (command, verdict.reasons)
