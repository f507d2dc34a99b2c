"""This copy of the app: where it lives, how it was installed, and how the user removes it.

`install_of` and `removal_hint` are pure functions of (platform, frozen, executable), so every
platform's answer runs in tests on Linux. Only `this_install()` reads the running process.
"""

from __future__ import annotations

import ntpath
import os
import posixpath
import sys
from collections.abc import Callable
from dataclasses import dataclass

from app.core.i18n import _

DEB = "deb"  # /opt/cowork-terminal from the .deb (apt)
TARBALL = "tarball"  # the .tar.gz unpacked anywhere
WINDOWS_INSTALLER = "windows-installer"  # the NSIS installer, with its Uninstall.exe
MACOS_APP = "macos-app"  # Cowork Terminal.app
SOURCE = "source"  # pip / a checkout: `python -m app`

DEB_FOLDER = "/opt/cowork-terminal"
DEB_PACKAGE = "cowork-terminal"
WINDOWS_UNINSTALLER = "Uninstall.exe"


@dataclass(frozen=True)
class Install:
    """One copy of the app: how it came, the program that starts it and the folder that holds it."""

    kind: str
    executable: str
    folder: str


def install_of(platform: str, frozen: bool, executable: str, venv: str = "") -> Install:
    """How the copy whose program is `executable` was installed (a frozen bundle's own layout tells).

    `venv`: for a source install, the virtual environment it runs in ("" when none: the user's
    own Python, which is not ours to suggest deleting).
    """
    if not frozen:
        return Install(SOURCE, executable, venv)
    if platform == "win32":
        return Install(WINDOWS_INSTALLER, executable, ntpath.dirname(executable))
    folder = posixpath.dirname(executable)
    if platform == "darwin":
        # .../Cowork Terminal.app/Contents/MacOS/cowork-terminal: the .app is what goes to the Trash.
        app = posixpath.dirname(posixpath.dirname(folder))
        return Install(MACOS_APP, executable, app if app.endswith(".app") else folder)
    if folder == DEB_FOLDER:
        return Install(DEB, executable, folder)
    return Install(TARBALL, executable, folder)


def this_install() -> Install:
    """`install_of` for the running process."""
    frozen = bool(getattr(sys, "frozen", False))
    # A bundle is known by where its files really are (/usr/bin/cowork-terminal is only a link to
    # /opt); a venv's python must stay unresolved, as a link it is what makes the venv.
    executable = os.path.realpath(sys.executable) if frozen else os.path.abspath(sys.executable)
    venv = sys.prefix if sys.prefix != sys.base_prefix else ""
    return install_of(sys.platform, frozen, executable, venv)


def removal_hint(install: Install) -> str:
    """The last step, which only the user can take: removing the program itself, the way it came."""
    if install.kind == DEB:
        return _("To remove the program itself: {command}").format(command=f"sudo apt remove {DEB_PACKAGE}")
    if install.kind == TARBALL:
        return _("To remove the program itself, delete its folder: {command}").format(
            command=f"rm -r '{install.folder}'"
        )
    if install.kind == WINDOWS_INSTALLER:
        return _(
            "To remove the program itself: Settings > Apps > Installed apps > Cowork Terminal > Uninstall "
            "(or run {program})."
        ).format(program=ntpath.join(install.folder, WINDOWS_UNINSTALLER))
    if install.kind == MACOS_APP:
        return _("To remove the program itself, drag {path} to the Trash.").format(path=install.folder)
    if install.folder:
        return _(
            "To remove the program itself: pip uninstall cowork-terminal, or delete the virtual environment {path}."
        ).format(path=install.folder)
    return _("To remove the program itself: {command}").format(command="pip uninstall cowork-terminal")


def same_program(a: str, b: str, resolve: Callable[[str], str] = os.path.realpath) -> bool:
    """Whether two paths name the same program file (case-insensitively on Windows).

    `.venv/bin/python` and `.venv/bin/python3` (the README's line and what the app writes) are one
    interpreter: same folder, same file once links are followed. Two venvs' pythons also lead to one
    file, but each has its own packages, so the folder must match too (issue 24, item 9).
    """
    first, second = os.path.normcase(os.path.abspath(a)), os.path.normcase(os.path.abspath(b))
    if first == second:
        return True
    if os.path.dirname(first) != os.path.dirname(second):
        return False
    return os.path.normcase(resolve(a)) == os.path.normcase(resolve(b))
