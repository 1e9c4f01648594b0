"""Helpers of the model export tests: download an export, unpack it, and run it in a Python
that cannot import MedLitBot."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

from rest_framework.test import APIClient


def export_download(*, client: APIClient, model_id: int, target: Path) -> Path:
    """GET /api/models/<id>/export/, unpacked under target: the folder it holds."""
    response = client.get(f"/api/models/{model_id}/export/")
    assert response.status_code == 200, getattr(response, "data", response)
    assert response["Content-Type"] == "application/zip"
    assert response["Content-Disposition"].startswith("attachment; filename=")
    with zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content))) as archive:
        tops = {name.split("/", 1)[0] for name in archive.namelist()}
        assert len(tops) == 1
        archive.extractall(target)
    return target / tops.pop()


def clean_env(home: Path) -> dict[str, str]:
    """No Django settings, no PYTHONPATH, no network for the Hub."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
            "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}


def run_outside(args: list[str], *, cwd: Path) -> str:
    """`python -I args...` in cwd with clean_env: isolated, so neither the project root nor
    PYTHONPATH is on its path. Its stdout; fails the test with its stderr."""
    done = subprocess.run([sys.executable, "-I", *args], cwd=cwd, env=clean_env(cwd),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def medlitbot_unimportable(*, cwd: Path) -> None:
    done = subprocess.run([sys.executable, "-I", "-c", "import classification"], cwd=cwd,
                          env=clean_env(cwd), capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "ModuleNotFoundError" in done.stderr


def predicted_outside(*, folder: Path, texts: list[str], work: Path,
                      extra: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """The export's own predict.py on `texts`, run outside MedLitBot."""
    source = work / "texts.json"
    source.write_text(json.dumps(texts), encoding="utf-8")
    medlitbot_unimportable(cwd=work)
    return json.loads(run_outside([str(folder / "predict.py"), str(source), *extra], cwd=work))


def assert_same_predictions(outside: list[dict[str, Any]], app: list[dict[str, Any]],
                            *, tolerance: float = 1e-5) -> None:
    assert [row["labels"] for row in outside] == [row["labels"] for row in app]
    for mine, theirs in zip(outside, app, strict=True):
        assert mine["probabilities"].keys() == theirs["probabilities"].keys()
        gap = max(abs(mine["probabilities"][k] - theirs["probabilities"][k])
                  for k in theirs["probabilities"])
        assert gap <= tolerance, (gap, mine, theirs)


def texts_of(dataset: Any, count: int = 20) -> list[str]:
    from dataset_management.selectors import dataset_split_examples

    texts = [t for split in ("test", "validation", "train")
             for t in dataset_split_examples(dataset=dataset, split=split).texts]
    return texts[:count]
