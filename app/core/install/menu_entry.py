"""The app's entry in the user's own application menu, for copies that no package installed (the .tar.gz).

`install-desktop-entry` writes `$XDG_DATA_HOME/applications/cowork-terminal.desktop` and the icon in
every size under `$XDG_DATA_HOME/icons/hicolor/`, exactly the names the .deb uses system-wide, so
the autostart entry's `Icon=cowork-terminal` finds it too; `uninstall` removes the same files.
Locations are pure functions of (environment, home folder), so tests point them at a fake home.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePath, PurePosixPath

from app.core.atomic_file import write_atomic
from app.core.errors import CoworkError
from app.core.i18n import N_, _
from app.core.install.autostart import (
    COMMENT,
    DESKTOP_FILE_NAME,
    DESKTOP_ICON,
    DISPLAY_NAME,
    exec_value,
    string_value,
    translated_lines,
)

# Where the .tar.gz keeps the icons beside the executable: the hicolor layout the .deb installs.
BUNDLED_ICONS = PurePosixPath("share") / "icons" / "hicolor"
MENU_ENTRY_MODE = 0o644  # menu entries and icons are read by the desktop shell: not secret
_SIZE_FOLDER = re.compile(r"^(\d+)x\1$")


def xdg_data_home(environ: Mapping[str, str], home: PurePath) -> PurePosixPath:
    """`$XDG_DATA_HOME`, or `~/.local/share` when unset, empty or relative (as the XDG spec says)."""
    value = environ.get("XDG_DATA_HOME", "")
    if value and PurePosixPath(value).is_absolute():
        return PurePosixPath(value)
    return PurePosixPath(home) / ".local" / "share"


def menu_entry_path(environ: Mapping[str, str], home: PurePath) -> PurePosixPath:
    return xdg_data_home(environ, home) / "applications" / DESKTOP_FILE_NAME


def icon_path(environ: Mapping[str, str], home: PurePath, size: int) -> PurePosixPath:
    return xdg_data_home(environ, home) / "icons" / "hicolor" / f"{size}x{size}" / "apps" / f"{DESKTOP_ICON}.png"


GENERIC_NAME = N_("AI terminal access")


def menu_desktop_entry(command: Sequence[str]) -> str:
    """The menu entry: starts the tray; `TryExec` hides it once the program's folder is deleted."""
    return (
        "[Desktop Entry]\n"
        "Type=Application\n"
        f"Name={DISPLAY_NAME}\n"
        # Each language's words, which menus and launchers show (the English lines are the default).
        + translated_lines("GenericName", GENERIC_NAME)
        + translated_lines("Comment", COMMENT)
        + f"TryExec={string_value(command[0])}\n"
        f"Exec={exec_value(command)}\n"
        f"Icon={DESKTOP_ICON}\n"
        "Terminal=false\n"
        "Categories=Utility;\n"
        "Keywords=Claude;MCP;AI;agent;terminal;shell;\n"
        "StartupNotify=false\n"
        "StartupWMClass=cowork-terminal\n"  # our windows' X class (ui/windows/look.py): docks group them here
    )


def bundled_icons(folder: Path) -> dict[int, Path]:
    """{size: png} found in `folder` laid out as hicolor (`<N>x<N>/apps/cowork-terminal.png`)."""
    found = {}
    if folder.is_dir():
        for size_dir in folder.iterdir():
            match = _SIZE_FOLDER.match(size_dir.name)
            png = size_dir / "apps" / f"{DESKTOP_ICON}.png"
            if match and png.is_file():
                found[int(match[1])] = png
    return found


def install_menu_entry(
    command: Sequence[str], icons: Mapping[int, Path], environ: Mapping[str, str], home: Path
) -> list[Path]:
    """Write the menu entry and copy the icons; returns the files written (all of them, each time)."""
    written = []
    try:
        for size, source in sorted(icons.items()):
            target = Path(icon_path(environ, home, size))
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
            os.chmod(target, MENU_ENTRY_MODE)
            written.append(target)
        entry = Path(menu_entry_path(environ, home))
        entry.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(entry, menu_desktop_entry(command).encode("utf-8"), MENU_ENTRY_MODE)
        written.append(entry)
    except OSError as exc:
        raise CoworkError(_("could not write the menu entry: {error}").format(error=exc)) from exc
    return written


def menu_entry_files(environ: Mapping[str, str], home: Path) -> list[Path]:
    """The menu entry and icons `install_menu_entry` wrote that exist now (what `uninstall` removes)."""
    entry = Path(menu_entry_path(environ, home))
    icons_root = Path(xdg_data_home(environ, home)) / "icons" / "hicolor"
    icons = sorted(icons_root.glob(f"*/apps/{DESKTOP_ICON}.png")) if icons_root.is_dir() else []
    return [path for path in [entry, *icons] if path.is_file()]
