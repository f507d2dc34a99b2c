"""The icon artwork as code: a ">_" prompt on a rounded tile, with a badge per state.

This file is the source of every icon; `make_icons.py` only decides which files to write.
Geometry lives in one coordinate space, fractions of the icon's side (0.0 = left/top edge,
1.0 = right/bottom edge), so one design serves 16 px and 1024 px alike. Each shape is drawn as a
coverage mask on a supersampled canvas and box-filtered down, so edges are antialiased the same
way at every size; at tray sizes (32 px and below) stroke widths and the underscore are snapped
to whole pixels, because a 1.5 px stroke smeared over two pixels reads as grey mush at 16 px.

The same masks are painted twice: in colour (tray on Windows/Linux, app icon) and as a macOS
menu-bar "template" (black + alpha only; macOS tints it for light and dark menu bars). A state
must therefore be recognisable by its badge's shape alone, not only by its colour.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from PIL import Image, ImageChops, ImageDraw

# The icon names are the app's (app.ui.icons.STATES); "app" is the installer/desktop icon.
APP = "app"

RGB = tuple[int, int, int]

TILE_COLOUR: RGB = (30, 41, 59)  # slate: dark enough for a white prompt, distinct from black panels
TILE_EDGE_COLOUR: RGB = (71, 85, 105)  # a lighter rim so the tile's outline survives on dark panels
PROMPT_COLOUR: RGB = (241, 245, 249)  # near-white ">_"
DARK_MARK: RGB = (30, 41, 59)  # marks drawn on light badges (pause bars on amber)
LIGHT_MARK: RGB = (255, 255, 255)  # marks drawn on saturated badges


@dataclass(frozen=True)
class Badge:
    """A state's badge: a disc of `colour` in the top-right corner with `mark` cut into it."""

    colour: RGB
    mark_colour: RGB
    mark: str | None  # a key of PIXEL_MARKS, or None for a plain disc


# --- geometry ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Geometry:
    """Converts the design's fractions to canvas pixels for one output size."""

    size: int  # the output side in pixels
    scale: int  # supersampling factor: canvas side = size * scale

    @property
    def canvas(self) -> int:
        return self.size * self.scale

    @property
    def small(self) -> bool:
        return self.size <= 32

    def px(self, fraction: float) -> float:
        """A coordinate, in canvas pixels; snapped to the output pixel grid at small sizes."""
        value = fraction * self.size
        if self.small:
            value = round(value)
        return value * self.scale

    def stroke(self, fraction: float, minimum_px: float) -> float:
        """A line width in canvas pixels, never thinner than `minimum_px` output pixels."""
        value = max(fraction * self.size, minimum_px)
        if self.small:
            value = round(value)
        return value * self.scale


# Tile, prompt and badge placement (fractions of the icon side).
TILE_INSET = 0.03
APP_TILE_INSET = 0.08  # from 48 px up the app icon gets a margin, as dock and launcher icons have
TILE_RADIUS = 0.22
TILE_EDGE_WIDTH = 0.03
CHEVRON = ((0.20, 0.29), (0.44, 0.50), (0.20, 0.71))  # the ">" (top, tip, bottom)
CHEVRON_WIDTH = 0.115
UNDERSCORE_X = (0.52, 0.80)
UNDERSCORE_BOTTOM = 0.74
BADGE_CENTRE = (0.77, 0.23)
BADGE_RADIUS = 0.21
BADGE_GAP = 0.07  # transparent ring between badge and tile, so the badge reads as separate


def _new_mask(geo: Geometry) -> tuple[Image.Image, ImageDraw.ImageDraw]:
    mask = Image.new("L", (geo.canvas, geo.canvas), 0)
    return mask, ImageDraw.Draw(mask)


def tile_mask(geo: Geometry, inset: float = TILE_INSET) -> Image.Image:
    mask, draw = _new_mask(geo)
    lo, hi = geo.px(inset), geo.px(1 - inset) - 1
    draw.rounded_rectangle((lo, lo, hi, hi), radius=TILE_RADIUS * (hi - lo), fill=255)
    return mask


def tile_edge_mask(geo: Geometry, inset: float = TILE_INSET) -> Image.Image:
    """The tile's rim; drawn only from 48 px up, where a hairline does not eat the prompt."""
    mask, draw = _new_mask(geo)
    lo, hi = geo.px(inset), geo.px(1 - inset) - 1
    width = max(1, round(TILE_EDGE_WIDTH * geo.canvas))
    draw.rounded_rectangle((lo, lo, hi, hi), radius=TILE_RADIUS * (hi - lo), outline=255, width=width)
    return mask


