"""Finds and loads the tray's state icons, which ship as PNGs inside the package.

The PNGs are generated from the artwork in `assets/` by `assets/make_icons.py`; this module only
names them. Each size is drawn for its size (hinted to whole pixels up to 32 px), so ask for the
size the platform will show rather than letting the tray library shrink a big one.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # PIL is imported only by load_icon: core and `serve` never pay for it
    from PIL import Image

ICONS_DIR = Path(__file__).with_name("icons")

# What the tray shows: nothing happening, an agent's command running, host access paused by the
# user, a command waiting for the user's approval, something broken. "app" is the app's own icon.
STATES = ("idle", "running", "paused", "attention", "error")
APP_ICON = "app"
# Sizes shipped in the package (Linux panels use 16-24, Windows 16-32 by DPI, notifications 48+).
# Bigger sizes and the .ico/.icns live in assets/generated/ for installers only.
RUNTIME_SIZES = (16, 22, 24, 32, 48, 64, 128)
# macOS menu-bar template images (black + alpha): 18 pt tall, at 1x and 2x (Retina).
TEMPLATE_SIZES = (18, 36)


def icon_file_name(state: str, size: int, *, template: bool = False) -> str:
    """The file name of one generated icon; shared with `assets/make_icons.py`."""
    if template:
        return f"{state}Template@2x.png" if size == TEMPLATE_SIZES[1] else f"{state}Template.png"
    return f"{state}-{size}.png"


def icon_path(state: str, size: int = 64, *, template: bool = False) -> Path:
    """The shipped icon for `state` at `size` px, or the smallest bigger one if `size` is not shipped.

    Falls back upward (then to the biggest) so a caller asking for a DPI-scaled size such as 20 px
    gets a sharp image to shrink, never an enlarged one.
    """
    if state not in STATES and state != APP_ICON:
        raise ValueError(f"unknown icon state {state!r}; expected one of {', '.join(STATES)} or {APP_ICON!r}")
    if template and state == APP_ICON:
        raise ValueError("the app icon has no menu-bar template")
    sizes = TEMPLATE_SIZES if template else RUNTIME_SIZES
    chosen = next((s for s in sizes if s >= size), sizes[-1])
    return ICONS_DIR / icon_file_name(state, chosen, template=template)


def load_icon(state: str, size: int = 64, *, template: bool = False) -> Image.Image:
    """The icon for `state` as an RGBA image of exactly `size` x `size` pixels."""
    from PIL import Image

    with Image.open(icon_path(state, size, template=template)) as image:
        icon = image.convert("RGBA")
    if icon.size != (size, size):
        icon = icon.resize((size, size), Image.Resampling.LANCZOS)
    return icon
