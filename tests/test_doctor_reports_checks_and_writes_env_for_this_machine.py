"""The doctor smoke-tests the CPU, checks services and the environment, writes .env only after
asking, and its manage.py form runs the same code."""

from __future__ import annotations

import io
import platform
from pathlib import Path

import pytest
from django.core.management import call_command

from classification import doctor


def test_the_doctor_passes_on_this_machine_and_lists_every_check(db: None) -> None:
    lines: list[str] = []
    assert doctor.main(["--smoke-timeout", "60"], write=lines.append) == 0
    text = "\n".join(lines)
    for name in ("platform", "torch", "smoke test cpu", "env TOKENIZERS_PARALLELISM",
                 "database", "disk (models)", "model tfidf_logreg"):
        assert name in text, text
    assert "0 blocker(s)" in text


def test_write_env_asks_before_overwriting_and_fits_this_platform(tmp_path: Path) -> None:
    target = tmp_path / ".env"
    target.write_text("KEEP=1\n")
    assert doctor.write_env(target, assume_yes=False, ask=lambda _: "n") is False
    assert target.read_text() == "KEEP=1\n"
    assert doctor.write_env(target, assume_yes=False, ask=lambda _: "y") is True
    text = target.read_text()
    assert "TOKENIZERS_PARALLELISM=false" in text
    if platform.system() == "Linux":
        assert "# (Apple Silicon only) OMP_NUM_THREADS=1" in text


def test_manage_py_doctor_fails_loudly_on_a_blocker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doctor, "run_checks",
                        lambda **_: [doctor.Check("database", doctor.FAIL, "down")])
    out = io.StringIO()
    with pytest.raises(Exception, match="blocker"):
        call_command("doctor", stdout=out)
    assert "[FAIL] database" in out.getvalue()
