"""Generates every icon file the platforms need from the artwork in `artwork.py`.

Run from anywhere: `python assets/make_icons.py` (with Pillow installed) rewrites
`assets/generated/` (installer files: all PNG sizes, .ico, .icns, menu-bar templates) and
`app/ui/icons/` (the PNGs the app loads at runtime). Commit both. `--out`/`--package-dir` write
elsewhere (the tests use them to check the committed files are up to date); `--sheet` also
draws a contact sheet of every state and size for a look by eye.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path

ASSETS_DIR = Path(__file__).resolve().parent
REPO_ROOT = ASSETS_DIR.parent
sys.path[:0] = [str(ASSETS_DIR), str(REPO_ROOT)]  # runs from a plain checkout, installed or not

import artwork  # noqa: E402  (needs the path above)
from PIL import Image, ImageDraw  # noqa: E402

from app.ui.icons import APP_ICON, RUNTIME_SIZES, STATES, TEMPLATE_SIZES, icon_file_name  # noqa: E402

DEFAULT_OUT = ASSETS_DIR / "generated"
DEFAULT_PACKAGE_DIR = REPO_ROOT / "app" / "ui" / "icons"
PNG_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)
# Windows picks from these by DPI (16/20/24/32 px small icons, 32/40/48 px large, 256 px tiles).
ICO_SIZES = (16, 20, 24, 32, 40, 48, 64, 128, 256)
# An .icns holds 32..1024 px (Pillow writes 16@2x..512@2x from these).
ICNS_SIZES = (32, 64, 128, 256, 512, 1024)
APP_FILE_STEM = "cowork-terminal"
GENERATED_SUFFIXES = (".png", ".ico", ".icns")


def all_icons() -> tuple[str, ...]:
    return (*STATES, APP_ICON)


def check_artwork() -> None:
    """Every state the app names must have a design, and nothing else, so neither side drifts."""
    designed, named = set(artwork.BADGES), set(all_icons())
    if designed != named:
        raise SystemExit(f"artwork.BADGES {sorted(designed)} != app.ui.icons states {sorted(named)}")


def clear(folder: Path, recursive: bool) -> None:
    """Remove earlier outputs, so a renamed state leaves no stale file behind."""
    pattern = "**/*" if recursive else "*"
    for path in folder.glob(pattern):
        if path.is_file() and path.suffix in GENERATED_SUFFIXES:
            path.unlink()


def save_png(image: Image.Image, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path, format="PNG", optimize=True)


def write_installer_files(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    clear(out, recursive=True)
    written = write_pngs(out / "png", out / "template", PNG_SIZES)
    ico = [artwork.render(APP_ICON, size) for size in ICO_SIZES]
    ico_path = out / f"{APP_FILE_STEM}.ico"
    ico[-1].save(ico_path, format="ICO", sizes=[(s, s) for s in ICO_SIZES], append_images=ico[:-1])
    icns = [artwork.render(APP_ICON, size) for size in ICNS_SIZES]
    icns_path = out / f"{APP_FILE_STEM}.icns"
    icns[-1].save(icns_path, format="ICNS", append_images=icns[:-1])
    return [*written, ico_path, icns_path]


def write_package_files(package_dir: Path) -> list[Path]:
    package_dir.mkdir(parents=True, exist_ok=True)
    clear(package_dir, recursive=False)
    return write_pngs(package_dir, package_dir, RUNTIME_SIZES)


def write_pngs(colour_dir: Path, template_dir: Path, sizes: tuple[int, ...]) -> list[Path]:
    """Every icon in colour at `sizes`, and every state's monochrome template (macOS)."""
    written = []
    for state in all_icons():
        for size in sizes:
            path = colour_dir / icon_file_name(state, size)
            save_png(artwork.render(state, size), path)
            written.append(path)
    for state in STATES:
        for size in TEMPLATE_SIZES:
            path = template_dir / icon_file_name(state, size, template=True)
            save_png(artwork.render_template(state, size), path)
            written.append(path)
    return written


def contact_sheet(sizes: Iterable[int] = (16, 22, 24, 32, 48, 64, 128), zoom: int = 2) -> Image.Image:
    """Every icon at every size, on a light and a dark panel, magnified `zoom` times (no smoothing)."""
    sizes = tuple(sizes)
    rows = [(panel, state) for panel in ((250, 250, 250), (40, 40, 46)) for state in all_icons()]
    row_h = max(sizes) * zoom + 12
    width = sum(s * zoom + 12 for s in sizes) * 2 + 24
    sheet = Image.new("RGBA", (width, row_h * len(rows)), (255, 255, 255, 255))
    draw = ImageDraw.Draw(sheet)
    for index, (panel, state) in enumerate(rows):
        y = index * row_h
        draw.rectangle((0, y, width, y + row_h - 1), fill=panel)
        x = 6
        for template in (False, True):
            for size in sizes:
                if template and state == APP_ICON:
                    continue
                image = artwork.render_template(state, size) if template else artwork.render(state, size)
                if template and panel[0] < 128:  # macOS tints templates white on a dark menu bar
                    white = Image.new("RGBA", image.size, (255, 255, 255, 0))
                    white.putalpha(image.getchannel("A"))
                    image = white
                image = image.resize((size * zoom, size * zoom), Image.Resampling.NEAREST)
                sheet.alpha_composite(image, (x, y + 6))
                x += size * zoom + 12
            x = width // 2 + 6
    return sheet


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="installer files (default: %(default)s)")
    parser.add_argument(
        "--package-dir",
        type=Path,
        default=DEFAULT_PACKAGE_DIR,
        help="runtime PNGs shipped in the package (default: %(default)s)",
    )
    parser.add_argument("--sheet", type=Path, help="also write a contact sheet PNG here")
    args = parser.parse_args(argv)
    check_artwork()
    installer = write_installer_files(args.out)
    package = write_package_files(args.package_dir)
    print(f"wrote {len(installer)} files to {args.out} and {len(package)} to {args.package_dir}", file=sys.stderr)
    if args.sheet:
        save_png(contact_sheet(), args.sheet)
        print(f"contact sheet: {args.sheet}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