def _segment(draw: ImageDraw.ImageDraw, a: tuple[float, float], b: tuple[float, float], width: float) -> None:
    """A straight stroke with round caps; two that share an end make a round join."""
    (ax, ay), (bx, by) = a, b
    length = math.hypot(bx - ax, by - ay)
    nx, ny = (ay - by) / length * width / 2, (bx - ax) / length * width / 2  # half-width normal
    draw.polygon([(ax + nx, ay + ny), (bx + nx, by + ny), (bx - nx, by - ny), (ax - nx, ay - ny)], fill=255)
    r = width / 2
    for x, y in (a, b):
        draw.ellipse((x - r, y - r, x + r, y + r), fill=255)


def _arc(
    draw: ImageDraw.ImageDraw,
    centre: tuple[float, float],
    radius: float,
    width: float,
    start_deg: float,
    end_deg: float,
) -> None:
    """A stroke along a circle (angles clockwise from 3 o'clock, as on screen), as one polygon."""
    steps = 48
    angles = [math.radians(start_deg + (end_deg - start_deg) * i / steps) for i in range(steps + 1)]
    outer = [
        (centre[0] + (radius + width / 2) * math.cos(t), centre[1] + (radius + width / 2) * math.sin(t)) for t in angles
    ]
    inner = [
        (centre[0] + (radius - width / 2) * math.cos(t), centre[1] + (radius - width / 2) * math.sin(t))
        for t in reversed(angles)
    ]
    draw.polygon(outer + inner, fill=255)


def prompt_mask(geo: Geometry) -> Image.Image:
    """The ">_" glyph: a round-capped chevron and an underscore bar of the same weight."""
    mask, draw = _new_mask(geo)
    width = geo.stroke(CHEVRON_WIDTH, minimum_px=2)
    top, tip, bottom_end = [(geo.px(x), geo.px(y)) for x, y in CHEVRON]
    _segment(draw, top, tip, width)
    _segment(draw, tip, bottom_end, width)
    bottom = geo.px(UNDERSCORE_BOTTOM)
    draw.rectangle((geo.px(UNDERSCORE_X[0]), bottom - width, geo.px(UNDERSCORE_X[1]) - 1, bottom - 1), fill=255)
    return mask


def badge_diameter_px(size: int) -> int:
    """The disc's diameter in output pixels at tray sizes: even (so it sits on the pixel grid),
    half the icon at 16 px and relatively smaller above, where the prompt has room to matter."""
    return max(8, 2 * round(size * 0.22))


def badge_box(geo: Geometry) -> tuple[float, float, float, float]:
    """The disc's bounding box in canvas pixels (inclusive), tucked into the top-right corner."""
    if geo.small:
        d = badge_diameter_px(geo.size)
        return ((geo.size - d) * geo.scale, 0, geo.size * geo.scale - 1, d * geo.scale - 1)
    cx, cy, r = BADGE_CENTRE[0] * geo.canvas, BADGE_CENTRE[1] * geo.canvas, BADGE_RADIUS * geo.canvas
    return (cx - r, cy - r, cx + r - 1, cy + r - 1)


def badge_mask(geo: Geometry) -> Image.Image:
    mask, draw = _new_mask(geo)
    draw.ellipse(badge_box(geo), fill=255)
    return mask


def badge_cut_mask(geo: Geometry) -> Image.Image:
    """The badge disc grown by the gap: everything of the tile under it is erased."""
    mask, draw = _new_mask(geo)
    x0, y0, x1, y1 = badge_box(geo)
    gap = max(1, round(BADGE_GAP * geo.size)) * geo.scale if geo.small else BADGE_GAP * geo.canvas
    draw.ellipse((x0 - gap, y0 - gap, x1 + gap, y1 + gap), fill=255)
    return mask


# --- badge marks ----------------------------------------------------------------------------------
# Up to 32 px a mark is pixel art on the disc's own pixel grid ("X" = mark), drawn by hand for
# each disc diameter: no vector "?" survives being squeezed into a 6-pixel hole. From 48 px up,
# marks are vector shapes in the badge's own 0..1 space (0,0 = top left of the disc's box).

