"""The run report, in Markdown (`report.md`) and self-contained HTML with SVG charts
(`report.html`), written from one list of sections so both always say the same.

A section is a title and blocks: `Text`, `Table`, `Bars` (an SVG chart in HTML; a table with
text bars in Markdown). The runner builds the standard sections (headline, pass@k, success by
tag and by tag combination, done reasons, tool errors, turns and calls, latency); environments
add their own through a *section hook*, a function of the records and the summary that returns
a `ReportSection` (or `None`). Its `data`, if any, also lands in `summary.json` under
`sections`.

Example:
    >>> def failure_split(records, summary):
    ...     mine = [0.3, 0.5, 0.1, 0.1]
    ...     return ReportSection("Failures", [Bars(
    ...         ["wrong_tool", "wrong_args", "wrong_order", "other"],
    ...         {"this run": mine, "published": [0.23, 0.51, 0.18, 0.08]})],
    ...         data={"split": mine})
    >>> md = render_markdown("Report", [failure_split([], {})])
    >>> "## Failures" in md and "| wrong_args |" in md
    True
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from mcpgym.harness.episodes import EpisodeRecord
from mcpgym.harness.eval.svg import PALETTE, bar_chart

__all__ = [
    "Bars",
    "Block",
    "ReportSection",
    "SectionHook",
    "Table",
    "Text",
    "render_html",
    "render_markdown",
]


@dataclass(frozen=True, slots=True)
class Text:
    """A paragraph of text with inline Markdown: `code` and [links](url). Markdown renders it as
    is; HTML escapes it and renders those two (nothing else)."""

    text: str


@dataclass(frozen=True, slots=True)
class Table:
    """A table; cells are printed with `str`."""

    headers: Sequence[str]
    rows: Sequence[Sequence[Any]]


@dataclass(frozen=True, slots=True)
class Bars:
    """A bar chart: one bar per series in each category (`mcpgym.harness.eval.svg.bar_chart`)."""

    categories: Sequence[str]
    series: Mapping[str, Sequence[float]]
    title: str = ""
    max_value: float | None = 1.0
    fmt: str = "{:.0%}"


Block = Text | Table | Bars


@dataclass(frozen=True, slots=True)
class ReportSection:
    """A titled part of the report; `data` is copied into `summary.json` under `sections`."""

    title: str
    blocks: Sequence[Block] = ()
    data: Mapping[str, Any] | None = None
    level: int = 2


SectionHook = Callable[[Sequence[EpisodeRecord], Mapping[str, Any]], ReportSection | None]
"""Makes an extra report section from the records and the summary (or `None` to skip)."""


# -- Markdown ----------------------------------------------------------------------------------


def _md_cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _md_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(_md_cell(h) for h in headers) + " |"]
    lines.append("|" + "|".join("---" for _ in headers) + "|")
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _text_bar(fraction: float, width: int = 20) -> str:
    eighths = round(max(0.0, min(1.0, fraction)) * width * 8)
    full, rest = divmod(eighths, 8)
    return "█" * full + ("▏▎▍▌▋▊▉"[rest - 1] if rest else "")


def _md_bars(bars: Bars) -> str:
    top = bars.max_value or max((v for s in bars.series.values() for v in s), default=1.0) or 1.0
    names = list(bars.series)
    headers = ["", *(h for n in names for h in (n, ""))]
    rows = [
        [
            c,
            *(
                x
                for n in names
                for x in (_fmt(bars.fmt, bars.series[n][i]), _text_bar(bars.series[n][i] / top))
            ),
        ]
        for i, c in enumerate(bars.categories)
    ]
    head = f"**{bars.title}**\n\n" if bars.title else ""
    return head + _md_table(headers, rows)


def render_markdown(title: str, sections: Sequence[ReportSection | None]) -> str:
    """The report as Markdown."""
    out = [f"# {title}"]
    for section in sections:
        if section is None:
            continue
        out.append(f"{'#' * section.level} {section.title}")
        for block in section.blocks:
            if isinstance(block, Text):
                out.append(block.text)
            elif isinstance(block, Table):
                out.append(_md_table(block.headers, block.rows))
            else:
                out.append(_md_bars(block))
    return "\n\n".join(out) + "\n"


# -- HTML --------------------------------------------------------------------------------------

_CSS = """
body{font-family:system-ui,sans-serif;max-width:980px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}
th,td{border:1px solid #ccc;padding:3px 8px;text-align:left}
th{background:#f3f3f3} td.num{text-align:right;font-variant-numeric:tabular-nums}
h1{font-size:1.6em} h2{margin-top:1.6em;border-bottom:1px solid #ddd} svg{display:block}
"""


def _html_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    head = "".join(f"<th>{escape(str(h))}</th>" for h in headers)
    body = "".join("<tr>" + "".join(_html_cell(c) for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _html_cell(value: Any) -> str:
    numeric = (
        isinstance(value, int | float)
        or str(value).rstrip("%").replace(".", "", 1).replace(" ± ", "").isdigit()
    )
    return (
        f'<td class="num">{escape(str(value))}</td>'
        if numeric
        else f"<td>{_inline(str(value))}</td>"
    )


_CODE = re.compile(r"`([^`]+)`")
_LINK = re.compile(r"\[([^\]]+)\]\(((?:https?://|\.{0,2}/)?[\w./#?=&%~+-]+)\)")


def _inline(text: str) -> str:
    """Escaped `text` with `code` and [text](url) rendered (relative or http(s) urls only)."""
    html = escape(text, quote=False)
    html = _CODE.sub(lambda m: f"<code>{m.group(1)}</code>", html)
    return _LINK.sub(lambda m: f'<a href="{escape(m.group(2))}">{m.group(1)}</a>', html)


def _colours(sections: Sequence[ReportSection | None]) -> dict[str, str]:
    """One colour per series name for the whole report, in order of first appearance, so a
    colour means the same thing in every chart."""
    out: dict[str, str] = {}
    for section in sections:
        for block in section.blocks if section is not None else ():
            if isinstance(block, Bars):
                for name in block.series:
                    out.setdefault(name, PALETTE[len(out) % len(PALETTE)])
    return out


def render_html(title: str, sections: Sequence[ReportSection | None]) -> str:
    """The report as one self-contained HTML page (inline CSS and SVG, no scripts)."""
    colours = _colours(sections)
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
    ]
    for section in sections:
        if section is None:
            continue
        level = max(2, min(6, section.level))
        out.append(f"<h{level}>{escape(section.title)}</h{level}>")
        for block in section.blocks:
            if isinstance(block, Text):
                out += [f"<p>{_inline(p)}</p>" for p in block.text.split("\n\n") if p.strip()]
            elif isinstance(block, Table):
                out.append(_html_table(block.headers, block.rows))
            else:
                out.append(
                    bar_chart(
                        block.categories,
                        block.series,
                        title=block.title,
                        max_value=block.max_value,
                        fmt=block.fmt,
                        colours=colours,
                    )
                )
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def _fmt(fmt: str, value: float) -> str:
    try:
        return fmt.format(value)
    except (ValueError, TypeError):
        return f"{value:g}"
