"""The PRISMA 2020 flow diagram (Page et al. 2021, BMJ 372:n71; the template for new reviews
of databases and registers), laid out once and drawn as SVG by hand, or with matplotlib as a
PNG (300 dpi unless asked otherwise) and a vector PDF.

Boxes and arrows are computed from `prisma.prisma_counts`; every count is text in the SVG
(`n = 12`), so a reader, a screen reader and a test can read it. Presentation attributes
only: the site's CSP allows no inline style.
"""

from __future__ import annotations

import io
import logging
import re
from dataclasses import dataclass, field
from typing import Any
from xml.sax.saxutils import escape

from screening.prisma_sources import KINDS

WIDTH, LEFT_X, RIGHT_X, BOX_W = 860, 130, 520, 320
LINE_H, PAD, GAP, FONT = 17, 10, 34, 13
MAX_CHARS = 46  # what fits in BOX_W at FONT px
MIN_PHASE_H = 90


@dataclass
class Box:
    x: int
    y: int
    lines: list[str]
    w: int = BOX_W
    fill: str = "#ffffff"

    @property
    def h(self) -> int:
        return 2 * PAD + LINE_H * len(self.lines)


@dataclass
class Diagram:
    height: int = 0
    boxes: list[Box] = field(default_factory=list)
    arrows: list[tuple[int, int, int, int]] = field(default_factory=list)
    phases: list[tuple[str, int, int]] = field(default_factory=list)  # name, top, bottom


# A count is never cut across two lines: "(n = 12)" is one word to the wrapper.
_WORD = re.compile(r"\(n (?:= \d+|hidden while blind)\):?|\S+")


