"""Every web process, Celery worker and manage.py command loads the settings, every app's tasks
and the URLs. Those must not import scipy, scikit-learn, pandas, openpyxl or torch at start-up:
together they doubled a worker's start-up CPU (4.3 s against 2.3 s), paid again by every
restart, every CLI call and every gunicorn worker. The modules that need them import them where
they are used, and using them still works."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("scipy", "sklearn", "pandas", "openpyxl", "torch", "transformers", "matplotlib")

START_UP = f"""
import json, sys
import django
django.setup()
from medlitbot_project.celery import app
app.loader.import_default_modules()
import medlitbot_project.urls
print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))
"""


def test_a_process_that_loads_every_task_and_url_imports_none_of_the_heavy_libraries() -> None:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "medlitbot_project.settings_test",
           "USE_SQLITE": "True"}
    done = subprocess.run([sys.executable, "-c", START_UP], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


def test_the_lazily_imported_parts_still_compute() -> None:
    from screening.ranker import features_fit, label_scores
    from screening.stopping import p_value
    from screening.stopping_rules import qbcb_claimable_recall, qbcb_cutoff

    # Recall below 0.5 with 5 found means at least floor(5 / 0.5 - 5 + 1) = 6 left in a pool of
    # 10; P(none of 2 drawn is one of them) = (4/10) * (3/9).
    assert abs(p_value(pool=10, sampled=2, k=0, r_al=5, recall_target=0.5) - 12 / 90) < 1e-12
    # Binomial(3, 0.5): P(X >= 3) = 0.125 <= 0.2 while P(X >= 2) = 0.5 is not.
    assert qbcb_cutoff(positives=3, recall_target=0.5, confidence=0.8) == 3
    # Beta(1, 1) is uniform: its 0.2-quantile is 0.2.
    assert abs(qbcb_claimable_recall(positives=1, reached=1, confidence=0.8) - 0.2) < 1e-12
    texts = ["heart failure trial", "cardiac arrest outcome", "brain tumour imaging",
             "glioma resection"]
    features = features_fit(texts=texts, ranker="logreg")
    scores = label_scores(features=features, decided=[0, 2], y=[1, 0], ranker="logreg")
    assert scores[0] > scores[2]
