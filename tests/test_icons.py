"""The generated icons: up to date with the artwork, complete, in the right formats, and loadable."""

from __future__ import annotations

import subprocess
import sys
from functools import reduce
from itertools import combinations
from pathlib import Path

import pytest
from PIL import Image, ImageChops

from app.ui import icons

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "assets" / "make_icons.py"
COMMITTED_OUT = REPO / "assets" / "generated"
PNG_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)
REGENERATE = "the committed icons differ from the artwork: run `python assets/make_icons.py` and commit"


@pytest.fixture(scope="session")
def regenerated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The script run afresh into a temporary folder, as a contributor would run it. Once per worker
    (session scope): a module-scoped fixture ran twice when the worker ran other files' tests between
    the two cases, 4-8 s each."""
    base = tmp_path_factory.mktemp("icons")
    out, package = base / "generated", base / "package"
    subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(out), "--package-dir", str(package), "--sheet", str(base / "s.png")],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return out, package


def files_under(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and p.name != "README.md"}


def frames(path: Path) -> dict[tuple[int, ...], bytes]:
    """Every image in a file (one for PNG, one per size for .ico/.icns) as raw RGBA pixels."""
    with Image.open(path) as image:
        if path.suffix == ".icns":
            return {size: image.icns.getimage(size).convert("RGBA").tobytes() for size in image.info["sizes"]}
        if path.suffix == ".ico":
            return {size: image.ico.getimage(size).convert("RGBA").tobytes() for size in image.info["sizes"]}
        return {image.size: image.convert("RGBA").tobytes()}


# One worker runs both: the fixture (the script, about 3 s of a core) runs once per worker.
@pytest.mark.xdist_group("icons")
@pytest.mark.parametrize("which", ["installer", "package"])
def test_the_script_regenerates_the_committed_files_pixel_for_pixel(regenerated: tuple[Path, Path], which: str) -> None:
    fresh, committed = (regenerated[0], COMMITTED_OUT) if which == "installer" else (regenerated[1], icons.ICONS_DIR)
    assert files_under(fresh) == files_under(committed), REGENERATE
    for name in sorted(files_under(fresh)):
        assert frames(fresh / name) == frames(committed / name), f"{name}: {REGENERATE}"


def test_every_state_ships_in_the_package_at_every_runtime_size() -> None:
    for state in (*icons.STATES, icons.APP_ICON):
        for size in icons.RUNTIME_SIZES:
            path = icons.icon_path(state, size)
            with Image.open(path) as image:
                assert image.size == (size, size) and image.mode == "RGBA", path


def test_every_state_exists_for_installers_at_every_png_size() -> None:
    for state in (*icons.STATES, icons.APP_ICON):
        for size in PNG_SIZES:
            with Image.open(COMMITTED_OUT / "png" / f"{state}-{size}.png") as image:
                assert image.size == (size, size)


def test_template_images_are_black_with_alpha_only() -> None:
    paths = [icons.icon_path(s, size, template=True) for s in icons.STATES for size in icons.TEMPLATE_SIZES]
    assert {p.name for p in paths} >= {"pausedTemplate.png", "pausedTemplate@2x.png"}
    for path in paths:
        with Image.open(path) as image:
            rgba = image.convert("RGBA")
        red, green, blue, alpha = rgba.split()
        assert max(red.getextrema()[1], green.getextrema()[1], blue.getextrema()[1]) == 0, path
        assert alpha.getextrema() == (0, 255), path  # a real shape, not an empty or a solid square


def test_templates_at_1x_and_2x_are_18_and_36_pixels() -> None:
    for state in icons.STATES:
        for size in icons.TEMPLATE_SIZES:
            with Image.open(icons.icon_path(state, size, template=True)) as image:
                assert image.size == (size, size)


def test_the_ico_holds_every_size_windows_picks_from() -> None:
    with Image.open(COMMITTED_OUT / "cowork-terminal.ico") as ico:
        sizes = {w for w, _ in ico.info["sizes"]}
    assert {16, 20, 24, 32, 40, 48, 256} <= sizes


def test_the_icns_holds_the_sizes_macos_uses_up_to_1024_pixels() -> None:
    with Image.open(COMMITTED_OUT / "cowork-terminal.icns") as icns:
        pixel_sizes = {w * scale for w, _, scale in icns.info["sizes"]}
    assert {32, 64, 128, 256, 512, 1024} <= pixel_sizes


@pytest.mark.parametrize(("size", "template"), [(16, False), (22, False), (18, True)])
def test_every_state_looks_different_from_every_other_at_tray_sizes(size: int, template: bool) -> None:
    images = {state: icons.load_icon(state, size, template=template) for state in icons.STATES}
    for a, b in combinations(icons.STATES, 2):
        bands = ImageChops.difference(images[a], images[b]).split()  # alpha too: templates differ only there
        changed = reduce(ImageChops.lighter, bands).point(lambda v: 255 if v > 64 else 0)
        assert changed.histogram()[255] >= 4, f"{a} and {b} are nearly identical at {size} px"


def test_the_loader_returns_rgba_images_of_the_size_asked_for() -> None:
    for state in icons.STATES:
        image = icons.load_icon(state, 32)
        assert (image.mode, image.size) == ("RGBA", (32, 32))
    assert icons.load_icon("running").size == (64, 64)


def test_a_size_that_is_not_shipped_is_shrunk_from_the_next_bigger_one() -> None:
    assert icons.icon_path("idle", 20).name == "idle-22.png"
    assert icons.icon_path("idle", 4096).name == "idle-128.png"
    assert icons.load_icon("idle", 20).size == (20, 20)


def test_an_unknown_state_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="unknown icon state"):
        icons.icon_path("busy")


def test_importing_the_icon_module_does_not_load_pil() -> None:
    code = "import sys, app.ui.icons; print('PIL' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert result.stdout.strip() == "False"


def test_the_menu_has_one_icon_per_state_and_each_is_a_different_shipped_icon() -> None:
    from app.ui.tray import menu

    states = (menu.IDLE, menu.RUNNING, menu.PAUSED, menu.WAITING, menu.PROBLEM)
    assert sorted(states) == sorted(icons.STATES)
    at_16 = {state: icons.load_icon(state, 16).tobytes() for state in states}
    assert len(set(at_16.values())) == len(states), "each state looks different at 16 px"
