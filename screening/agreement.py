"""Agreement between two reviewers on one label: percent agreement and Cohen's kappa (pure).

Kappa's 95% confidence interval uses the standard large-sample standard error
SE = sqrt(p_o (1 - p_o) / (n (1 - p_e)^2)) (Cohen 1960), kappa +- 1.96 SE. The categories are
yes, no and unsure; "reviewer A" of a pair is the one with the lower user id, so the marginals
are each person's own.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

Z_95 = 1.959963984540054


def agreement(*, pairs: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """{n, percent_agreement, kappa, kappa_low, kappa_high} (None where undefined)."""
    n = len(pairs)
    if n == 0:
        return {"n": 0, "percent_agreement": None, "kappa": None, "kappa_low": None,
                "kappa_high": None}
    p_o = sum(1 for a, b in pairs if a == b) / n
    first, second = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    p_e = sum(first[c] * second[c] for c in set(first) | set(second)) / (n * n)
    if p_e >= 1.0:  # both always said the same one thing: kappa is undefined
        return {"n": n, "percent_agreement": round(100 * p_o, 1), "kappa": None,
                "kappa_low": None, "kappa_high": None}
    kappa = (p_o - p_e) / (1 - p_e)
    se = math.sqrt(p_o * (1 - p_o) / (n * (1 - p_e) ** 2))
    # Full precision: the API and the export carry these; the page rounds (kappa_display).
    return {"n": n, "percent_agreement": round(100 * p_o, 1), "kappa": kappa,
            "kappa_low": max(-1.0, kappa - Z_95 * se),
            "kappa_high": min(1.0, kappa + Z_95 * se)}


def agreement_for_page(row: dict[str, Any]) -> dict[str, Any]:
    """The row as the session page polls it: kappa and its bounds to two decimals, as shown."""
    return {**row, **{key: round(row[key], 2) for key in ("kappa", "kappa_low", "kappa_high")
                      if row.get(key) is not None}}


def kappa_display(row: dict[str, Any]) -> str:
    """How a page shows kappa: two decimals and the CI as [a, b]; "–" where undefined."""
    if row.get("kappa") is None:
        return "–"
    return f"κ = {row['kappa']:.2f} [{row['kappa_low']:.2f}, {row['kappa_high']:.2f}]"
