"""gunicorn's settings and the inference worker's concurrency and niceness, set in .env, reach
the processes start_m1.sh starts: those processes read them before (or without) Django reading
.env, so scripts/start_env.sh exports them. A value in the shell's environment still wins over
.env."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.start_script_support import fresh_copy, start_env_then

SHOW = ('printf "%s|%s|%s|%s\\n" "${WEB_WORKERS:-unset}" "${INFERENCE_CONCURRENCY:-unset}" '
        '"${WEB_TIMEOUT:-unset}" "${INFERENCE_NICE:-unset}"')


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fresh_copy(tmp_path_factory.mktemp("start-env-web") / "medlitbot")


def test_the_env_files_web_and_worker_settings_are_exported_and_the_shell_still_wins(
    app: Path,
) -> None:
    (app / ".env").write_text((app / "env.m1.example").read_text()
                              + '\nWEB_WORKERS=3\nINFERENCE_CONCURRENCY="5"\n')
    done = start_env_then(app, SHOW)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "3|5|unset|10"

    done = start_env_then(app, SHOW, WEB_WORKERS="7", INFERENCE_NICE="15")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "7|5|unset|15"

    # And gunicorn's own configuration reads what was exported.
    done = start_env_then(app, '"$PY" -c "import medlitbot_project.gunicorn_conf as g; '
                               'print(g.workers)"')
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "3"