PIXEL_MARKS: dict[str, dict[int, str]] = {
    "pause": {
        8: """
            ........
            ..X..X..
            .XX..XX.
            .XX..XX.
            .XX..XX.
            .XX..XX.
            ..X..X..
            ........""",
        10: """
            ..........
            ..........
            ..XX..XX..
            ..XX..XX..
            ..XX..XX..
            ..XX..XX..
            ..XX..XX..
            ..XX..XX..
            ..........
            ..........""",
        14: """
            ..............
            ..............
            ..............
            ...XXX..XXX...
            ...XXX..XXX...
            ...XXX..XXX...
            ...XXX..XXX...
            ...XXX..XXX...
            ...XXX..XXX...
            ...XXX..XXX...
            ...XXX..XXX...
            ..............
            ..............
            ..............""",
    },
    "exclamation": {
        8: """
            ........
            ...XX...
            ...XX...
            ...XX...
            ...XX...
            ........
            ...XX...
            ........""",
        10: """
            ..........
            ....XX....
            ....XX....
            ....XX....
            ....XX....
            ....XX....
            ..........
            ....XX....
            ....XX....
            ..........""",
        14: """
            ..............
            ..............
            ......XX......
            ......XX......
            ......XX......
            ......XX......
            ......XX......
            ......XX......
            ......XX......
            ..............
            ......XX......
            ......XX......
            ..............
            ..............""",
    },
    "question": {
        8: """
            ........
            ..XXXX..
            .XX..XX.
            ....XX..
            ...XX...
            ........
            ...XX...
            ........""",
        10: """
            ..........
            ...XXXX...
            ..XX..XX..
            ......XX..
            .....XX...
            ....XX....
            ..........
            ....XX....
            ....XX....
            ..........""",
        14: """
            ..............
            ..............
            .....XXXX.....
            ....XXXXXX....
            ...XX....XX...
            .........XX...
            ........XX....
            .......XX.....
            ......XX......
            ..............
            ......XX......
            ......XX......
            ..............
            ..............""",
    },
}


def _box_point(geo: Geometry, u: float, v: float) -> tuple[float, float]:
    x0, y0, x1, y1 = badge_box(geo)
    return (x0 + u * (x1 + 1 - x0), y0 + v * (y1 + 1 - y0))


def _draw_pixel_mark(draw: ImageDraw.ImageDraw, geo: Geometry, art: str) -> None:
    x0, y0, _, _ = badge_box(geo)
    s = geo.scale
    for row, line in enumerate(art.split()):
        for col, cell in enumerate(line):
            if cell == "X":
                draw.rectangle((x0 + col * s, y0 + row * s, x0 + (col + 1) * s - 1, y0 + (row + 1) * s - 1), fill=255)


def _draw_vector_mark(draw: ImageDraw.ImageDraw, geo: Geometry, mark: str) -> None:
    def rect(u0: float, v0: float, u1: float, v1: float) -> None:
        (x0, y0), (x1, y1) = _box_point(geo, u0, v0), _box_point(geo, u1, v1)
        draw.rectangle((x0, y0, x1 - 1, y1 - 1), fill=255)

    def dot(u0: float, v0: float, u1: float, v1: float) -> None:
        (x0, y0), (x1, y1) = _box_point(geo, u0, v0), _box_point(geo, u1, v1)
        draw.ellipse((x0, y0, x1 - 1, y1 - 1), fill=255)

    if mark == "pause":
        rect(0.29, 0.27, 0.44, 0.73)
        rect(0.56, 0.27, 0.71, 0.73)
    elif mark == "exclamation":
        rect(0.42, 0.18, 0.58, 0.60)
        dot(0.42, 0.68, 0.58, 0.84)
    elif mark == "question":
        # A hook (three quarters of a circle from 9 o'clock over the top down to 6 o'clock),
        # a short stem under it and a dot: the shapes of a sans-serif "?".
        d = badge_box(geo)[2] - badge_box(geo)[0]
        centre, stroke = _box_point(geo, 0.5, 0.35), 0.15 * d
        _arc(draw, centre, 0.155 * d, stroke, 180, 450)
        (x, y) = _box_point(geo, 0.5 - 0.155 - 0.075, 0.35)
        draw.ellipse((x, y - stroke / 2, x + stroke, y + stroke / 2), fill=255)  # round end of the hook
        rect(0.425, 0.43, 0.575, 0.63)  # starts inside the hook's end, so the two join
        dot(0.42, 0.70, 0.58, 0.86)
    else:
        raise ValueError(f"no vector drawing for badge mark {mark!r}")


