"""Horizontal bar charts as self-contained inline SVG (no plotting library).

One function, `bar_chart`: categories down the side, one bar per series in each category (a
single series is a plain bar chart; several are grouped bars with a legend, e.g. a measured
failure distribution beside a published one). Labels are escaped; the SVG has a `<title>` for
screen readers and sizes itself to its content.

Example:
    >>> svg = bar_chart(["T1", "T2"], {"success": [0.9, 0.4]}, title="Success by tier")
    >>> svg.startswith("<svg") and "90%" in svg and "Success by tier" in svg
    True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

__all__ = ["PALETTE", "bar_chart"]

PALETTE = ("#4C78A8", "#F58518", "#54A24B", "#E45756", "#72B7B2", "#B279A2", "#9D755D")
"""Series colours (Tableau 10), distinguishable for the common colour-vision deficiencies."""

_BAR = 16
_GAP = 6
_GROUP_GAP = 12
_FONT = 12


def bar_chart(
    categories: Sequence[str],
    series: Mapping[str, Sequence[float]],
    *,
    title: str = "",
    max_value: float | None = 1.0,
    fmt: str = "{:.0%}",
    width: int = 640,
    colours: Mapping[str, str] | None = None,
) -> str:
    """An SVG bar chart: for each category, one bar per series, value labels after the bars.

    Args:
        categories: the rows, top to bottom.
        series: name → one value per category.
        max_value: the value of a full-width bar (`None`: the largest value).
        fmt: how values are printed (`"{:.0%}"`, `"{:.2f}"`, `"{:d}"`…).
        colours: a colour per series name (a report passes one mapping to every chart, so a
            colour means the same series throughout); others take the palette by position.
    """
    names = list(series)
    for name in names:
        if len(series[name]) != len(categories):
            raise ValueError(
                f"series {name!r} has {len(series[name])} values for {len(categories)} categories"
            )
    top = max_value if max_value else max((v for s in series.values() for v in s), default=1.0)
    top = top or 1.0
    label_w = min(260, 12 + max((len(c) for c in categories), default=4) * 7)
    value_w = 56
    plot_w = max(80, width - label_w - value_w)
    legend_h = 22 if len(names) > 1 else 0
    title_h = 24 if title else 0
    group_h = len(names) * (_BAR + _GAP) - _GAP + _GROUP_GAP
    height = title_h + legend_h + len(categories) * group_h + 4
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" font-family="sans-serif" '
        f'font-size="{_FONT}">',
        f"<title>{escape(title or 'bar chart')}</title>",
    ]
    if title:
        out.append(f'<text x="0" y="16" font-weight="bold" font-size="14">{escape(title)}</text>')
    x = label_w
    for i, name in enumerate(names if legend_h else []):
        colour = (colours or {}).get(name) or PALETTE[i % len(PALETTE)]
        out.append(f'<rect x="{x}" y="{title_h + 4}" width="12" height="12" fill="{colour}"/>')
        out.append(f'<text x="{x + 16}" y="{title_h + 14}">{escape(name)}</text>')
        x += 24 + len(name) * 7
    y = title_h + legend_h
    for c, category in enumerate(categories):
        mid = y + (group_h - _GROUP_GAP) / 2 + _FONT / 3
        out.append(
            f'<text x="{label_w - 8}" y="{mid:.1f}" text-anchor="end">{escape(category)}</text>'
        )
        for i, name in enumerate(names):
            value = series[name][c]
            bar_w = max(0.0, min(1.0, value / top)) * plot_w
            colour = (colours or {}).get(name) or PALETTE[i % len(PALETTE)]
            label = escape(_format(fmt, value))
            out.append(
                f'<rect x="{label_w}" y="{y}" width="{bar_w:.1f}" height="{_BAR}" '
                f'fill="{colour}"><title>{escape(name)}: {label}</title></rect>'
            )
            out.append(f'<text x="{label_w + bar_w + 4:.1f}" y="{y + _BAR - 4}">{label}</text>')
            y += _BAR + _GAP
        y += _GROUP_GAP - _GAP
    out.append("</svg>")
    return "".join(out)


def _format(fmt: str, value: float) -> str:
    try:
        return fmt.format(value)
    except (ValueError, TypeError):
        return f"{value:g}"
