"""Google Calendar's color palette (what `colors_get` returns and list entries default to).

Example:
    >>> CALENDAR_COLORS["1"]["background"]
    '#ac725e'
    >>> sorted(EVENT_COLORS, key=int)[-1]
    '11'
"""

from __future__ import annotations

__all__ = ["CALENDAR_COLORS", "EVENT_COLORS", "calendar_color_for", "nearest_calendar_color"]

_CAL_BG = [
    "#ac725e", "#d06b64", "#f83a22", "#fa573c", "#ff7537", "#ffad46", "#42d692", "#16a765",
    "#7bd148", "#b3dc6c", "#fbe983", "#fad165", "#92e1c0", "#9fe1e7", "#9fc6e7", "#4986e7",
    "#9a9cff", "#b99aff", "#c2c2c2", "#cabdbf", "#cca6ac", "#f691b2", "#cd74e6", "#a47ae2",
]  # fmt: skip
_EVENT_BG = [
    "#a4bdfc", "#7ae7bf", "#dbadff", "#ff887c", "#fbd75b", "#ffb878", "#46d6db", "#e1e1e1",
    "#5484ed", "#51b749", "#dc2127",
]  # fmt: skip

CALENDAR_COLORS: dict[str, dict[str, str]] = {
    str(i + 1): {"background": bg, "foreground": "#1d1d1d"} for i, bg in enumerate(_CAL_BG)
}
EVENT_COLORS: dict[str, dict[str, str]] = {
    str(i + 1): {"background": bg, "foreground": "#1d1d1d"} for i, bg in enumerate(_EVENT_BG)
}


def calendar_color_for(calendar_id: str) -> str:
    """A stable default color id for a calendar (so seeded lists look varied but fixed)."""
    return str(sum(calendar_id.encode()) % len(_CAL_BG) + 1)


def _rgb(hex_color: str) -> tuple[int, int, int]:
    value = hex_color.lstrip("#")
    return int(value[0:2], 16), int(value[2:4], 16), int(value[4:6], 16)


def nearest_calendar_color(hex_color: str) -> str:
    """The calendar color id whose background is closest to `hex_color` (`#rrggbb`): what
    `colorRgbFormat=true` sets `colorId` to.

    >>> nearest_calendar_color("#f83a23"), nearest_calendar_color("#10a060")
    ('3', '8')
    """
    want = _rgb(hex_color)
    return min(
        CALENDAR_COLORS,
        key=lambda k: (
            sum(
                (a - b) ** 2
                for a, b in zip(want, _rgb(CALENDAR_COLORS[k]["background"]), strict=True)
            ),
            int(k),
        ),
    )