def draw_mark(draw: ImageDraw.ImageDraw, geo: Geometry, mark: str) -> None:
    """Draw `mark` into the badge: pixel art where there is some for this disc, else vectors."""
    diameter = round((badge_box(geo)[2] + 1 - badge_box(geo)[0]) / geo.scale)
    art = PIXEL_MARKS.get(mark, {}).get(diameter) if geo.small else None
    if art is not None:
        _draw_pixel_mark(draw, geo, art)
    else:
        _draw_vector_mark(draw, geo, mark)


BADGES: dict[str, Badge | None] = {
    "idle": None,
    "running": Badge((34, 197, 94), LIGHT_MARK, None),  # green: a "live" dot, nothing cut in
    "paused": Badge((251, 191, 36), DARK_MARK, "pause"),  # amber, dark bars for contrast
    "attention": Badge((59, 130, 246), LIGHT_MARK, "question"),  # blue: your turn, not a fault
    "error": Badge((239, 68, 68), LIGHT_MARK, "exclamation"),  # red
    APP: None,
}


# --- painting -------------------------------------------------------------------------------------


def supersampling(size: int) -> int:
    """Enough subpixels per output pixel for smooth edges, capped so 1024 px stays cheap."""
    return max(2, math.ceil(1024 / size))


def _reduce(mask: Image.Image, geo: Geometry) -> Image.Image:
    return mask.reduce(geo.scale) if geo.scale > 1 else mask


def _solid(size: int, colour: RGB) -> Image.Image:
    return Image.new("RGBA", (size, size), (*colour, 255))


def _over(base: Image.Image, colour: RGB, coverage: Image.Image) -> Image.Image:
    layer = _solid(base.width, colour)
    layer.putalpha(coverage)
    return Image.alpha_composite(base, layer)


@functools.cache
def _masks(state: str, size: int) -> dict[str, Image.Image]:
    """Every shape of `state` at `size`, as output-size coverage masks. Kept: the script draws each
    (state, size) for several files (installer, package, .ico, .icns, templates, the sheet), and the
    callers only read them."""
    geo = Geometry(size=size, scale=supersampling(size))
    inset = APP_TILE_INSET if state == APP and size >= 48 else TILE_INSET
    masks = {"tile": tile_mask(geo, inset), "prompt": prompt_mask(geo)}
    if size >= 48:
        masks["edge"] = tile_edge_mask(geo, inset)
    badge = BADGES[state]
    if badge is not None:
        cut = badge_cut_mask(geo)
        for name in list(masks):
            masks[name] = ImageChops.subtract(masks[name], cut)
        masks["badge"] = badge_mask(geo)
        mark, draw = _new_mask(geo)
        if badge.mark is not None:
            draw_mark(draw, geo, badge.mark)
        masks["mark"] = ImageChops.multiply(mark, masks["badge"])
    if state == APP and inset != TILE_INSET:
        # The prompt was laid out for the tray tile; shrink it into the app icon's smaller tile.
        shrink = (1 - 2 * inset) / (1 - 2 * TILE_INSET)
        side = round(geo.canvas * shrink)
        offset = (geo.canvas - side) // 2
        prompt = masks["prompt"].resize((side, side), Image.Resampling.BOX)
        masks["prompt"] = Image.new("L", (geo.canvas, geo.canvas), 0)
        masks["prompt"].paste(prompt, (offset, offset))
    return {name: _reduce(mask, geo) for name, mask in masks.items()}


def render(state: str, size: int) -> Image.Image:
    """The colour icon for `state` ("app" or one of STATES) at `size` x `size` pixels, RGBA."""
    masks = _masks(state, size)
    image = Image.new("RGBA", (size, size), (0, 0, 0, 0))
    image = _over(image, TILE_COLOUR, masks["tile"])
    if "edge" in masks:
        image = _over(image, TILE_EDGE_COLOUR, masks["edge"])
    image = _over(image, PROMPT_COLOUR, ImageChops.multiply(masks["prompt"], masks["tile"]))
    badge = BADGES[state]
    if badge is not None:
        image = _over(image, badge.colour, masks["badge"])
        image = _over(image, badge.mark_colour, masks["mark"])
    return image


def render_template(state: str, size: int) -> Image.Image:
    """The macOS menu-bar template: black, with the prompt and badge marks cut out as holes."""
    masks = _masks(state, size)
    alpha = ImageChops.subtract(masks["tile"], masks["prompt"])
    if "badge" in masks:
        alpha = ImageChops.lighter(alpha, ImageChops.subtract(masks["badge"], masks["mark"]))
    image = Image.new("RGBA", (size, size), (0, 0, 0, 0))
    image.putalpha(alpha)
    return image
