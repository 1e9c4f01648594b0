"""Check a user-given local model folder before a training job is created from it.

Training reads whatever folder `model_path` names, with the server's permissions. Without this
check one user could fine-tune from another user's trained weights (under MODEL_ARTIFACT_ROOT)
or point the loader at uploads (under MEDIA_ROOT); and a typo would only surface minutes later
as a failed job instead of at once on the form.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings


def model_path_problem(raw: str) -> str | None:
    """None when the folder is usable; otherwise the sentence to show the person."""
    if not raw:
        return None
    path = Path(raw).expanduser()
    if not path.is_absolute():
        return "Give the full path of the folder, starting with /."
    path = path.resolve()
    for root in (settings.MODEL_ARTIFACT_ROOT, settings.MEDIA_ROOT):
        if path.is_relative_to(Path(root).resolve()):
            return "That folder holds MedLitBot's own data; copy the model somewhere else first."
    if not path.is_dir():
        return f"No folder at {path} on this machine."
    if not (path / "config.json").is_file():
        return f"{path} has no config.json: it is not a Hugging Face model folder."
    return None
