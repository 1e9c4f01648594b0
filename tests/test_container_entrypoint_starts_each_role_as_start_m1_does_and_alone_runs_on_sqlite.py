"""The image's entrypoint (scripts/container_entrypoint.sh), run here as the image runs it: each
role starts its process with start_m1.sh's flags; with nothing set, the app runs on SQLite and
the filesystem broker under the data folder, with a secret key made once and kept; compose.yaml
only names roles the entrypoint knows and keeps its secrets out of the file.

The whole path through real containers is scripts/container_test.sh (minutes, not in CI)."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
ENTRYPOINT = ROOT / "scripts" / "container_entrypoint.sh"
START_M1 = (ROOT / "start_m1.sh").read_text()


def _env(data: Path, **extra: str) -> dict[str, str]:
    """The folders the Containerfile's ENV names, under data, and nothing of this checkout's."""
    env = {k: os.environ[k] for k in ("PATH", "HOME", "LANG", "TMPDIR") if k in os.environ}
    env.update({
        "SQLITE_PATH": str(data / "db.sqlite3"), "MEDIA_ROOT": str(data / "media"),
        "MODEL_ARTIFACT_ROOT": str(data / "model_artifacts"),
        "FILE_CACHE_DIR": str(data / "file_cache"), "MEDLITBOT_MODEL_DIR": str(data / "models"),
        "LOG_DIR": str(data / "logs"), "HF_HOME": str(data / "hf_home"),
        "CELERY_FILESYSTEM_BROKER_DIR": str(data / "broker"),
        "SECRET_KEY_FILE": str(data / "secret_key"),
        # Empty, as in the image: a .env in this checkout must not fill them in.
        "DATABASE_URL": "", "REDIS_URL": "", "SECRET_KEY": "",
        "DJANGO_SETTINGS_MODULE": "medlitbot_project.settings",
    })
    env.update(extra)
    return env


def _recorded(tmp_path: Path, *args: str, **extra: str) -> tuple[list[str], str]:
    """The command line the entrypoint execs for args, and the WEB_BIND it gets, with `python`
    and `gunicorn` on PATH replaced by a recorder (the processes are not what is tested here)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    record = tmp_path / "record.json"
    for name in ("python", "gunicorn"):
        recorder = bin_dir / name
        recorder.write_text(f"#!{sys.executable}\nimport json, os, sys\n"
                            f"json.dump([[os.path.basename(sys.argv[0]), *sys.argv[1:]], "
                            f"os.environ.get('WEB_BIND', '')], open({str(record)!r}, 'w'))\n")
        recorder.chmod(0o755)
    env = _env(tmp_path / "data", SECRET_KEY="k" * 50,
               DATABASE_URL="postgres://medlitbot@127.0.0.1:1/medlitbot",
               REDIS_URL="redis://127.0.0.1:1/0", **extra)
    env["PATH"] = f"{bin_dir}:{env['PATH']}"
    subprocess.run(["bash", str(ENTRYPOINT), *args], env=env, check=True, timeout=60,
                   capture_output=True)
    argv, web_bind = json.loads(record.read_text())
    return argv, web_bind


@pytest.mark.parametrize(("role", "flags", "start_m1_flags"), [
    ("worker-training", ["--pool=solo", "--concurrency=1", "--queues=training"],
     '--pool=solo --concurrency=1 --queues="${PREFIX}training"'),
    ("worker-inference", ["--pool=threads", "--concurrency=2", "--queues=inference,default"],
     '--pool=threads --concurrency="${INFERENCE_CONCURRENCY:-2}" '
     '--queues="${PREFIX}inference,${PREFIX}default"'),
])
def test_each_worker_role_starts_the_worker_start_m1_starts(
        tmp_path: Path, role: str, flags: list[str], start_m1_flags: str) -> None:
    argv, _ = _recorded(tmp_path, role)

    assert argv[:6] == ["python", "-m", "celery", "-A", "medlitbot_project", "worker"]
    for flag in [*flags, "--without-gossip", "--without-mingle", "--optimization=fair"]:
        assert flag in argv
    # start_m1.sh starts the same worker with the same pool and queues.
    assert re.search(r"\s+".join(map(re.escape, start_m1_flags.split())),
                     START_M1.replace("\\\n", " ")), start_m1_flags


