"""The model page's calibration panel: the reliability plot as SVG geometry, the ECE before and
after calibration, each label's two thresholds, and the sentence saying what was measured about
the probabilities, which the batch page shows too (pure: no Django, no database).

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


NAMES = {"none": "none", "temperature": "temperature", "platt": "Platt",
         "isotonic": "isotonic", "auto": "auto (isotonic or temperature per label)"}
# The reliability bin holding 0.9 among the 15 equal-width ones: [13/15, 14/15).
NEAR_09 = (13 / 15, 14 / 15)


def _near_09(curve: list[dict[str, Any]], events: str) -> str:
    """How often the labels given about 0.9 were right, from measured reliability points."""
    point = next((p for p in curve if NEAR_09[0] <= p["confidence"] < NEAR_09[1]), None)
    what = "top labels" if events == "top class" else "labels"
    if point is None:
        return f"no {what} were given about 0.9 there"
    right = round(point["accuracy"] * point["count"])
    return (f"{what} given about 0.9 ({NEAR_09[0]:.2f}–{NEAR_09[1]:.2f}) were right "
            f"{point['accuracy']:.0%} of the time, {right} of {point['count']}")


def _candidates(selection: dict[str, Any], leave_out: str) -> str:
    scores = selection.get("candidates") or {}
    return ", ".join(f"{NAMES.get(m, m)} {s['ece']:.3f}" for m, s in scores.items()
                     if m != leave_out)


def _selected(selection: dict[str, Any]) -> str:
    chosen, rows = selection.get("chosen", "none"), selection.get("rows", 0)
    where = (f"{rows} training and validation rows, each scored by a model fitted without it "
             "(cross-fitted)" if selection.get("cross_fitted")
             else f"{rows} held-out validation rows")
    if not selection.get("candidates"):
        return (f"Not recalibrated: the validation split had {rows} rows, too few to choose "
                "a calibration on, so these are the model's own probabilities.")
    measured = _near_09(selection.get("curve") or [], str(selection.get("events", "")))
    if chosen == "none":
        return (f"Not recalibrated: on {where}, no method lowered the "
                f"expected calibration error (ECE) out of fold beyond its noise "
                f"({_candidates(selection, '')}), so these are the model's own probabilities; "
                f"there, {measured}.")
    ece = selection["candidates"][chosen]["ece"]
    return (f"On {where}, {measured} (ECE {ece:.3f}, out of fold); "
            f"method chosen: {NAMES.get(chosen, chosen)}, over "
            f"{_candidates(selection, chosen)}.")


def calibration_statement(*, metrics: dict[str, Any],
                          manifest: dict[str, Any] | None = None) -> str:
    """What was measured about the model's probabilities, in one or two sentences: the
    selection's out-of-fold figures where the method was chosen by them, else the ECE the
    training job measured (never a promise about unseen articles)."""
    report = metrics.get("calibration") or {}
    selection = report.get("selection") or Calibration.from_dict(
        (manifest or {}).get("calibration")).selection
    if selection:
        return _selected(selection)
    method = report.get("method") or "none"
    if method == "none":
        return ("Probabilities not calibrated: the model gives them as it computes them (a "
                "model saved before calibration, or trained with calibration none).")
    split = "test" if metrics.get("evaluated_on") == "test" else "validation"
    measured = (f"; on the {split} split its ECE was {report['ece_before']:.3f} before and "
                f"{report['ece_after']:.3f} after" if report.get("ece_after") is not None else "")
    if report.get("ece_after") is not None and report["ece_after"] == report["ece_before"]:
        return (f"Not recalibrated: the {NAMES.get(method, method)} fitted on the validation "
                f"split left the probabilities as the model gives them{measured}.")
    return (f"Probabilities recalibrated by {NAMES.get(method, method)} scaling fitted on the "
            f"validation split (set by the model's settings, not chosen by held-out "
            f"error){measured}.")


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
        "statement": calibration_statement(metrics=metrics, manifest=manifest),
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