def _wrap(text: str) -> list[str]:
    words, lines, line = _WORD.findall(text), [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > MAX_CHARS:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return [*lines, line] if line else lines


def _lines(*texts: str) -> list[str]:
    return [wrapped for text in texts for wrapped in _wrap(text)]


def _n(count: Any) -> str:
    """A box's count; None where the reader's sight hides it (a blind reviewer's boxes after
    identification: screening.visibility.prisma_shown)."""
    return "(n hidden while blind)" if count is None else f"(n = {count})"


def _sources(c: dict[str, Any]) -> list[str]:
    """Each source by the name a maintainer gave it; grouped as databases, registers and other
    sources once any is not a database."""
    sources = c["sources"]
    if all(s.get("kind", "database") == "database" for s in sources):
        return [f"{s['name']} {_n(s['identified'])}" for s in sources]
    out = []
    for kind, heading in KINDS.items():
        mine = [s for s in sources if s.get("kind", "database") == kind]
        if mine:
            out += [f"{heading} {_n(sum(s['identified'] for s in mine))}:",
                    *(f"{s['name']} {_n(s['identified'])}" for s in mine)]
    return out


def _rows(c: dict[str, Any]) -> list[tuple[str, list[str], list[str] | None]]:
    """(phase, main box lines, the box beside it or None), top to bottom."""
    sources = _sources(c)
    removed = [f"Duplicate records removed {_n(c['duplicates_removed'])}",
               f"Records marked as ineligible by automation tools "
               f"{_n(c['removed_by_automation'])}"
               + (f": stopping rule - {c['stopping_rule']}" if c.get("stopping_rule") else ""),
               f"Records removed for other reasons {_n(c['removed_for_other_reasons'])}"]
    reasons = [f"{why} {_n(n)}" for why, n in (c["reports_excluded_by_reason"] or {}).items()]
    assessed = [f"Reports assessed for eligibility {_n(c['reports_assessed'])}"]
    if c["reports_awaiting_assessment"]:
        assessed.append(f"Awaiting assessment {_n(c['reports_awaiting_assessment'])}")
    screened = [f"Records screened {_n(c['screened'])}"]
    if c.get("not_yet_screened"):
        screened.append(f"Not yet screened {_n(c['not_yet_screened'])}")
    return [
        ("Identification", _lines(f"Records identified {_n(c['identified'])} from:", *sources),
         _lines("Records removed before screening:", *removed)),
        ("Screening", _lines(*screened),
         _lines(f"Records excluded {_n(c['excluded_at_screening'])}")),
        ("Screening", _lines(f"Reports sought for retrieval {_n(c['reports_sought'])}"),
         _lines(f"Reports not retrieved {_n(c['reports_not_retrieved'])}")),
        ("Screening", _lines(*assessed),
         _lines(f"Reports excluded {_n(c['reports_excluded'])}{':' if reasons else ''}",
                *reasons)),
        ("Included", _lines(f"Studies included in review {_n(c['studies_included'])}",
                            "Reports of included studies "
                            f"{_n(c['reports_of_included_studies'])}"), None),
    ]


def diagram_layout(counts: dict[str, Any]) -> Diagram:
    diagram, y = Diagram(), 60
    previous: Box | None = None
    for phase, main_lines, side_lines in _rows(counts):
        main = Box(LEFT_X, y, main_lines)
        side = Box(RIGHT_X, y, side_lines, fill="#f3f4f6") if side_lines else None
        # The last phase has one box: tall enough for its rotated name.
        height = max(main.h, side.h if side else 0, MIN_PHASE_H if phase == "Included" else 0)
        main.lines += [""] * ((height - main.h) // LINE_H)
        diagram.boxes.append(main)
        if side is not None:
            diagram.boxes.append(side)
            diagram.arrows.append((LEFT_X + BOX_W, y + height // 2, RIGHT_X, y + height // 2))
        if previous is not None:
            diagram.arrows.append((LEFT_X + BOX_W // 2, previous.y + previous.h,
                                   LEFT_X + BOX_W // 2, y))
        if diagram.phases and diagram.phases[-1][0] == phase:
            diagram.phases[-1] = (phase, diagram.phases[-1][1], y + height)
        else:
            diagram.phases.append((phase, y, y + height))
        previous, y = main, y + height + GAP
    diagram.height = y + 10
    return diagram


def _svg_box(box: Box) -> list[str]:
    out = [f'<rect x="{box.x}" y="{box.y}" width="{box.w}" height="{box.h}" '
           f'fill="{box.fill}" stroke="#1f2937" stroke-width="1.2"/>',
           f'<text x="{box.x + PAD}" y="{box.y + PAD}" font-size="{FONT}">']
    for i, line in enumerate(box.lines):
        if line:
            out.append(f'<tspan x="{box.x + PAD}" y="{box.y + PAD + LINE_H * (i + 1) - 4}">'
                       f"{escape(line)}</tspan>")
    return [*out, "</text>"]


def prisma_svg(counts: dict[str, Any], *, title: str = "") -> str:
    """The diagram as a standalone SVG document (no network, no script, no style element)."""
    d = diagram_layout(counts)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{d.height}" '
           f'viewBox="0 0 {WIDTH} {d.height}" font-family="Helvetica, Arial, sans-serif" '
           'role="img" aria-labelledby="prisma-title">',
           f'<title id="prisma-title">PRISMA 2020 flow diagram'
           f'{": " + escape(title) if title else ""}</title>',
           '<defs><marker id="arrow" markerWidth="10" markerHeight="8" refX="9" refY="4" '
           'orient="auto"><path d="M0,0 L10,4 L0,8 z" fill="#1f2937"/></marker></defs>',
           f'<rect width="{WIDTH}" height="{d.height}" fill="#ffffff"/>',
           f'<text x="{WIDTH // 2}" y="30" font-size="16" font-weight="bold" '
           f'text-anchor="middle">{escape(title or "PRISMA 2020 flow diagram")}</text>']
    for name, top, bottom in d.phases:
        middle = (top + bottom) // 2
        out += [f'<rect x="20" y="{top}" width="34" height="{bottom - top}" fill="#bfdbfe" '
                'stroke="#1f2937" stroke-width="1"/>',
                f'<text x="41" y="{middle}" font-size="{FONT}" font-weight="bold" '
                f'text-anchor="middle" transform="rotate(-90 41 {middle})">{name}</text>']
    for box in d.boxes:
        out += _svg_box(box)
    out += [f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="#1f2937" '
            'stroke-width="1.4" marker-end="url(#arrow)"/>' for x1, y1, x2, y2 in d.arrows]
    return "\n".join([*out, "</svg>"]) + "\n"


DPI = 300  # what journals ask of a figure
DPI_RANGE = (72, 600)


def _figure(counts: dict[str, Any], *, title: str, dpi: int) -> Any:
    """The same layout as a matplotlib figure, for the PNG (Agg) and the PDF (vector)."""
    from matplotlib.figure import Figure  # a second or so to import: only when asked
    from matplotlib.patches import FancyArrowPatch, Rectangle

    d = diagram_layout(counts)
    figure = Figure(figsize=(WIDTH / 100, d.height / 100), dpi=dpi)
    axes = figure.add_axes((0, 0, 1, 1))
    axes.set_xlim(0, WIDTH)
    axes.set_ylim(d.height, 0)
    axes.axis("off")
    axes.text(WIDTH / 2, 30, title or "PRISMA 2020 flow diagram", ha="center", va="center",
              fontsize=11, weight="bold")
    for name, top, bottom in d.phases:
        axes.add_patch(Rectangle((20, top), 34, bottom - top, facecolor="#bfdbfe",
                                 edgecolor="#1f2937"))
        axes.text(37, (top + bottom) / 2, name, rotation=90, ha="center", va="center",
                  fontsize=8.5, weight="bold")
    for box in d.boxes:
        axes.add_patch(Rectangle((box.x, box.y), box.w, box.h, facecolor=box.fill,
                                 edgecolor="#1f2937"))
        for i, line in enumerate(box.lines):
            axes.text(box.x + PAD, box.y + PAD + LINE_H * (i + 1) - 4, line, fontsize=8.5,
                      va="baseline")
    for x1, y1, x2, y2 in d.arrows:
        axes.add_patch(FancyArrowPatch((x1, y1), (x2, y2), arrowstyle="-|>",
                                       mutation_scale=10, color="#1f2937"))
    return figure


def prisma_png(counts: dict[str, Any], *, title: str = "", dpi: int = DPI) -> bytes:
    """The diagram as a PNG at `dpi`, which its pHYs chunk states (no display, no cairo)."""
    buffer = io.BytesIO()
    _figure(counts, title=title, dpi=dpi).savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()


def prisma_pdf(counts: dict[str, Any], *, title: str = "") -> bytes:
    """The diagram as a one-page vector PDF, its fonts embedded as TrueType so its text reads
    back as text."""
    from matplotlib import rc_context

    # fontTools logs every step of subsetting the embedded font at INFO.
    logging.getLogger("fontTools").setLevel(logging.WARNING)
    buffer = io.BytesIO()
    with rc_context({"pdf.fonttype": 42}):
        _figure(counts, title=title, dpi=DPI).savefig(
            buffer, format="pdf", metadata={"Title": title or "PRISMA 2020 flow diagram",
                                            # The same counts give the same bytes.
                                            "CreationDate": None})
    return buffer.getvalue()