def test_web_serves_gunicorn_with_the_projects_configuration_on_port(tmp_path: Path) -> None:
    argv, web_bind = _recorded(tmp_path, "web", PORT="8771")

    assert argv == ["gunicorn", "-c", "python:medlitbot_project.gunicorn_conf",
                    "medlitbot_project.wsgi"]
    assert web_bind == "0.0.0.0:8771"


def test_beat_keeps_its_schedule_in_the_log_folder_and_migrate_migrates(tmp_path: Path) -> None:
    argv, _ = _recorded(tmp_path, "beat")
    assert argv[5] == "beat"
    assert f"--schedule={tmp_path / 'data' / 'logs' / 'celerybeat-schedule'}" in argv

    argv, _ = _recorded(tmp_path, "migrate")
    assert argv == ["python", "manage.py", "migrate", "--noinput"]

    argv, _ = _recorded(tmp_path, "manage", "doctor", "--json")
    assert argv == ["python", "manage.py", "doctor", "--json"]


def test_with_nothing_set_the_app_runs_on_sqlite_and_files_with_a_kept_secret(
        tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    env = _env(data)
    env["PATH"] = f"{Path(sys.executable).parent}:{env['PATH']}"
    code = ("import json; from django.conf import settings as s; print(json.dumps({"
            "'broker': s.CELERY_BROKER_URL, 'engine': s.DATABASES['default']['ENGINE'], "
            "'name': str(s.DATABASES['default']['NAME']), "
            "'cache': s.CACHES['default']['BACKEND'], 'key': s.SECRET_KEY}))")

    def settings_seen() -> dict[str, str]:
        out = subprocess.run(["bash", str(ENTRYPOINT), "manage", "shell", "-c", code], env=env,
                             check=True, timeout=120, capture_output=True, text=True)
        return json.loads(out.stdout.strip().splitlines()[-1])

    first = settings_seen()

    assert first["broker"] == "filesystem://"
    assert first["engine"] == "django.db.backends.sqlite3"
    assert first["name"] == str(data / "db.sqlite3")
    assert first["cache"].endswith("FileBasedCache")
    key_file = data / "secret_key"
    assert first["key"] == key_file.read_text().strip()
    assert len(first["key"]) >= 50
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert (data / "broker" / "processed").is_dir()
    # A restart keeps the key, so sessions survive it.
    assert settings_seen()["key"] == first["key"]


def test_compose_runs_only_roles_the_entrypoint_knows_and_holds_no_secret() -> None:
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    services = compose["services"]
    entrypoint = ENTRYPOINT.read_text()

    assert set(services) == {"postgres", "redis", "migrate", "web", "worker-training",
                             "worker-inference", "beat"}
    for name, service in services.items():
        if name in ("postgres", "redis"):
            assert "healthcheck" in service
            continue
        role = service["command"][0]
        assert re.search(rf"^\s+{re.escape(role)}\)", entrypoint, re.MULTILINE), role
        assert "data:/data" in service["volumes"]
        assert service["environment"]["SECRET_KEY"].startswith("${SECRET_KEY:?")
        assert "${POSTGRES_PASSWORD:?" in service["environment"]["DATABASE_URL"]
        assert "${REDIS_PASSWORD:?" in service["environment"]["REDIS_URL"]
    # Redis answers only with its password; web, the workers and beat wait for migrate.
    assert services["redis"]["command"][1:3] == [
        "--requirepass", "${REDIS_PASSWORD:?set REDIS_PASSWORD in .env.containers}"]
    for name in ("web", "worker-training", "worker-inference", "beat"):
        assert services[name]["depends_on"]["migrate"]["condition"] == \
            "service_completed_successfully"
