"""The model page's calibration panel: the reliability plot as SVG geometry, the ECE before and
after calibration, and each label's two thresholds (pure: no Django, no database).

The page's Content-Security-Policy allows no inline script or style, so, as screening/chart.py
does, the plot is inline SVG with presentation attributes only, drawn from the reliability
points the training job stored in the model's metrics (engine/calibration.py).
"""

from __future__ import annotations

from typing import Any

from classification.engine.calibration import Calibration

WIDTH, HEIGHT = 420, 320
LEFT, RIGHT, TOP, BOTTOM = 48, 12, 12, 40
TICKS = (0.0, 0.25, 0.5, 0.75, 1.0)


def _at(x: float, y: float) -> tuple[float, float]:
    span_x, span_y = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    return round(LEFT + span_x * x, 1), round(HEIGHT - BOTTOM - span_y * y, 1)


def _series(curve: list[dict[str, float]]) -> dict[str, Any]:
    points = [(*_at(p["confidence"], p["accuracy"]), p) for p in curve]
    return {
        "line": " ".join(f"{x},{y}" for x, y, _ in points),
        "dots": [{"x": x, "y": y, "title": f"predicted {p['confidence']:.2f}, observed "
                  f"{p['accuracy']:.2f} ({p['count']} events)"} for x, y, p in points],
    }


def reliability_chart(report: dict[str, Any]) -> dict[str, Any]:
    """What the template draws: the diagonal, the curve before (grey) and after calibration."""
    return {
        "width": WIDTH, "height": HEIGHT,
        "left": LEFT, "right": WIDTH - RIGHT, "top": TOP, "bottom": HEIGHT - BOTTOM,
        "diagonal": "{},{} {},{}".format(*_at(0, 0), *_at(1, 1)),
        "before": _series(report.get("curve_before") or []),
        "after": _series(report.get("curve_after") or []),
        "x_ticks": [{"at": _at(t, 0)[0], "label": t} for t in TICKS],
        "y_ticks": [{"at": _at(0, t)[1], "label": t} for t in TICKS],
        "x_title": (WIDTH + LEFT - RIGHT) / 2, "y_title": (HEIGHT + TOP - BOTTOM) / 2,
    }


def _threshold_rows(metrics: dict[str, Any], manifest: dict[str, Any],
                    label_names: list[str]) -> list[dict[str, Any]]:
    per_label = (metrics.get("decision_thresholds") or {}).get("per_label") or {}
    how = {row["label"]: row["calibration"] for row in
           Calibration.from_dict(manifest.get("calibration")).describe(label_names)}
    return [{"label": name, "calibration": how.get(name, "none"), **per_label.get(name, {})}
            for name in label_names]


def calibration_panel(*, metrics: dict[str, Any], manifest: dict[str, Any],
                      label_names: list[str]) -> dict[str, Any] | None:
    """The panel's context, or None for a model trained before calibration (nothing to show)."""
    report = metrics.get("calibration")
    if not report:
        return None
    validation = metrics.get("validation") or {}
    return {
        "split": "test" if metrics.get("evaluated_on") == "test" else "validation",
        "method": report.get("method"),
        "events": report.get("events"),
        "bins": report.get("bins"),
        "ece_before": report.get("ece_before"),
        "ece_after": report.get("ece_after"),
        "validation_ece_before": validation.get("ece_uncalibrated"),
        "validation_ece_after": validation.get("ece"),
        "chart": reliability_chart(report),
        "recall_target": (metrics.get("decision_thresholds") or {}).get("recall_target"),
        "multi_label": bool(metrics.get("multi_label")),
        "rows": _threshold_rows(metrics, manifest, label_names),
    }
