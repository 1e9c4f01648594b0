import subprocess
import sys
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from dataset_management.models import Dataset
from tests.plugins.datasets import BAD_INPUTS, DEMO_CSV, FORMATS, ROOT
from tests.plugins.worker import worker_env


def test_cli_imports_the_demo_and_ends_with_the_dataset_id(media_root, user):
    out = StringIO()
    call_command("import_dataset", str(DEMO_CSV), "--name", "Demo", "--owner", "alice",
                 stdout=out)
    lines = out.getvalue().splitlines()
    ds = Dataset.objects.get()
    assert lines[-1] == f"dataset_id={ds.pk}"
    assert ds.owner == user
    assert "Rows read: 2855  kept: 2855  dropped: 0" in lines
    assert "  neurological: 1433" in lines


def test_cli_options_override_the_mapping(media_root, user):
    out = StringIO()
    call_command("import_dataset", str(FORMATS / "refs.ris"), "--name", "Refs",
                 "--label-column", "keywords", "--split-ratios", "0.5,0.25,0.25", "--seed", "3",
                 "--owner", "alice", stdout=out)
    ds = Dataset.objects.get()
    assert ds.label_field == "keywords"
    assert ds.split_seed == 3
    assert ds.split_sizes == {"train": 6, "validation": 3, "test": 3}


def test_cli_refuses_a_bad_file_with_a_command_error(media_root, user):
    with pytest.raises(CommandError, match=r"^Only one label \('cardiovascular'\) found"):
        call_command("import_dataset", str(BAD_INPUTS / "one_class.csv"), "--name", "X",
                     "--owner", "alice")
    assert Dataset.objects.count() == 0


def test_cli_process_exits_non_zero_with_one_line(transactional_db, tmp_path):
    # The suite's own (migrated, empty) test database: a migrate of a fresh one took a minute
    # beside CI's other lanes.
    env = worker_env(MEDIA_ROOT=str(tmp_path / "media"))
    manage = [sys.executable, "manage.py"]
    nobody = subprocess.run(
        [*manage, "import_dataset", str(DEMO_CSV), "--name", "X"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )
    assert nobody.returncode != 0
    assert nobody.stderr.strip().splitlines() == [
        "CommandError: No owner or project for the dataset: give --owner USERNAME or "
        "--project ID (there is no superuser or 'demo' user to default to)."
    ]
    subprocess.run([*manage, "createsuperuser", "--noinput", "--username", "admin",
                    "--email", "admin@example.org"], cwd=ROOT, env=env, check=True, timeout=120,
                   capture_output=True)
    proc = subprocess.run(
        [*manage, "import_dataset", str(BAD_INPUTS / "ris_missing_er.ris"),
         "--name", "X"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode != 0
    assert proc.stderr.strip().splitlines() == [
        "CommandError: RIS record 2 (line 6) has no ER tag: the file is truncated."
    ]
