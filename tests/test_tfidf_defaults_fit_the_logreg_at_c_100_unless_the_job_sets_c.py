"""tfidf_logreg's heads use C=100 by default (issue 39, docs/figures/tfidf.md), a job's own
regularization_c still wins, and the default stays inside the range a search explores."""

from __future__ import annotations

from classification.engine.baselines import DEFAULT_C
from classification.engine.search_space import C_RANGE, HEAD
from classification.ml_models import TextData, TrainConfig, create_classifier


def _head_cs(demo_textdata: TextData, c: float | None) -> set[float]:
    train, val = demo_textdata.subset(list(range(120))), demo_textdata.subset(list(range(120, 150)))
    clf = create_classifier("tfidf_logreg")
    clf.fit(train, val, TrainConfig(regularization_c=c), lambda e: None, lambda: False)
    return {est.C for est in clf.head.estimators_}


def test_tfidf_logreg_fits_every_label_at_c_100_unless_the_job_sets_c(
    demo_textdata: TextData,
) -> None:
    assert DEFAULT_C["tfidf"] == 100.0
    assert _head_cs(demo_textdata, None) == {100.0}
    assert _head_cs(demo_textdata, 3.0) == {3.0}
    low, high = C_RANGE[HEAD["tfidf_logreg"]]
    assert low <= DEFAULT_C["tfidf"] <= high
