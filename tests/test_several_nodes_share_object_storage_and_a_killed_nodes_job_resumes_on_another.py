"""Three machines that share only PostgreSQL, Redis and an S3 endpoint.

A web node and two training nodes, each with its own disk and cache. The dataset is uploaded
through the web node; four trainings (two tiny BERTs, two TF-IDF) are shared by both training
nodes; one node is killed with SIGKILL in the middle of a BERT's second epoch; the job is marked
stalled by time (its node is another machine, so no PID is checked) and resumed on the other node
from the checkpoint that was synced to the bucket; the web node then predicts with every model
although it never had their files, and a batch uploaded to it is classified on a fourth node;
and nothing is half-written or lost.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import psutil
import pytest
import requests
from django.conf import settings

from classification.models import MLModel, TrainingJob
from tests.job_support import FAST, FIXTURES, tiny_bert_config, wait_for
from tests.plugins.server import AppServer
from tests.plugins.worker import ROOT, worker_env

pytestmark = pytest.mark.worker

TEXT = "Randomised trial of beta blockers after myocardial infarction in older adults."


def _manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=worker_env(**env),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _leftovers(root: Path) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.name.endswith(".part") or ".part" in p.suffixes]


@pytest.fixture
def nodes(s3_endpoint: Any, tmp_path: Path) -> dict[str, dict[str, str]]:
    if settings.DATABASES["default"]["ENGINE"].endswith("sqlite3"):
        pytest.skip("several machines share PostgreSQL, never a SQLite file")
    return {name: s3_endpoint.node_env(name=name, root=tmp_path / name)
            for name in ("web", "node-a", "node-b", "node-c")}


def test_two_training_nodes_share_the_work_survive_a_kill_and_the_web_predicts_with_every_model(
    nodes: dict[str, dict[str, str]], s3_endpoint: Any, start_worker: Any, user: Any,
    tiny_bert_dir: Path, tmp_path: Path,
) -> None:
    from api.tokens import token_create

    user.is_staff = True  # tiny BERT trains from a server folder, which only staff may name
    user.save()
    api = requests.Session()
    api.headers["Authorization"] = f"Token {token_create(user=user, name='nodes test')[1]}"
    web = AppServer(tmp_path / "web-logs", **nodes["web"]).start()
    slow = {**FAST, "MEDLITBOT_FAULT_INJECTION": "slow_step=0.3"}
    workers = {name: start_worker(queues=(settings.QUEUE_TRAINING,), **slow, **nodes[name])
               for name in ("node-a", "node-b")}
    try:
        with (FIXTURES / "demo_slice.csv").open("rb") as handle:
            answer = api.post(f"{web.url}/api/datasets/", files={"file": handle},
                              data={"name": "Slice on the web node"}, timeout=60)
        assert answer.status_code == 202, answer.text
        # The import is read on another node, from the copy the web published: the inference
        # node, so that neither training node holds the dataset before it has to fetch it.
        start_worker(queues=(settings.QUEUE_DEFAULT,), pool="threads", **FAST, **nodes["node-c"])
        follow = f"{web.url}{answer.json()['url']}"
        wait_for(lambda: not api.get(follow, timeout=30).json()["is_active"], 120,
                 "the import to end")
        imported = api.get(follow, timeout=30).json()
        assert imported["status"] == "completed", imported["reason"]
        dataset_id = imported["dataset"]

        def train(model_type: str, config: dict[str, Any]) -> int:
            reply = api.post(f"{web.url}/api/jobs/", json={
                "dataset": dataset_id, "model_type": model_type, "config": config}, timeout=30)
            assert reply.status_code == 201, reply.text
            return reply.json()["id"]

        bert = tiny_bert_config(tiny_bert_dir, epochs=2)
        first = train("custom", bert)
        job = TrainingJob.objects.get(pk=first)
        wait_for(lambda: job.refresh_from_db() or job.status == "running", 60, "a node to start")
        victim = job.worker_host
        survivor = "node-b" if victim == "node-a" else "node-a"
        others = [train("custom", bert), train("tfidf_logreg", {}), train("tfidf_svm", {})]

        def checkpoint_synced_in_second_epoch() -> bool:
            job.refresh_from_db()
            assert job.status == "running", (job.reason, job.log_tail)
            return job.current_epoch > 1.05 and bool(job.synced_checkpoint_digest)

        wait_for(checkpoint_synced_in_second_epoch, 180, "a synced checkpoint in epoch 2")
        synced, child = job.synced_checkpoint, job.child_pid
        assert f"trees/{job.synced_checkpoint_digest}/MANIFEST.json" in "\n".join(
            k.split("/", 1)[1] for k in s3_endpoint.object_names())
        workers[victim].kill()  # SIGKILL: the machine is gone, its disk with it
        wait_for(lambda: not psutil.pid_exists(child) or
                 psutil.Process(child).status() == psutil.STATUS_ZOMBIE, 10, "the child to die")

        # The web node judges another node's job by its heartbeat's age alone.
        def stalled() -> bool:
            _manage(nodes["web"], "cleanup_stuck_training", "--stale-minutes", "0.1")
            job.refresh_from_db()
            return job.status == "stalled"

        wait_for(stalled, 60, "the job to be marked stalled", poll=2)
        assert "no heartbeat" in job.reason, job.reason
        _manage(nodes["web"], "resume_training", str(first))

        ids = [first, *others]

        def all_ended() -> bool:
            states = dict(TrainingJob.objects.filter(pk__in=ids).values_list("pk", "status"))
            assert not {"failed", "stalled", "cancelled"} & set(states.values()), [
                (j.pk, j.status, j.reason) for j in TrainingJob.objects.filter(pk__in=ids)]
            return set(states.values()) == {"completed"}

        wait_for(all_ended, 300, "every job to complete", poll=1)
        job.refresh_from_db()
        assert job.attempt == 2
        assert job.worker_host == survivor
        assert f"{synced} fetched from the shared storage" in job.log_tail, job.log_tail
        assert f"attempt 2: resuming from {synced}" in job.log_tail
        hosts = set(TrainingJob.objects.filter(pk__in=ids).values_list("worker_host", flat=True))
        assert hosts == {survivor}  # the victim's job moved to the survivor with attempt 2

        # The web node never trained anything, yet predicts with every model.
        models = list(MLModel.objects.filter(training_jobs__pk__in=ids))
        assert len(models) == 4
        assert all(m.artifact_digest for m in models)
        for model in models:
            reply = api.post(f"{web.url}/api/models/{model.pk}/predict/", json={"text": TEXT},
                             timeout=120)
            assert reply.status_code == 200, (model.model_type, reply.text)
            assert set(reply.json()["predictions"][0]["probabilities"]) == set(model.label_names)
        # A batch: the upload lands on the web node, is classified on an inference node.
        start_worker(queues=(settings.QUEUE_INFERENCE,), pool="threads", concurrency=2,
                     **FAST, **nodes["node-c"])
        articles = b"title,abstract\nBeta blockers,After myocardial infarction.\nGlioma,Tumour.\n"
        reply = api.post(f"{web.url}/api/models/{models[0].pk}/batches/",
                         files={"file": ("articles.csv", articles)}, timeout=30)
        assert reply.status_code == 202, reply.text
        batch = reply.json()

        def batch_done() -> bool:
            state = api.get(f"{web.url}/api/batches/{batch['id']}/", timeout=10).json()
            assert state["status"] in ("queued", "running", "completed"), state
            return state["status"] == "completed"

        wait_for(batch_done, 120, "the batch on the inference node", poll=0.5)
        result = api.get(f"{web.url}/api/batches/{batch['id']}/result/", timeout=30)
        assert result.status_code == 200, result.text
        assert "Beta blockers" in result.text
        assert len(result.text.strip().splitlines()) == 3
        web_root = Path(nodes["web"]["MODEL_ARTIFACT_ROOT"])
        assert not web_root.exists() or not any(web_root.iterdir())
        cached = {p.name for p in Path(nodes["web"]["FILE_CACHE_DIR"], "trees").iterdir()}
        assert {m.artifact_digest for m in models} <= cached
        # The survivor read the dataset it never received from the bucket, once.
        assert list(Path(nodes[survivor]["FILE_CACHE_DIR"], "files", "datasets").rglob("*.parquet"))

        # Nothing half-written anywhere, and the bucket holds exactly what rows point at.
        for name in ("web", survivor, "node-c"):
            for key in ("MEDIA_ROOT", "MODEL_ARTIFACT_ROOT", "FILE_CACHE_DIR"):
                assert _leftovers(Path(nodes[name][key])) == []
        keys = [k.split("/", 1)[1] for k in s3_endpoint.object_names()]
        manifests = {k.split("/")[1] for k in keys if k.endswith("/MANIFEST.json")}
        assert manifests == {m.artifact_digest for m in models}  # checkpoints are gone
        batch_keys = [k for k in keys if k.startswith("media/batches/")]
        assert sorted(Path(k).name for k in batch_keys) == ["result.csv", "result.jsonl"]
    finally:
        web.stop()
