"""The recall curve of a simulation as SVG geometry, drawn by the server (pure, no Django).

The page's Content-Security-Policy allows no inline script or style, so the chart is inline SVG
whose shapes carry presentation attributes only; this module turns the stored curve points
(records read -> relevant found) into pixel coordinates for the template.
"""

from __future__ import annotations

from typing import Any

WIDTH, HEIGHT = 640, 360
LEFT, RIGHT, TOP, BOTTOM = 56, 16, 16, 44
TICKS = (0.0, 0.25, 0.5, 0.75, 1.0)


def _scale(total: int, relevant: int) -> Any:
    span_x, span_y = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def at(x: float, y: float) -> tuple[float, float]:
        return (round(LEFT + span_x * x / max(1, total), 1),
                round(HEIGHT - BOTTOM - span_y * y / max(1, relevant), 1))
    return at


def _polyline(points: list[list[int]], at: Any) -> str:
    return " ".join("{},{}".format(*at(x, y)) for x, y in points)


def recall_chart(*, result: dict[str, Any], recall_target: float) -> dict[str, Any] | None:
    """Everything the template draws, or None before the run has a result.

    Each seed's curve with its stopping point, the random-order diagonal from (0, 0) to
    (N, relevant), and the recall target as a horizontal line.
    """
    summary = result.get("summary")
    if not summary or not result.get("curves"):
        return None
    total, relevant = int(summary["records"]), int(summary["relevant"])
    at = _scale(total, relevant)
    curves = []
    for curve in result["curves"]:
        cx, cy = at(*curve["stop"])
        curves.append({"seed": curve["seed"], "points": _polyline(curve["points"], at),
                       "stop_x": cx, "stop_y": cy, "stop": curve["stop"]})
    target_y = at(0, recall_target * relevant)[1]
    return {
        "width": WIDTH, "height": HEIGHT, "curves": curves,
        "random": _polyline(result.get("random") or [[0, 0], [total, relevant]], at),
        "target_y": target_y, "target_label": f"{recall_target:.0%} recall",
        "left": LEFT, "right": WIDTH - RIGHT, "top": TOP, "bottom": HEIGHT - BOTTOM,
        "x_ticks": [{"at": at(total * t, 0)[0], "label": round(total * t)} for t in TICKS],
        "y_ticks": [{"at": at(0, relevant * t)[1], "label": round(relevant * t)}
                    for t in TICKS],
        "x_title": (WIDTH + LEFT - RIGHT) / 2, "y_title": (HEIGHT + TOP - BOTTOM) / 2,
        "total": total, "relevant": relevant,
    }
